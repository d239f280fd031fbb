"""The runtime check in real headless Chromium (issue 14): what fails on a preview page is
reported, bounded and without the preview's key; what the confinement blocks is not a fault
of the page (and is still blocked); a page that is fine has no problems. Last, the offline
model's flaws fail as documented in real Vite and Chromium, and their repairs do not."""

from __future__ import annotations

import asyncio
import functools
import http.server
import json
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import shared_loop
from tests.integration.adapters.test_chromium_covers import Secret, chromium_or_skip
from zerocode.adapters.local import chromium_check as check_module
from zerocode.adapters.local.browser_pool import BrowserPool
from zerocode.adapters.local.chromium_check import (
    GIVE_UP_SECONDS,
    MAX_PROBLEM_CHARS,
    MAX_PROBLEMS,
    QUIET_MS,
    SETTLE_MS,
    ChromiumCheck,
    chromium_check,
)
from zerocode.adapters.local.page_traffic import Traffic
from zerocode.adapters.model.offline.flaws import (
    COMPONENT,
    COUNTER_COMPONENT,
    stubborn_home_view,
)
from zerocode.adapters.model.offline.script import answer
from zerocode.adapters.model.offline.vue import HOME_VIEW
from zerocode.apps.records import App, CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.engine import prompts
from zerocode.engine.codegen import parse_html, parse_multi_file
from zerocode.engine.repair import Failure, repair_message
from zerocode.engine.runtime_check import NotChecked, RuntimeCheck
from zerocode.publishing.builds import (
    Build,
    BuildJob,
    BuildPurpose,
    BuildState,
    new_build_id,
)
from zerocode.publishing.pointers import SiteTarget, SiteUrls, preview_pointer

FINE = "<!doctype html><html><body><h1>Fine</h1><script>console.log('hi')</script></body></html>"


@dataclass
class Site:
    """An app's origin: ``pages`` by path (anything else is a 404), and what was asked for."""

    pages: dict[str, str]
    requests: list[str] = field(default_factory=list)
    host: str = "app1.localhost"
    delays: dict[str, float] = field(default_factory=dict)  # seconds before a path answers
    hung: tuple[str, ...] = ()  # paths that never answer (held until the site stops)
    directory: Path | None = None  # or serve the files of a build's output
    server: http.server.ThreadingHTTPServer | None = None
    released: threading.Event = field(default_factory=threading.Event)

    def start(self) -> None:
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                if outer.directory is not None:
                    super().do_GET()
                    return
                path = self.path.split("?")[0]
                if path in outer.hung:
                    outer.released.wait()
                    return  # the connection closes with no answer
                time.sleep(outer.delays.get(path, 0))
                page = outer.pages.get(path)
                if page is None:
                    self.send_error(404)
                    return
                body = page.encode()
                kind = {"js": "text/javascript", "css": "text/css"}.get(
                    path.rsplit(".", 1)[-1], "text/html"
                )
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        handler = functools.partial(Handler, directory=str(self.directory or "."))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def stop(self) -> None:
        self.released.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def secret() -> Iterator[Secret]:
    service = Secret()
    service.start()
    yield service
    service.close()


def problems_of(
    page: str, *, vue: bool = False, files: dict[str, str] | None = None
) -> tuple[list[str], Site]:
    """The check's problems with the page at ``/`` (and ``files`` by name), and the site."""
    site = Site({"/": page, **{f"/{name}": body for name, body in (files or {}).items()}})
    site.start()
    try:
        check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip(), timeout_ms=5000)
        problems = shared_loop.run(check.check_url(site.url, vue=vue))
        assert isinstance(problems, list), f"the page was not checked: {problems}"
        return problems, site
    finally:
        site.stop()


def test_a_fine_page_has_no_problems() -> None:
    problems, site = problems_of(FINE)
    assert problems == [] and site.requests[0] == "/"


def test_an_exception_at_load_is_a_problem_naming_the_error() -> None:
    page = (
        "<body><h1>x</h1><script>\nconst button = null;\n"
        "button.addEventListener('click', () => {});\n</script></body>"
    )
    problems, _ = problems_of(page)
    assert len(problems) == 1, problems
    (problem,) = problems
    assert problem.startswith("uncaught TypeError: Cannot read properties of null")
    assert "addEventListener" in problem


def test_a_syntax_error_is_a_problem() -> None:
    problems, _ = problems_of("<body><h1>x</h1><script>function f() {</script></body>")
    assert len(problems) == 1 and problems[0].startswith("uncaught SyntaxError"), problems


