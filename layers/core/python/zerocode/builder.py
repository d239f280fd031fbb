"""Builder port: turn a Vue project's source into a static site, or say why not."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol


class BuildStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class BuildResult:
    status: BuildStatus
    log_tail: str
    output: Path | None  # the built site (dist/) when succeeded
    seconds: float


class Builder(Protocol):
    async def build(self, source: Path) -> BuildResult:
        """Build the project in ``source``; never raises for a broken project."""
        ...
