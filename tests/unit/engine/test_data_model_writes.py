"""Every way the data model file is written checks it the same (zerocode/data/model.py): a
tool call, a ```data block of an html or multi-file answer, a hand edit. A bad one is refused
whole, saying where and why; nothing is written."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.data.test_model import NOTES
from tests.unit.engine.tools_support import APP, MemoryWorkspace, call, failed, ok
from zerocode.apps.records import App, CodeGenType
from zerocode.data.model import DATA_MODEL
from zerocode.engine import code_report, codegen
from zerocode.engine.codegen import CodeParseError
from zerocode.engine.tools import ToolBox
from zerocode.engine.user_edit import editable
from zerocode.publishing.export_rules import FileRefused

GUESTBOOK = NOTES["collections"]["guestbook"]["rules"]  # public to read and sign, no more
GOOD = json.dumps(
    {
        "collections": {
            "entries": {
                "fields": {"message": {"type": "text", "required": True, "max": 500}},
                "rules": GUESTBOOK,
            }
        }
    },
    indent=1,
)
BAD = GOOD.replace('"text"', '"string"').replace('"nobody"', '"admins"', 1)
PAGE = "<!doctype html>\n<html><body><h1>Guestbook</h1></body></html>"


def fenced(lang: str, body: str) -> str:
    return f"```{lang}\n{body}\n```"


def test_a_tool_writes_a_valid_model_and_refuses_a_bad_one_whole(
    box: ToolBox, ws: MemoryWorkspace
) -> None:
    ws.max_file_bytes = 10_000
    said = failed(box.run(call("write_file", {"path": DATA_MODEL, "content": BAD})))
    assert "zerocode.data.json is not a valid data model: " in said
    assert 'collections.entries.fields.message.type: "string" is not one of' in said
    assert 'collections.entries.rules.update: "admins" is not one of' in said
    assert said.endswith("Nothing was written.")
    assert (APP, DATA_MODEL) not in ws.files
    ok(box.run(call("write_file", {"path": DATA_MODEL, "content": GOOD})))
    assert ws.files[(APP, DATA_MODEL)] == GOOD.encode()
    modify = {"path": DATA_MODEL, "old": '"list": "public"', "new": '"list": "everyone"'}
    assert '"everyone" is not one of' in failed(box.run(call("modify_file", modify)))
    assert ws.files[(APP, DATA_MODEL)] == GOOD.encode()


def app_of(kind: CodeGenType) -> App:
    return App(id="a1b2c3", owner="u1", name="Guestbook", code_gen_type=kind, init_prompt="x")


@pytest.mark.parametrize("kind", list(CodeGenType))
def test_a_hand_edit_of_the_model_is_checked_for_every_kind(kind: CodeGenType) -> None:
    app = app_of(kind)
    editable(app, DATA_MODEL, GOOD.encode())
    editable(app, DATA_MODEL)  # removing it: the app keeps no data then
    with pytest.raises(FileRefused) as refused:
        editable(app, DATA_MODEL, BAD.encode())
    assert "collections.entries.fields.message.type" in str(refused.value)


@pytest.mark.parametrize("parse", [codegen.parse_html, codegen.parse_multi_file])
def test_an_answer_carries_the_model_in_a_data_block(parse: Any) -> None:
    text = f"A guestbook.\n\n{fenced('html', PAGE)}\n\n{fenced('data', GOOD)}\n"
    files = parse(text)
    assert files["index.html"].startswith("<!doctype html>")
    assert json.loads(files[DATA_MODEL]) == json.loads(GOOD)
    assert codegen.has_code(fenced("data", GOOD))
    only = parse(f"Entries may be 500 characters.\n\n{fenced('data', GOOD)}")
    assert only == {DATA_MODEL: GOOD + "\n"}  # the page is left as it is
    without = parse(fenced("html", PAGE))
    assert DATA_MODEL not in without  # an answer without one keeps the model as it is


def test_a_bad_data_block_saves_nothing_and_says_why() -> None:
    with pytest.raises(CodeParseError) as caught:
        codegen.parse_html(f"{fenced('html', PAGE)}\n{fenced('data', BAD)}")
    assert str(caught.value.message).startswith(
        "the ```data block: zerocode.data.json is not a valid data model: "
    )
    with pytest.raises(CodeParseError, match="the ```data code block is not closed"):
        codegen.parse_html(f"{fenced('html', PAGE)}\n```data\n{GOOD}")


def test_the_display_shows_the_data_block_as_its_files_change() -> None:
    text = f"Done.\n\n{fenced('html', PAGE)}\n\n{fenced('data', GOOD)}"
    after: dict[str, Any] = codegen.parse_html(text)
    before = {"index.html": (PAGE + "\n").encode(), DATA_MODEL: None}
    report = code_report.saved(0, 1, text, multi=False, before=before, after=after)
    shown = report.shown("v2")
    lines = len(GOOD.splitlines())
    assert shown == (
        f"Done.\n\n`index.html`: unchanged\n\n`{DATA_MODEL}`: added, +{lines} −0 (diff: v2)"
    )
