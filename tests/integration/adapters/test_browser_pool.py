"""One kept browser for every browser check (issue 28, point 2), in real Chromium in its box:
two apps checked in it, one after the other and at once, see none of each other's storage,
cookies or network; checks reuse the one browser; a crashed or stuck one is replaced; none
outlives its event loop or its process; pages load though no host name resolves."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.adapters.test_browser_confinement import (
    _boxed_pids,
    _descends,
    boxed_or_skip,
)
from tests.integration.adapters.test_chromium_check import Site
from zerocode.adapters.local import browser_pool, chromium_check
from zerocode.adapters.local.browser_pool import BrowserPool
from zerocode.adapters.local.browser_shares import Tenant
from zerocode.adapters.local.chromium import launch_args
from zerocode.adapters.local.chromium_check import ChromiumCheck
from zerocode.publishing.pointers import SiteUrls

ROOT = Path(__file__).resolve().parents[3]

# What the first app leaves behind in every store a page has, and what it tries on the other.
WRITE = """async (other) => {
  localStorage.setItem("secret", "of app A");
  sessionStorage.setItem("secret", "of app A");
  document.cookie = "secret=of-app-A; path=/; max-age=3600";
  await new Promise((done, failed) => {
    const open = indexedDB.open("a-db", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("s");
    open.onsuccess = () => {
      const tx = open.result.transaction("s", "readwrite");
      tx.objectStore("s").put("of app A", "secret");
      tx.oncomplete = () => done();
      tx.onerror = () => failed(tx.error);
    };
    open.onerror = () => failed(open.error);
  });
  const reached = [];
  for (const url of [other + "from-a", other.replace(/\\/\\/[^:]+:/, "//127.0.0.1:") + "ip"]) {
    try { await fetch(url, {mode: "no-cors"}); reached.push(url); } catch (e) {}
  }
  return reached;
}"""
READ = """async () => ({
  local: Object.keys(localStorage), session: Object.keys(sessionStorage),
  cookie: document.cookie,
  databases: (await indexedDB.databases()).map((d) => d.name),
})"""


@pytest.fixture
def apps() -> Iterator[tuple[Site, Site]]:
    pages = {"/": "<body><h1>app</h1></body>", "/from-a": "x", "/ip": "x"}
    a, b = Site(dict(pages), host="a-app.localhost"), Site(dict(pages), host="b-app.localhost")
    a.start()
    b.start()
    yield a, b
    a.stop()
    b.stop()


async def _write(pool: BrowserPool, a: Site, b: Site) -> dict[str, Any]:
    seen: list[str] = []
    async with pool.page(a.url, seen) as page:
        await page.goto(a.url)
        reached = await page.evaluate(WRITE, b.url)
        state = await page.context.storage_state(indexed_db=True)
        return {"reached": reached, "seen": seen, "state": state}


async def _read(pool: BrowserPool, url: str) -> dict[str, Any]:
    async with pool.page(url) as page:
        await page.goto(url)
        found = await page.evaluate(READ)
        return {**found, "state": await page.context.storage_state(indexed_db=True)}


def _assert_isolated(wrote: dict[str, Any], read: dict[str, Any], a: Site, b: Site) -> None:
    # the first app did store everything (else the test proves nothing) ...
    assert [c["name"] for c in wrote["state"]["cookies"]] == ["secret"]
    (origin,) = wrote["state"]["origins"]
    assert origin["localStorage"] == [{"name": "secret", "value": "of app A"}]
    assert [db["name"] for db in origin["indexedDB"]] == ["a-db"]
    # ... and its request to the other app was aborted, never fetched
    assert wrote["reached"] == []
    assert f"{b.url}from-a" in wrote["seen"]
    assert "/from-a" not in b.requests and "/ip" not in b.requests
    # the other check sees nothing of it, and its context holds nothing at all
    assert (read["local"], read["session"], read["cookie"], read["databases"]) == ([], [], "", [])
    assert read["state"] == {"cookies": [], "origins": []}


def test_two_apps_in_the_kept_browser_share_no_storage_cookies_or_network(
    apps: tuple[Site, Site],
) -> None:
    a, b = apps
    pool = BrowserPool(boxed_or_skip())

    async def one_after_the_other() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], int]:
        wrote = await _write(pool, a, b)
        other = await _read(pool, b.url)
        again = await _read(pool, a.url)  # the same app's next check starts empty too
        return wrote, other, again, pool.launches()

    wrote, other, again, launches = asyncio.run(one_after_the_other())
    assert launches == 1
    _assert_isolated(wrote, other, a, b)
    _assert_isolated(wrote, again, a, b)


def test_two_apps_checked_at_once_share_nothing(apps: tuple[Site, Site]) -> None:
    a, b = apps
    pool = BrowserPool(boxed_or_skip())

    async def at_once() -> tuple[dict[str, Any], dict[str, Any], int]:
        written = asyncio.Event()
        seen: list[str] = []
        async with pool.page(a.url, seen) as first:
            await first.goto(a.url)

            async def other() -> dict[str, Any]:
                async with pool.page(b.url) as second:  # open while the first still is
                    await second.goto(b.url)
                    await written.wait()
                    found = await second.evaluate(READ)
                    return {**found, "state": await second.context.storage_state(indexed_db=True)}

            reading = asyncio.create_task(other())
            reached = await first.evaluate(WRITE, b.url)
            state = await first.context.storage_state(indexed_db=True)
            written.set()
            read = await reading
        return {"reached": reached, "seen": seen, "state": state}, read, pool.launches()

    wrote, read, launches = asyncio.run(at_once())
    assert launches == 1
    _assert_isolated(wrote, read, a, b)


def test_checks_share_one_browser_and_a_crashed_one_is_replaced() -> None:
    """The browser's box killed (a crash), then Playwright's driver: each time the next
    check starts a new browser and passes."""
    site = Site({"/": "<body><h1>fine</h1></body>"})
    site.start()
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), boxed_or_skip())
    check.browsers = BrowserPool(check.executable)

    async def run() -> tuple[list[Any], int, int]:
        found = [await check.check_url(site.url, vue=False) for _ in range(3)]
        before = check.browsers.launches()
        kept = check.browsers._loops[asyncio.get_running_loop()]
        assert kept.box is not None and kept.browser is not None
        gone = asyncio.Event()
        kept.browser.on("disconnected", lambda _: gone.set())
        kept.box.kill()  # a crash: every process of the browser gone
        await asyncio.wait_for(gone.wait(), 10)
        found.append(await check.check_url(site.url, vue=False))
        kept = check.browsers._loops[asyncio.get_running_loop()]
        assert kept.driver is not None
        kept.driver.kill()  # Playwright's driver gone: the browser with it
        await asyncio.wait_for(kept.driver.wait(), 10)
        found.append(await check.check_url(site.url, vue=False))
        return found, before, check.browsers.launches()

    try:
        found, before, after = asyncio.run(run())
    finally:
        site.stop()
    assert found == [[], [], [], [], []]
    assert (before, after) == (1, 3)


def test_a_browser_serves_a_bounded_number_of_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MAX_CHECKS the next check starts a new browser (the old one's box killed), so
    what one compromised browser process could see of other apps' checks is bounded."""
    monkeypatch.setattr(browser_pool, "MAX_CHECKS", 2)
    site = Site({"/": "<body><h1>fine</h1></body>"})
    site.start()
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), boxed_or_skip())
    check.browsers = BrowserPool(check.executable)

    async def run() -> tuple[list[Any], list[int]]:
        found, launches = [], []
        for _ in range(5):
            found.append(await check.check_url(site.url, vue=False))
            launches.append(check.browsers.launches())
        return found, launches

    try:
        found, launches = asyncio.run(run())
    finally:
        site.stop()
    assert found == [[]] * 5
    assert launches == [1, 1, 2, 2, 3]


