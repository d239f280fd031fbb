"""The Code tab's editor in real headless Chromium, through the real server and the offline
model (issue 26, point 1): CodeMirror from the platform's own bundle (web/vendor/editor.js,
built by ``make`` from web/editor/) with the file's language, typing and saving (Ctrl+S and
the button) a hand edit that becomes a version "edited by hand", rebuilds the preview and
leaves a note in the chat; a stale save (412) and a save during a turn (409) said plainly
with Reload; drafts kept across files; copy and download; the dark theme; no CSP violation
under the console's ``style-src 'self'``; and the plain text area when the bundle is absent.
Screenshots go to test-artifacts/console-ui/."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, running_turn, stop_turn
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    WEB,
    api_for,
    browser,
    new_page,
    register,
    shot,
)

ROOT = WEB.parent
BUNDLE = WEB / "vendor" / "editor.js"
# Everything the page reports about its CSP, from before its own scripts run.
CSP_WATCH = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample}`));
"""


@pytest.fixture(scope="module")
def bundle() -> Path:
    """web/vendor/editor.js, made as ``make`` makes it (`make test` has, before the suite)."""
    if shutil.which("npm") is None and not BUNDLE.is_file():
        if os.environ.get("ZEROCODE_REQUIRE_CHROMIUM"):
            raise RuntimeError("npm is missing: the code editor's bundle cannot be built")
        pytest.skip("npm is missing: the code editor's bundle cannot be built")
    # One build at a time: test workers may ask together (make decides whether it is stale).
    with (WEB / "editor" / "package.json").open() as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["make", "-s", "web/vendor/editor.js"], cwd=ROOT, capture_output=True, text=True
        )
    assert BUNDLE.is_file(), done.stdout + done.stderr
    return BUNDLE


def watched_page(browser: Any) -> Any:  # noqa: F811
    page = new_page(browser)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.add_init_script(CSP_WATCH)
    said: list[str] = []
    page.on("console", lambda m: said.append(m.text) if m.type == "error" else None)
    page.console_errors = said
    return page


def csp_violations(page: Any) -> list[str]:
    found = list(page.evaluate("window.__csp"))
    found += [m for m in page.console_errors if "Content Security Policy" in m]
    return found


def an_app(
    page: Any, server: Server, prompt: str, mode: str
) -> tuple[httpx.Client, dict[str, Any]]:
    register(page, server)
    owner = api_for(page, server)
    app = create(owner, prompt, mode)
    assert chat(owner, app["id"], app["initPrompt"]).done is not None
    return owner, app


def open_code(page: Any, server: Server, app_id: str, path: str | None = None) -> None:
    page.goto(f"{server.api}/console/#/apps/{app_id}")
    page.click("#tab-code")
    if path:
        page.click(f"#code-view button.file[data-path='{path}']")
        page.wait_for_selector(f"#code-path >> text={path}")
    page.wait_for_function("() => document.querySelector('#code-editor')?.editor")


def editor_text(page: Any) -> str:
    return str(page.evaluate("document.querySelector('#code-editor').editor.getDoc()"))


def type_into_h1(page: Any, source: str, text: str) -> str:
    """Types ``text`` at the end of the file's <h1>'s content with the keyboard (a click on
    its line, End, back over ``</h1>``), as a person would; the file as it should be after."""
    line = next(x for x in source.splitlines() if "<h1>" in x)
    assert line.rstrip().endswith("</h1>"), line
    page.locator("#code-editor .cm-line", has_text="<h1>").first.click()
    page.keyboard.press("End")
    for _ in range(len("</h1>") + len(line) - len(line.rstrip())):
        page.keyboard.press("ArrowLeft")
    page.keyboard.type(text)
    page.keyboard.press("Escape")  # any completion popup
    return source.replace(line, line.replace("</h1>", f"{text}</h1>", 1), 1)


def status(page: Any, pattern: str) -> str:
    page.wait_for_function(
        "p => new RegExp(p).test(document.querySelector('#code-status')?.innerText || '')",
        arg=pattern,
        timeout=TURN_MS,
    )
    return str(page.inner_text("#code-status"))


