"""An html or multi-file answer that would undo a builder's edit is refused (issue 38), in
process on the real local platform (SQLite, the engine's real turn; the browser is a runner
that reads the page's heading from its source). These apps answer with code blocks, not tool
calls: in a repair round the answer whose file puts the old heading back is not saved at
all, the stream and the reply show a failed step saying why, the model is told right after
that answer (the repair message, or the note after the turn), and the turn goes on to its
next round or ends, saying truthfully how it went. Tool calls: test_edit_kept.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.integration.engine.test_acceptance_turns import Scripted, of, page, run
from tests.integration.engine.test_checks_follow import HEADING, HeadingRunner
from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine import suite_follow
from zerocode.engine.events import (
    CheckEvent,
    DoneEvent,
    ErrorEvent,
    RepairEvent,
    ToolEvent,
    TurnEvent,
)
from zerocode.engine.user_edit import Edit, How, save
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate

# A page as models write it, a line per element: the guard compares lines
# (engine/edit_guard.py), so a revert is the heading's line put back.
BAKERY = "<html>\n<body>\n  <h1>Bakery</h1>\n  <p>Bread daily.</p>\n</body>\n</html>\n"
FRESH = BAKERY.replace("Bakery", "Fresh Bread")
FOOTER = "  <footer>Open daily</footer>\n</body>"
REFUSED = "your last answer was not saved — none of its files was written"
FRESH_CHECK = {**HEADING, "expect": [{"text": {"css": "h1"}, "equals": "Fresh Bread"}]}
UPDATE = {"retire": [{"id": "c1", "reason": "the user renamed the bakery"}], "add": [FRESH_CHECK]}


def checks_only(checks: object) -> str:
    return f"The heading is the user's: I update the check.\n```checks\n{json.dumps(checks)}\n```\n"


def multi(html: str, css: str) -> str:
    return f"Here it is.\n```html\n{html}\n```\n```css\n{css}\n```\n"


def edited(tmp_path: Path, kind: CodeGenType, *replies: str) -> tuple[Platform, App, Scripted]:
    """An app whose first turn wrote the Bakery page and c1 ("the heading reads Bakery"),
    then the builder's hand edit of the heading to "Fresh Bread" (its checks run: c1
    fails). ``replies`` answer the turns after it."""
    first = page(BAKERY, {"add": [HEADING]})
    if kind is CodeGenType.MULTI_FILE:
        first = multi(BAKERY, "h1 { color: brown; }") + f"```checks\n{json.dumps([HEADING])}\n```\n"
    model = Scripted(first, *replies)
    p = wiring.platform(Settings(data_dir=tmp_path, runtime_check=False, covers=False), model=model)
    p.engine.acceptance = HeadingRunner(p)
    app = App(id=new_app_id(), owner="local", name="Bakery", code_gen_type=kind,
              init_prompt="A bakery")  # fmt: skip
    p.apps.put(app)
    done = run(p, app)[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"

    async def hand_edit() -> None:
        edit = Edit(path="index.html", data=FRESH.encode(), how=How.HAND, what="edited by hand")
        await save(p.engine, app, edit)
        await suite_follow.settled(app.id)

    asyncio.run(hand_edit())
    return p, app, model


def refusals(events: list[TurnEvent]) -> list[ToolEvent]:
    return [e for e in of(events, ToolEvent) if e.phase == "result" and not e.ok]


def feedback(p: Platform, app: App) -> list[tuple[str, str]]:
    """Each feedback unit's answer and the platform's word after it."""
    units = [u for u in p.memory.units(app.id) if u.kind is EntryKind.FEEDBACK]
    return [(str(u.messages[0].content), str(u.messages[-1].content)) for u in units]


def test_an_html_repair_that_reverts_the_edit_is_not_saved_and_the_check_follows(
    tmp_path: Path,
) -> None:
    footer = FRESH.replace("</body>", FOOTER)
    reverted = footer.replace("Fresh Bread", "Bakery")
    p, app, model = edited(
        tmp_path,
        CodeGenType.HTML,
        page(footer),  # turn 2: the footer, keeping the builder's heading
        page(reverted),  # repair 1: c1 wants "Bakery" — the heading put back
        page(footer.replace("daily", "every day"), UPDATE),  # repair 2: the check follows
    )
    events = run(p, app, "Add a footer")

    [refused] = refusals(events)
    assert refused.path == "index.html" and refused.name == "save_file"
    assert "not saved: refused: this would undo the user's own edit" in refused.summary
    assert [r.attempt for r in of(events, RepairEvent)] == [1, 2]
    verdicts = [(c.id, c.status) for c in of(events, CheckEvent)]
    assert verdicts == [("c1", "failed"), ("c2", "passed")]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded", events

    source = p.workspace.read(app.id, "index.html").decode()
    assert "<h1>Fresh Bread</h1>" in source and "Open every day" in source  # edit kept
    versions = p.engine.versions  # the turn's version holds the edit, not the revert
    assert versions is not None
    latest = versions.store.latest(app.id)
    assert latest is not None and latest.kind == "turn"
    assert b"<h1>Fresh Bread</h1>" in versions.files(latest)["index.html"]

    told = feedback(p, app)  # the refused answer and its refusal: one unit of the transcript
    answer, said = told[-1]
    assert "<h1>Bakery</h1>" in answer and said.startswith(f"[zerocode: {REFUSED}")
    assert "- index.html: refused: this would undo the user's own edit of index.html (v2:" in said
    assert "in the ```checks block" in said and "retire_check" not in said
    assert "[zerocode repair 2/2: acceptance checks fail]" in said
    sent = model.seen[-1][0]  # the model's last call read it
    assert REFUSED in str(sent[-1].content)

    shown = p.display.page(app.id, limit=1).entries[0].content
    assert "`index.html`: not saved — refused: this would undo the user's own edit" in shown
    assert "- ✗ `save_file` index.html not saved: refused:" in shown
    assert "**Failed:**" not in shown
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_the_turns_last_answer_refused_is_told_in_the_note_after_it(tmp_path: Path) -> None:
    footer = FRESH.replace("</body>", FOOTER)
    p, app, _ = edited(
        tmp_path,
        CodeGenType.HTML,
        page(footer),
        page(footer.replace("Fresh Bread", "Bakery"), UPDATE),  # reverts, and updates c1
    )
    events = run(p, app, "Add a footer")
    assert len(refusals(events)) == 1 and len(of(events, RepairEvent)) == 1
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded", events
    assert "<h1>Fresh Bread</h1>" in p.workspace.read(app.id, "index.html").decode()
    note = p.memory.units(app.id)[-1]  # after the turn's final answer
    assert note.kind is EntryKind.NOTE
    text = str(note.messages[0].content)
    assert text.startswith(f"[zerocode: {REFUSED}") and "- index.html: refused:" in text
    assert "[zerocode checks: what your last answer's checks block did]" in text
    assert "- added c2:" in text and "- retired c1:" in text
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_a_multi_file_repair_that_keeps_reverting_is_never_saved_and_the_turn_fails(
    tmp_path: Path,
) -> None:
    footer = FRESH.replace("</body>", FOOTER)
    reverted = multi(footer.replace("Fresh Bread", "Bakery"), "h1 { color: red; }")
    p, app, _ = edited(
        tmp_path, CodeGenType.MULTI_FILE, multi(footer, "h1 { color: brown; }"), reverted
    )
    events = run(p, app, "Add a footer")

    assert [e.path for e in refusals(events)] == ["index.html", "index.html"]
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "failed", events
    [error] = of(events, ErrorEvent) or [None]
    assert error is None  # a give-up is a failed status, not a stream error
    assert "<h1>Fresh Bread</h1>" in p.workspace.read(app.id, "index.html").decode()
    # All or nothing: the css that came with the reverting html was not written either.
    assert p.workspace.read(app.id, "style.css").decode().strip() == "h1 { color: brown; }"

    told = feedback(p, app)
    assert len(told) == 3  # repair 1, repair 2, and the give-up
    for answer, said in told[1:]:  # each refused answer with its refusal
        assert "<h1>Bakery</h1>" in answer and said.startswith(f"[zerocode: {REFUSED}")
    assert "(No repair round is left.)" in told[-1][1]
    shown = p.display.page(app.id, limit=1).entries[0].content
    assert "`style.css`: not saved — it came with a file that would undo" in shown
    assert "**Failed:** the acceptance checks still fail after 2 repair rounds" in shown
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)