# Spins once loaded, deterministically: any script of the main world that reads
# document.body spins, and so does a timer 50 ms after load (for what reads elsewhere).
SPIN = (
    "<body><h1>spins</h1><script>addEventListener('load', () => {"
    " Object.defineProperty(document, 'body', { get() { for (;;) {} } });"
    " setTimeout(() => { for (;;) {} }, 50); })</script></body>"
)
FINE = "<body><h1>fine</h1></body>"


def test_a_page_that_spins_fails_only_its_own_check_and_the_browser_is_kept() -> None:
    """A page that spins after load fails its own check, naming its page, within the
    check's own bounds, while checks of other apps run beside it in the same browser and
    all pass; the browser is not replaced (issue 37, point 2)."""
    spin = Site({"/": SPIN}, host="spin.localhost")
    fine = Site({"/": FINE}, host="fine.localhost")
    spin.start()
    fine.start()
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), boxed_or_skip())
    check.browsers = BrowserPool(check.executable)
    others = [Tenant(f"user{i}", "app") for i in range(3)]

    async def run() -> tuple[Any, list[Any], Any, int]:
        try:
            await check.browsers.warm()
            spun, *beside = await asyncio.gather(
                check.check_url(spin.url, vue=False, tenant=Tenant("spinner", "app")),
                *(check.check_url(fine.url, vue=False, tenant=t) for t in others),
            )
            after = await check.check_url(fine.url, vue=False)
            return spun, beside, after, check.browsers.launches()
        finally:
            await check.browsers.close()

    try:
        spun, beside, after, launches = asyncio.run(run())
    finally:
        spin.stop()
        fine.stop()
    assert spun == [chromium_check.not_answering(spin.url)], spun
    assert "the page / did not answer" in spun[0]
    assert beside == [[], [], []] and after == []
    assert launches == 1  # kept: a page's trouble never replaces the shared browser


