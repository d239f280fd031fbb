"""The README's API walk-through runs as written (against the e2e server, not :8000)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import Server

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough() -> str:
    text = README.read_text()
    match = re.search(r"```sh\n(API=http://127\.0\.0\.1:8000\n.*?)```", text, re.DOTALL)
    assert match, "the README's curl walk-through is missing"
    return match.group(1)


def told(out: str, server: Server) -> str:
    """What a failed walk-through said: its error, build and done events, and the server's
    last lines (a turn that failed once must say why in the test's report)."""
    said = re.findall(r"event: (?:error|build|done)\ndata: .*", out)
    tail = server.log.read_text()[-3000:] if server.log is not None else ""
    return "\n".join([*said, "--- server log ---", tail])


def test_the_readme_curl_walkthrough_works_as_written(server: Server) -> None:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    script = walkthrough().replace("API=http://127.0.0.1:8000", f"API={server.api}", 1)
    done = subprocess.run(
        ["bash", "-e", "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    ends = re.findall(r"event: done\ndata: {\"status\":\"(\w+)\"", out)
    assert ends == ["succeeded"] * 3, told(out, server)  # the app, the change, the question
    assert out.count('"mode":"ask"') == 1  # the question's done
    assert '"versions":[{"id":"v2"' in out
    assert '"changed":["src/views/HomeView.vue"]' in out  # the restore
    assert '"state":"succeeded"' in out and '"versionId":"v3"' in out  # the deploy build
    assert re.search(r"http://[a-z0-9]+\.localhost:\d+/\s*$", out), out[-300:]
