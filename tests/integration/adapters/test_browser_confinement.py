"""The headless browser reaches only the app's own origin, by structure (issue 21): a page
that aims every speculative and explicit way a page has at another loopback port, on its own
host name and on 127.0.0.1, makes not one connection there, in the runtime check or a cover,
and still loads and renders; Chromium runs in its box (no network, not root, its own sandbox,
none of the host's files); without bubblewrap there is no browser work at all."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.adapters.test_chromium_covers import (
    OWN,
    OWN_CSS,
    App,
    Secret,
    chromium_or_skip,
    near,
    pixels,
)
from zerocode.adapters.local.browser_box import BROWSER_UID, PROFILE, BrowserBox, browser_box
from zerocode.adapters.local.chromium import availability, confined, launch, launch_boxed
from zerocode.adapters.local.chromium_check import ChromiumCheck, chromium_check
from zerocode.adapters.local.chromium_covers import ChromiumCovers, chromium_covers
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints.server import banner
from zerocode.publishing.pointers import SiteUrls

SPECULATION_WAIT = 2.5  # after load: time for speculative work to reach out, if it could


def hostile(host: str, port: int) -> dict[str, str]:
    """The app's pages: each reaches for ``port`` on its own host name and on 127.0.0.1."""
    targets = [f"http://{host}:{port}", f"http://127.0.0.1:{port}"]
    rules = {
        "prefetch": [{"source": "list", "urls": [f"{t}/p" for t in targets]}],
        "prerender": [{"source": "list", "urls": [f"{t}/r" for t in targets]}],
    }
    for kind in rules.values():
        kind[0]["eagerness"] = "immediate"
    links = "".join(
        f'<link rel="{rel}" href="{t}/{rel}">'
        for t in targets
        for rel in ("prefetch", "preconnect", "prerender", "dns-prefetch", "preload")
    )
    reach = "".join(
        f"""
  fetch("{t}/fetch").catch(() => {{}});
  new Image().src = "{t}/img.png";
  try {{ window.open("{t}/open"); }} catch (e) {{}}
  try {{ new WebSocket("{t.replace("http", "ws")}/ws"); }} catch (e) {{}}
  try {{ new WebTransport("{t.replace("http", "https")}/wt"); }} catch (e) {{}}
  try {{ new EventSource("{t}/events"); }} catch (e) {{}}
  navigator.sendBeacon("{t}/beacon", "x");"""
        for t in targets
    )
    frames = "".join(
        f'<iframe src="/refresh{i}.html" width="50" height="50"></iframe>'
        for i in range(len(targets))
    )
    page = f"""<!doctype html><html><head>
<link rel="stylesheet" href="/own.css">{links}
<script type="speculationrules">{json.dumps(rules)}</script>
</head><body>
<h1 class="own">Hostile, but rendered</h1>
<a href="{targets[0]}/link">a link</a> <a href="{targets[1]}/link">another</a>
{frames}
<iframe name="sink" width="50" height="50"></iframe>
<form id="f" action="{targets[0]}/form" method="post" target="sink"><input name="x"></form>
<script>
  document.getElementById("f").submit();
  if (navigator.serviceWorker) navigator.serviceWorker.register("/sw.js").catch(() => {{}});
  {reach}
  console.error("a deliberate problem");
</script></body></html>"""
    pages = {"/": page, "/own.css": OWN_CSS}
    pages["/sw.js"] = f"fetch('{targets[0]}/sw');"
    for i, t in enumerate(targets):
        pages[f"/refresh{i}.html"] = f'<meta http-equiv="refresh" content="0;url={t}/refresh">'
    return pages


@pytest.fixture
def listener() -> Iterator[Secret]:
    """Another loopback port (a Redis, say), on 127.0.0.1 and ::1: counts every connection."""
    service = Secret()
    service.start()
    yield service
    service.close()


@pytest.fixture
def app(listener: Secret) -> Iterator[App]:
    site = App(hostile("p-xyz.localhost", listener.port), host="p-xyz.localhost")
    site.start()
    yield site
    site.stop()


def boxed_or_skip() -> str:
    found = chromium_or_skip()
    if browser_box()[0] is None:
        pytest.skip(f"no box for the browser here: {browser_box()[1]}")
    return found