def _renderers(box: int) -> dict[int, int]:
    """The boxed browser's renderer processes and the CPU ticks each has used (a renderer
    rewrites its command line as one string: it is found by descent from the box)."""
    found = {}
    for pid in (int(entry) for entry in os.listdir("/proc") if entry.isdigit()):
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if b"--type=renderer" in argv and _descends(pid, box):
                found[pid] = int(fields[11]) + int(fields[12])  # utime + stime
    return found


async def _exited(pid: int, bound: float) -> bool:
    """Whether ``pid`` (not a child of ours) ends within ``bound`` s: its pidfd turns
    readable when it does."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    loop = asyncio.get_running_loop()
    ended = asyncio.Event()
    loop.add_reader(fd, ended.set)
    try:
        await asyncio.wait_for(ended.wait(), bound)
        return True
    except TimeoutError:
        return False
    finally:
        loop.remove_reader(fd)
        os.close(fd)


def test_closing_a_spinning_pages_context_ends_its_renderer() -> None:
    """Why closing the context suffices: Chromium disposes a context from its browser
    process, whatever the renderer's main thread is doing, and the renderer that spins
    (the busiest one) ends; the context closes within CLOSE_SECONDS and nothing of the
    browser is killed."""
    spin = Site({"/": SPIN}, host="spin.localhost")
    spin.start()
    pool = BrowserPool(boxed_or_skip())

    async def run() -> tuple[bool, bool, bool, int]:
        try:
            await pool.warm()
            kept = pool._loops[asyncio.get_running_loop()]
            assert kept.box is not None
            async with pool.page(spin.url) as page:
                await page.goto(spin.url)
                before = _renderers(kept.box.pid)
                try:
                    await asyncio.wait_for(page.evaluate("document.body"), 2)
                    answered = True
                except TimeoutError:
                    answered = False
                # The spinning renderer gained the most CPU meanwhile: the contexts opened
                # ahead have renderers of their own, whose start-up ticks on a loaded machine
                # may outnumber a starved spin's total, never its gain over these 2 s.
                ticks = _renderers(kept.box.pid)
                spinning = max(ticks, key=lambda pid: ticks[pid] - before.get(pid, 0))
                try:
                    await asyncio.wait_for(page.context.close(), browser_pool.CLOSE_SECONDS)
                    closed = True
                except TimeoutError:
                    closed = False
            ended = await _exited(spinning, browser_pool.CLOSE_SECONDS)
            return answered, closed, ended, pool.launches()
        finally:
            await pool.close()

    try:
        answered, closed, ended, launches = asyncio.run(run())
    finally:
        spin.stop()
    assert not answered and closed and ended and launches == 1


def test_a_browser_that_went_away_under_a_check_has_it_run_again_not_failed() -> None:
    """The platform's failure is never the page's: the browser killed while a check runs
    in it (its box, every process) has that check run again on a fresh browser, passing."""
    arrived = threading.Event()

    class Arrivals(list[str]):
        def append(self, path: str) -> None:
            super().append(path)
            if path == "/slow.js":
                arrived.set()

    pages = {"/": '<body><h1>fine</h1><script src="/slow.js"></script></body>', "/slow.js": ""}
    site = Site(pages, requests=Arrivals(), delays={"/slow.js": 1.5})
    site.start()
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), boxed_or_skip())
    check.browsers = BrowserPool(check.executable)

    async def run() -> tuple[Any, int]:
        try:
            await check.browsers.warm()
            kept = check.browsers._loops[asyncio.get_running_loop()]
            first = kept.browser
            running = asyncio.create_task(check.check_url(site.url, vue=False))
            assert await asyncio.to_thread(arrived.wait, 30)  # loading in that browser
            if kept.browser is first and kept.box is not None:
                kept.box.kill()
            return await running, check.browsers.launches()
        finally:
            await check.browsers.close()

    try:
        found, launches = asyncio.run(run())
    finally:
        site.stop()
    assert found == [] and launches == 2


def _browser_process(box: int) -> int:
    """The boxed Chromium's browser process (not bwrap's; its children say ``--type=``)."""
    found = []
    for pid in _boxed_pids():
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        child = any(arg.startswith(b"--type=") for arg in argv)
        if (
            _descends(pid, box)
            and argv[0].endswith((b"/chromium", b"-headless-shell"))
            and not child
        ):
            found.append(pid)
    [main] = found
    return main


def test_a_broken_browser_is_replaced_only_once_no_check_runs_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The browser process stopped (SIGSTOP): a used context does not close and the probe
    of a fresh one fails, so the browser is broken; but a check still holds a context of
    it, so it is not killed under that check (which works on once the process resumes);
    when that check is done, the next check gets a new browser. (The close's and the
    probe's bounds are shortened: a stopped process answers neither, however long.)"""
    monkeypatch.setattr(browser_pool, "CLOSE_SECONDS", 1.0)
    monkeypatch.setattr(browser_pool, "PROBE_SECONDS", 1.0)
    site = Site({"/": FINE})
    site.start()
    pool = BrowserPool(boxed_or_skip())
    stopped = [0]  # the process stopped, to resume it whatever happens

    async def run() -> tuple[bool, bool, int, int, bool]:
        try:
            await pool.warm()
            kept = pool._loops[asyncio.get_running_loop()]
            assert kept.box is not None
            first, stopped[0] = kept.browser, _browser_process(kept.box.pid)
            main = stopped[0]
            async with pool.page(site.url) as held:
                await held.goto(site.url)
                async with pool.page(site.url):
                    os.kill(main, signal.SIGSTOP)
                closing = [t for t in kept.tasks if "_keep" not in repr(t.get_coro())]
                await asyncio.wait(closing)  # the close timed out, then the probe failed
                broken = kept.broken is first and kept.browser is first
                os.kill(main, signal.SIGCONT)
                answers = await held.evaluate("1 + 1") == 2  # never killed under it
                launches = pool.launches()
            async with pool.page(site.url) as page:
                await page.goto(site.url)
                fresh = kept.browser is not first
            return broken, answers, launches, pool.launches(), fresh
        finally:
            with contextlib.suppress(ProcessLookupError):
                if stopped[0]:
                    os.kill(stopped[0], signal.SIGCONT)
            await pool.close()

    try:
        broken, answers, before, after, fresh = asyncio.run(run())
    finally:
        site.stop()
    assert broken and answers and fresh
    assert (before, after) == (1, 2)


