"""A repair round never reverts a builder's edit to satisfy an old check (issue 38), in
process on the real local platform (SQLite, the engine's real turn and tools; the preview
build stands in: a Vue build needs the toolchain, tested elsewhere). The About page's
heading is edited by hand; the next turn's check of the old heading fails; the repair
message names it and says the edit is deliberate; a scripted model whose repair writes
"About" back is refused (a failed tool result saying why) and the edit stands; the model
then updates the check, and the turn succeeds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.integration.engine.test_acceptance_turns import Scripted, of, run
from tests.integration.engine.test_checks_follow import HeadingRunner
from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.engine import suite_follow
from zerocode.engine.events import CheckEvent, DoneEvent, RepairEvent, ToolEvent
from zerocode.engine.user_edit import Edit, How, save
from zerocode.memory.messages import AssistantMessage, ToolCall
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, snapshot

ABOUT = "src/views/AboutView.vue"
VIEW = "<template>\n  <main>\n    <h1>{}</h1>\n  </main>\n</template>\n"
HEADED = {
    "description": "The About page is headed “About”",
    "steps": [{"goto": "/about"}],
    "expect": [{"text": {"css": "h1"}, "equals": "About"}],
}


def call(n: int, name: str, **args: object) -> AssistantMessage:
    return AssistantMessage(
        "", tool_calls=(ToolCall(id=f"t{n}", name=name, arguments=json.dumps(args)),)
    )


def test_a_repair_that_reverts_a_hand_edit_is_refused_and_the_check_follows(
    tmp_path: Path,
) -> None:
    exit_ = AssistantMessage("", tool_calls=(ToolCall(id="x", name="exit", arguments="{}"),))
    model = Scripted(
        call(1, "write_file", path=ABOUT, content=VIEW.format("About")),  # turn 1
        call(2, "add_check", **HEADED),
        exit_,
        call(3, "write_file", path="src/title.txt", content="X"),  # turn 2: the title
        exit_,
        call(4, "modify_file", path=ABOUT, old="About Us", new="About"),  # repair: revert
        call(5, "retire_check", id="c1", reason="the user renamed the page"),
        call(
            6, "add_check", **{**HEADED, "expect": [{"text": {"css": "h1"}, "equals": "About Us"}]}
        ),
        exit_,
    )
    settings = Settings(data_dir=tmp_path, runtime_check=False, covers=False)
    p = wiring.platform(settings, model=model)
    p.engine.acceptance = HeadingRunner(p, ABOUT)
    p.engine.preview_stages = None  # no build ahead: the stand-in build below is the build

    async def preview(app: App, build_id: str) -> Build:
        digest = snapshot(p.workspace, app.id).digest
        built = BuildState.SUCCEEDED
        kind = app.code_gen_type
        return Build(id=build_id, app_id=app.id, purpose=BuildPurpose.PREVIEW, kind=kind,
                     source_digest=digest, state=built)  # fmt: skip

    p.engine.preview = preview
    app = App(id=new_app_id(), owner="local", name="Site", code_gen_type=CodeGenType.VUE_PROJECT,
              init_prompt="A site")  # fmt: skip
    p.apps.put(app)
    first = run(p, app)
    assert isinstance(first[-1], DoneEvent) and first[-1].status == "succeeded", first

    async def hand_edit() -> None:
        edit = Edit(path=ABOUT, data=VIEW.format("About Us").encode(), how=How.HAND,
                    what="edited by hand")  # fmt: skip
        await save(p.engine, app, edit)
        await suite_follow.settled(app.id)

    asyncio.run(hand_edit())
    events = run(p, app, 'Change the title to "X"')
    assert [(c.id, c.status) for c in of(events, CheckEvent)] == [
        ("c1", "failed"),
        ("c2", "passed"),
    ]
    assert [r.kind for r in of(events, RepairEvent)] == ["acceptance"]
    results = {e.id: e for e in of(events, ToolEvent) if e.phase == "result"}
    assert not results["t4"].ok and "undo the user's own edit" in results["t4"].summary
    assert results["t5"].ok and results["t6"].ok
    assert p.workspace.read(app.id, ABOUT).decode() == VIEW.format("About Us")  # it stands
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded", events
    feedback = [u for u in p.memory.units(app.id) if u.kind is EntryKind.FEEDBACK]
    told = str(feedback[-1].messages[-1].content)
    assert "The user's own edit (v2) changed what c1 expected" in told
    assert "deliberate and final" in told and "retire_check it and add_check" in told
    notes = [str(u.messages[0].content) for u in p.memory.units(app.id) if u.kind is EntryKind.NOTE]
    assert any("the user's own edit (v2) changed what these checks" in n for n in notes)
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)
