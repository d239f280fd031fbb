"""The console shows a new preview as soon as its build succeeded (issue 28, point 1), in
real headless Chromium against a real server with the offline model: the frame reloads
while the runtime and acceptance checks of that build still run, and again when a repair
round rebuilds; the turn's verdicts stay its own."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.conftest import Server, create, running
from tests.e2e.test_console_turns import open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)

# Every time the console points the preview frame at a build (its src changes: "src") and
# every time the frame then loaded it (its load event: "load"), with whether the turn was
# still running, how many steps, check lines and repair lines its reply showed (installed
# before the console's scripts). A turn's check lines come when its acceptance checks have
# ended, which is after its runtime check: a load seen with fewer check lines than the turn
# ends with came before the checks of its build ended.
LOADS = """
window.__loads = [];
function seen(kind, frame) {
  const running = document.querySelector('#messages .msg.ai[data-turn="running"]');
  const count = (what) => running ? running.querySelectorAll(what).length : -1;
  window.__loads.push({ kind, running: Boolean(running), steps: count("li"),
                        checks: count("li.check"), repairs: count("li.repair"),
                        fresh: /[?]t=[0-9]+$/.test(frame.src) });
}
new MutationObserver((changes) => {
  for (const change of changes) {
    if (change.target.id !== "preview" || !change.target.src) continue;
    seen("src", change.target);
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["src"] });
document.addEventListener("load", (event) => {
  if (event.target.id === "preview" && event.target.src) seen("load", event.target);
}, true);
"""


@pytest.fixture(scope="module")
def server(checking_server: Server) -> Server:
    """The test process's server with the runtime check (and so acceptance checks)
    (tests/e2e/conftest.py)."""
    return running(checking_server)


def loads_during_turn(page: Any, kind: str = "src") -> list[dict[str, Any]]:
    return [x for x in page.evaluate("window.__loads") if x["running"] and x["kind"] == kind]


def checks_at_the_end(page: Any) -> int:
    """The check lines of the turn's reply (live ones, one per check and round)."""
    return int(page.locator("#messages .msg.ai li.check").count())


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
    rebuilds: the frame loaded the first build before its checks ended, then the repaired
    one before its own checks ended."""
    page, _ = turn_to_its_end(browser, server, "A page about otters [[flaw=potemkin]]", "html")
    assert page.locator('#messages .msg.ai[data-turn="succeeded"]').count() == 1
    everything = page.evaluate("window.__loads")
    during = loads_during_turn(page)
    assert len(during) >= 2, everything
    # Each load came with more of the reply drawn: the second after the repair round's build.
    assert during[0]["steps"] < during[-1]["steps"]
    repair = page.locator("#messages .msg.ai li.repair")
    assert repair.count() >= 1
    # The console pointed the frame at each build while the turn ran, before that build's
    # checks ended: the first with no check line yet, the repaired one before the repair
    # round's lines. (When the frame then finishes loading is the browser's pace, not the
    # console's: under load a check line can be drawn first, so loads are only required.)
    pointed = [x for x in during if x["fresh"]]
    assert pointed, everything
    first = pointed[0]
    assert first["checks"] == 0 and first["repairs"] == 0, everything
    repaired = [x for x in pointed if x["repairs"] >= 1]
    assert repaired, everything
    assert 1 <= repaired[0]["checks"] < checks_at_the_end(page), everything
    assert [x for x in everything if x["kind"] == "load" and x["fresh"]], everything
    page.frame_locator("#preview").locator("h1").first.wait_for()
    shot(page, "preview-early-repaired")
    assert page.errors == []


def test_a_vue_preview_shows_before_the_turn_ends(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, _ = turn_to_its_end(browser, server, "A Vue todo app with an about page", "vue_project")
    assert page.locator('#messages .msg.ai[data-turn="succeeded"]').count() == 1
    everything = page.evaluate("window.__loads")
    assert loads_during_turn(page), everything
    # The console pointed the frame at the build before its checks ended (their lines came
    # after), and the frame loaded it.
    pointed = [x for x in loads_during_turn(page) if x["fresh"]]
    assert pointed and pointed[0]["checks"] == 0, everything
    assert [x for x in everything if x["kind"] == "load" and x["fresh"]], everything
    assert checks_at_the_end(page) >= 1, everything
    page.frame_locator("#preview").locator("#app *").first.wait_for()
    assert page.errors == []