SERVER = """
import asyncio, sys, time
sys.path.insert(0, {root!r})
from tests.integration.adapters.test_chromium_check import Site
from zerocode.adapters.local.chromium_check import ChromiumCheck
from zerocode.publishing.pointers import SiteUrls

site = Site({{"/": "<body><h1>fine</h1></body>"}})
site.start()

async def main():
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), {executable!r})
    print(await check.check_url(site.url, vue=False), flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # the browser kept until told to stop

try:
    import uvloop
    factory = uvloop.new_event_loop
except ImportError:
    factory = None
with asyncio.Runner(loop_factory=factory) as runner:  # as the server runs its loop
    runner.run(main())
print("stopped", flush=True)
"""


@pytest.mark.parametrize("how", ["stops", "is killed"])
def test_no_browser_outlives_the_server(how: str) -> None:
    """The server's loop ends (a stop) or its process is killed: no boxed process is left."""
    script = SERVER.format(root=str(ROOT), executable=boxed_or_skip())
    server = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT / "layers/core/python")},
    )
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == "[]"
        ours = {p for p in _boxed_pids() if _descends(p, server.pid)}
        assert ours, "no boxed browser of the server's"
        if how == "stops":
            assert server.stdin is not None
            server.stdin.write("stop\n")
            server.stdin.flush()
            assert server.stdout.readline().strip() == "stopped"
            server.wait(timeout=20)
        else:
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=10)
        deadline = time.monotonic() + 15
        while ours & set(_boxed_pids()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not ours & set(_boxed_pids())
    finally:
        with contextlib.suppress(ProcessLookupError):
            server.kill()


def test_no_host_name_resolves_in_the_kept_browser_and_pages_still_load(
    apps: tuple[Site, Site],
) -> None:
    assert "--host-resolver-rules=MAP * ~NOTFOUND" in launch_args()
    assert not any("EXCLUDE" in arg for arg in launch_args())
    a, _ = apps
    pool = BrowserPool(boxed_or_skip())

    async def title() -> str:
        async with pool.page(a.url) as page:
            await page.goto(a.url)
            return await page.inner_text("h1")

    assert asyncio.run(title()) == "app"
    assert json.dumps(a.requests) == '["/"]'


def test_a_context_holds_its_page_and_no_browser_ui(apps: tuple[Site, Site]) -> None:
    """Headless, each context is a window of its own: Chromium loaded an omnibox popup in
    each, a WebUI renderer beside the page that cost more than the page (issue 40). None is
    left: every target of the browser is a context's page (or its tab)."""
    a, _ = apps
    pool = BrowserPool(boxed_or_skip())

    async def kinds() -> list[str]:
        try:
            async with pool.page(a.url) as page:
                await page.goto(a.url)
                kept = pool._loops[asyncio.get_running_loop()]
                assert kept.browser is not None
                cdp = await kept.browser.new_browser_cdp_session()
                found = await cdp.send("Target.getTargets", {"filter": [{}]})
                return sorted({target["type"] for target in found["targetInfos"]})
        finally:
            await pool.close()

    assert asyncio.run(kinds()) == ["page", "tab"]