def test_console_error_is_a_problem_and_warnings_are_not() -> None:
    page = (
        "<body><h1>x</h1><script>console.warn('[Vue warn]: just a warning');"
        "console.error('the cart could not be loaded', 42);</script></body>"
    )
    problems, _ = problems_of(page)
    assert problems == ["console.error: the cart could not be loaded 42 (at /:1:76)"], problems


def test_an_unhandled_rejection_is_a_problem() -> None:
    problems, _ = problems_of(
        "<body><h1>x</h1><script>Promise.reject(new Error('no data'))</script></body>"
    )
    assert len(problems) == 1 and "Error: no data" in problems[0], problems


def test_a_missing_script_of_the_own_origin_is_a_problem() -> None:
    problems, _ = problems_of('<body><h1>x</h1><script src="app.js"></script></body>')
    assert len(problems) == 1 and "404" in problems[0], problems
    assert "/app.js" in problems[0]


def test_a_vue_app_that_never_mounts_is_an_empty_mount_point() -> None:
    page = '<body><div id="app"></div><script type="module">const x = 1;</script></body>'
    problems, _ = problems_of(page, vue=True)
    assert problems == [
        "empty mount point: #app has no content after load "
        "(the app did not mount, or rendered nothing)"
    ]
    mounted = '<body><div id="app"></div><script>app.innerHTML = "<main>hi</main>"</script></body>'
    assert problems_of(mounted, vue=True)[0] == []
    assert "there is no #app" in problems_of("<body><p>x</p></body>", vue=True)[0][0]


def test_an_empty_page_is_a_problem_for_html() -> None:
    problems, _ = problems_of("<html><body>\n  <script>let x = 1;</script>\n</body></html>")
    assert problems == ["empty page: <body> has no content after load"]
    assert problems_of("<body>just text</body>")[0] == []
    assert problems_of("<body><canvas></canvas></body>")[0] == []


def test_a_page_that_never_loads_is_reported_as_hanging() -> None:
    site = Site({"/": "<body><h1>x</h1><script>while (true) {}</script></body>"})
    site.start()
    try:
        check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip(), timeout_ms=1500)
        problems = asyncio.run(check.check_url(site.url, vue=False))
    finally:
        site.stop()
    assert problems == ["the page / did not finish loading within 1.5 s"]


def test_problems_are_bounded_in_count_and_size() -> None:
    page = (
        "<body><h1>x</h1><script>for (let i = 0; i < 25; i++) "
        "console.error('problem ' + i + ' ' + 'x'.repeat(1000));</script></body>"
    )
    problems, _ = problems_of(page)
    assert len(problems) == MAX_PROBLEMS
    assert all(len(p) <= MAX_PROBLEM_CHARS for p in problems)
    assert problems[0].startswith("console.error: problem 0 xxx") and problems[0].endswith("…")
    assert problems[-1] == "(and 16 more problems)"


def test_reaching_another_origin_is_blocked_and_not_a_problem(secret: Secret) -> None:
    loop = f"127.0.0.1:{secret.port}"
    page = f"""<body><h1>x</h1><img src="http://{loop}/image.png">
<script>
  fetch("http://{loop}/data").then(r => r.json()).then(d => document.title = d.t);
  fetch("http://{loop}/caught").catch(() => {{}});
  const x = new XMLHttpRequest(); x.open("GET", "http://{loop}/xhr"); x.send();
</script></body>"""
    problems, site = problems_of(page)
    time.sleep(0.5)  # anything still in flight would arrive by now
    assert problems == [], problems
    assert (secret.connections, secret.packets) == (0, 0)
    assert site.requests[0] == "/"


def test_the_preview_key_never_appears_in_a_problem() -> None:
    key = "abcdefghijklmnopqrstuvwxyz"
    site = Site({"/": "<body><h1>x</h1><script>throw new Error(location.href)</script></body>"})
    site.start()
    try:
        urls = SiteUrls(f"http://127.0.0.1:{site.port}", f"localhost:{site.port}")
        app = App(
            id="app1",
            owner="u1",
            name="x",
            code_gen_type=CodeGenType.HTML,
            init_prompt="x",
            preview_key=key,
        )
        build = Build(
            id=new_build_id(),
            app_id=app.id,
            purpose=BuildPurpose.PREVIEW,
            kind=CodeGenType.HTML,
            source_digest="digest",
            state=BuildState.SUCCEEDED,
        )
        publisher = Pointers({preview_pointer(key): SiteTarget(app.id, build.id)})
        check: RuntimeCheck = ChromiumCheck(urls, chromium_or_skip(), publisher=publisher)
        problems = shared_loop.run(check.check(app, build))
        assert len(site.requests) == 1
        assert problems == ["uncaught Error: / (at /:1:31)"], problems
        # a preview that shows another build is not checked (nothing is loaded)
        publisher.pointers[preview_pointer(key)] = SiteTarget(app.id, "b0000000000000000000")
        assert shared_loop.run(check.check(app, build)) is None and len(site.requests) == 1
        failed = Build(
            id=build.id,
            app_id=app.id,
            purpose=BuildPurpose.PREVIEW,
            kind=CodeGenType.HTML,
            source_digest="d",
        )
        assert shared_loop.run(check.check(app, failed.failed("no"))) is None
    finally:
        site.stop()


