"""An html turn's display entry tells what its code did (one line per file, the version's
diff) instead of pasting the file, while the transcript keeps the model's whole answer (M1)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.events import DoneEvent, TurnEvent
from zerocode.engine.model import ModelError, ModelReply, TextDelta
from zerocode.memory.messages import AssistantMessage
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate

PAGE = (
    "<!DOCTYPE html>\n<html>\n<head><title>Plovers</title></head>\n<body>\n"
    "<h1>About Plovers</h1>\n<p>Small shore birds.</p>\n</body>\n</html>"
)
CHANGED = PAGE.replace("<h1>About Plovers</h1>", "<h1>About Sandpipers</h1>")


class ScriptedModel:
    """Answers each call with the next of ``answers``, streamed in small pieces; an answer
    that is an exception is raised after half of the previous answer was streamed."""

    description = "scripted test model"

    def __init__(self, *answers: str | Exception) -> None:
        self.answers, self.calls = list(answers), 0

    async def stream(
        self, role: Any, messages: Any, tools: Any = (), *, tool_choice: Any = "auto"
    ) -> Any:
        answer = self.answers[self.calls]
        self.calls += 1
        if isinstance(answer, Exception):
            yield TextDelta(f"Here it is:\n```html\n{PAGE[:60]}")
            raise answer
        for at in range(0, len(answer), 40):
            yield TextDelta(answer[at : at + 40])
        yield ModelReply(message=AssistantMessage(answer), usage=None, finish_reason="stop")


def page_app(tmp_path: Path, *answers: str | Exception) -> tuple[Platform, App]:
    # No browser at all: a cover taken in the background could still be launching Chromium
    # when asyncio.run ends the turn's loop, and a launch cancelled there never finished
    # cancelling (a CI run's 300 s timeout); these tests are about the turn's report.
    settings = Settings(data_dir=tmp_path, runtime_check=False, covers=False)
    p = wiring.platform(settings, model=ScriptedModel(*answers))
    app = App(
        id=new_app_id(),
        owner="local",
        name="Plovers",
        code_gen_type=CodeGenType.HTML,
        init_prompt="A page about plovers",
    )
    p.apps.put(app)
    return p, app


def run(p: Platform, app: App, message: str) -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        return [e async for e in p.engine.start(app, message, None).events()]

    return asyncio.run(collect())


def test_a_one_word_change_shows_index_html_modified_plus_one_minus_one(tmp_path: Path) -> None:
    change = f"Changed the title.\n\n```html\n{CHANGED}\n```\n\nAnything else?"
    p, app = page_app(tmp_path, f"Here is the page.\n\n```html\n{PAGE}\n```", change)
    first = run(p, app, "A page about plovers")
    assert isinstance(first[-1], DoneEvent) and first[-1].status == "succeeded"
    created = p.display.page(app.id, limit=1).entries[0].content
    assert created.startswith("Here is the page.\n\n`index.html`: added, +8 −0 (diff: v1)\n\n")

    done = run(p, app, 'Change the title to "About Sandpipers"')[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    entry = p.display.page(app.id, limit=1).entries[0]
    assert entry.role.value == "ai" and entry.turn == 2
    assert entry.content.startswith(
        "Changed the title.\n\n`index.html`: modified, +1 −1 (diff: v2)\n\nAnything else?"
    )
    assert "```" not in entry.content and "<h1>" not in entry.content  # no file pasted
    # The link is true: v2 is this turn's version, and its diff is that one line.
    versions = p.engine.versions
    assert versions is not None
    v2 = versions.get(app.id, "v2")
    assert v2.turn == 2
    [diff] = versions.diff(v2, versions.previous(v2))
    assert diff.path == "index.html" and diff.status == "modified"
    assert "-<h1>About Plovers</h1>\n+<h1>About Sandpipers</h1>\n" in diff.diff
    # The transcript keeps the whole answer, as the model wrote it (M1).
    final = [u for u in p.memory.units(app.id) if u.turn == 2 and u.kind is EntryKind.FINAL]
    assert [u.messages[0].content for u in final] == [change]
    window = p.memory.window(app.id, p.system_prompt(app)).messages
    validate(window)
    assert any(m.role == "assistant" and CHANGED in str(m.content) for m in window)


def test_the_same_file_again_says_unchanged_and_makes_no_version(tmp_path: Path) -> None:
    page = f"```html\n{PAGE}\n```"
    p, app = page_app(tmp_path, page, f"It already says that.\n\n{page}")
    run(p, app, "A page about plovers")
    run(p, app, "Make sure the title is About Plovers")
    entry = p.display.page(app.id, limit=1).entries[0]
    assert entry.content.startswith("It already says that.\n\n`index.html`: unchanged\n\n")
    assert "diff:" not in entry.content
    assert p.engine.versions is not None and p.engine.versions.store.latest(app.id) is not None
    assert p.engine.versions.store.latest(app.id).number == 1  # type: ignore[union-attr]


def test_an_answer_cut_off_by_an_error_says_nothing_was_saved(tmp_path: Path) -> None:
    p, app = page_app(tmp_path, ModelError("the endpoint went away"))
    done = run(p, app, "A page about plovers")[-1]
    assert isinstance(done, DoneEvent) and done.status == "failed"
    entry = p.display.page(app.id, limit=1).entries[0]
    assert "`index.html`: not saved — the answer did not finish" in entry.content
    assert "<head>" not in entry.content and "```" not in entry.content
    assert p.workspace.list(app.id) == []


def test_a_block_an_html_app_does_not_keep_says_so(tmp_path: Path) -> None:
    answer = f"```html\n{PAGE}\n```\n\n```css\nh1 {{ color: teal; }}\n```"
    p, app = page_app(tmp_path, answer)
    run(p, app, "A page about plovers")
    content = p.display.page(app.id, limit=1).entries[0].content
    assert content.startswith(
        "`index.html`: added, +8 −0 (diff: v1)\n\n"
        "`style.css`: not saved — an html app keeps all its code in index.html"
    )
    assert [f.path for f in p.workspace.list(app.id)] == ["index.html"]
