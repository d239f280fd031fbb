"""Properties of memory over random conversations and random policies (M2–M5, M7).

For every prefix of a random conversation (parallel tool calls, failed tools,
huge payloads, element picks, interrupted and crashed turns) and a random
cache loss at any point:

    window with a warm cache == window rebuilt from the store == reference window

where the reference is an independent, plain in-memory implementation of the
policy over the whole history. Every window passes the validator, keeps the budget
rules (:func:`check_rules`: the current turn's newest unit is always in; no unit of
the current turn is out while an older turn's is in; a turn's request is in whenever
any of its units is; the token and message bounds hold whenever what is never dropped
fits them), and nothing committed is ever lost. The same rules are checked on the pure
function over larger random transcripts (24-file write steps, long current turns).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import redis_client_or_skip
from tests.properties import examples
from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.adapters.redis.cache import RedisWindowCache
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
from zerocode.memory.cache import CachedTail, WindowCache
from zerocode.memory.facade import CRASHED, Memory, Turn, interrupted_note, user_content
from zerocode.memory.messages import (
    AssistantMessage,
    ImageRef,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from zerocode.memory.tokens import REPLY_PRIMING, message_tokens
from zerocode.memory.transcript import Entry, EntryKind, Unit, group_units
from zerocode.memory.validation import validate
from zerocode.memory.window import Window, WindowPolicy, build_window, elide

APP = "prop-app"
SYSTEM = "You are zerocode. Use the tools to change files."
HUGE = '<div class="card">{{ item.title }}</div>\n' * 150  # ~6 KB


class NoCache:
    """Forgets everything: every window is rebuilt from the store."""

    def get(self, app_id: str) -> CachedTail | None:
        return None

    def put(self, app_id: str, tail: CachedTail) -> None:
        pass

    def delete(self, app_id: str) -> None:
        pass


@dataclass
class RefUnit:
    turn: int
    kind: EntryKind
    messages: list[Message]
    seq: int = 0  # its first message's seq, set when it is added to a Reference


@dataclass
class Reference:
    """The whole history in a list, and the policy written the obvious way."""

    units: list[RefUnit] = field(default_factory=list)

    def add(self, unit: RefUnit) -> None:
        unit.seq = len(self.messages()) + 1
        self.units.append(unit)

    def tail(self, items: int) -> list[RefUnit]:
        """What a rebuild reads: the units wholly among the newest ``items`` messages,
        and the current turn's request if it is older than that."""
        head = len(self.messages())
        units = [u for u in self.units if u.seq > head - items]
        if self.units:
            current = self.units[-1].turn
            asked = [u for u in self.units if u.turn == current and u.kind is EntryKind.USER]
            units = [u for u in asked if u not in units] + units
        return units

    def window(self, policy: WindowPolicy, units: list[RefUnit] | None = None) -> list[Message]:
        """Offers, in order of preference, each taken in full, else elided, if it fits:
        the current turn's request (always), its units newest first (the newest always;
        the first that does not fit ends the window), then each older turn newest first
        as its request plus its units newest first (not shown at all unless the request
        and its newest unit fit; the first turn not shown whole ends the window).
        ``units``: the window's input; default, a rebuild's tail read."""
        system: list[Message] = [SystemMessage(SYSTEM)]
        units = self.tail(policy.tail_items) if units is None else units
        if not units:
            return system
        turns = [list(group) for _, group in groupby(units, key=lambda u: u.turn)]
        offers = RefOffers(policy, units[-1].turn, tokens(system), image_turns(units, policy))
        current, older = turns[-1], turns[:-1]
        if offers.current(current):
            for turn in reversed(older):
                if not offers.older(turn):
                    break
        return system + [m for u in units if u.seq in offers.chosen for m in offers.chosen[u.seq]]

    def messages(self) -> list[Message]:
        return [m for u in self.units for m in u.messages]


