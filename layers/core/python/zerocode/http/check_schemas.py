"""The acceptance checks' bodies (the Checks tab, a retirement): a check, its last run and
history, and the suite's runs. Apart from http/schemas.py, by domain; the Checks tab's
additions of issue 38 are http/suite_schemas.py's."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zerocode.engine.check_suite import MAX_REASON
from zerocode.http.schemas import TallyOut, text_rule


class RetireIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: str = Field(json_schema_extra=text_rule(MAX_REASON))


class EvidenceOut(BaseModel):
    where: str
    expected: str
    actual: str
    screenshot: str | None


class RetiredOut(BaseModel):
    reason: str
    turn: int | None


class CheckHistoryOut(BaseModel):
    run: int
    turn: int
    status: Literal["passed", "failed", "not_run"]


class RunHeadOut(BaseModel):
    run: int
    turn: int
    round: int
    versionId: str | None
    buildId: str | None
    at: float


class LastRunOut(RunHeadOut):
    status: Literal["passed", "failed", "not_run"]
    evidence: EvidenceOut | None


class CheckOut(BaseModel):
    id: str
    description: str
    steps: list[dict[str, Any]]
    expect: list[dict[str, Any]]
    status: Literal["passed", "failed", "not_run", "retired"]
    addedTurn: int
    retired: RetiredOut | None
    lastRun: LastRunOut | None
    history: list[CheckHistoryOut]
    # The platform's own check of the data model's rules (access-{collection}): derived
    # from the model, never stored, and not retirable (docs/data.md).
    platform: bool = False


class RunOut(RunHeadOut):
    checks: TallyOut
    whyNotRun: str | None


class ChecksOut(BaseModel):
    requireChecks: bool
    checks: list[CheckOut]
    runs: list[RunOut]