def test_no_sites_server_means_not_checked_not_a_failure() -> None:
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip())
    assert asyncio.run(check.check_url("http://app1.localhost:9/", vue=False)) is None


def test_a_chromium_that_cannot_start_means_not_checked(tmp_path: Path) -> None:
    pytest.importorskip("playwright")
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), str(fake))
    assert asyncio.run(check.check_url("http://app1.localhost:9/", vue=False)) is None
    assert chromium_check(SiteUrls("http://127.0.0.1:9"), str(fake)) is not None


class Pointers:
    def __init__(self, pointers: dict[str, SiteTarget]) -> None:
        self.pointers = pointers

    def point(self, pointer: str, target: SiteTarget) -> None:
        self.pointers[pointer] = target

    def target(self, pointer: str) -> SiteTarget | None:
        return self.pointers.get(pointer)

    def remove(self, pointer: str) -> None:
        self.pointers.pop(pointer, None)


# -- the offline model's flaws, in real Vite and Chromium ------------------------------------


def vue_files(flaw: str, *, repaired: bool) -> dict[str, str]:
    """The files of the offline model's Vue creation with ``flaw``, and after its repair."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompts.load("vue_project")},
        {"role": "user", "content": f"A vue tip calculator [[flaw={flaw}]]"},
    ]
    files = {
        a["path"]: a["content"] for a in (json.loads(c.arguments) for c in answer(messages).calls)
    }
    if repaired and flaw == "import":
        files[COMPONENT] = COUNTER_COMPONENT
    elif repaired:
        plain = [messages[0], {"role": "user", "content": "A vue tip calculator"}]
        files = {
            a["path"]: a["content"] for a in (json.loads(c.arguments) for c in answer(plain).calls)
        }
    return files


def build_and_check(builder: Any, files: dict[str, str]) -> tuple[bool, list[str], str]:
    job = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of({p: c.encode() for p, c in files.items()}),
    )
    outcome = asyncio.run(builder.build(job))
    if not outcome.ok:
        return False, [], outcome.log_tail
    site = Site({}, directory=Path(outcome.output))
    site.start()
    try:
        check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip())
        problems = shared_loop.run(check.check_url(site.url, vue=True))
        assert isinstance(problems, list), f"the page was not checked: {problems}"
        return True, problems, outcome.log_tail
    finally:
        site.stop()


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_the_offline_vue_flaws_fail_as_documented_and_their_repairs_do_not(
    local_builder: Any,
) -> None:
    chromium_or_skip()
    for flaw in ("syntax", "import"):
        built, _, log = build_and_check(local_builder, vue_files(flaw, repaired=False))
        assert not built and "HomeView.vue" in log, (flaw, log)
    plain = vue_files("syntax", repaired=True)
    for repairs in (1, 2, 3):  # a stubborn model's every repair fails the build too
        broken = {**plain, HOME_VIEW: stubborn_home_view(plain[HOME_VIEW], repairs)}
        built, _, log = build_and_check(local_builder, broken)
        assert not built and "HomeView.vue" in log, (repairs, log)
    built, problems, log = build_and_check(local_builder, vue_files("runtime", repaired=False))
    assert built, log
    assert len(problems) == 1 and "TypeError" in problems[0] and "count" in problems[0], problems
    # The syntax and runtime flaws' repair is the plain creation itself (``plain``, above):
    # built and checked once; the import flaw's repair keeps its own component.
    for flaw in ("syntax", "import"):
        built, problems, log = build_and_check(local_builder, vue_files(flaw, repaired=True))
        assert built and problems == [], (flaw, problems, log)
    assert vue_files("runtime", repaired=True) == plain


def page_files(kind: str, flaw: str, *, repaired: bool) -> dict[str, str]:
    """The files the engine saves from the offline model's page creation with ``flaw`` (and,
    ``repaired``, from its answer to a repair feedback)."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": prompts.load(kind)},
        {"role": "user", "content": f"A tip calculator [[flaw={flaw}]]"},
    ]
    text = answer(messages).text
    if repaired:
        failure = Failure("runtime", "the page fails in the browser", ("x",))
        messages += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": repair_message(failure, 1, 2)},
        ]
        text = answer(messages).text
    return parse_html(text) if kind == "html" else parse_multi_file(text)


