"""A turn's tokens (issue 43), over the local platform and the offline model through the
real openai client: ``done`` says the requests and tokens the provider reported, per repair
round too; where the provider reports nothing, the platform's own count stands in, marked
estimated, and equals what the provider would have said."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from tests.integration.engine.test_engine import platform, run
from zerocode.apps.records import CodeGenType
from zerocode.engine.events import DoneEvent, RepairEvent


def done_of(tmp: Path, prompt: str, kind: CodeGenType) -> tuple[DoneEvent, list[Any]]:
    p = platform(tmp)
    app = asyncio.run(p.create_app("local", prompt, kind))
    events = run(p, app, prompt)
    (done,) = [e for e in events if isinstance(e, DoneEvent)]
    return done, events


def test_a_provider_that_reports_nothing_is_counted_by_the_platform(tmp_path: Path) -> None:
    """The same turn twice, the second time with the offline model leaving its usage out
    (``[[usage=none]]``; ``[[usage=some]]`` is no directive and as long): the platform's
    count of each request is exactly the provider's, and says it is an estimate."""
    prompt = "A Vue todo app with an about page"
    kind = CodeGenType.VUE_PROJECT
    told, _ = done_of(tmp_path / "told", f"{prompt} [[usage=some]]", kind)
    counted, _ = done_of(tmp_path / "counted", f"{prompt} [[usage=none]]", kind)
    assert told.status == "succeeded" and told.usage is not None and counted.usage is not None
    usage = told.usage
    assert usage["estimated"] is False and usage["cachedTokens"] == 0
    assert usage["requests"] >= 2  # the agent's steps, each a request
    assert usage["inputTokens"] > usage["outputTokens"] > 0
    (only,) = usage["rounds"]  # no repair round
    assert only == {"round": 0, **{k: v for k, v in usage.items() if k != "rounds"}}
    assert counted.usage["estimated"] is True
    for field in ("requests", "inputTokens", "outputTokens", "cachedTokens"):
        assert counted.usage[field] == told.usage[field], field


def test_each_repair_round_says_what_it_cost(tmp_path: Path) -> None:
    """A build that fails (``[[flaw=syntax]]``) is repaired in a round of its own: the
    rounds add up to the turn."""
    done, events = done_of(tmp_path, "A Vue counter [[flaw=syntax]]", CodeGenType.VUE_PROJECT)
    assert [e for e in events if isinstance(e, RepairEvent)], events
    assert done.usage is not None
    rounds = done.usage["rounds"]
    assert [r["round"] for r in rounds][:2] == [0, 1] and len(rounds) >= 2
    for field in ("requests", "inputTokens", "outputTokens"):
        assert sum(r[field] for r in rounds) == done.usage[field], field
    assert all(r["requests"] >= 1 and r["outputTokens"] > 0 for r in rounds)


def test_the_ledger_keeps_each_request_of_the_turn_for_the_app_and_its_owner(
    tmp_path: Path,
) -> None:
    """What ``done`` says is what the ledger kept, request by request, in the app's day and
    its owner's; deleting the app forgets its part, not what its owner spent."""
    p = platform(tmp_path)
    prompt = "A page about otters"
    app = asyncio.run(p.create_app("ann", prompt, CodeGenType.HTML))
    events = run(p, app, prompt)
    (done,) = [e for e in events if isinstance(e, DoneEvent)]
    assert done.usage is not None and p.engine.usage is not None
    kept = p.engine.usage.of_turn(app.id, done.turn)
    assert len(kept) == done.usage["requests"]
    assert sum(s.input_tokens for s in kept) == done.usage["inputTokens"]
    assert sum(s.output_tokens for s in kept) == done.usage["outputTokens"]
    assert {(s.account, s.round, s.estimated) for s in kept} == {("ann", 0, False)}
    assert all(s.model for s in kept)  # the model name each request went to
    # The reply's display entry says the same as done.
    (reply,) = [x for x in p.display.page(app.id).entries if x.turn == done.turn and x.usage]
    assert reply.usage == done.usage
    (day,) = p.engine.usage.days("app", app.id, kept[0].day, kept[-1].day)
    (owner,) = p.engine.usage.days("account", "ann", kept[0].day, kept[-1].day)
    named = p.engine.usage.of_turn(app.id, 0)  # its creation's naming request (turn 0)
    assert day == owner and day.requests == len(kept) + len(named) and len(named) == 1
    assert p.delete_app(app)
    assert p.engine.usage.of_turn(app.id, done.turn) == []
    assert p.engine.usage.days("app", app.id, day.day, day.day) == []
    assert p.engine.usage.days("account", "ann", day.day, day.day) == [owner]


