"""The running summary's request is a model request too (issue 43): over the local platform
and the offline model, a turn whose opening writes a summary has that request kept in the
usage ledger under its own number (round 0, the routing model), for the app's owner, and in
the app's and account's days; estimated where the provider reports none, with the
provider's very count; a ledger that fails costs the record, never the summary or the turn."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, cast

from tests.integration.engine.test_engine import platform, run
from zerocode.accounts.usage import Spent, UsageLedger
from zerocode.apps.records import App, CodeGenType
from zerocode.bootstrap.platform import Platform
from zerocode.engine.events import DoneEvent
from zerocode.engine.summary import ModelSummarizer
from zerocode.engine.usage import Meter
from zerocode.engine.window_budget import window_minimum
from zerocode.memory.transcript import EntryKind

FILLER = "filler " * 900


def summarizing(tmp_path: Path) -> Platform:
    """The summary on, in the smallest window the settings accept with it (a few turns of
    FILLER fill it)."""
    return platform(
        tmp_path,
        covers=False,
        window_summary=True,
        window_max_tokens=window_minimum(1000, 400).tokens,
        max_message_chars=1000,
        chat_images_max=0,
    )


def filled(p: Platform, request: str) -> App:
    """An app whose earlier turns leave the window once its next turn opens (written
    straight to its transcript: no summary is asked for them)."""
    app = asyncio.run(p.create_app("ann", request, CodeGenType.HTML))
    for n in range(1, 7):
        turn = p.memory.begin_turn(app.id, f"{request}: change the title to Title {n}")
        p.memory.commit_final(turn, f"Changed it to Title {n}. " + FILLER)
    return app


def summarized_turn(p: Platform, app: App, message: str) -> tuple[DoneEvent, list[Spent]]:
    (done,) = [e for e in run(p, app, message) if isinstance(e, DoneEvent)]
    assert done.status == "succeeded" and done.usage is not None
    stored = [e for e in p.memory.store.tail(app.id, 10_000) if e.kind is EntryKind.SUMMARY]
    assert [e.turn for e in stored] == [done.turn], "the turn opened with a summary"
    assert p.engine.usage is not None
    return done, p.engine.usage.of_turn(app.id, done.turn)


def test_the_summary_a_turn_opens_with_is_kept_under_that_turn(tmp_path: Path) -> None:
    p = summarizing(tmp_path)
    app = filled(p, "A page about otters")
    done, kept = summarized_turn(p, app, "Make the heading green")
    summary, *steps = kept  # asked before the turn's first write, so kept first
    routing = p.settings.model_routing
    assert (summary.account, summary.turn, summary.round) == ("ann", done.turn, 0)
    assert summary.model == routing and not summary.estimated
    assert summary.input_tokens > 0 and summary.output_tokens > 0
    # done says every request kept under the turn: its steps' and the summary's it opened
    # with (docs/engine.md, "What a turn costs"), in round 0; so does its display entry.
    assert done.usage is not None and len(kept) == done.usage["requests"]
    assert routing not in {s.model for s in steps}
    for field, name in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens")):
        assert sum(getattr(s, field) for s in kept) == done.usage[name], name
    assert done.usage["rounds"][0]["requests"] == len(kept)
    (reply,) = [x for x in p.display.page(app.id).entries if x.turn == done.turn and x.usage]
    assert reply.usage == done.usage
    # The app's day and its owner's count it with the rest.
    assert p.engine.usage is not None
    named = p.engine.usage.of_turn(app.id, 0)
    (day,) = p.engine.usage.days("app", app.id, summary.day, summary.day)
    (account,) = p.engine.usage.days("account", "ann", summary.day, summary.day)
    assert day == account and day.requests == len(named) + len(kept)
    assert day.input_tokens == sum(s.input_tokens for s in (*named, *kept))


def test_a_summary_the_provider_did_not_count_is_estimated_exactly(tmp_path: Path) -> None:
    """The offline model leaves its usage out of every request whose text says
    ``[[usage=none]]`` (the summary's request quotes the turns it condenses): the platform's
    count of the summary request equals the provider's count of the same request."""
    counts = {}
    for trigger in ("[[usage=some]]", "[[usage=none]]"):
        p = summarizing(tmp_path / trigger.strip("[]="))
        app = filled(p, f"A page about otters {trigger}")
        _, (summary, *_) = summarized_turn(p, app, f"Make the heading green {trigger}")
        assert summary.model == p.settings.model_routing
        counts[trigger] = summary
    told, estimated = counts["[[usage=some]]"], counts["[[usage=none]]"]
    assert not told.estimated and estimated.estimated
    assert (estimated.input_tokens, estimated.output_tokens) == (
        told.input_tokens,
        told.output_tokens,
    )


class Refusing:
    def record(self, spent: Spent) -> None:
        raise OSError("no space left for the ledger")


def test_a_ledger_that_fails_loses_the_record_not_the_summary(tmp_path: Path, caplog: Any) -> None:
    p = summarizing(tmp_path)
    app = filled(p, "A page about otters")
    summarizer = p.memory.summarizer
    assert isinstance(summarizer, ModelSummarizer)
    summarizer.meter = Meter(cast(UsageLedger, Refusing()))  # a ledger that fails
    with caplog.at_level(logging.WARNING):
        done, kept = summarized_turn(p, app, "Make the heading green")
    assert "could not keep a request's usage" in caplog.text
    assert done.usage is not None and len(kept) == done.usage["requests"]  # the turn's own
