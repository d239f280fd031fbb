"""The server's stop, in order (issue 38, docs/operations.md "Stopping the server").

uvicorn would stop both servers at the first SIGINT/SIGTERM, taking the previews and the
checking browser away from turns still running. Here the servers ignore signals
(:class:`Held`) and the signal starts :func:`stop_in_order` instead: no new turn starts (a
chat gets 503 ``server_stopping``), the running turns go on to their end, checks included,
within ``ZEROCODE_SHUTDOWN_SECONDS`` (a second Ctrl-C cuts that short), then the rest are
stopped as interrupted, and only then do the API, the sites server and the browser stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Generator

import uvicorn

from zerocode.engine.turns import Turns

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Held(uvicorn.Server):
    """A uvicorn server that leaves SIGINT/SIGTERM to :func:`signals`: it stops when told
    (``should_exit``), once the turns are done."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class Stop:
    """The stop asked for by signal: ``asked`` at the first, ``cut`` at the second."""

    def __init__(self) -> None:
        self.asked, self.cut = asyncio.Event(), asyncio.Event()

    def signal(self) -> None:
        if self.asked.is_set():
            self.cut.set()
        self.asked.set()


@contextlib.contextmanager
def signals(stop: Stop) -> Generator[None, None, None]:
    """SIGINT and SIGTERM ask ``stop`` while the server runs."""
    loop = asyncio.get_running_loop()
    for sig in SIGNALS:
        loop.add_signal_handler(sig, stop.signal)
    try:
        yield
    finally:
        for sig in SIGNALS:
            loop.remove_signal_handler(sig)


async def stop_in_order(turns: Turns, stop: Stop, bound: float) -> None:
    """The turns drained (:meth:`Turns.drain`) while the servers still serve."""
    running = turns.running_here()
    if running:
        print(
            f"  stopping: waiting up to {bound:g} s for {running} running turn(s) to end "
            "(Ctrl-C again to stop them now)",
            flush=True,
        )
    ended = await turns.drain(bound, stop.cut)
    if not ended:
        log.warning("turns still running when the server stopped were interrupted")
