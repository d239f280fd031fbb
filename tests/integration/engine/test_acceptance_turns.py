"""Acceptance checks in the turn (issue 25), in-process on the real local platform (SQLite,
the real builder): checks stated by the model are validated and kept, run after the preview
is built, streamed and recorded one verdict each, failures become repair rounds, and a turn
whose checks still fail says so. The browser is replaced here by a runner that judges the
page's source (the real runner in Chromium is tests/integration/adapters/
test_chromium_acceptance.py, and the whole path through the server is tests/e2e/
test_acceptance.py): what is tested is the engine's handling of verdicts."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.check_suite import (
    CheckResult,
    Evidence,
    RunOutcome,
    StoredCheck,
)
from zerocode.engine.events import (
    CheckEvent,
    DoneEvent,
    ErrorEvent,
    RepairEvent,
    TextEvent,
    ToolEvent,
    TurnEvent,
)
from zerocode.engine.model import ModelReply, TextDelta
from zerocode.memory.messages import AssistantMessage, ToolCall
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate
from zerocode.publishing.builds import Build

WORKS = (
    '<html><body><h1>Counter</h1><button onclick="n.textContent++">Add</button>'
    "<p id=n>0</p></body></html>"
)
BROKEN = "<html><body><h1>Counter</h1><button>Add</button><p id=n>0</p></body></html>"
CHECK = {
    "description": "Clicking Add counts up",
    "steps": [{"click": {"role": "button", "name": "Add"}}],
    "expect": [{"text": {"css": "#n"}, "equals": "1"}],
}


def page(html: str, checks: object | None = None) -> str:
    text = f"Here it is.\n```html\n{html}\n```\n"
    if checks is not None:
        text += f"```checks\n{json.dumps(checks)}\n```\n"
    return text


class Scripted:
    """A model answering from a script, one reply per call (the last one repeats)."""

    description = "scripted test model"

    def __init__(self, *replies: str | AssistantMessage) -> None:
        self.replies, self.calls = list(replies), 0
        self.seen: list[Any] = []

    async def stream(
        self, role: Any, messages: Any, tools: Any = (), *, tool_choice: Any = "auto"
    ) -> Any:
        self.seen.append((list(messages), tools))
        reply = self.replies[min(self.calls, len(self.replies) - 1)]
        self.calls += 1
        message = reply if isinstance(reply, AssistantMessage) else AssistantMessage(reply)
        if message.content:
            yield TextDelta(message.content)
        yield ModelReply(message=message, usage=None, finish_reason="stop")


class SourceRunner:
    """Judges a check by the page's source: "Add" works only with its onclick handler."""

    def __init__(self, p: Platform) -> None:
        self.p, self.runs = p, 0

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: object = None,  # told nothing: every verdict comes with the outcome
    ) -> RunOutcome:
        self.runs += 1
        source = self.p.workspace.read(app.id, "index.html").decode()
        works = "onclick" in source
        evidence = Evidence(
            where="expect[0]", expected="the text of css '#n' equal to '1'", actual="'0'", shot=True
        )
        return RunOutcome(
            tuple(
                CheckResult(check_id=c.id, status="passed")
                if works
                else CheckResult(
                    check_id=c.id, status="failed", evidence=evidence, screenshot=b"\x89PNG shot"
                )
                for c in checks
            )
        )


def setup(
    tmp_path: Path,
    model: Scripted,
    kind: CodeGenType = CodeGenType.HTML,
    *,
    runner: bool = True,
) -> tuple[Platform, App]:
    # No browser: these turns are checked by SourceRunner (a background cover's Chromium
    # launch, cut short when asyncio.run ends the loop, once hung a CI run's test).
    p = wiring.platform(Settings(data_dir=tmp_path, runtime_check=False, covers=False), model=model)
    p.engine.acceptance = SourceRunner(p) if runner else None
    app = App(
        id=new_app_id(), owner="local", name="Counter", code_gen_type=kind, init_prompt="A counter"
    )
    p.apps.put(app)
    return p, app


def run(p: Platform, app: App, message: str = "A counter") -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        return [e async for e in p.engine.start(app, message, None).events()]

    return asyncio.run(collect())


