"""Token budgets (issue 43) over the local platform and the offline model: a turn that
crosses its account's daily budget mid-way ends after its current step, interrupted, saying
which budget and when it resets, its transcript valid and its step whole; the next turn is
refused before anything runs (429 quota_exceeded); another account is not touched."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest

from tests.integration.engine.test_engine import platform, run
from zerocode.accounts.usage import Budgets, QuotaExceeded
from zerocode.apps.records import CodeGenType
from zerocode.engine.events import DoneEvent, ErrorEvent, ToolEvent
from zerocode.memory.display import DisplayStatus
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate

PROMPT = "A Vue todo app with an about page"


def test_a_turn_over_its_budget_ends_after_its_step_and_the_next_is_refused(
    tmp_path: Path,
) -> None:
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("ann", PROMPT, CodeGenType.VUE_PROJECT))
    # Naming the app was the account's first request: the budget is what it spent and one
    # token more, so the turn starts and its first request crosses it.
    assert p.engine.usage is not None
    (named,) = p.engine.usage.of_turn(app.id, 0)
    budget = named.input_tokens + named.output_tokens + 1
    p.engine.budgets = Budgets(per_day=budget)
    events = run(p, app, PROMPT)
    (error,) = [e for e in events if isinstance(e, ErrorEvent)]
    (done,) = [e for e in events if isinstance(e, DoneEvent)]
    assert error.code == "quota_exceeded", error
    tomorrow = (dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)).isoformat()
    assert f"token budget of {budget:,} per day is spent" in error.message
    assert f"resets at {tomorrow} 00:00 UTC" in error.message
    assert done.status == "interrupted" and done.usage is not None
    assert done.usage["requests"] == 1  # the step that crossed it, no more
    # The step the first request made is whole: its calls ran and were committed.
    results = [e for e in events if isinstance(e, ToolEvent) and e.phase == "result"]
    assert results and all(r.ok for r in results)
    assert {f.path for f in p.workspace.list(app.id)} >= {r.path for r in results if r.path}
    # The transcript is valid and closed, telling the model why.
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)
    units = p.memory.units(app.id)
    closing = units[-1].entries[-1]
    assert closing.kind is EntryKind.INTERRUPTED and "token budget" in str(closing.message)
    (shown,) = [e for e in p.display.page(app.id).entries if e.turn == done.turn and e.usage]
    assert shown.status is DisplayStatus.INTERRUPTED and "token budget" in shown.content
    # The next turn of this account is refused before it starts, saying the same.
    with pytest.raises(QuotaExceeded) as refused:
        p.engine.start(app, "Add a footer", None)
    assert refused.value.status == 429 and refused.value.code == "quota_exceeded"
    assert refused.value.lockout == {
        "reason": "tokens_per_day",
        "after": budget,
        "until": f"{tomorrow}T00:00:00Z",
    }
    assert 0 < refused.value.retry_after <= 86_400
    assert p.memory.head(app.id).turn == done.turn  # nothing began
    # Another account's turns go on.
    other = asyncio.run(p.create_app("bob", "A page about newts", CodeGenType.HTML))
    (theirs,) = [e for e in run(p, other, "A page about newts") if isinstance(e, DoneEvent)]
    assert theirs.status == "succeeded"


def test_creating_an_app_spends_from_the_budget(tmp_path: Path) -> None:
    """Routing and naming a new app are model requests of its owner: they count against the
    account's budget, so a budget they spent refuses the app's first turn."""
    p = platform(tmp_path, tokens_per_day=1)
    app = asyncio.run(p.create_app("ann", PROMPT, None))  # routed, then named: two requests
    assert p.engine.usage is not None and len(p.engine.usage.of_turn(app.id, 0)) == 2
    with pytest.raises(QuotaExceeded) as refused:
        p.engine.start(app, PROMPT, None)
    assert refused.value.code == "quota_exceeded" and "per day is spent" in refused.value.message
    assert p.memory.head(app.id).turn == 0  # nothing began