def test_the_runtime_check_reaches_nothing_elsewhere_and_still_sees_the_page(
    listener: Secret, app: App
) -> None:
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), boxed_or_skip(), timeout_ms=8000)
    problems = asyncio.run(check.check_url(app.url, vue=False))
    time.sleep(SPECULATION_WAIT)
    assert listener.connections == 0
    assert isinstance(problems, list), f"the page was not checked: {problems}"
    assert any("a deliberate problem" in p for p in problems), problems
    assert app.requests[0] == "/" and "/own.css" in app.requests
    assert "/sw.js" not in app.requests  # service workers are blocked outright


def test_a_cover_reaches_nothing_elsewhere_and_shows_the_page(
    tmp_path: Path, listener: Secret, app: App
) -> None:
    covers = ChromiumCovers(tmp_path, "http://127.0.0.1:9", boxed_or_skip())
    blocked = asyncio.run(covers.screenshot(app.url, tmp_path / "cover.png"))
    time.sleep(SPECULATION_WAIT)
    assert listener.connections == 0
    assert f"http://127.0.0.1:{listener.port}/fetch" in blocked  # routing still says what
    png = (tmp_path / "cover.png").read_bytes()
    assert sum(near(p, OWN) for p in pixels(png)) > 10_000  # the app's own banner is there


def test_own_origin_redirects_are_followed_and_others_are_not(listener: Secret) -> None:
    elsewhere = f"http://127.0.0.1:{listener.port}/away"
    site = App(
        {"/": '<h1>x</h1><script src="/a.js"></script><img src="/b.png">'}, host="p-xyz.localhost"
    )
    site.pages["/real.js"] = "document.title = 'redirected script ran'"
    site.redirects = {"/a.js": "/real.js", "/b.png": elsewhere}
    site.start()
    try:
        title, seen = asyncio.run(_title_of(site.url, boxed_or_skip()))
    finally:
        site.stop()
    assert title == "redirected script ran"
    assert elsewhere in seen and listener.connections == 0


async def _title_of(url: str, executable: str) -> tuple[str, list[str]]:
    from playwright.async_api import async_playwright

    seen: list[str] = []
    async with async_playwright() as pw:
        browser = await launch(pw, executable, url)
        try:
            page = await (await confined(browser, url, seen=seen)).new_page()
            await page.goto(url, wait_until="networkidle")
            return await page.title(), seen
        finally:
            await browser.close()


def _exe(pid: int) -> str:
    with contextlib.suppress(OSError):
        return os.readlink(f"/proc/{pid}/exe")
    return ""