class RefOffers:
    """The reference window's room: what is left of the bounds, and what was chosen."""

    def __init__(
        self, policy: WindowPolicy, newest: int, system_tokens: int, images: set[int]
    ) -> None:
        self.policy, self.newest, self.images = policy, newest, images
        self.left = {
            "tokens": policy.max_tokens - system_tokens,
            "messages": policy.max_messages - 1,
        }
        self.chosen: dict[int, list[Message]] = {}

    def slim(self, unit: RefUnit) -> list[Message]:
        return [elide(m, self.policy.elide_min_chars) for m in unit.messages]

    def full(self, unit: RefUnit) -> list[Message]:
        if unit.turn > self.newest - self.policy.full_turns:
            return unit.messages
        keep = unit.turn in self.images  # an older turn among the newest images' turns
        return [elide(m, self.policy.elide_min_chars, keep_images=keep) for m in unit.messages]

    def offer(self, unit: RefUnit, *, forced: bool = False, pinned: bool = False) -> bool:
        # The pinned request is shown as it is (its images too: the budget's minimum holds
        # them); any other unit in full, else elided.
        options = [self.full(unit)] if pinned else [self.full(unit), self.slim(unit)]
        fitting = [
            o
            for o in options
            if tokens(o) - REPLY_PRIMING <= self.left["tokens"] and len(o) <= self.left["messages"]
        ]
        if not fitting and not forced:
            return False
        option = fitting[0] if fitting else min(options, key=tokens)
        self.chosen[unit.seq] = option
        self.left["tokens"] -= tokens(option) - REPLY_PRIMING
        self.left["messages"] -= len(option)
        return True

    def current(self, turn: list[RefUnit]) -> bool:
        """The current turn: its request and newest unit forced in; True if it is all in."""
        asked = request(turn)
        if asked is not None:
            self.offer(asked, forced=True, pinned=True)
        rest = [u for u in turn if u is not asked]
        return all(self.offer(u, forced=u is rest[-1]) for u in reversed(rest))

    def older(self, turn: list[RefUnit]) -> bool:
        """An older turn, shown only with its request and newest unit (else not at all);
        True if it is all in, so the next older turn is offered."""
        if [u.kind for u in turn] == [EntryKind.NOTE]:  # a note: whole, or the end
            return self.offer(turn[0])
        asked = request(turn)
        saved = (dict(self.chosen), dict(self.left))
        rest = [u for u in turn if u is not asked]
        if asked is None or not self.offer(asked) or not rest or not self.offer(rest[-1]):
            self.chosen.clear()
            self.chosen.update(saved[0])
            self.left.update(saved[1])
            return False
        return all(self.offer(u) for u in reversed(rest[:-1]))


def image_turns(units: list[RefUnit], policy: WindowPolicy) -> set[int]:
    """The turns whose images stay shown, the obvious way: from the newest turn back, each
    turn that sent images while all of them so far are at most ``policy.images``."""
    turns: set[int] = set()
    total = 0
    for unit in reversed(units):
        sent = sum(len(m.images) for m in unit.messages if isinstance(m, UserMessage))
        if sent == 0:
            continue
        total += sent
        if total > policy.images:
            break
        turns.add(unit.turn)
    return turns


def picture(turn: int, index: int) -> ImageRef:
    """An image a request carries: its size (so its tokens) varies with the turn."""
    sha = hashlib.sha256(f"{turn}-{index}".encode()).hexdigest()
    return ImageRef(sha, "image/png", 200 + 300 * turn, 150 + 200 * index, 1000 * turn + index)


def request(turn: list[RefUnit]) -> RefUnit | None:
    return next((u for u in turn if u.kind is EntryKind.USER), None)


def tokens(messages: Sequence[Message]) -> int:
    return REPLY_PRIMING + sum(message_tokens(m) for m in messages)


def check_rules(window: Window, units: Sequence[Unit], policy: WindowPolicy) -> None:
    """The budget's rules, checked on a window and the units it was built from."""
    validate(window.messages)
    conversation = [u for u in units if u.kind is not EntryKind.SUMMARY]
    if not conversation:
        return
    kept = set(window.kept_units)
    newest = conversation[-1].turn
    current = [u for u in conversation if u.turn == newest]
    asked = [u for u in current if u.kind is EntryKind.USER]
    steps = [u for u in current if u.kind is not EntryKind.USER]
    assert {u.seq for u in asked} <= kept, "the current request is pinned"
    if steps:
        assert steps[-1].seq in kept, "the current turn's newest unit is always in"
    if any(u.seq not in kept for u in current):
        assert kept <= {u.seq for u in current}, "an older unit in, a current one out"
    for turn in {u.turn for u in conversation if u.seq in kept and u.turn != newest}:
        mine = [u for u in conversation if u.turn == turn]
        if [u.kind for u in mine] == [EntryKind.NOTE]:
            continue  # a platform note (M9) is a turn of its own, with no request
        requests = [u for u in mine if u.kind is EntryKind.USER]
        assert requests and requests[0].seq in kept, f"turn {turn} shown without its request"
    # What is never dropped: system (+ the summary's room), the request, the newest unit.
    floor: list[Message] = [SystemMessage(SYSTEM)]
    floor += [m for u in asked for m in u.messages]
    if steps:
        renderings: list[list[Message]] = [
            list(steps[-1].messages),
            [elide(m, policy.elide_min_chars) for m in steps[-1].messages],
        ]
        cheapest = min(renderings, key=tokens)
        floor += cheapest
    room = 0
    if policy.summary:
        summaries = [u for u in units if u.kind is EntryKind.SUMMARY]
        room = 3 + policy.summary_max_tokens
        if summaries:
            room = max(room, message_tokens(summaries[-1].messages[0]))
    shown_summary = [window.messages[1]] if window.summary_included else []
    total = window.total_tokens - tokens(shown_summary) + REPLY_PRIMING + room
    if tokens(floor) + room <= policy.max_tokens:
        assert total <= policy.max_tokens, "within the budget whenever the floor fits"
    else:
        assert len(window.messages) == len(floor) + len(shown_summary)
    if len(floor) + policy.summary <= policy.max_messages:
        assert len(window.messages) - len(shown_summary) + policy.summary <= policy.max_messages


