"""``zerocode serve``: the API and the sites origin in one process, on two ports."""

from __future__ import annotations

import asyncio
import errno
import functools
import gc
import logging
import os
import socket
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import uvicorn
from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from zerocode import __version__
from zerocode.adapters.local.free_space import data_dir_refusal
from zerocode.adapters.local.private import UMASK, private_data_dir
from zerocode.adapters.sqlite.builds import SqliteBuildStore
from zerocode.adapters.sqlite.lease import SqliteLease
from zerocode.apps.records import AppStore
from zerocode.bootstrap import local_sweep, wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.stopped_checks import STOPPING, rerun
from zerocode.entrypoints.stopping import Held, Stop, signals, stop_in_order
from zerocode.http.app import create_app
from zerocode.http.headers import WithPolicy, console_policy
from zerocode.http.sites import console_origin, create_sites_app
from zerocode.memory.tokens import o200k
from zerocode.observability import configure_logging
from zerocode.publishing.output_sweep import OutputSweep

log = logging.getLogger(__name__)

FIRST_BUILD_SWEEP_SECONDS = 60  # after start: the server is up, its first turns not yet


def banner(settings: Settings, model: str, builds: str = "", browser: str = "") -> str:
    api, urls = console_origin(settings), settings.site_urls()
    return "\n".join(
        line
        for line in [
            f"zerocode {__version__} — local platform",
            f"  console   {api}/console/"
            if settings.console_path
            else "  console   (no web/ here)",
            f"  API       {api}/api   (docs: {api}/api/docs)",
            f"  previews  {urls.template(preview=True)}   (each app its own origin)",
            f"  sites     {urls.template(preview=False)}   (published apps)",
            f"  model     {model}",
            f"  builds    {builds}" if builds else "",
            f"  browser   {browser}" if browser else "",
            f"  data      {settings.data_dir.resolve()}",
        ]
        if line
    )


def with_console(app: FastAPI, settings: Settings) -> FastAPI:
    """The console on the API's origin (so no CORS, and its cookie is first-party), and only
    on 127.0.0.1: asked for on ``localhost`` (one site with the apps' ``*.localhost``) it
    redirects there (docs/security.md, "Origins and the console")."""
    console = settings.console_path
    if console is None:
        return app
    home = console_origin(settings) + "/console/"

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/console/")

    files = WithPolicy(
        StaticFiles(directory=console, html=True), console_policy(settings.site_urls())
    )
    app.mount("/console", OffTheAppsSite(files, home), name="console")
    return app


class OffTheAppsSite:
    """Redirects requests whose Host is ``localhost`` or ``*.localhost`` to ``home``."""

    def __init__(self, app: ASGIApp, home: str) -> None:
        self.app, self.home = app, home

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        host = Headers(scope=scope).get("host", "")
        name = (urlsplit(f"//{host}").hostname or "") if host else ""
        if scope["type"] == "http" and (name == "localhost" or name.endswith(".localhost")):
            await RedirectResponse(self.home)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class CannotStart(Exception):
    """`zerocode serve` must not start; the message is one line, for stderr."""


class CannotListen(CannotStart):
    """A port of `zerocode serve` cannot be listened on; the message is one line."""


