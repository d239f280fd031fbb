"""``zerocode serve``: the API and the sites origin in one process, on two ports."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from fastapi.staticfiles import StaticFiles

from zerocode import __version__, wiring
from zerocode.api import create_app
from zerocode.observability import configure_logging
from zerocode.settings import Settings
from zerocode.sites import create_sites_app
from zerocode.tokens import o200k


def banner(settings: Settings, model: str) -> str:
    api = f"http://{settings.host}:{settings.port}"
    return "\n".join([
        f"zerocode {__version__} — local platform",
        f"  console   {api}/console/" if settings.console_path else "  console   (no web/ here)",
        f"  API       {api}/api   (docs: {api}/api/docs)",
        f"  previews  {settings.public_sites_url}/preview/…",
        f"  sites     {settings.public_sites_url}/sites/…   (published apps)",
        f"  model     {model}",
        f"  data      {settings.data_dir.resolve()}",
    ])


def with_console(app: FastAPI, settings: Settings) -> FastAPI:
    """The console on the API's origin (so no CORS, and its cookie is first-party)."""
    console = settings.console_path
    if console is None:
        return app

    @app.get("/", include_in_schema=False)
    def root() -> RedirectResponse:
        return RedirectResponse("/console/")

    app.mount("/console", StaticFiles(directory=console, html=True), name="console")
    return app


def serve(settings: Settings) -> None:
    configure_logging()
    platform = wiring.platform(settings)
    o200k()  # load the tokenizer now, not on the event loop during the first turn
    finished = platform.retry_deletions()  # deletions a previous run could not finish
    print(banner(settings, platform.model.description), flush=True)
    if finished:
        print(f"  finished deleting {finished} app(s) left over from an earlier run", flush=True)
    servers = [
        uvicorn.Server(uvicorn.Config(with_console(create_app(platform), settings),
                                      host=settings.host,
                                      port=settings.port, log_config=None,
                                      timeout_graceful_shutdown=5)),
        uvicorn.Server(uvicorn.Config(create_sites_app(platform), host=settings.host,
                                      port=settings.sites_port, log_config=None)),
    ]

    async def sweep() -> None:
        while True:
            await asyncio.sleep(300)
            await asyncio.to_thread(platform.retry_deletions)

    async def run() -> None:
        sweeper = asyncio.create_task(sweep())
        tasks = [asyncio.create_task(s.serve()) for s in servers]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for s in servers:  # one stopped (Ctrl-C, or a port in use): stop the other too
            s.should_exit = True
        await asyncio.gather(*tasks, return_exceptions=True)
        sweeper.cancel()

    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(run())


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (uvicorn only picks it itself in ``uvicorn.run``)."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
