"""schemathesis against the running server (its CLI, as an operator would run it): no 5xx,
every status, content type, header and body matches the OpenAPI document, public routes
say so and private ones refuse a missing token, and methods the document does not list get
405 with Allow. All four phases, the stateful one included, with an app named in Chinese
in the account (its download once answered 500). Bounded examples so CI stays quick."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Server, signed_in

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_schema_conformance",
        "response_headers_conformance",
        "unsupported_method",
        "ignored_auth",
        "missing_required_header",
    ]
)


def test_api_never_fails_and_keeps_its_schema(server: Server) -> None:
    cli = shutil.which("schemathesis") or str(Path(sys.executable).parent / "schemathesis")
    client = signed_in(server)
    token = client.headers["Authorization"]
    named = client.post("/api/apps", json={"initPrompt": "做一个番茄钟网页", "codeGenType": "html"})
    assert named.status_code == 201 and named.json()["name"].isascii() is False, named.text
    client.close()
    done = subprocess.run(
        [
            cli,
            "run",
            f"{server.api}/api/openapi.json",
            "--checks",
            CHECKS,
            "--max-examples",
            "25",
            "--seed",
            "20261130",
            "-H",
            f"Authorization: {token}",
            "--workers",
            "1",
            "--request-timeout",
            "60",
            # logging out would end the session the rest of the run uses
            "--exclude-path",
            "/api/users/logout",
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    failures = done.stdout.split("FAILURES")[-1][:6000] if "FAILURES" in done.stdout else ""
    assert done.returncode == 0, failures + done.stdout[-2000:] + done.stderr[-2000:]
    assert "passed" in done.stdout
    stateful = done.stdout.split("Stateful", 1)[1][:400]
    assert "Scenarios:" in stateful and "passed" in stateful, stateful