def of(events: list[TurnEvent], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def test_an_answers_checks_are_kept_run_streamed_and_told(tmp_path: Path) -> None:
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [CHECK]})))
    events = run(p, app)
    checks = of(events, CheckEvent)
    assert [(c.id, c.status, c.round, c.evidence) for c in checks] == [("c1", "passed", 0, None)]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    assert done.checks == {"passed": 1, "failed": 0, "notRun": 0}
    assert p.engine.checks is not None
    [stored] = p.engine.checks.list(app.id)
    assert stored.check.description == CHECK["description"] and stored.added_turn == 1
    [run_] = p.engine.checks.runs(app.id)
    assert run_.turn == 1 and run_.build_id is not None and run_.tally.passed == 1
    note = p.memory.units(app.id)[-1]  # what the block did, told to the model after the turn
    assert note.kind is EntryKind.NOTE
    assert "added c1: Clicking Add counts up" in str(note.messages[0].content)
    entry = p.display.page(app.id, limit=1).entries[0]
    assert "✓ check c1 passed: Clicking Add counts up" in entry.content
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_a_failing_check_is_a_repair_round_and_passes_after_it(tmp_path: Path) -> None:
    model = Scripted(page(BROKEN, {"add": [CHECK]}), page(WORKS))
    p, app = setup(tmp_path, model)
    events = run(p, app)
    checks = of(events, CheckEvent)
    assert [(c.status, c.round) for c in checks] == [("failed", 0), ("passed", 1)]
    failed = checks[0]
    assert failed.evidence == {
        "where": "expect[0]",
        "expected": "the text of css '#n' equal to '1'",
        "actual": "'0'",
        "screenshot": f"/api/apps/{app.id}/checks/c1/runs/1/screenshot",
    }
    [repair] = of(events, RepairEvent)
    assert repair.kind == "acceptance" and repair.attempt == 1
    assert events.index(repair) > events.index(failed)
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    assert done.checks == {"passed": 1, "failed": 0, "notRun": 0}
    assert p.engine.checks is not None
    assert p.engine.checks.screenshot(app.id, 1, "c1") == b"\x89PNG shot"
    shown = [u for u in p.memory.units(app.id) if u.kind is EntryKind.FEEDBACK]
    told = str(shown[0].messages[-1].content)
    assert told.startswith("[zerocode repair 1/2: acceptance checks fail]")
    assert '- c1 "Clicking Add counts up": expect[0]: expected' in told
    assert 'with "retire" in the ```checks block' in told  # an html answer has no tools
    assert len(p.engine.checks.list(app.id)) == 1  # the repair added no second check


def test_checks_that_still_fail_fail_the_turn_and_say_so(tmp_path: Path) -> None:
    p, app = setup(tmp_path, Scripted(page(BROKEN, {"add": [CHECK]}), page(BROKEN)))
    events = run(p, app)
    assert [c.status for c in of(events, CheckEvent)] == ["failed"] * 3
    [error] = of(events, ErrorEvent) or [None]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "failed"
    assert done.checks == {"passed": 0, "failed": 1, "notRun": 0}
    entry = p.display.page(app.id, limit=1).entries[0]
    assert entry.status.value == "failed"
    assert "acceptance checks still fail after 2 repair rounds" in entry.content
    last = p.memory.units(app.id)
    closing = [u for u in last if u.kind is EntryKind.INTERRUPTED][-1]
    assert "acceptance checks still fail" in str(closing.messages[0].content)
    builds = [b for b in p.builds.list(app.id, None, 10, None).builds]
    assert all(b.state.value == "succeeded" for b in builds)  # the build's own verdict stands
    assert error is None  # not an error of the platform: the checks' verdict
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_a_bad_check_is_refused_with_the_reason_and_the_turn_goes_on(tmp_path: Path) -> None:
    bad = {**CHECK, "steps": [{"goto": "https://evil.example/"}]}
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [bad, CHECK]})))
    events = run(p, app)
    assert [c.id for c in of(events, CheckEvent)] == ["c1"]
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    note = str(p.memory.units(app.id)[-1].messages[0].content)
    assert "- refused check 1: steps[0]" in note and "- added c1" in note
    entry = p.display.page(app.id, limit=1).entries[0]
    assert "✗ refused check 1: steps[0]" in entry.content