def test_a_turn_the_server_died_in_says_what_the_ledger_kept(tmp_path: Path) -> None:
    """The server died mid-turn (its own count went with it): the turn closed on the next
    start says, in its display entry, the requests the ledger kept while it ran, and a
    follower's done says the same."""
    import time

    from zerocode.accounts.usage import Spent
    from zerocode.engine.closing import close_crashed

    p = platform(tmp_path)
    app = asyncio.run(p.create_app("ann", "A page about otters", CodeGenType.HTML))
    turn = p.memory.begin_turn(app.id, "A page about otters")
    assert p.engine.usage is not None
    for round_, (prompt, completion) in enumerate([(900, 40), (1100, 60)]):
        p.engine.usage.record(
            Spent(
                account="ann",
                app_id=app.id,
                turn=turn.number,
                round=round_,
                model="offline",
                at=time.time(),
                input_tokens=prompt,
                output_tokens=completion,
            )
        )
    close_crashed(p.engine, app.id)
    (closed,) = [x for x in p.display.page(app.id).entries if x.turn == turn.number]
    assert closed.usage is not None
    assert (closed.usage["requests"], closed.usage["inputTokens"]) == (2, 2000)
    assert [r["round"] for r in closed.usage["rounds"]] == [0, 1]
    # A reader of that turn (its log is gone with the server) gets one done saying it.
    from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
    from zerocode.engine.turns import Turns

    async def follow() -> list[Any]:
        turns = Turns(p.engine, InProcessTurnLog(), shared=False)
        return [entry async for entry in turns.follow(app.id, turn.number)]

    (only,) = asyncio.run(follow())
    said = json.loads(only.data)
    assert only.name == "done" and said["status"] == "interrupted"
    assert said["usage"] == closed.usage


def test_a_priced_model_costs_what_its_price_says_and_the_ledger_keeps_it(
    tmp_path: Path,
) -> None:
    """ZEROCODE_MODEL_PRICES for the model html answers use: each request's cost is its
    tokens at that price, in done, the display entry and the app's day alike."""
    price = {"input": 2.5, "output": 10.0}
    p = platform(tmp_path, model_prices={"gpt-4o": price})
    prompt = "A page about otters"
    app = asyncio.run(p.create_app("ann", prompt, CodeGenType.HTML))
    (done,) = [e for e in run(p, app, prompt) if isinstance(e, DoneEvent)]
    assert done.usage is not None and p.engine.usage is not None
    kept = p.engine.usage.of_turn(app.id, done.turn)
    assert {k.model for k in kept} == {"gpt-4o"}
    micros = sum(round(k.input_tokens * 2.5 + k.output_tokens * 10.0) for k in kept)
    assert [k.cost_micros for k in kept] == [
        round(k.input_tokens * 2.5 + k.output_tokens * 10.0) for k in kept
    ]
    assert done.usage["costUsd"] == round(micros / 1e6, 6) and done.usage["unpricedRequests"] == 0
    (day,) = p.engine.usage.days("app", app.id, kept[0].day, kept[0].day)
    # The app's creation named it with the routing model (gpt-4o-mini), which has no price.
    assert day.cost_micros == micros and day.unpriced == 1


def test_a_price_that_is_not_one_stops_the_start(tmp_path: Path) -> None:
    import pytest

    for prices, says in (
        ({"m": {"input": 1.0}}, "give input and output"),
        ({"m": {"input": 1.0, "output": -2.0}}, "cannot be negative"),
        ({"m": {"input": 1.0, "output": 2.0, "euros": 3.0}}, "give input and output"),
    ):
        with pytest.raises(ValueError, match=says):
            platform(tmp_path / says.replace(" ", "-"), model_prices=prices)
