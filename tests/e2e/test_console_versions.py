"""The console's code view and versions in real headless Chromium: the file tree and the
highlighted source (Pygments on the server), each version's diff, restoring an earlier
version (the preview, the files and the chat follow; a running turn makes it wait), and a
deploy rollback that offers the build's files too. One server for the module; screenshots
go to test-artifacts/console-ui/."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.e2e.conftest import Server, chat, create, running_turn, stop_turn
from tests.e2e.test_console_code_edit import bundle, editor_text  # noqa: F401 (a fixture)
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    api_for,
    browser,
    finished_turns,
    new_page,
    register,
    shot,
    toast_text,
)


def made_app(chromium: Any, server: Server, prompt: str, mode: str) -> tuple[Any, Any, Any]:
    """A console page signed in as a new owner, the owner's API client, and an app of theirs
    whose first turn has run."""
    page = new_page(chromium)
    register(page, server)
    owner = api_for(page, server)
    app = create(owner, prompt, mode)
    assert chat(owner, app["id"], app["initPrompt"]).done is not None
    return page, owner, app


@pytest.mark.usefixtures("bundle")
def test_the_code_view_lists_the_files_and_shows_them_highlighted(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page about ospreys", "multi_file")
    files = sorted(f["path"] for f in owner.get(f"/api/apps/{app['id']}/files").json()["files"])
    assert files == ["index.html", "script.js", "style.css"]

    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.click("#tab-code")
    page.wait_for_selector("#code-editor .cm-content")
    listed = page.eval_on_selector_all(
        "#code-view button.file", "bs => bs.map(b => b.dataset.path)"
    )
    assert sorted(listed) == files
    assert page.inner_text("#code-path") == "index.html"  # opened first
    assert page.get_attribute("#code-view button.file.selected", "data-path") == "index.html"
    # The file in the editor (CodeMirror, HTML mode), its tags coloured apart from the text.
    assert editor_text(page) == owner.get(f"/api/apps/{app['id']}/files/index.html").text
    assert page.get_attribute("#code-editor", "data-language") == "html"
    tag = page.locator("#code-editor .cm-line span", has_text="h1").first
    assert tag.inner_text() == "h1"
    colour = "s => [getComputedStyle(s).color, getComputedStyle(s.closest('.cm-line')).color]"
    own, line = tag.evaluate(colour)
    assert own != line, (own, line)
    shot(page, "9-code-view")

    page.click("#code-view button.file[data-path='style.css']")
    page.wait_for_selector("#code-path >> text=style.css")
    page.wait_for_selector("#code-editor[data-language=css] .cm-content")
    assert page.locator("#code-editor .cm-line span").count() > 10
    assert "CSS" in page.inner_text("#code-viewer .viewer-head")
    assert page.is_hidden("#preview-pane")
    page.click("#tab-preview")
    page.frame_locator("#preview").locator("h1", has_text="Ospreys").wait_for()
    assert page.is_hidden("#code-view")
    assert page.errors == []


def test_a_version_is_diffed_and_restoring_v1_brings_the_old_title_back(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page about plovers", "html")
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    preview = page.frame_locator("#preview")
    preview.locator("h1", has_text="Plovers").wait_for()
    page.fill("#message", 'Change the title to "Shore Birds"')
    page.click("#send")
    assert finished_turns(page, 2)[-1] == "succeeded"
    preview.locator("h1", has_text="Shore Birds").wait_for()

    page.click("#tab-versions")
    page.wait_for_selector("#versions li[data-version=v2].current")
    listed = page.eval_on_selector_all("#versions li", "lis => lis.map(li => li.dataset.version)")
    assert listed == ["v2", "v1"]
    assert 'Change the title to "Shore Birds"' in page.inner_text("#versions li[data-version=v2]")
    assert page.query_selector("#versions li[data-version=v2] button.restore") is None  # current
    # The newest version's changes are shown at once: the title's line, highlighted.
    assert page.inner_text("#diff-title") == "Changes in v2 against v1"
    diff = page.locator("#version-diff .file-diff[data-path='index.html']")
    assert diff.locator(".change").inner_text() == "modified"
    removed = diff.locator(".hl .gd").all_inner_texts()
    added = diff.locator(".hl .gi").all_inner_texts()
    assert removed == ["--- a/index.html", "-    <h1>Plovers</h1>"], removed
    assert added == ["+++ b/index.html", "+    <h1>Shore Birds</h1>"], added
    page.click("#versions li[data-version=v1] button.changes")
    page.wait_for_selector("#diff-title >> text=v1: the first version, every file added")
    assert page.inner_text("#version-diff .change") == "added"
    shot(page, "10-versions")

    page.click("#versions li[data-version=v1] button.restore")
    page.wait_for_selector("#toast >> text=Restored v1 as v3")
    page.wait_for_selector("#versions li[data-version=v3].current")
    assert "restored from v1" in page.inner_text("#versions li[data-version=v3]")
    page.click("#tab-preview")
    preview.locator("h1", has_text="Plovers").wait_for()  # the old title is back
    note = page.wait_for_selector("#messages .note")
    assert note.inner_text().startswith("Restored v1 as v3.")
    assert "index.html: modified" in note.inner_text()
    assert owner.get(f"/api/apps/{app['id']}/history?limit=1").json()["entries"][0]["role"] == (
        "note"
    )
    page.click("#tab-code")
    page.wait_for_function("() => document.querySelector('#code-editor')?.editor")
    assert editor_text(page) == owner.get(f"/api/apps/{app['id']}/files/index.html").text
    assert "Shore Birds" not in editor_text(page)
    shot(page, "11-restored")

    # The note survives a reload, and the next turn works on the restored files.
    page.reload()
    assert page.wait_for_selector("#messages .note").inner_text().startswith("Restored v1 as v3.")
    page.fill("#message", 'Change the title to "Sandpipers"')
    page.click("#send")
    assert finished_turns(page, 3)[-1] == "succeeded"
    page.frame_locator("#preview").locator("h1", has_text="Sandpipers").wait_for()

    # While a turn runs, a restore is refused and the console says why.
    # (Between two of this page's polls, turned off here: it would follow the turn.)
    page.evaluate("window.ZEROCODE_CONFIG.turnPollMs = 0")
    slow = threading.Thread(target=chat, args=(owner, app["id"], "[[slow]] Change the title"))
    slow.start()
    try:
        turn = running_turn(owner, app["id"])  # the slow turn holds the app's lease now
        page.click("#tab-versions")
        page.click("#versions li[data-version=v2] button.restore")
        said = toast_text(page)
        assert said.startswith("Busy:") and "turn is running" in said, said
        stop_turn(owner, app["id"], turn)  # it served: no need to wait out its paced text
    finally:
        slow.join()
    assert page.errors == []


def test_a_rollback_changes_the_site_and_can_restore_its_files_too(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page about curlews", "html")
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.click("#deploy")
    page.wait_for_selector("#deploy-url", timeout=TURN_MS)
    page.fill("#message", 'Change the title to "Moorland"')
    page.click("#send")
    assert finished_turns(page, 2)[-1] == "succeeded"
    page.click("#deploy")
    page.wait_for_selector("tr[data-build] button.rollback", timeout=TURN_MS)
    note = page.inner_text("#rollback-note")
    assert "changes only the published site, not the app's files" in note
    row = page.locator("tr[data-build]", has=page.locator("button.rollback"))
    assert row.count() == 1
    assert row.locator(".restore-too-label").inner_text() == "restore these files too (v1)"
    assert page.locator("tr[data-build] .restore-too").count() == 1  # not for the live build
    shot(page, "12-rollback-offer")
    row.locator(".restore-too").check()
    row.locator("button.rollback").click()
    page.wait_for_selector("#toast >> text=Restored v1 as v3")
    site = page.context.new_page()
    site.goto(str(page.get_attribute("#deploy-url", "href")), wait_until="networkidle")
    assert site.locator("h1").first.inner_text() == "Curlews"  # the site rolled back
    site.close()
    page.frame_locator("#preview").locator("h1", has_text="Curlews").wait_for()
    current = owner.get(f"/api/apps/{app['id']}/files/index.html").text
    assert "<h1>Curlews</h1>" in current  # and the files with it
    assert page.wait_for_selector("#messages .note").inner_text().startswith("Restored v1")
    page.select_option("#lang", "zh-CN")  # the platform's note is read in the chosen language
    note_zh = page.locator("#messages .note", has_text="已恢复 v1").inner_text()
    assert note_zh.startswith("已恢复 v1，成为 v3。") and "index.html：修改" in note_zh, note_zh
    assert page.errors == []
