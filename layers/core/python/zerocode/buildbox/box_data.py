"""The data API inside the AWS build, for the build's own checks (issue 39).

A data app's page calls ``/_api/`` on its own origin. In the build there is no platform to
answer (the build reaches no table and no network: docs/builds.md), so a page that signs
in or lists its notes would fail its runtime check on AWS though it works for visitors. The
box answers those requests itself with the platform's own data API
(``zerocode.http.app_api``) over a store that lives and dies with this check: SQLite in a
temporary directory, holding nothing but the build's own data model (read from the source
the platform sent, never from the build's output) and what the checks write. The page is
served as a preview is, on its own origin ``p-{BOX_KEY}.localhost:{port}`` (browsers and the
confinement take ``*.localhost`` for loopback), the site's files beside the data API on one
loopback port; no file of the app is ever served under ``/_api/``.

The platform's access probe (``adapters/local/chromium_access.py``) runs here too, each
probe in a scratch space of this store, exactly as it runs locally.
"""

from __future__ import annotations

import contextlib
import posixpath
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from zerocode.adapters.inprocess.ratelimit import InProcessRateLimiter
from zerocode.adapters.sqlite.build_models import SqliteBuildModels
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.end_users import SqliteEndUserStore
from zerocode.adapters.sqlite.records import SqliteRecordStore
from zerocode.data.backend import Backend, DataLimits
from zerocode.data.model import DataModel
from zerocode.http.app_api import API_DIR, API_METHODS, AppApi, DataSite
from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_urls

BOX_KEY = "buildboxcheck"  # the preview key of the box's one origin
START_SECONDS = 10.0


@dataclass(frozen=True)
class BoxSite:
    url: str  # the page, on its own origin
    backend: Backend
    model: DataModel | None  # the build's data model (None: it declares no valid one)
    app_id: str


class _SiteFiles:
    """The built site's files, as the box's static server serves them; nothing under
    ``_api/``, however spelled (``/./_api``), and nothing outside the site."""

    def __init__(self, site: Path) -> None:
        self.files = StaticFiles(directory=str(site), html=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = posixpath.normpath("/" + scope.get("path", "/")).lstrip("/")
        if path.split("/")[0] == API_DIR:
            await PlainTextResponse("not found", 404)(scope, receive, send)
            return
        await self.files(scope, receive, send)


@contextlib.contextmanager
def served_with_data(site: Path, app_id: str, build_id: str, model: bytes) -> Iterator[BoxSite]:
    """``site`` and the data API of its ``model`` on one loopback port, while the block
    runs; the store is deleted with it."""
    with tempfile.TemporaryDirectory(prefix="zerocode-box-data-") as tmp:
        db = SqliteDatabase(Path(tmp) / "box.sqlite3")
        backend = Backend(  # the platform's default bounds (nothing of its settings here)
            records=SqliteRecordStore(db),
            users=SqliteEndUserStore(db),
            build_models=SqliteBuildModels(db),
            limiter=InProcessRateLimiter(),
        )
        backend.build_models.put(app_id, build_id, model)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
        target = SiteTarget(app_id, build_id)
        pointer = preview_pointer(BOX_KEY)
        api = AppApi(
            DataSite(
                limits=DataLimits(),
                urls=site_urls(f"http://localhost:{port}", f"localhost:{port}"),
                backend=backend,
                rates=backend.limiter,
                target=lambda asked: target if asked == pointer else None,
            )
        )

        async def data(request: Request) -> Response:
            return await api(request, request.path_params["path"])

        app = Starlette(
            routes=[
                Route(f"/{API_DIR}/{{path:path}}", data, methods=[*API_METHODS]),
                Mount("/", app=_SiteFiles(site)),
            ]
        )
        server = uvicorn.Server(
            uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
        )
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + START_SECONDS
            while not server.started and thread.is_alive() and time.monotonic() < deadline:
                time.sleep(0.01)
            if not server.started:
                raise RuntimeError("the box's data API did not start")
            yield BoxSite(
                f"http://p-{BOX_KEY}.localhost:{port}/",
                backend,
                backend.models.of(app_id, build_id),
                app_id,
            )
        finally:
            server.should_exit = True
            thread.join(timeout=START_SECONDS)
            sock.close()
            db.close()
