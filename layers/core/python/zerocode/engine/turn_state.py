"""All that changes while one turn runs, in one place: where it is (for an honest error),
what it did (for the status, the display entry, the metrics and a closing note) and the
step whose tools are running (for a closing note after a cut)."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Literal

from zerocode.accounts.usage import UsageLedger
from zerocode.engine.check_suite import SuiteRun
from zerocode.engine.code_report import CodeReport, shown_text
from zerocode.engine.events import ErrorEvent
from zerocode.engine.journal import PendingStep
from zerocode.engine.model import Usage
from zerocode.engine.tools import CHECK_TOOL_NAMES, ToolOutcome
from zerocode.engine.usage import UsageTally
from zerocode.memory.facade import Turn
from zerocode.observability import record_turn
from zerocode.publishing.builds import Build

Status = Literal["succeeded", "failed", "interrupted"]
_CHECKS_BLOCK = re.compile(r"^[ \t]*```checks[ \t]*\n.*?(?:^[ \t]*```[ \t]*$|\Z)\n?", re.M | re.S)

# The turn's log line keeps the logger it always had (dashboards and tests read it).
log = logging.getLogger("zerocode.engine.turn")


@dataclass
class TurnState:
    """The one mutable record of a turn; the steps of engine/turn_steps.py and the loop of
    engine/turn.py read and write it, nothing else does."""

    turn: Turn | None = None  # once the user message is saved
    phase: str = "starting"  # what the turn is doing, for an honest error
    pending: PendingStep | None = None  # the step whose tools are running
    build: Build | None = None  # the newest preview build
    finished: bool = False  # the turn ended by itself (its display entry is written)
    started: float = field(default_factory=time.monotonic)
    # Model requests and tokens over the turn, and per repair round (engine/usage.py).
    usage: UsageTally = field(default_factory=UsageTally)
    rounds: dict[int, UsageTally] = field(default_factory=dict)
    # What the turn did, for the honest status and the display entry.
    text: list[str] = field(default_factory=list)
    code: list[CodeReport] = field(default_factory=list)  # html / multi-file answers' blocks
    steps: list[str] = field(default_factory=list)
    tool_calls: int = 0
    tool_failures: int = 0
    builds: int = 0
    build_failures: int = 0
    failure_after_change: bool = False
    changed: bool = False
    unbuilt: bool = False  # files changed since the newest preview build began
    error: str | None = None
    late_error: ErrorEvent | None = None  # recording the end of a turn that worked failed
    saved: list[str] = field(default_factory=list)  # files an html / multi-file answer saved
    saving: tuple[str, ...] = ()  # and those it was saving (their state is not known)
    # Acceptance checks (engine/check_suite.py).
    round: int = 0  # the repair round the work is in (0: the first)
    suite_changed: bool = False  # checks were added or retired since the suite last ran
    suite_run: SuiteRun | None = None  # the newest run of the suite in this turn
    suite_seconds: float = 0.0  # the suite's browser time so far, repair rounds included
    checks_note: list[str] = field(default_factory=list)  # an answer's checks block, done
    # An answer not saved for undoing the builder's edit (engine/answer_guard.py): told to
    # the model after that answer, in the repair message or the note after the turn.
    refused: list[str] = field(default_factory=list)

    def record(self, outcome: ToolOutcome) -> None:
        self.tool_calls += 1
        self.tool_failures += not outcome.result.ok
        mark = "✓" if outcome.result.ok else "✗"
        self.steps.append(f"{mark} `{outcome.result.name}` {outcome.summary}")
        if outcome.changed and outcome.result.ok:
            self.changed = self.unbuilt = True
            self.failure_after_change = False
        elif outcome.suite and outcome.result.ok:
            self.suite_changed = True
        elif (
            not outcome.result.ok
            and not outcome.kept
            and outcome.result.name not in CHECK_TOOL_NAMES
        ):
            # A refused check fails its call, not the turn: the model reads why and may
            # state it again; the display shows the refusal. So does a write refused for
            # undoing the builder's edit (the edit stands: nothing is broken by it).
            self.failure_after_change = True

    @property
    def tokens_in(self) -> int:
        return self.usage.input_tokens

    @property
    def tokens_out(self) -> int:
        return self.usage.output_tokens

    def spent(
        self, usage: Usage, *, estimated: bool = False, cost_micros: int | None = None
    ) -> None:
        """One model request's tokens (and cost, where its model has a price), in the
        turn's tally and its repair round's."""
        self.usage.add(usage, estimated=estimated, cost_micros=cost_micros)
        round_ = self.rounds.setdefault(self.round, UsageTally())
        round_.add(usage, estimated=estimated, cost_micros=cost_micros)

    def opened(self, ledger: UsageLedger | None, app_id: str, turn: int) -> None:
        """What the turn's opening cost before its first step (a running summary's request,
        kept under the turn: engine/summary.py), in its tally, so ``done`` says every request
        the ledger keeps under the turn. A ledger that cannot be read costs the count only."""
        if ledger is None:
            return
        try:
            kept = ledger.of_turn(app_id, turn)
        except Exception as exc:
            log.warning("could not read the opening usage of app=%s: %s", app_id, exc)
            return
        for one in kept:
            usage = Usage(one.input_tokens, one.output_tokens, one.cached_tokens)
            self.spent(usage, estimated=one.estimated, cost_micros=one.cost_micros)

    def take_refused(self) -> str:
        """The refusals not yet told to the model, as the start of a message to it ("" for
        none); once taken they are told."""
        told, self.refused = self.refused, []
        return "".join(f"{line}\n\n" for line in told)

    def report(self, status: str) -> None:
        """The turn's log line and metrics (tokens, tools, builds, duration), once it ended."""
        log.info(
            "turn %s status=%s tokens_in=%s tokens_out=%s",
            self.turn.number if self.turn else "-",
            status,
            self.tokens_in,
            self.tokens_out,
            extra={
                "status": status,
                "tokens_in": self.tokens_in,
                "tokens_out": self.tokens_out,
                "tool_calls": self.tool_calls,
                "tool_failures": self.tool_failures,
            },
        )
        record_turn(
            status=status,
            seconds=time.monotonic() - self.started,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            tool_calls=self.tool_calls,
            tool_failures=self.tool_failures,
            builds=self.builds,
            build_failures=self.build_failures,
            errors=int(self.error is not None),
        )

    def status(self) -> Status:
        """How a turn that ran to its end went."""
        return "failed" if self.error or self.failure_after_change else "succeeded"

    def display(self, version: str | None = None) -> str:
        """The turn's display entry. An html / multi-file answer's code blocks are shown as
        what they did to their files, linking to ``version`` (the one the turn made); an
        answer's ```checks block as the checks' own lines, not as JSON."""
        text = shown_text(self.text, self.code, version)
        parts = [_CHECKS_BLOCK.sub("", text).strip()]
        if self.steps:
            parts.append("\n".join(f"- {s}" for s in self.steps))
        if not self.changed and not self.error:
            parts.append("_No files were changed._")
        if self.error:
            parts.append(f"**Failed:** {self.error}")
        return "\n\n".join(p for p in parts if p) or "(no answer)"