step_spec = st.tuples(st.integers(1, 3), st.booleans(), st.lists(st.booleans(), max_size=3))
turn_spec = st.tuples(
    st.lists(step_spec, max_size=4),
    st.sampled_from(["final", "interrupted", "crash"]),
    st.booleans(),  # an element picked in the preview
    st.booleans(),  # a platform note (a restore, M9) after the turn
    st.integers(0, 3),  # images the request carries (issue 41)
)
policies = st.builds(
    WindowPolicy,
    max_messages=st.integers(3, 40),
    max_tokens=st.integers(40, 8000),
    elide_min_chars=st.integers(64, 900),
    full_turns=st.integers(1, 3),
    images=st.integers(0, 4),
)


class Run:
    """Drives a conversation through two Memory objects on one store and checks each window."""

    def __init__(self, cache: WindowCache, policy: WindowPolicy, losses: list[bool]) -> None:
        self.db = SqliteDatabase(":memory:")
        self.store = SqliteTranscriptStore(self.db)
        self.cache, self.policy, self.losses = cache, policy, iter(losses)
        self.warm = Memory(self.store, cache, policy)
        self.cold = Memory(self.store, NoCache(), policy)
        self.ref = Reference()
        self.open_turn: int | None = None

    def check(self) -> None:
        if next(self.losses, False):
            self.cache.delete(APP)
        warm = self.warm.window(APP, SYSTEM)
        cold = self.cold.window(APP, SYSTEM)
        assert warm == cold
        check_rules(warm, self.cold.units(APP), self.policy)
        assert list(warm.messages) == self.ref.window(self.policy)

    def note(self, number: int) -> None:
        """A restore's note (M9): closes a crashed turn first, then is a turn of its own."""
        if self.open_turn is not None:
            self.ref.add(
                RefUnit(
                    self.open_turn,
                    EntryKind.INTERRUPTED,
                    [AssistantMessage(interrupted_note(self.open_turn, CRASHED))],
                )
            )
            self.open_turn = None
        text = f"[zerocode: the user restored version v{number}]"
        turn = self.warm.record_note(APP, text)
        self.ref.add(RefUnit(turn, EntryKind.NOTE, [UserMessage(text)]))
        self.check()

    def turn(
        self, number: int, steps: list[Any], ending: str, *, element: bool, images: int = 0
    ) -> None:
        picked = (
            {"pagePath": "/", "tag": "h1", "selector": "#app h1", "text": "Shop"}
            if element
            else None
        )
        if self.open_turn is not None:  # the previous turn crashed; begin_turn closes it
            self.ref.add(
                RefUnit(
                    self.open_turn,
                    EntryKind.INTERRUPTED,
                    [AssistantMessage(interrupted_note(self.open_turn, CRASHED))],
                )
            )
        sent = tuple(picture(number, i) for i in range(images))
        turn = self.warm.begin_turn(APP, f"request {number}", picked, images=sent)
        self.ref.add(
            RefUnit(
                turn.number,
                EntryKind.USER,
                [UserMessage(user_content(f"request {number}", picked), sent)],
            )
        )
        self.check()
        for index, (calls, huge, failed) in enumerate(steps):
            self.step(turn, index, calls, huge=huge, failed=failed)
            self.check()
        self.open_turn = None
        if ending == "final":
            self.warm.commit_final(turn, f"finished {number}")
            self.ref.add(
                RefUnit(turn.number, EntryKind.FINAL, [AssistantMessage(f"finished {number}")])
            )
        elif ending == "interrupted":
            self.warm.mark_interrupted(turn, "client disconnected")
            self.ref.add(
                RefUnit(
                    turn.number,
                    EntryKind.INTERRUPTED,
                    [AssistantMessage(interrupted_note(turn.number, "client disconnected"))],
                )
            )
        else:
            self.open_turn = turn.number
        self.check()

    def step(self, turn: Turn, index: int, calls: int, *, huge: bool, failed: list[bool]) -> None:
        payload = HUGE if huge else "small"
        tool_calls = tuple(
            ToolCall(
                f"c{turn.number}_{index}_{i}",
                "write_file" if i % 2 == 0 else "read_file",
                json.dumps({"path": f"src/p{i}.vue", "content": payload}),
            )
            for i in range(calls)
        )
        results = [
            ToolResult.failure(c, "refused")
            if i < len(failed) and failed[i]
            else ToolResult.success(c, payload if c.name == "read_file" else "written")
            for i, c in enumerate(tool_calls)
        ]
        call = AssistantMessage("Working on it." if index % 2 else None, tool_calls)
        self.warm.commit_step(turn, call, results)
        self.ref.add(RefUnit(turn.number, EntryKind.CALL, [call, *results]))

    def nothing_lost(self) -> None:
        stored = [e.message for e in self.store.tail(APP, 1_000_000)]
        assert stored == self.ref.messages()


