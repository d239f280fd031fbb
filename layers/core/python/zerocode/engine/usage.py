"""What a turn's model requests cost, in tokens: counted per request, summed per repair
round and per turn (issue 43).

Each request's count is its provider's word (:class:`zerocode.engine.model.Usage`: input,
output, the cached part of the input). A provider that says nothing gets the platform's own
count of what was sent and what came back (the o200k tokenizer: the window's tokens, the
answer's), marked ``estimated``, so a turn never shows zero for tokens it spent, nor an
estimate as if the provider had said it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zerocode.accounts.usage import MICROS, Price, Spent, UsageLedger, usd
from zerocode.apps.records import App
from zerocode.engine.model import ModelReply, Usage
from zerocode.memory.messages import AssistantMessage, Message
from zerocode.memory.tokens import REPLY_PRIMING, count_tokens, message_tokens

log = logging.getLogger(__name__)


@dataclass
class UsageTally:
    """Requests and tokens so far; ``estimated``: some count is the platform's estimate."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    estimated: bool = False
    cost_micros: int = 0  # of the requests whose model has a price (accounts/usage.Price)
    unpriced: int = 0  # requests whose model has none: no cost is claimed for them

    def add(self, usage: Usage, *, estimated: bool = False, cost_micros: int | None = None) -> None:
        self.requests += 1
        self.input_tokens += usage.prompt_tokens
        self.output_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens
        self.estimated = self.estimated or estimated
        self.cost_micros += cost_micros or 0
        self.unpriced += cost_micros is None

    def to_json(self) -> dict[str, int | bool | float | None]:
        """As the API says it (``done``'s ``usage``; docs/api.md)."""
        return {
            "requests": self.requests,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cachedTokens": self.cached_tokens,
            "estimated": self.estimated,
            "costUsd": usd(self.cost_micros) if self.unpriced < self.requests else None,
            "unpricedRequests": self.unpriced,
        }

    @classmethod
    def from_json(cls, raw: object) -> UsageTally:
        """A stored tally; anything unreadable reads as nothing counted."""
        if not isinstance(raw, Mapping):
            return cls()

        def count(name: str) -> int:
            value = raw.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
            return 0

        cost = raw.get("costUsd")
        usd_given = isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0
        micros = round(float(cost) * MICROS) if usd_given and cost is not None else 0
        return cls(
            requests=count("requests"),
            input_tokens=count("inputTokens"),
            output_tokens=count("outputTokens"),
            cached_tokens=count("cachedTokens"),
            estimated=raw.get("estimated") is True,
            cost_micros=micros,
            unpriced=count("unpricedRequests"),
        )


class BudgetSpent(Exception):
    """The account's token budget ran out while the turn ran: it ends after its current
    step, interrupted, saying why (issue 43). ``reason``: the budget and when it resets."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def usage_json(total: UsageTally, rounds: Mapping[int, UsageTally]) -> dict[str, Any]:
    """A turn's usage as ``done`` and its display entry say it: the total, and each repair
    round's (round 0: before any repair)."""
    each = [{"round": n, **t.to_json()} for n, t in sorted(rounds.items())]
    return {**total.to_json(), "rounds": each}


def kept_usage(spent: Sequence[Spent]) -> dict[str, Any] | None:
    """A turn's usage from the ledger's requests (a turn closed after the server stopped
    under it); None when none was kept."""
    if not spent:
        return None
    total, rounds = UsageTally(), dict[int, UsageTally]()
    for one in spent:
        usage = Usage(one.input_tokens, one.output_tokens, one.cached_tokens)
        for tally in (total, rounds.setdefault(one.round, UsageTally())):
            tally.add(usage, estimated=one.estimated, cost_micros=one.cost_micros)
    return usage_json(total, rounds)


def cost_of(prices: Mapping[str, Price], model: str, usage: Usage) -> int | None:
    """A request's cost at its model's price, in micro-dollars; None without a price (a cost
    is never invented)."""
    price = prices.get(model)
    if price is None:
        return None
    return price.micros(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens)


def estimated_usage(
    sent_tokens: int, extra: Iterable[Message], tools: object, answer: AssistantMessage
) -> Usage:
    """A request the provider reported nothing for, counted by the platform: the window's
    tokens (``sent_tokens``: its messages and the reply's priming), any messages sent beyond
    it and the tool definitions offered; and what the model generated (its text, each call's
    name and arguments: a provider's completion tokens carry no message framing)."""
    sent = sent_tokens + sum(message_tokens(m) for m in extra)
    if tools:
        sent += count_tokens(json.dumps(tools, ensure_ascii=False))
    made = count_tokens(answer.content or "") + sum(
        count_tokens(c.name) + count_tokens(c.arguments) for c in answer.tool_calls
    )
    return Usage(sent, made)


async def keep(
    ledger: UsageLedger,
    at: tuple[App, int, int],
    usage: Usage,
    model: str,
    *,
    estimated: bool,
    cost_micros: int | None,
) -> None:
    """One request's tokens into the ledger (``at``: the app, the turn, the repair round),
    for the app's and its owner's days. A ledger that fails costs its record, logged, not
    the turn: ``done`` still says the count."""
    app, turn, round_ = at
    spent = spent_of(app.owner, app.id, (turn, round_), model, usage, estimated, cost_micros)
    await _record(ledger, spent)


def spent_of(
    account: str,
    app_id: str,
    at: tuple[int, int],
    model: str,
    usage: Usage,
    estimated: bool,  # noqa: FBT001 (one record's fields, in order)
    cost_micros: int | None,
) -> Spent:
    """One request as the ledger keeps it (``at``: its turn and repair round), ended now."""
    turn, round_ = at
    return Spent(
        account=account,
        app_id=app_id,
        turn=turn,
        round=round_,
        model=model,
        at=time.time(),
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        estimated=estimated,
        cost_micros=cost_micros,
    )


async def _record(ledger: UsageLedger, spent: Spent) -> None:
    try:
        await asyncio.to_thread(ledger.record, spent)
    except Exception as exc:
        log.warning("could not keep a request's usage app=%s: %s", spent.app_id, type(exc).__name__)


@dataclass(frozen=True)
class Meter:
    """Counts the model requests made outside a turn's steps: routing and naming a new app
    (``engine/naming.py``), the running summary (``engine/summary.py``). Each goes into the
    ledger as a step's request does (:func:`keep`): the provider's count, or the platform's
    marked estimated, at its model's price; a ledger that fails costs its record, logged,
    never the work that made the request. Without a ledger (None) nothing is kept."""

    ledger: UsageLedger | None = None
    prices: Mapping[str, Price] = field(default_factory=dict)

    async def count(
        self, reply: ModelReply, sent: Sequence[Message], *, account: str, app_id: str, turn: int
    ) -> Spent:
        """``reply``'s request (``sent``: its messages, no tools), kept under ``app_id`` and
        ``turn`` (round 0) for ``account``; the record, as kept or as it would have been."""
        usage, estimated = reply.usage, False
        if usage is None:
            usage, estimated = estimated_usage(REPLY_PRIMING, sent, (), reply.message), True
        cost = cost_of(self.prices, reply.model, usage)
        spent = spent_of(account, app_id, (turn, 0), reply.model, usage, estimated, cost)
        if self.ledger is not None:
            await _record(self.ledger, spent)
        return spent