def test_a_hand_edit_is_saved_versioned_previewed_and_a_stale_one_refused(
    browser: Any,  # noqa: F811
    server: Server,
    bundle: Path,
) -> None:
    page = watched_page(browser)
    owner, app = an_app(page, server, "A page about plovers", "multi_file")
    base = f"/api/apps/{app['id']}"
    source = owner.get(f"{base}/files/index.html").text

    open_code(page, server, app["id"])
    page.wait_for_selector("#code-editor .cm-editor .cm-content")
    assert page.get_attribute("#code-editor", "data-language") == "html"
    assert page.inner_text("#code-language") == "HTML"
    assert page.get_attribute("#code-editor .cm-content", "aria-label") == "Code of index.html"
    assert editor_text(page) == source
    assert page.is_disabled("#code-save")  # nothing changed yet
    assert not page.is_visible(".unsaved-mark")

    expected = type_into_h1(page, source, " and Terns")
    assert editor_text(page) == expected
    page.keyboard.press("Tab")  # Tab leaves the editor: it traps no keyboard user
    assert page.evaluate("document.activeElement.id") != "code-editor"
    assert editor_text(page) == expected
    assert page.is_enabled("#code-save")
    assert page.is_visible(".unsaved-mark")
    page.wait_for_selector("#code-view button.file.draft[data-path='index.html']")

    # Another file (its own language) and back: the draft is kept (sessionStorage), unasked.
    for other, language in (("style.css", "css"), ("script.js", "javascript")):
        page.click(f"#code-view button.file[data-path='{other}']")
        page.wait_for_selector(f"#code-path >> text={other}")
        page.wait_for_selector(f"#code-editor[data-language={language}] .cm-content")
        assert editor_text(page) == owner.get(f"{base}/files/{other}").text
    page.click("#code-view button.file[data-path='index.html']")
    page.wait_for_selector("#code-path >> text=index.html")
    status(page, "unsaved changes to this file were kept")
    assert editor_text(page) == expected
    assert page.is_enabled("#code-save")
    page.click("#tab-versions")
    page.click("#tab-code")
    page.wait_for_selector("#code-path >> text=index.html")
    assert editor_text(page) == expected
    shot(page, "code-1-edited")

    # Ctrl+S in the editor saves: a version marked as a hand edit, the preview rebuilt.
    page.locator("#code-editor .cm-content").click()
    page.keyboard.press("Control+s")
    said = status(page, r"Saved as v\d+")
    assert re.fullmatch(r"Saved as v2 · preview rebuilt", said), said
    assert owner.get(f"{base}/files/index.html").text == expected
    assert page.is_disabled("#code-save") and not page.is_visible(".unsaved-mark")
    assert page.query_selector("#code-view button.file.draft") is None
    shot(page, "code-2-saved")
    page.click("#tab-preview")
    page.frame_locator("#preview").locator("h1", has_text="and Terns").wait_for(timeout=TURN_MS)
    note = page.wait_for_selector("#messages .note")
    assert "v2" in note.inner_text() and "by hand" in note.inner_text(), note.inner_text()
    page.click("#tab-versions")
    page.wait_for_selector("#versions li[data-version=v2].current")
    assert "edited by hand" in page.inner_text("#versions li[data-version=v2]")
    assert "edited by hand" not in page.inner_text("#versions li[data-version=v1]")
    versions = owner.get(f"{base}/versions").json()["versions"]
    assert (versions[0]["id"], versions[0]["kind"]) == ("v2", "edit")
    assert versions[1]["kind"] != "edit"

    # Someone else saves the file meanwhile: this page's save is refused (412), said plainly,
    # and Reload brings the file as it is now. Back on the tab, the view reads the file again
    # (a clean editor takes it as it is): that read is over before the other save, or the
    # editor could take their file (a CI run typed into it and saved it, not stale at all).
    read = f"/api/apps/{app['id']}/files/index.html"
    with page.expect_response(lambda r: r.request.method == "GET" and r.url.endswith(read)) as got:
        page.click("#tab-code")
    got.value.finished()
    page.wait_for_selector("#code-path >> text=index.html")
    etag = owner.get(f"{base}/files/index.html").headers["etag"]
    theirs = expected.replace(" and Terns", " and Gulls")
    saved = owner.put(
        f"{base}/files/index.html", json={"content": theirs}, headers={"If-Match": etag}
    )
    assert saved.status_code == 200, saved.text
    type_into_h1(page, expected, "!")
    page.click("#code-save")
    said = status(page, "Not saved")
    assert "changed since you opened it" in said, said
    shot(page, "code-3-stale")
    page.click("#code-reload")
    status(page, "The file as it is now")
    assert editor_text(page) == theirs
    assert page.is_disabled("#code-save")

    # A save while a turn runs: 409, said plainly, with Reload.
    # (Between two of this page's polls, turned off here: it would follow the turn.)
    page.evaluate("window.ZEROCODE_CONFIG.turnPollMs = 0")
    slow = threading.Thread(target=chat, args=(owner, app["id"], "[[slow]] Change the title"))
    slow.start()
    try:
        turn = running_turn(owner, app["id"])  # the slow turn holds the app's lease now
        type_into_h1(page, theirs, "?")
        page.click("#code-save")
        said = status(page, "Not saved")
        assert "turn" in said and page.is_visible("#code-reload"), said
        stop_turn(owner, app["id"], turn)  # it served: no need to wait out its paced text
    finally:
        slow.join()

    # Copy and download the file as the editor holds it.
    page.click("#code-copy")
    status(page, "index.html copied")
    assert page.evaluate("navigator.clipboard.readText()") == editor_text(page)
    with page.expect_download() as download:
        page.click("#code-download")
    assert download.value.suggested_filename == "index.html"
    assert Path(download.value.path()).read_text(encoding="utf-8") == editor_text(page)

    # The dark theme reaches the editor (One Dark), and back.
    background = (
        "getComputedStyle(document.querySelector('#code-editor').shadowRoot"
        ".querySelector('.cm-editor')).backgroundColor"
    )
    page.select_option("#theme", "dark")
    page.wait_for_function(f"() => {background} === 'rgb(40, 44, 52)'")
    shot(page, "code-4-dark")
    page.select_option("#theme", "light")
    page.wait_for_function(f"() => {background} === 'rgb(255, 255, 255)'")

    # In Chinese: the chat's note and the version's mark.
    page.select_option("#lang", "zh-CN")
    page.wait_for_selector("#messages .note >> text=手动编辑")
    assert "已保存为 v2" in page.inner_text("#messages .note")
    page.click("#tab-versions")
    page.wait_for_selector("#versions li[data-version=v2] >> text=手动编辑")

    assert csp_violations(page) == []
    assert page.errors == []


