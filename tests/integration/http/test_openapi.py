"""The OpenAPI document is what it was when routes moved into routers: every path, method,
operation id, parameter, status and schema (openapi.json; only the version is left out)."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
from pathlib import Path
from typing import Any

from tests.integration.http.conftest import Api

SNAPSHOT = Path(__file__).with_name("openapi.json")


def test_the_document_matches_the_snapshot(api: Api) -> None:
    """A change of the API shows here; ZEROCODE_UPDATE_OPENAPI=1 rewrites the snapshot (and
    the diff of openapi.json is then the change to review)."""
    doc: dict[str, Any] = json.loads(json.dumps(api.client.app.openapi()))  # type: ignore[attr-defined]
    doc["info"].pop("version")
    if os.environ.get("ZEROCODE_UPDATE_OPENAPI") == "1":
        SNAPSHOT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    assert doc == json.loads(SNAPSHOT.read_text())


def test_every_route_is_in_a_router_module() -> None:
    """Every documented route is a router module's (each module of http/routes/), and every
    module's route is documented."""
    from zerocode.http import routes as package

    modules = [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    ]
    assert len(modules) >= 12
    routes = {
        (m, r.path)
        for module in modules
        for r in module.router.routes
        for m in getattr(r, "methods", ())
    }
    documented = {
        (m.upper(), path)
        for path, ops in json.loads(SNAPSHOT.read_text())["paths"].items()
        for m in ops
    }
    assert {(m, p.replace("{path:path}", "{path}")) for m, p in routes} == documented
