"""Properties of memory over random conversations and random policies (M2–M5, M7).

For every prefix of a random conversation (parallel tool calls, failed tools,
huge payloads, element picks, interrupted and crashed turns) and a random
cache loss at any point:

    window with a warm cache == window rebuilt from the store == reference window

where the reference is an independent, plain in-memory implementation of the
policy over the whole history ("the largest suffix of whole units that fits").
Every window passes the validator and nothing committed is ever lost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import redis_client_or_skip
from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.adapters.redis.cache import RedisWindowCache
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
from zerocode.memory.cache import CachedTail, WindowCache
from zerocode.memory.facade import Memory, Turn, interrupted_note, user_content
from zerocode.memory.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from zerocode.memory.tokens import REPLY_PRIMING, message_tokens
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate
from zerocode.memory.window import WindowPolicy, elide

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


@dataclass
class Reference:
    """The whole history in a list, and the policy written the obvious way."""

    units: list[RefUnit] = field(default_factory=list)

    def window(self, policy: WindowPolicy) -> list[Message]:
        pinned = next((u for u in reversed(self.units) if u.kind is EntryKind.USER), None)
        newest = self.units[-1].turn if self.units else 0

        def render(unit: RefUnit) -> list[Message]:
            if unit.turn > newest - policy.full_turns:
                return unit.messages
            return [elide(m, policy.elide_min_chars) for m in unit.messages]

        others = [u for u in self.units if u is not pinned]
        for k in range(len(others), -1, -1):  # the largest suffix that fits
            chosen = {id(u) for u in others[len(others) - k :]} | {id(pinned)}
            body = [m for u in self.units if id(u) in chosen for m in render(u)]
            msgs: list[Message] = [SystemMessage(SYSTEM), *body]
            tokens = REPLY_PRIMING + sum(message_tokens(m) for m in msgs)
            if k == 0 or (len(msgs) <= policy.max_messages and tokens <= policy.max_tokens):
                return msgs
        raise AssertionError("unreachable")

    def messages(self) -> list[Message]:
        return [m for u in self.units for m in u.messages]


step_spec = st.tuples(st.integers(1, 3), st.booleans(), st.lists(st.booleans(), max_size=3))
turn_spec = st.tuples(
    st.lists(step_spec, max_size=4),
    st.sampled_from(["final", "interrupted", "crash"]),
    st.booleans(),  # an element picked in the preview
)
policies = st.builds(
    WindowPolicy,
    max_messages=st.integers(3, 40),
    max_tokens=st.integers(40, 8000),
    elide_min_chars=st.integers(64, 900),
    full_turns=st.integers(1, 3),
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
        validate(warm.messages)
        assert list(warm.messages) == self.ref.window(self.policy)

    def turn(self, number: int, steps: list[Any], ending: str, element: bool) -> None:
        picked = (
            {"pagePath": "/", "tag": "h1", "selector": "#app h1", "text": "Shop"}
            if element
            else None
        )
        if self.open_turn is not None:  # the previous turn crashed; begin_turn closes it
            self.ref.units.append(
                RefUnit(
                    self.open_turn,
                    EntryKind.INTERRUPTED,
                    [AssistantMessage(interrupted_note(self.open_turn, "crash or timeout"))],
                )
            )
        turn = self.warm.begin_turn(APP, f"request {number}", picked)
        self.ref.units.append(
            RefUnit(
                turn.number,
                EntryKind.USER,
                [UserMessage(user_content(f"request {number}", picked))],
            )
        )
        self.check()
        for index, (calls, huge, failed) in enumerate(steps):
            self.step(turn, index, calls, huge, failed)
            self.check()
        self.open_turn = None
        if ending == "final":
            self.warm.commit_final(turn, f"finished {number}")
            self.ref.units.append(
                RefUnit(turn.number, EntryKind.FINAL, [AssistantMessage(f"finished {number}")])
            )
        elif ending == "interrupted":
            self.warm.mark_interrupted(turn, "client disconnected")
            self.ref.units.append(
                RefUnit(
                    turn.number,
                    EntryKind.INTERRUPTED,
                    [AssistantMessage(interrupted_note(turn.number, "client disconnected"))],
                )
            )
        else:
            self.open_turn = turn.number
        self.check()

    def step(self, turn: Turn, index: int, calls: int, huge: bool, failed: list[bool]) -> None:
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
        self.ref.units.append(RefUnit(turn.number, EntryKind.CALL, [call, *results]))

    def nothing_lost(self) -> None:
        stored = [e.message for e in self.store.tail(APP, 1_000_000)]
        assert stored == self.ref.messages()


def run_conversation(
    cache: WindowCache, policy: WindowPolicy, turns: list[Any], losses: list[bool]
) -> None:
    run = Run(cache, policy, losses)
    for number, (steps, ending, element) in enumerate(turns, start=1):
        run.turn(number, steps, ending, element)
    run.nothing_lost()
    run.db.close()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policy=policies,
    turns=st.lists(turn_spec, min_size=1, max_size=6),
    losses=st.lists(st.booleans(), max_size=40),
)
def test_window_is_the_same_with_warm_lost_or_no_cache(
    policy: WindowPolicy, turns: list[Any], losses: list[bool]
) -> None:
    run_conversation(LruWindowCache(), policy, turns, losses)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
    for number, (steps, ending, _) in enumerate(turns, start=1):
        turn = warm.begin_turn(APP, f"request {number}", system=SYSTEM)
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
        w = warm.window(APP, SYSTEM)
        validate(w.messages)
        assert w == cold.window(APP, SYSTEM)
        assert len(w.messages) <= policy.max_messages
    db.close()
