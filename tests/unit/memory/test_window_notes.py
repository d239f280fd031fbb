"""Platform notes (M9, a restored version): a user-role turn of its own. It is shown after
the turns before it, never breaks the window's rules, and a turn after it keeps it."""

from __future__ import annotations

from zerocode.memory.messages import AssistantMessage, Message, UserMessage
from zerocode.memory.transcript import Entry, EntryKind, group_units
from zerocode.memory.validation import validate
from zerocode.memory.window import WindowPolicy, build_window

NOTE = "[zerocode: the user restored version v1 (the files as turn 1 left them)]"


def entries(*turns: list[tuple[EntryKind, Message]]) -> list[Entry]:
    out: list[Entry] = []
    for number, turn in enumerate(turns, start=1):
        start = len(out) + 1
        for kind, message in turn:
            seq = len(out) + 1
            out.append(
                Entry(seq=seq, turn=number, unit=seq, turn_start=start, kind=kind, message=message)
            )
    return out


def window_of(transcript: list[Entry], max_tokens: int = 24_000) -> list[Message]:
    units = group_units("a", transcript)
    window = build_window("system", units, WindowPolicy(max_tokens=max_tokens))
    validate(window.messages)
    return list(window.messages[1:])


ASK1 = (EntryKind.USER, UserMessage("make a page"))
DONE1 = (EntryKind.FINAL, AssistantMessage("here it is"))
ASK2 = (EntryKind.USER, UserMessage("rename it"))
DONE2 = (EntryKind.FINAL, AssistantMessage("renamed"))
NOTED = (EntryKind.NOTE, UserMessage(NOTE))
ASK4 = (EntryKind.USER, UserMessage('call it "Bread"'))


def test_right_after_a_restore_the_window_ends_with_the_note() -> None:
    shown = window_of(entries([ASK1, DONE1], [ASK2, DONE2], [NOTED]))
    assert [m.content for m in shown] == [
        "make a page",
        "here it is",
        "rename it",
        "renamed",
        NOTE,
    ]


def test_the_next_turn_sees_the_note_and_every_turn_before_it() -> None:
    shown = window_of(entries([ASK1, DONE1], [ASK2, DONE2], [NOTED], [ASK4]))
    assert [m.content for m in shown][-2:] == [NOTE, 'call it "Bread"']
    assert [m.content for m in shown][:4] == ["make a page", "here it is", "rename it", "renamed"]


def test_a_tight_budget_drops_what_is_older_than_a_note_first() -> None:
    transcript = entries([ASK1, DONE1], [ASK2, DONE2], [NOTED], [ASK4])
    full = window_of(transcript)
    for budget in range(40, 400, 5):
        shown = window_of(transcript, max_tokens=budget)
        assert shown[-1].content == 'call it "Bread"'  # the request is pinned
        if NOTE not in [m.content for m in shown]:
            assert len(shown) == 1  # nothing older than a note is shown without it
        assert shown == full[len(full) - len(shown) :]  # always a suffix: no gaps


def test_a_note_is_a_closed_turn_and_a_malformed_one_is_left_out() -> None:
    good = entries([ASK1, DONE1], [NOTED])
    assert [u.kind for u in group_units("a", good)] == [
        EntryKind.USER,
        EntryKind.FINAL,
        EntryKind.NOTE,
    ]
    bad = entries([ASK1, DONE1], [(EntryKind.NOTE, AssistantMessage("not a user note"))])
    assert [u.kind for u in group_units("a", bad)] == [EntryKind.USER, EntryKind.FINAL]
