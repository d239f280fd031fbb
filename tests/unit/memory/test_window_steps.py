"""Each step of build_window on its own: pin, elide, budget, summary."""

from __future__ import annotations

from collections.abc import Sequence

from tests.factories import final, step, turn_entries, user
from zerocode.memory.messages import Message, SystemMessage
from zerocode.memory.tokens import REPLY_PRIMING, message_tokens
from zerocode.memory.transcript import Entry, EntryKind, Unit, group_units
from zerocode.memory.window import (
    Elider,
    Reserved,
    WindowPolicy,
    budget,
    elide,
    evicted_units,
    latest_summary,
    pin,
    reserve,
    show_summary,
    split_turns,
)

BIG = "<p>payload</p>\n" * 100  # 1.5 KB


def units(entries: list[Entry]) -> list[Unit]:
    return group_units("a", entries)


def history(turns: int, payload: str = "tiny", steps: int = 1) -> list[Entry]:
    out: list[Entry] = []
    for turn in range(1, turns + 1):
        out += turn_entries(len(out) + 1, turn, steps=steps, calls=2, payload=payload)
    return out


def summary_entry(seq: int, turn: int, text: str, covers: int) -> Entry:
    return Entry(
        seq=seq,
        turn=turn,
        unit=seq,
        turn_start=seq,
        kind=EntryKind.SUMMARY,
        message=SystemMessage(text),
        covers=covers,
    )


def identity(unit: Unit) -> tuple[Message, ...]:
    return unit.messages


# -- pin ---------------------------------------------------------------------------------


def test_pin_holds_the_system_prompt_and_the_newest_user_message() -> None:
    entries = history(3)
    pinned = pin("You build apps.", units(entries))
    assert pinned.system == SystemMessage("You build apps.")
    assert (
        pinned.user is not None
        and pinned.user.seq == entries[-len(turn_entries(1, 3, steps=1, calls=2))].seq
    )
    assert pinned.user.kind is EntryKind.USER and pinned.newest_turn == 3


def test_pin_in_a_turn_still_running_pins_its_request() -> None:
    entries = [*history(1), user(5, 2, "now"), *step(6, 2, 5)]
    pinned = pin("s", units(entries))
    assert pinned.user is not None and pinned.user.seq == 5
    assert pinned.conversation[-1].kind is EntryKind.CALL


def test_pin_leaves_summaries_out_of_the_conversation() -> None:
    entries = [*history(1), summary_entry(5, 2, "sum", 4), user(6, 2)]
    pinned = pin("s", units(entries))
    assert all(u.kind is not EntryKind.SUMMARY for u in pinned.conversation)
    assert len(pinned.conversation) == len(units(entries)) - 1


def test_pin_of_an_empty_conversation() -> None:
    pinned = pin("s", [])
    assert pinned.user is None and pinned.conversation == () and pinned.newest_turn == 0


# -- elide -------------------------------------------------------------------------------


def test_elider_keeps_the_newest_full_turns_whole_and_stubs_older_payloads() -> None:
    all_units = units(history(3, payload=BIG))
    render = Elider(newest_turn=3, full_turns=2, min_chars=512)
    for unit in all_units:
        rendered = render(unit)
        assert len(rendered) == len(unit.messages)
        if unit.turn >= 2:
            assert rendered == unit.messages
            assert all(a is b for a, b in zip(rendered, unit.messages, strict=True))
        elif unit.kind in (EntryKind.CALL, EntryKind.RESULT):
            assert rendered != unit.messages
            assert "[content elided" in str(rendered)


def test_elider_keeps_small_payloads_and_the_units_shape() -> None:
    unit = units(history(1, payload="tiny"))[1]
    render = Elider(newest_turn=5, full_turns=1, min_chars=64)
    assert render(unit) == unit.messages


# -- budget ------------------------------------------------------------------------------


