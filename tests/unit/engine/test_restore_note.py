"""What a restore tells the model (M9), the journal record that lets a cut restore be
redone, and the diffs the versions API shows."""

from __future__ import annotations

from zerocode.apps.records import App, CodeGenType
from zerocode.apps.versions import Change, Version, VersionKind, changes, file_diff
from zerocode.engine.journal import PendingStep
from zerocode.engine.restore_steps import restore_note


def target() -> Version:
    return Version(
        app_id="a1",
        number=2,
        turn=3,
        kind=VersionKind.TURN,
        summary="rename",
        digest="d",
        manifest={"index.html": "s"},
    )


def test_an_html_app_is_told_which_files_changed_and_how_they_now_read() -> None:
    app = App(
        id="a1", owner="u1", name="Shop", code_gen_type=CodeGenType.MULTI_FILE, init_prompt="a shop"
    )
    files = {"index.html": b"<h1>Shop</h1>", "style.css": b"h1 { color: red }", "x.txt": b"x"}
    delta = [Change("index.html", "modified"), Change("old.js", "deleted")]
    note = restore_note(app, target(), 5, delta, files)
    assert note.startswith("[zerocode: the user restored version v2 (the files as turn 3 left")
    assert "it is now version v5" in note
    assert "index.html (modified), old.js (deleted)" in note
    assert "```html\n<h1>Shop</h1>\n```\n\n```css\nh1 { color: red }\n```" in note
    assert "x.txt" not in note.split("read:]", 1)[1]


def test_a_vue_app_is_told_to_read_files_again() -> None:
    app = App(
        id="a1",
        owner="u1",
        name="Shop",
        code_gen_type=CodeGenType.VUE_PROJECT,
        init_prompt="a shop",
    )
    note = restore_note(app, target(), 4, [Change("src/App.vue", "modified")], {})
    assert note.endswith("Read a file again before you change it.]")
    assert "```" not in note


def test_the_restore_journal_record_round_trips_and_steps_stay_as_they_were() -> None:
    record = PendingStep(turn=3, head=17, calls=(), restore=2)
    assert PendingStep.decode(record.encode()) == record
    step = PendingStep(turn=3, head=17, calls=())
    assert "restore" not in step.encode() and PendingStep.decode(step.encode()) == step


def test_changes_and_diffs() -> None:
    before = {"a.html": b"1\n", "b.css": b"x", "c.js": b"same"}
    after = {"a.html": b"2\n", "c.js": b"same", "d.txt": b"new"}
    assert changes(before, after) == [
        Change("a.html", "modified"),
        Change("b.css", "deleted"),
        Change("d.txt", "added"),
    ]
    diff = file_diff("a.html", "modified", b"1\n", b"2\n")
    assert diff.diff == "--- a/a.html\n+++ b/a.html\n@@ -1 +1 @@\n-1\n+2\n"
    added = file_diff("n.txt", "added", b"", b"no newline")
    assert added.diff.startswith("--- /dev/null\n+++ b/n.txt\n") and added.diff.endswith("\n")
    binary = file_diff("logo.png", "added", b"", b"\x89PNG\xff\xfe")
    assert binary.binary and binary.diff == ""