def run_conversation(
    cache: WindowCache, policy: WindowPolicy, turns: list[Any], losses: list[bool]
) -> None:
    run = Run(cache, policy, losses)
    for number, (steps, ending, element, note, images) in enumerate(turns, start=1):
        run.turn(number, steps, ending, element=element, images=images)
        if note:
            run.note(number)
    run.nothing_lost()
    run.db.close()


@settings(max_examples=examples(120), suppress_health_check=[HealthCheck.too_slow])
@given(
    policy=policies,
    turns=st.lists(turn_spec, min_size=1, max_size=6),
    losses=st.lists(st.booleans(), max_size=40),
)
def test_window_is_the_same_with_warm_lost_or_no_cache(
    policy: WindowPolicy, turns: list[Any], losses: list[bool]
) -> None:
    run_conversation(LruWindowCache(), policy, turns, losses)


@settings(max_examples=examples(25), suppress_health_check=[HealthCheck.too_slow])
@given(
    policy=policies,
    turns=st.lists(turn_spec, min_size=1, max_size=4),
    losses=st.lists(st.booleans(), max_size=30),
)
def test_window_is_the_same_with_a_real_redis_cache(
    policy: WindowPolicy, turns: list[Any], losses: list[bool]
) -> None:
    client = redis_client_or_skip()
    run_conversation(RedisWindowCache(client, prefix="zc-prop:"), policy, turns, losses)
    client.delete("zc-prop:" + APP)


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies, turns=st.lists(turn_spec, min_size=1, max_size=8))
def test_windows_with_running_summary_stay_valid_and_cache_independent(
    policy: WindowPolicy, turns: list[Any]
) -> None:
    from dataclasses import replace

    policy = replace(policy, summary=True)
    db = SqliteDatabase(":memory:")
    store = SqliteTranscriptStore(db)
    summarize = lambda prev, units: f"{prev or ''}+{len(units)}"  # noqa: E731
    warm = Memory(store, LruWindowCache(), policy, summarizer=summarize)
    cold = Memory(store, NoCache(), policy, summarizer=summarize)
    for number, (steps, ending, _, note, images) in enumerate(turns, start=1):
        sent = tuple(picture(number, i) for i in range(images))
        turn = warm.begin_turn(APP, f"request {number}", system=SYSTEM, images=sent)
        for index, (calls, _huge, _failed) in enumerate(steps):
            tool_calls = tuple(
                ToolCall(f"c{number}_{index}_{i}", "read_dir", "{}") for i in range(calls)
            )
            warm.commit_step(
                turn,
                AssistantMessage(None, tool_calls),
                [ToolResult.success(c, "src/") for c in tool_calls],
            )
            assert warm.window(APP, SYSTEM) == cold.window(APP, SYSTEM)
        if ending == "final":
            warm.commit_final(turn, "ok")
        if note:
            warm.record_note(APP, f"[zerocode: the user restored version v{number}]")
        w = warm.window(APP, SYSTEM)
        check_rules(w, warm.units(APP), policy)
        assert w == cold.window(APP, SYSTEM)
    db.close()


# -- the pure function over larger transcripts ---------------------------------------------