@pytest.mark.parametrize("kind", ["html", "multi_file"])
@pytest.mark.parametrize("flaw", ["syntax", "import", "runtime", "stubborn"])
def test_the_offline_page_flaws_fail_in_the_browser_and_their_repairs_do_not(
    kind: str, flaw: str
) -> None:
    def problems(files: dict[str, str]) -> list[str]:
        return problems_of(files.pop("index.html"), files=files)[0]

    found = problems(page_files(kind, flaw, repaired=False))
    assert len(found) == 1, found
    assert {"syntax": "SyntaxError", "import": "404", "runtime": "TypeError"}.get(
        flaw, "TypeError"
    ) in found[0]
    after = problems(page_files(kind, flaw, repaired=True))
    assert after == ([] if flaw != "stubborn" else found), after


def test_the_local_platform_wires_the_check_unless_it_or_covers_are_off(tmp_path: Path) -> None:
    chromium_or_skip()
    on = wiring.platform(Settings(data_dir=tmp_path / "on"))
    check = on.engine.runtime_check
    assert isinstance(check, ChromiumCheck) and check.urls == on.publishing.urls
    assert check.publisher is on.publishing.publisher and check.apps is on.apps
    assert (
        wiring.platform(Settings(data_dir=tmp_path / "a", covers=False)).engine.runtime_check
        is None
    )
    off = Settings(data_dir=tmp_path / "b", runtime_check=False)
    assert wiring.platform(off).engine.runtime_check is None


def test_checks_beyond_the_browser_pages_wait_for_one() -> None:
    """A burst of turns never opens more contexts than the browser's pages allow: the rest
    wait their turn (browser_shares) and are all checked."""
    site = Site({"/": "<body><h1>fine</h1></body>"})
    site.start()
    try:
        check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip())
        check.browsers = BrowserPool(check.executable, pages=1)
        running = {"now": 0, "most": 0}
        real_inspect = check_module.inspect_page

        async def counted(*args: Any, **kwargs: Any) -> bool:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
            try:
                return await real_inspect(*args, **kwargs)
            finally:
                running["now"] -= 1

        async def burst() -> list[list[str] | NotChecked | None]:
            try:
                return list(
                    await asyncio.gather(*(check.check_url(site.url, vue=False) for _ in range(3)))
                )
            finally:
                await check.browsers.close()

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(check_module, "inspect_page", counted)
            assert asyncio.run(burst()) == [[], [], []]
        assert running["most"] == 1
    finally:
        site.stop()


def test_what_starts_just_after_load_is_still_seen() -> None:
    """The settle wait (no request in flight for QUIET_MS, at most SETTLE_MS): a request a
    timer starts just after load and the server answers slowly (a router's first view loads
    its chunk this way), and what its answer makes fail, is seen; so is what the page logs
    meanwhile."""
    page = """<body><h1>x</h1><script>
  setTimeout(() => fetch("/late.json").then((r) => r.json())
    .then((d) => { throw new Error(d.m); }), 30);
  setTimeout(() => console.error("soon after load"), 60);
</script></body>"""
    site = Site({"/": page, "/late.json": '{"m": "late data"}'}, delays={"/late.json": 0.6})
    site.start()
    try:
        check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip())
        problems = shared_loop.run(check.check_url(site.url, vue=False))
    finally:
        site.stop()
    assert isinstance(problems, list) and len(problems) == 2, problems
    assert problems[0].startswith("console.error: soon after load"), problems
    assert "late data" in problems[1], problems


# -- the settle wait's bound: a page that never goes quiet is still checked, in time --------

NEVER_QUIET = {
    # its one request never answers: in flight until the check ends
    "hangs": "<body><h1>x</h1><script>fetch('/hang').then(() => {}, () => {});</script></body>",
    # a request every 60 ms, each answered in 30 ms: never QUIET_MS without one in flight
    # (unless a loaded machine delays the page's timers: then it settles, as it should)
    "polls": "<body><h1>x</h1><script>setInterval(() => fetch('/poll?' + Math.random())"
    ".then(() => {}, () => {}), 60);</script></body>",
}