def _boxed_pids() -> list[int]:
    """The processes of a boxed Chromium: the only ones with the box's profile path."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            if f"--user-data-dir={PROFILE}".encode() in argv:
                found.append(int(entry))
    return found


def _descends(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return False


def test_chromium_runs_in_its_box_unprivileged_and_sandboxed(tmp_path: Path, app: App) -> None:
    executable = boxed_or_skip()
    data = tmp_path / "data-dir"
    data.mkdir()

    box_pid = 0

    def processes() -> dict[str, Any]:
        """What this boxed Chromium's processes are and see (read from /proc, off the loop);
        other tests' kept browsers are boxed too, each in a box of its own."""
        mine = [p for p in _boxed_pids() if _descends(p, box_pid)]
        chromium = [p for p in mine if "chrom" in _exe(p)]
        return {
            "pids": chromium,
            "uids": {_uid(p) for p in chromium},
            "argv": [Path(f"/proc/{p}/cmdline").read_bytes() for p in chromium],
            "root": {name for p in chromium for name in os.listdir(f"/proc/{p}/root")},
            "var": {name for p in chromium for name in _walk(f"/proc/{p}/root/var")},
            "data": {os.path.exists(f"/proc/{p}/root{data}") for p in chromium},
            "nets": {_interfaces(p) for p in chromium},
        }

    async def inspect() -> dict[str, Any]:
        from playwright.async_api import async_playwright

        nonlocal box_pid
        async with async_playwright() as pw:
            browser, box = await launch_boxed(pw, executable)
            assert box is not None
            box_pid = box.pid
            try:
                page = await (await confined(browser, app.url)).new_page()
                await page.goto(app.url)
                seen = await asyncio.to_thread(processes)
                return {**seen, "text": await page.inner_text("h1")}
            finally:
                await browser.close()

    seen = asyncio.run(inspect())
    assert seen["text"] == "Hostile, but rendered"
    assert seen["argv"], "no boxed Chromium process found"
    assert not any(b"--no-sandbox" in argv for argv in seen["argv"])
    if os.geteuid() == 0:
        assert seen["uids"] == {BROWSER_UID}
    assert seen["data"] == {False}  # the host's files are not there: the system alone
    system = {"bin", "dev", "etc", "lib", "lib32", "lib64", "proc", "sbin", "tmp", "usr", "var"}
    assert seen["root"] <= system
    assert seen["var"] <= {"cache", "cache/fontconfig"}
    assert seen["nets"] == {("lo",)}  # its own network namespace: loopback alone
    deadline = time.monotonic() + 5
    while set(seen["pids"]) & set(_boxed_pids()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not set(seen["pids"]) & set(_boxed_pids())  # nothing lingers once it is closed


def _walk(top: str) -> set[str]:
    """Directories under ``top``, relative, two levels deep (what /var holds in the box)."""
    found = set()
    for name in os.listdir(top) if os.path.isdir(top) else []:
        found.add(name)
        if os.path.isdir(f"{top}/{name}"):
            found |= {f"{name}/{inner}" for inner in os.listdir(f"{top}/{name}")}
    return found


def _interfaces(pid: int) -> tuple[str, ...]:
    lines = Path(f"/proc/{pid}/net/dev").read_text().splitlines()[2:]
    return tuple(sorted(line.split(":")[0].strip() for line in lines))


def _uid(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            real, effective, saved, _ = line.split()[1:]
            assert real == effective == saved
            return int(real)
    raise AssertionError(f"no Uid line for {pid}")


def test_the_box_binds_only_the_system_and_never_unsandboxes() -> None:
    box = BrowserBox("/usr/bin/bwrap", "/usr/bin/setpriv")
    argv = box.argv("/usr/bin/chromium")
    assert {"--unshare-net", "--unshare-pid", "--clearenv", "--die-with-parent"} <= set(argv)
    binds = [argv[i + 1] for i, word in enumerate(argv) if word in ("--bind", "--ro-bind")]
    assert set(binds) <= {"/usr", "/etc", "/var/cache/fontconfig", "/lib", "/lib64", "/bin"}
    assert "--bind" not in argv  # nothing of the host is writable in there
    assert argv[argv.index("--") + 1 :][:2] == ["/usr/bin/setpriv", f"--reuid={BROWSER_UID}"]
    script = box.script("/usr/bin/chromium")
    assert "--no-sandbox) continue" in script and "Prerender2" in script
    unprivileged = BrowserBox("/usr/bin/bwrap", None).argv("/usr/bin/chromium")
    assert "--unshare-all" in unprivileged and "setpriv" not in " ".join(unprivileged)


def test_without_bubblewrap_there_is_no_browser_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executable = chromium_or_skip()
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "bwrap" else real(name))
    assert browser_box()[0] is None and "apt-get install bubblewrap" in browser_box()[1]
    assert availability(executable).startswith("off: ")
    urls = SiteUrls("http://127.0.0.1:9")
    assert chromium_check(urls, executable) is None
    assert chromium_covers(tmp_path, "http://127.0.0.1:9", executable) is None
    with pytest.raises(RuntimeError, match="bubblewrap"):
        asyncio.run(_launch_only(executable))
    settings = Settings(data_dir=tmp_path / "data")
    off = wiring.platform(settings)
    assert off.publishing.covers is None and off.engine.runtime_check is None
    assert off.browser.startswith("off: ") and "bubblewrap" in off.browser
    assert f"browser   {off.browser}" in banner(settings, "offline", "x", off.browser)


def test_the_platform_says_how_its_browser_is_confined(tmp_path: Path) -> None:
    boxed_or_skip()
    on = wiring.platform(Settings(data_dir=tmp_path / "on"))
    assert on.browser == browser_box()[1] and on.browser.startswith("confined (bubblewrap")
    assert on.publishing.covers is not None and on.engine.runtime_check is not None
    quiet = wiring.platform(Settings(data_dir=tmp_path / "q", covers=False))
    assert quiet.browser == "off (ZEROCODE_COVERS=0)"


async def _launch_only(executable: str) -> None:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        await launch(pw, executable, "http://app1.localhost:9/")