WRITE = "<script setup>\nconst items = ref([])\n</script>\n<template><ul></ul></template>\n"
# A step: how many write_file calls, how many WRITE lines each, whether the first failed.
step_of = st.tuples(st.integers(1, 30), st.integers(0, 40), st.booleans())
transcript_spec = st.lists(
    st.tuples(
        st.lists(step_of, max_size=6), st.sampled_from(["final", "interrupted", "open", "note"])
    ),
    min_size=1,
    max_size=12,
)


def transcript(turns: list[Any]) -> list[Entry]:
    """Entries as Memory writes them. A step: ``calls`` write_file calls of ``size`` lines
    each (a 24-call step of 40 lines is ~20k tokens); the last turn may be left open."""
    entries: list[Entry] = []
    for number, (steps, ending) in enumerate(turns, start=1):
        start = len(entries) + 1
        if ending == "note":  # a platform note (M9): a turn of one user-role entry
            note = UserMessage(f"[zerocode: restored v{number}]" + " x" * (number * 40))
            entries.append(
                Entry(
                    seq=start,
                    turn=number,
                    unit=start,
                    turn_start=start,
                    kind=EntryKind.NOTE,
                    message=note,
                )
            )
            continue
        entries.append(
            Entry(
                seq=start,
                turn=number,
                unit=start,
                turn_start=start,
                kind=EntryKind.USER,
                message=UserMessage(f"ask {number}"),
            )
        )
        for index, (calls, size, failed) in enumerate(steps):
            first = len(entries) + 1
            tool_calls = tuple(
                ToolCall(
                    f"c{number}_{index}_{i}",
                    "write_file",
                    json.dumps({"path": f"src/C{i}.vue", "content": WRITE * size}),
                )
                for i in range(calls)
            )
            entries.append(
                Entry(
                    seq=first,
                    turn=number,
                    unit=first,
                    turn_start=start,
                    kind=EntryKind.CALL,
                    message=AssistantMessage(None, tool_calls),
                )
            )
            for i, call in enumerate(tool_calls):
                result = (
                    ToolResult.failure(call, "disk full")
                    if failed and i == 0
                    else ToolResult.success(call, "written")
                )
                entries.append(
                    Entry(
                        seq=first + 1 + i,
                        turn=number,
                        unit=first,
                        turn_start=start,
                        kind=EntryKind.RESULT,
                        message=result,
                    )
                )
        if ending != "open" or number < len(turns):
            seq = len(entries) + 1
            kind = EntryKind.FINAL if ending == "final" else EntryKind.INTERRUPTED
            entries.append(
                Entry(
                    seq=seq,
                    turn=number,
                    unit=seq,
                    turn_start=start,
                    kind=kind,
                    message=AssistantMessage(f"end {number}"),
                )
            )
    return entries


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=transcript_spec,
    max_tokens=st.integers(50, 30_000),
    max_messages=st.integers(3, 200),
    full_turns=st.integers(1, 3),
    cut=st.integers(0, 20),
)
def test_the_budget_rules_hold_on_any_transcript(
    turns: list[Any], max_tokens: int, max_messages: int, full_turns: int, cut: int
) -> None:
    """Big current steps, long current turns, tight budgets, and tails that begin anywhere
    (a cut-off read): every window keeps the rules and matches the reference."""
    entries = transcript(turns)
    policy = WindowPolicy(max_messages=max_messages, max_tokens=max_tokens, full_turns=full_turns)
    tail = entries[min(cut, len(entries) - 1) :]
    units = group_units(APP, tail)
    window = build_window(SYSTEM, units, policy)
    check_rules(window, units, policy)
    kept = set(window.kept_units)
    newest = units[-1].turn if units else 0
    for turn in {u.turn for u in units}:
        mine = [u for u in units if u.turn == turn and u.kind is not EntryKind.SUMMARY]
        if 0 < sum(u.seq in kept for u in mine) < len(mine):
            event("current turn partly shown" if turn == newest else "older turn partly shown")
    if window.total_tokens > max_tokens:
        event("over the budget: only what is never dropped")
    body = iter(window.messages[1 + window.summary_included :])
    shown = {
        u.seq: [next(body) for _ in u.messages]
        for u in units
        if u.seq in kept and u.kind is not EntryKind.SUMMARY
    }
    if any(u.turn == newest and shown.get(u.seq, u.messages) != list(u.messages) for u in units):
        event("a current-turn unit elided")
    given = [RefUnit(u.turn, u.kind, list(u.messages), u.seq) for u in units]
    assert list(window.messages) == Reference().window(policy, given)