@pytest.mark.parametrize("kind", sorted(NEVER_QUIET))
def test_a_page_that_never_goes_quiet_is_checked_within_the_settle_bound(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settle wait ends at SETTLE_MS however busy the page stays (a request that never
    answers, a poll): the check returns its findings, with what the page logged while it
    waited, instead of waiting for the page (the hanging request never answers) until
    GIVE_UP_SECONDS and reporting nothing."""
    waits: list[float] = []
    settled = Traffic.settled

    async def timed_wait(self: Traffic, quiet_ms: float, bound_ms: float) -> None:
        began = self.loop.time()
        try:
            await settled(self, quiet_ms, bound_ms)
        finally:
            waits.append(self.loop.time() - began)

    monkeypatch.setattr(Traffic, "settled", timed_wait)
    late = "<script>setTimeout(() => console.error('logged while settling'), 300);</script>"
    pages = {"/": NEVER_QUIET[kind].replace("</body>", late + "</body>"), "/poll": "ok"}
    site = Site(pages, hung=("/hang",), delays={"/poll": 0.03})
    site.start()

    async def timed() -> tuple[list[str] | NotChecked | None, float, list[str]]:
        check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), chromium_or_skip())
        check.browsers = BrowserPool(check.executable)  # its own, started before the clock
        try:
            await check.browsers.warm()
            began = time.monotonic()
            problems = await check.check_url(site.url, vue=False)
            return problems, time.monotonic() - began, list(site.requests)
        finally:
            await check.browsers.close()

    try:
        problems, seconds, requests = asyncio.run(timed())
    finally:
        site.stop()
    assert isinstance(problems, list), (problems, seconds, waits)  # checked, not abandoned
    bound = SETTLE_MS / 1000
    assert len(waits) == 1, waits
    # The wait ended by its bound, the whole check soon after (its load and its context's
    # close take seconds at most on a loaded machine), far from GIVE_UP_SECONDS, where a
    # wait for the hanging request would have ended. The margin is the event loop's slack
    # on a starved machine: 0.5 s was once not enough (2.81 s for the 2 s bound, 6 test
    # processes on 2 cores); how soon after its bound the wait ends is bench material.
    assert waits[0] < bound + 4.0 < GIVE_UP_SECONDS, waits
    assert seconds < bound + 8.0 < GIVE_UP_SECONDS, (seconds, waits)
    if kind == "hangs":  # in flight all along: never quiet, the wait ran to its bound
        assert "/hang" in requests, requests
        assert waits[0] >= bound, waits
        assert len(problems) == 1, (problems, seconds, waits)
        assert problems[0].startswith("console.error: logged while settling"), problems
    else:  # a loaded machine may delay the page's timers into a quiet moment: settled
        assert all(p.startswith("console.error: logged while settling") for p in problems)
        assert any(r.startswith("/poll") for r in requests), requests


class FakePage:
    """The request events of a page, driven by the test (for :class:`Traffic`)."""

    def __init__(self) -> None:
        self.handlers: dict[str, Any] = {}

    def on(self, event: str, handler: Any) -> None:
        self.handlers[event] = handler

    def emit(self, event: str, request: object) -> None:
        self.handlers[event](request)

    async def evaluate(self, script: str, ms: float) -> None:
        """The page's clock: here the loop's (a page timer of ``ms``)."""
        assert "setTimeout" in script
        await asyncio.sleep(ms / 1000)


def test_the_settle_wait_ends_at_quiet_or_at_its_bound_whichever_comes_first() -> None:
    """Traffic.settled, timed on the event loop: QUIET_MS after the last request ended, or
    the bound when a request stays in flight or new ones keep starting."""

    async def settle(traffic: str) -> float:
        page = FakePage()
        watch = Traffic(page)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()

        async def polls() -> None:  # each next request starts before the last one ends
            last = object()
            page.emit("request", last)
            while True:
                await asyncio.sleep(0.03)
                request = object()
                page.emit("request", request)
                page.emit("requestfinished", last)
                last = request

        poller = loop.create_task(polls()) if traffic == "polls" else None
        if traffic == "hangs":
            page.emit("request", object())
        elif traffic == "ends":  # one request, answered after 0.2 s
            request = object()
            page.emit("request", request)
            loop.call_later(0.2, page.emit, "requestfailed", request)
        began = loop.time()
        await watch.settled(QUIET_MS, 600)
        if poller is not None:
            poller.cancel()
        return loop.time() - began

    quiet = QUIET_MS / 1000
    assert quiet <= asyncio.run(settle("none")) < quiet + 0.5
    assert 0.2 + quiet <= asyncio.run(settle("ends")) < 0.2 + quiet + 0.5
    for traffic in ("hangs", "polls"):  # the bound, however busy (the loop's slack aside)
        assert 0.6 <= asyncio.run(settle(traffic)) < 0.6 + 0.5, traffic