def cost(messages: Sequence[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


def test_budget_keeps_the_newest_run_within_the_message_bound() -> None:
    entries = history(5)  # 5 units per turn: user, step (call + 2 results), final
    pinned = pin("s", units(entries))
    fixed = [pinned.system]
    policy = WindowPolicy(max_messages=12)
    kept = budget(reserve(pinned.system, None, policy), pinned, identity, policy)
    assert len(fixed) + sum(len(m) for m in kept.values()) <= 12
    seqs = sorted(kept)
    conversation = [u.seq for u in pinned.conversation]
    assert seqs == conversation[-len(seqs) :]  # one contiguous newest run


def test_budget_respects_the_token_bound_counting_reply_priming() -> None:
    entries = history(6)
    pinned = pin("s", units(entries))
    fixed: list[Message] = [pinned.system]
    for max_tokens in (150, 400, 900):
        policy = WindowPolicy(max_tokens=max_tokens)
        kept = budget(reserve(pinned.system, None, policy), pinned, identity, policy)
        used = REPLY_PRIMING + cost(fixed) + sum(cost(m) for m in kept.values())
        assert used <= max_tokens
        # The newest unit left out would not have fitted, with its turn's request if that
        # is not in yet (nothing here is large enough to elide).
        out = [u for u in pinned.conversation if u.seq not in kept]
        if out:
            request = next(u for u in pinned.conversation if u.turn == out[-1].turn)
            extra = 0 if request.seq in kept else cost(request.messages)
            assert used + extra + cost(out[-1].messages) > max_tokens


def test_budget_evicts_whole_units_never_a_call_without_its_results() -> None:
    entries = history(4, steps=2)
    pinned = pin("s", units(entries))
    for bound in range(3, 30):
        kept = budget(Reserved(1, 5), pinned, identity, WindowPolicy(max_messages=bound))
        by_seq = {u.seq: u for u in pinned.conversation}
        assert all(kept[s] == by_seq[s].messages for s in kept)


def test_budget_always_keeps_the_pinned_request_and_the_current_turns_newest_unit() -> None:
    entries = [user(1, 1, "x " * 2000), *step(2, 1, 1, calls=1, payload=BIG), final(4, 1, 1)]
    pinned = pin("s", units(entries))
    kept = budget(Reserved(1, 5), pinned, identity, WindowPolicy(max_tokens=50))
    assert list(kept) == [1, 4]  # over the bound: both are never dropped; the step is


def test_budget_spends_only_what_is_not_reserved() -> None:
    entries = history(6)
    pinned = pin("s", units(entries))
    policy = WindowPolicy(max_tokens=300)
    alone = budget(Reserved(1, 5), pinned, identity, policy)
    with_summary = budget(Reserved(2, 105), pinned, identity, policy)
    assert len(with_summary) < len(alone)


def test_reserve_is_the_system_prompt_alone_with_the_summary_off() -> None:
    system = SystemMessage("You build apps.")
    off = WindowPolicy()
    assert reserve(system, SystemMessage("old"), off) == Reserved(1, message_tokens(system))


def test_reserve_holds_a_whole_bounded_summary_with_the_summary_on() -> None:
    system = SystemMessage("You build apps.")
    on = WindowPolicy(summary=True, summary_max_tokens=100)
    room = message_tokens(system) + 3 + 100
    assert reserve(system, None, on) == Reserved(2, room)
    assert reserve(system, SystemMessage("short"), on) == Reserved(2, room)
    huge = SystemMessage("word " * 500)  # stored before the bound: its real cost
    assert reserve(system, huge, on) == Reserved(2, message_tokens(system) + message_tokens(huge))


# -- summary -----------------------------------------------------------------------------


def test_latest_summary_is_the_newest_summary_unit() -> None:
    entries = [
        *history(1),
        summary_entry(5, 2, "first", 4),
        user(6, 2),
        final(7, 2, 6),
        summary_entry(8, 3, "second", 7),
        user(9, 3),
    ]
    assert latest_summary(units(entries)) == SystemMessage("second")
    assert latest_summary(units(history(2))) is None


def test_show_summary_only_when_something_before_the_window_is_gone() -> None:
    conversation = units(history(2))
    assert not show_summary(conversation, evicted=0)
    assert show_summary(conversation, evicted=1)
    later = units(history(3))[5:]  # a tail read that starts after seq 1
    assert later[0].seq > 1 and show_summary(later, evicted=0)
    assert not show_summary([], evicted=0)


def test_evicted_units_are_those_outside_the_window_and_after_the_last_summary() -> None:
    all_units = units([*history(3), summary_entry(16, 4, "s", 5)])
    kept = [u.seq for u in all_units if u.turn == 3]
    left = evicted_units(all_units, kept, covered=5)
    assert [u.turn for u in left] == [2, 2, 2]
    assert all(u.seq > 5 and u.kind is not EntryKind.SUMMARY for u in left)
    assert evicted_units(all_units, [u.seq for u in all_units], covered=0) == []


def test_evicted_units_of_a_turn_shown_in_part_include_its_request() -> None:
    """Turn 2 shows its request and final, not its steps: the summary folds in the request
    with the steps, so its ``covers`` never passes a unit it has not seen."""
    all_units = units(history(3, steps=2))  # 4 units a turn: user, 2 steps, final
    turn2 = [u for u in all_units if u.turn == 2]
    kept = [turn2[0].seq, turn2[-1].seq] + [u.seq for u in all_units if u.turn == 3]
    left = evicted_units(all_units, kept, covered=0)
    assert [u.seq for u in left] == [u.seq for u in all_units if u.seq < turn2[-1].seq]
    assert turn2[0] in left and turn2[-1] not in left


# -- turns and the current turn ------------------------------------------------------------


def test_split_turns_finds_each_turns_request() -> None:
    entries = [*history(2), *step(9, 2, 5)]  # a crash note's turn; a request cut off below
    turns = split_turns(units(entries[2:]))
    assert [t.number for t in turns] == [1, 2]
    assert turns[0].request is None and turns[1].request is not None
    assert [u.kind for u in turns[1].rest] == [EntryKind.CALL, EntryKind.FINAL, EntryKind.CALL]


def test_budget_elides_the_current_turns_units_before_dropping_any() -> None:
    entries = [user(1, 1), *step(2, 1, 1, payload=BIG), *step(4, 1, 1, payload=BIG)]
    pinned = pin("s", units(entries))
    render = Elider(pinned.newest_turn, 1, 512)
    request, older, newest = (cost(u.messages) for u in units(entries))
    slim = cost([elide(m, 512) for m in units(entries)[1].messages])
    assert slim < older
    policy = WindowPolicy(max_tokens=REPLY_PRIMING + 5 + request + newest + slim)
    kept = budget(Reserved(1, 5), pinned, render, policy)
    assert kept[4] == units(entries)[2].messages  # the newest, full: it fits
    assert kept[2] != units(entries)[1].messages and "[content elided" in str(kept[2])


def test_budget_keeps_the_newest_unit_at_its_cheapest_when_nothing_fits() -> None:
    entries = [user(1, 1), *step(2, 1, 1, calls=3, payload=BIG)]
    pinned = pin("s", units(entries))
    kept = budget(Reserved(1, 5), pinned, identity, WindowPolicy(max_tokens=10))
    assert list(kept) == [1, 2] and "[content elided" in str(kept[2])
    words = "The quick brown fox jumps over the lazy dog, then it sleeps all day long."
    tiny = [user(1, 1), *step(2, 1, 1, calls=3, payload=words)]  # its stub would cost more
    pinned = pin("s", units(tiny))
    kept = budget(Reserved(1, 5), pinned, identity, WindowPolicy(max_tokens=10, elide_min_chars=64))
    assert kept[2] == units(tiny)[1].messages
