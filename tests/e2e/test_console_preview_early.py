"""The console shows a new preview as soon as its build succeeded (issue 28, point 1), in
real headless Chromium against a real server with the offline model: the frame reloads
while the runtime and acceptance checks of that build still run, and again when a repair
round rebuilds; the turn's verdicts stay its own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, create
from tests.e2e.test_console_turns import open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)

# Every time the console points the preview frame at a build (its src changes), with
# whether the turn was still running then and how many steps its reply showed (installed
# before the console's scripts).
LOADS = """
window.__loads = [];
new MutationObserver((changes) => {
  for (const change of changes) {
    if (change.target.id !== "preview" || !change.target.src) continue;
    const running = document.querySelector('#messages .msg.ai[data-turn="running"]');
    window.__loads.push({ running: Boolean(running),
                          steps: running ? running.querySelectorAll("li").length : -1 });
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["src"] });
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's own server, with the runtime check (and so acceptance checks)."""
    srv = Server(tmp_path_factory.mktemp("zerocode-preview-early"))
    srv.env["ZEROCODE_RUNTIME_CHECK"] = "1"
    srv.start()
    yield srv
    srv.stop()


def loads_during_turn(page: Any) -> list[dict[str, Any]]:
    return [x for x in page.evaluate("window.__loads") if x["running"]]


def turn_to_its_end(browser: Any, server: Server, prompt: str, kind: str) -> tuple[Any, Any]:  # noqa: F811
    page, owner = signed_up(browser, server)
    page.context.add_init_script(LOADS)  # for reloads; this page has it now
    page.evaluate(LOADS)
    app = create(owner, prompt, kind)
    open_app(page, server.api, app["id"])
    send(page, app["initPrompt"])
    page.wait_for_selector(
        '#messages .msg.ai:not([data-turn="running"])[data-turn]', timeout=TURN_MS
    )
    return page, app


def test_the_preview_shows_each_build_before_its_checks_end(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """``[[flaw=potemkin]]``: the first build's acceptance check fails and a repair round
    rebuilds: the frame loaded the first build while its checks ran, then the repaired one."""
    page, _ = turn_to_its_end(browser, server, "A page about otters [[flaw=potemkin]]", "html")
    assert page.locator('#messages .msg.ai[data-turn="succeeded"]').count() == 1
    during = loads_during_turn(page)
    assert len(during) >= 2, page.evaluate("window.__loads")
    # Each load came with more of the reply drawn: the second after the repair round's build.
    assert during[0]["steps"] < during[-1]["steps"]
    repair = page.locator("#messages .msg.ai li.repair")
    assert repair.count() >= 1
    page.frame_locator("#preview").locator("h1").first.wait_for()
    shot(page, "preview-early-repaired")
    assert page.errors == []


def test_a_vue_preview_shows_before_the_turn_ends(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, _ = turn_to_its_end(browser, server, "A Vue todo app with an about page", "vue_project")
    assert page.locator('#messages .msg.ai[data-turn="succeeded"]').count() == 1
    assert loads_during_turn(page), page.evaluate("window.__loads")
    page.frame_locator("#preview").locator("#app *").first.wait_for()
    assert page.errors == []