def listen(host: str, port: int, setting: str, flag: str) -> socket.socket:
    """A socket bound to host:port as uvicorn would bind it, or CannotListen saying which
    setting changes the port. The socket is handed to uvicorn, so no other process can take
    the port between this check and the server's start."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)  # uvicorn's backlog; and a second bind of this port now fails
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CannotListen(
                f"port {port} on {host} is already in use ({setting} or {flag} to change it)"
            ) from None
        raise CannotListen(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} ({setting} or {flag} "
            "to change the port, ZEROCODE_HOST or --host the address)"
        ) from None
    # Never inheritable: uvloop's subprocesses keep inheritable descriptors, and a build
    # (untrusted code, in the sandbox) must not hold, or accept on, the platform's port.
    sock.set_inheritable(False)
    return sock


def serve(settings: Settings) -> None:
    """Runs the platform until Ctrl-C; CannotStart (nothing started) when a port is taken or
    the data directory cannot be written or is below ZEROCODE_MIN_FREE_MB."""
    if settings.mode == "local":  # before any log line or database write lands there
        refused = data_dir_refusal(settings.data_dir, settings.min_free_mb)
        if refused:
            raise CannotStart(f"{refused}: not starting")
    api_socket = listen(settings.host, settings.port, "ZEROCODE_PORT", "--port")
    try:
        sites_socket = listen(
            settings.host, settings.sites_port, "ZEROCODE_SITES_PORT", "--sites-port"
        )
    except CannotListen:
        api_socket.close()
        raise
    platform = _start(settings)
    servers = _servers(settings, platform)
    # What start-up made (the wiring, the tokenizer, every imported module) lives as long as
    # the process: out of the collector's way, so no collection walks it again, the last one
    # at exit included (that one took 0.4-2.5 s of every stop, by the load; docs/benchmarks.md).
    gc.freeze()
    failed: list[str] = []
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            runner.run(_run(platform, servers, (api_socket, sites_socket), failed))
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it handled: stopped, no traceback
        pass
    finally:
        api_socket.close()
        sites_socket.close()
    if failed:
        raise CannotListen(f"the server on {' and '.join(failed)} could not start (see the log)")


def _site_names(apps: AppStore, app_id: str, build_id: str) -> bool:
    """Whether the app's site is the build's (a deploy published before its server died)."""
    app = apps.get(app_id)
    return app is not None and app.deploy_build_id == build_id


def _start(settings: Settings) -> Platform:
    """The platform wired, what an earlier run left cleaned up, and the banner printed."""
    configure_logging(access_log=settings.access_log)
    # Everything this process creates is its user's alone (adapters/local/private.py).
    os.umask(UMASK)
    if settings.mode == "local":
        private_data_dir(settings.data_dir)
    platform = wiring.platform(settings)
    o200k()  # load the tokenizer now, not on the event loop during the first turn
    finished = platform.retry_deletions()  # deletions a previous run could not finish
    if isinstance(platform.builds, SqliteBuildStore):  # local builds died with their server
        platform.builds.finish_published(functools.partial(_site_names, platform.apps))
        stale = platform.builds.fail_unfinished("the server stopped before this build finished")
        if stale:
            log.warning("%d build(s) left unfinished by an earlier run marked failed", stale)
    if isinstance(platform.engine.lease, SqliteLease):  # and so did its turns
        platform.engine.lease.clear("turn:")
    print(
        banner(settings, platform.model.description, platform.build_isolation, platform.browser),
        flush=True,
    )
    for warning in _warnings(platform):
        print(warning, flush=True)
    if finished:
        print(f"  finished deleting {finished} app(s) left over from an earlier run", flush=True)
    return platform


def _warnings(platform: Platform) -> list[str]:
    """The banner's warnings: what runs unconfined, or is off, on this machine."""
    lines = []
    if "UNSANDBOXED" in platform.build_isolation:
        lines.append(
            "  WARNING   Vue builds run WITHOUT a sandbox: model-written code can read this "
            "machine's files and secrets. Development only."
        )
    elif platform.build_isolation.startswith("refused"):
        lines.append(
            "  WARNING   Vue builds are refused until bubblewrap is installed "
            "(apt-get install bubblewrap)"
        )
    if "bubblewrap" in platform.browser and platform.browser.startswith("off"):
        lines.append(
            "  WARNING   covers and the runtime check are off until bubblewrap is installed "
            "(apt-get install bubblewrap)"
        )
    return lines


def _servers(settings: Settings, platform: Platform) -> list[uvicorn.Server]:
    """The API (with the console) and the sites origin, each its own uvicorn server; they
    stop when told, once the turns are done (entrypoints/stopping.py)."""
    # uvicorn's access log stays off: RequestContext writes ours (ZEROCODE_ACCESS_LOG).
    return [
        Held(
            uvicorn.Config(
                with_console(create_app(platform), settings),
                host=settings.host,
                port=settings.port,
                log_config=None,
                access_log=False,
                timeout_graceful_shutdown=5,
            )
        ),
        Held(
            uvicorn.Config(
                create_sites_app(platform),
                host=settings.host,
                port=settings.sites_port,
                log_config=None,
                access_log=False,
            )
        ),
    ]