def test_without_a_browser_the_checks_are_not_run_and_the_turn_says_so(tmp_path: Path) -> None:
    p, app = setup(tmp_path, Scripted(page(BROKEN, {"add": [CHECK]})), runner=False)
    events = run(p, app)
    [check] = of(events, CheckEvent)
    assert check.status == "not_run" and check.note == "no browser runs acceptance checks here"
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    assert done.checks == {"passed": 0, "failed": 0, "notRun": 1}
    assert not of(events, RepairEvent)
    entry = p.display.page(app.id, limit=1).entries[0]
    assert "– check c1 not run" in entry.content


def test_a_later_turn_reruns_the_suite_and_a_retired_check_stops_applying(
    tmp_path: Path,
) -> None:
    retire = {"retire": [{"id": "c1", "reason": "the user wants no counter"}]}
    model = Scripted(page(WORKS, {"add": [CHECK]}), page(BROKEN), page(BROKEN, retire))
    p, app = setup(tmp_path, model)
    run(p, app)
    regressed = run(p, app, "Make the button bigger")  # breaks c1: caught as a regression
    assert [c.status for c in of(regressed, CheckEvent)][:1] == ["failed"]
    assert of(regressed, RepairEvent)[0].kind == "acceptance"
    events = run(p, app, "Remove the counting")
    assert not of(events, CheckEvent)
    assert isinstance(events[-1], DoneEvent) and events[-1].checks is None
    assert p.engine.checks is not None
    [stored] = p.engine.checks.list(app.id)
    assert stored.retired == "the user wants no counter" and stored.retired_turn is not None


def test_vue_check_tools_add_retire_and_refuse_without_failing_the_turn(tmp_path: Path) -> None:
    add = ToolCall(id="a1", name="add_check", arguments=json.dumps(CHECK))
    bad = ToolCall(id="a2", name="add_check", arguments=json.dumps({**CHECK, "steps": "x"}))
    gone = ToolCall(id="a3", name="retire_check", arguments='{"id": "c9", "reason": "x"}')
    done_call = ToolCall(id="e1", name="exit", arguments="{}")
    model = Scripted(
        AssistantMessage("", tool_calls=(add, bad, gone)),
        AssistantMessage("", tool_calls=(done_call,)),
        "Done.",
    )
    p, app = setup(tmp_path, model, CodeGenType.VUE_PROJECT)
    p.workspace.write(app.id, "index.html", WORKS.encode())  # what SourceRunner judges
    events = run(p, app, "A counter")
    results = {e.id: e for e in of(events, ToolEvent) if e.phase == "result"}
    assert results["a1"].ok and results["a1"].summary.startswith("added check c1")
    assert not results["a2"].ok and "'steps' must be a list" in results["a2"].summary
    assert not results["a3"].ok and "check c9 not found" in results["a3"].summary
    tools = [t["function"]["name"] for t in model.seen[0][1]]
    assert "add_check" in tools and "retire_check" in tools
    # nothing was built (no file changed), so the suite ran on what the preview shows
    assert [(c.id, c.status) for c in of(events, CheckEvent)] == [("c1", "passed")]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded", events
    assert p.engine.checks is not None and len(p.engine.checks.list(app.id)) == 1


def test_the_text_of_two_model_calls_keeps_a_break_between_them(tmp_path: Path) -> None:
    """Issue 38: "Adding a check." from one call and "Done." from the next ran together as
    "check.Done." (live and stored); a paragraph break goes between them, streamed too."""
    add = ToolCall(id="a1", name="add_check", arguments=json.dumps(CHECK))
    model = Scripted(AssistantMessage("Adding a check.", tool_calls=(add,)), "Done.")
    p, app = setup(tmp_path, model, CodeGenType.VUE_PROJECT)
    p.workspace.write(app.id, "index.html", WORKS.encode())
    events = run(p, app)
    assert "".join(e.text for e in of(events, TextEvent)) == "Adding a check.\n\nDone."
    shown = p.display.page(app.id, limit=1).entries[0].content
    assert shown.startswith("Adding a check.\n\nDone.\n\n- "), shown


class BrokenRunner:
    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: object = None,  # told nothing: every verdict comes with the outcome
    ) -> RunOutcome:
        raise RuntimeError("the runner's own bug")


def test_a_runner_that_breaks_leaves_the_checks_not_run_not_the_turn_failed(
    tmp_path: Path,
) -> None:
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [CHECK]})))
    p.engine.acceptance = BrokenRunner()
    events = run(p, app)
    [check] = of(events, CheckEvent)
    assert check.status == "not_run" and check.note == "the checks could not run (RuntimeError)"
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
