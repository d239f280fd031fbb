"""Self-repair through the real server (issue 14): a flawed model's broken build, a page that
throws in Chromium and a cut-off answer are each put right inside the turn, or the turn
fails saying what still fails. What the model was shown is in /context, valid."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, running
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate


@pytest.fixture(scope="module")
def server(checking_server: Server) -> Server:
    """The test process's server with the runtime check in Chromium on
    (tests/e2e/conftest.py)."""
    return running(checking_server)


def context(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/context").json()["messages"]
    validate(from_openai_list(messages))
    return messages


def feedback(messages: list[dict[str, Any]]) -> list[str]:
    return [
        m["content"]
        for m in messages
        if m["role"] == "user" and m["content"].startswith("[zerocode repair")
    ]


@pytest.mark.parametrize("flaw", ["syntax", "import"])
def test_a_broken_vue_build_is_repaired_within_the_turn(client: httpx.Client, flaw: str) -> None:
    app = create(client, "A Vue tally app", "vue_project")
    turn = chat(client, app["id"], f"A Vue tally app [[flaw={flaw}]]")
    finished = [b["status"] for b in turn.builds if b["status"] != "running"]
    assert finished == ["failed", "succeeded"], turn.builds
    assert turn.order.index("repair") > turn.order.index("build")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    shown = feedback(context(client, app["id"]))
    assert len(shown) == 1 and shown[0].startswith(
        "[zerocode repair 1/2: the preview build failed]"
    )
    latest = client.get(f"/api/apps/{app['id']}/history").json()["entries"][0]
    assert latest["status"] == "ok" and "repair 1/2" in latest["content"]


def test_a_page_that_throws_in_the_browser_is_repaired(client: httpx.Client) -> None:
    chromium_or_skip()
    app = create(client, "A Vue tally app", "vue_project")
    turn = chat(client, app["id"], "A Vue tally app [[flaw=runtime]]")
    finished = [b["status"] for b in turn.builds if b["status"] != "running"]
    assert finished == ["succeeded", "succeeded"], turn.builds
    repairs = [o for o in turn.order if o == "repair"]
    assert len(repairs) == 1
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    shown = feedback(context(client, app["id"]))
    assert shown and "fails in the browser" in shown[0] and "TypeError" in shown[0]


def test_a_model_that_never_fixes_it_fails_saying_what_still_fails(client: httpx.Client) -> None:
    app = create(client, "A Vue tally app", "vue_project")
    turn = chat(client, app["id"], "A Vue tally app [[flaw=stubborn]]")
    finished = [b["status"] for b in turn.builds if b["status"] != "running"]
    assert finished == ["failed", "failed", "failed"]
    assert turn.order.count("repair") == 2
    assert turn.done is not None and turn.done["status"] == "failed"
    messages = context(client, app["id"])
    assert len(feedback(messages)) == 3  # two repairs asked, then "no round is left"
    note = messages[-1]["content"]
    assert "after 2 repair rounds" in note and "was interrupted" in note


def test_a_cut_off_html_answer_is_continued_and_saved_whole(client: httpx.Client) -> None:
    app = create(client, "A page about owls", "html")
    turn = chat(client, app["id"], "A page about owls [[flaw=cutoff]]")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    page = client.get(f"/api/apps/{app['id']}/files/index.html")
    assert page.status_code == 200 and page.text.rstrip().endswith("</html>")
    answers = [m for m in context(client, app["id"]) if m["role"] == "assistant"]
    assert "</html>" in answers[-1]["content"] and "```html" in answers[-1]["content"]


def test_an_answer_always_cut_off_fails_and_saves_nothing(client: httpx.Client) -> None:
    app = create(client, "A page about owls", "html")
    turn = chat(client, app["id"], "A page about owls [[flaw=cutoff-always]]")
    assert turn.errors and turn.errors[0]["code"] == "cut_off"
    assert "cut off by the output limit" in turn.errors[0]["message"]
    assert turn.done is not None and turn.done["status"] == "failed"
    assert client.get(f"/api/apps/{app['id']}/files").json()["files"] == []
    assert not [b for b in turn.builds]  # nothing half-written was built or previewed
    note = context(client, app["id"])[-1]["content"]
    assert "cut off by the output limit" in note


def test_a_tool_call_cut_off_is_a_failed_result_naming_the_cause(client: httpx.Client) -> None:
    app = create(client, "A Vue tally app", "vue_project")
    turn = chat(client, app["id"], "A Vue tally app [[flaw=cutoff]]")
    failed = [r for r in turn.results if not r["ok"]]
    assert failed and "cut off by the output limit" in failed[0]["summary"]
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