async def _run(
    platform: Platform,
    servers: list[uvicorn.Server],
    sockets: tuple[socket.socket, socket.socket],
    failed: list[str],
) -> None:
    """Both servers until a signal (then the turns end first: stop_in_order) or one stops
    (it failed to start), then both; the sweeps and the rerun of the checks an earlier stop
    left unrun meanwhile. ``failed`` gets the address of a server that could not start."""
    stop = Stop()
    background = [
        asyncio.create_task(_sweep(platform)),
        asyncio.create_task(_sweep_builds(platform.settings)),
        asyncio.create_task(_warm_browser(platform)),
        asyncio.create_task(_rerun_stopped_checks(platform)),
    ]
    tasks = [
        asyncio.create_task(_run_server(s, sock, failed))
        for s, sock in zip(servers, sockets, strict=True)
    ]
    asked = asyncio.create_task(stop.asked.wait())
    with signals(stop):
        await asyncio.wait([*tasks, asked], return_when=asyncio.FIRST_COMPLETED)
        if stop.asked.is_set():
            await stop_in_order(platform.turns, stop, platform.settings.shutdown_seconds)
    asked.cancel()
    for s in servers:
        s.should_exit = True
    await asyncio.gather(*tasks, return_exceptions=True)
    for task in background:
        task.cancel()
    # Turns outlive their requests, not the server: stopped, each closed as interrupted.
    await platform.turns.shutdown()
    if platform.visits is not None:  # the sites' last page views, counted (issue 44)
        await platform.visits.settled()


async def _rerun_stopped_checks(platform: Platform) -> None:
    """The checks an earlier stop left not run (engine/stopped_checks.py) run again now."""
    # The local store can say which apps a stop left unrun (through the suite that holds the
    # platform's checks beside its own, which hands on what it does not do itself).
    left_not_run = getattr(platform.engine.checks, "left_not_run", None)
    if left_not_run is None:
        return
    try:
        apps = await asyncio.to_thread(left_not_run, STOPPING)
        if apps:
            await _warm_browser(platform)
            ran = await rerun(platform.engine, apps, platform.apps.get, platform.builds)
            log.info("ran again the checks of %d app(s) an earlier stop left unrun", ran)
    except Exception:
        log.exception("the checks an earlier stop left unrun could not run again")


async def _run_server(server: uvicorn.Server, sock: socket.socket, failed: list[str]) -> None:
    try:
        await server.serve(sockets=[sock])
    except (SystemExit, OSError):  # uvicorn's start-up failure (it has logged why)
        log.exception("the server on port %s could not start", server.config.port)
        failed.append(f"{server.config.host}:{server.config.port}")


async def _warm_browser(platform: Platform) -> None:
    """Start the kept browser of the runtime and acceptance checks now, so the first turn's
    check does not pay its start (adapters/local/browser_pool.py); best effort."""
    browsers = getattr(platform.engine.runtime_check, "browsers", None)
    if browsers is None:
        return
    try:
        await browsers.warm()
    except Exception as exc:  # the check says so itself when it runs
        log.warning("the checks' browser did not start ahead: %s", type(exc).__name__)


async def _sweep(platform: Platform) -> None:
    """Retry the deletions a failing store left, every five minutes."""
    while True:
        await asyncio.sleep(300)
        await asyncio.to_thread(platform.retry_deletions)


async def _sweep_builds(settings: Settings) -> None:
    """Remove the build outputs no longer needed (publishing/output_sweep.py): a minute after
    start, then every ZEROCODE_BUILD_SWEEP_SECONDS. A sweep that fails is logged; the next
    one tries again."""
    interval = settings.build_sweep_seconds
    if settings.mode != "local" or not interval:
        return
    await asyncio.sleep(min(FIRST_BUILD_SWEEP_SECONDS, interval))
    sweep: OutputSweep | None = None
    while True:
        try:
            if sweep is None:
                sweep = await asyncio.to_thread(local_sweep.build_sweep, settings)
            await asyncio.to_thread(sweep.run, time.time())
        except Exception:
            log.exception("the build sweep failed")
        await asyncio.sleep(interval)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (uvicorn only picks it itself in ``uvicorn.run``)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
