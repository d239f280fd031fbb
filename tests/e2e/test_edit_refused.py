"""Issue 38's Done-when: a scripted model whose repair reverts a hand edit, and the platform
refusing it — through the real local server over HTTP, its ``openai`` client talking to a
scripted OpenAI-compatible model server (tests/e2e/scripted_model.py), the console and the
checks in real Chromium.

An html bakery page with the check "the heading reads Bakery"; the builder turns Edit mode
on, double-clicks the heading in the preview, types "Fresh Bread", Enter; the checks run on
the edited preview and the Checks tab says "Your edit changed this". The builder then asks
for a footer: the turn's check of the old heading fails, and the model's repair writes
"Bakery" back — the platform refuses that answer (a failed step in the reply saying why; the
model's next request carries the refusal), the file and the preview keep "Fresh Bread" with
the footer, the model updates the check, and the turn ends succeeded with the check passing.

Without the guard the revert would stand: the model really sends it (asserted from what
the model server answered), the platform would save it, the check would pass on "Bakery",
and the frame's heading, the file and the check would all read "Bakery" — so each of the
assertions on "Fresh Bread" below fails when the refusal is taken out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, create
from tests.e2e.scripted_model import REFUSED, RevertingModel
from tests.e2e.test_console_checks import suite
from tests.e2e.test_console_text_edit import edit_in_place
from tests.e2e.test_console_turns import open_app, send, signed_up
from tests.e2e.test_console_ui import TURN_MS, browser, finished_turns, shot  # noqa: F401
from tests.e2e.test_crash_points import context
from tests.e2e.test_versions import h1_of

UNDO = "would undo the user's own edit"


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, RevertingModel]]:
    """This module's server, its model the scripted one, the checks run in Chromium."""
    model = RevertingModel()
    with model:
        srv = Server(tmp_path_factory.mktemp("zerocode-edit-refused"))
        srv.env.update(
            {
                "ZEROCODE_MODEL_BASE_URL": model.base_url,
                "ZEROCODE_MODEL_API_KEY": "sk-scripted",
                "ZEROCODE_MODEL_VUE": "scripted",
                "ZEROCODE_MODEL_CODE": "scripted",
                "ZEROCODE_MODEL_ROUTING": "router",
                "ZEROCODE_RUNTIME_CHECK": "1",  # and so the acceptance checks, in Chromium
            }
        )
        srv.start()
        try:
            yield srv, model
        finally:
            srv.stop()


def test_a_repair_that_reverts_a_hand_edit_is_refused_and_the_check_follows_the_edit(
    browser: Any,  # noqa: F811
    scripted: tuple[Server, RevertingModel],
) -> None:
    server, model = scripted
    page, owner = signed_up(browser, server)
    app = create(owner, "A page for a bakery called Bakery", "html")
    app_id = app["id"]
    open_app(page, server.api, app_id)
    send(page, app["initPrompt"])
    assert finished_turns(page, 1) == ["succeeded"]
    frame = page.frame_locator("#preview")
    frame.locator("h1", has_text="Bakery").wait_for()
    [c1] = suite(owner, app_id)["checks"]
    assert (c1["id"], c1["status"]) == ("c1", "passed")

    # The builder's edit, in place in the preview; the checks follow it on their own.
    page.click("#edit")
    edit_in_place(page, "h1", "Fresh Bread")
    frame.locator("h1", has_text="Fresh Bread").wait_for()
    page.click("#edit")
    page.click("#tab-checks")
    page.locator('#checks-list li[data-check="c1"] .edit-changed').wait_for(timeout=TURN_MS)
    assert suite(owner, app_id)["checks"][0]["status"] == "failed"

    # Another change: the old heading's check fails, and the model's repair reverts the edit.
    send(page, "Add a footer that says we open daily")
    assert finished_turns(page, 2) == ["succeeded", "succeeded"]
    kinds = [a.kind for a in model.answers]
    assert kinds == ["first", "change", "repair", "update"], kinds
    revert = model.answers[2]
    assert revert.asked.startswith("[zerocode repair 1/2: acceptance checks fail]")
    assert "<h1>Bakery</h1>" in revert.answer  # the revert was really sent
    told = model.answers[3].asked  # and the platform's refusal was sent back
    assert told.startswith(REFUSED) and f"index.html: refused: this {UNDO}" in told

    # The reply shows the refusal as a failed step with its reason; the turn succeeded.
    reply = page.locator("#messages .msg.ai").last
    refused = reply.locator("li.failed", has_text=UNDO)
    refused.wait_for()
    assert "index.html not saved" in refused.inner_text()
    assert "deliberate and final" in refused.inner_text()
    shot(page, "edit-refused")

    # The builder's edit stands: in the file, in the preview, and in the turn's version.
    source = owner.get(f"/api/apps/{app_id}/files/index.html").text
    assert h1_of(source) == "Fresh Bread" and "<footer>Open daily</footer>" in source
    page.reload()
    page.frame_locator("#preview").locator("footer", has_text="Open daily").wait_for()
    assert page.frame_locator("#preview").locator("h1").inner_text() == "Fresh Bread"
    [v3, *_] = owner.get(f"/api/apps/{app_id}/versions").json()["versions"]
    assert (v3["id"], v3["kind"]) == ("v3", "turn")
    [diff] = owner.get(f"/api/apps/{app_id}/versions/v3/diff").json()["files"]
    added = [line for line in diff["diff"].splitlines() if line.startswith("+")]
    assert any("<footer>" in line for line in added) and not any("Bakery" in x for x in added)
    # The check followed the edit: c1 retired, its successor passing on the new preview.
    checks = {c["id"]: c["status"] for c in suite(owner, app_id)["checks"]}
    assert checks == {"c1": "retired", "c2": "passed"}, checks
    # The transcript keeps the refusal right after the answer it refused.
    messages = context(owner, app_id)
    at = next(i for i, m in enumerate(messages) if str(m["content"]).startswith(REFUSED))
    assert "<h1>Bakery</h1>" in messages[at - 1]["content"]
    assert page.errors == []