def test_a_vue_file_gets_the_vue_mode_and_its_edit_rebuilds_the_vue_preview(
    browser: Any,  # noqa: F811
    server: Server,
    bundle: Path,
) -> None:
    page = watched_page(browser)
    owner, app = an_app(page, server, "A Vue todo app", "vue_project")
    base = f"/api/apps/{app['id']}"
    sources = {
        f["path"]: owner.get(f"{base}/files/{f['path']}").text
        for f in owner.get(f"{base}/files").json()["files"]
        if f["path"].endswith(".vue")
    }
    view, source = next((p, text) for p, text in sources.items() if "@click" in text)

    open_code(page, server, app["id"], view)
    page.wait_for_selector("#code-editor .cm-editor .cm-content")
    assert page.get_attribute("#code-editor", "data-language") == "vue"
    assert page.inner_text("#code-language") == "Vue"
    # The parse: `@click` is a Vue directive (its `click` an identifier, no error node), and
    # its value is JavaScript; HTML alone would read an attribute name and a string.
    syntax = "(p) => document.querySelector('#code-editor').editor.syntaxAt(p)"
    at_click = page.evaluate(syntax, source.index("@click") + 2)
    assert at_click[0] == "Identifier" and "⚠" not in at_click, at_click
    value = source.index('"', source.index("@click")) + 2
    assert page.evaluate(syntax, value)[0] == "VariableName", page.evaluate(syntax, value)
    # The script block is JavaScript too.
    assert page.evaluate(syntax, source.index("ref(0)") + 1)[0] == "VariableName"
    shot(page, "code-5-vue")

    expected = type_into_h1(page, source, " by hand")
    page.click("#code-save")
    said = status(page, r"Saved as v\d+")
    assert said.startswith("Saved as v2 · preview rebuilt"), said
    assert owner.get(f"{base}/files/{view}").text == expected
    page.click("#tab-preview")
    page.frame_locator("#preview").locator("h1", has_text="by hand").wait_for(timeout=TURN_MS)
    assert csp_violations(page) == []
    assert page.errors == []


def test_the_editor_bundle_is_served_as_javascript_under_the_console_policy(
    server: Server, bundle: Path
) -> None:
    response = httpx.get(f"{server.api}/console/vendor/editor.js")
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] in (
        "text/javascript",
        "application/javascript",
    )
    assert "style-src 'self'" in response.headers["content-security-policy"]
    assert "export" in response.text and len(response.content) == bundle.stat().st_size


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose console has no vendor/ (npm could not build the editor)."""
    console = tmp_path_factory.mktemp("console")
    for item in WEB.iterdir():
        if item.is_file():
            shutil.copy(item, console / item.name)
    srv = Server(tmp_path_factory.mktemp("zerocode-e2e"))
    srv.env["ZEROCODE_CONSOLE_DIR"] = str(console)
    srv.start()
    yield srv
    srv.stop()


def test_without_the_bundle_the_code_tab_is_a_plain_text_area_that_saves(
    browser: Any,  # noqa: F811
    bare_server: Server,
) -> None:
    assert httpx.get(f"{bare_server.api}/console/vendor/editor.js").status_code == 404
    page = watched_page(browser)
    owner, app = an_app(page, bare_server, "A page about herons", "html")
    source = owner.get(f"/api/apps/{app['id']}/files/index.html").text
    open_code(page, bare_server, app["id"])
    area = page.wait_for_selector("#code-editor textarea.code-plain")
    assert area.get_attribute("aria-label") == "Code of index.html"
    assert area.input_value() == source
    assert page.inner_text("#code-language") == "plain text"
    assert "code editor is not installed" in page.inner_text("#code-plain-note")
    assert page.query_selector("#code-editor .cm-editor") is None
    line = next(x for x in source.splitlines() if "<h1>" in x)
    area.fill(source.replace(line, line.replace("</h1>", " and Egrets</h1>", 1), 1))
    area.press("Control+s")
    assert status(page, r"Saved as v\d+").startswith("Saved as v2 · preview rebuilt")
    page.click("#tab-preview")
    page.frame_locator("#preview").locator("h1", has_text="and Egrets").wait_for(timeout=TURN_MS)
    assert csp_violations(page) == []
    assert page.errors == []
