"""The platform's own acceptance checks of an app's data (issue 39, point 5).

For every collection whose rules keep records their own (an ``owner`` rule) or need signing
in, the app's suite holds a check of the platform's, ``access-{collection}``: two fresh
visitors in contexts of their own (B tries A's record: read, find, change, delete) and one
who is not signed in (list, create), each refused as the rules say
(``zerocode/data/access_probe.py``; run by the suite's runner). They are derived from the
data model as the app's files hold it whenever the suite is read, so they follow the rules
as the model, the builder or a restore changes them, run with the suite wherever it runs
(a turn and its repair rounds, after a hand edit or a restore, "Run checks"), keep their
verdicts in its runs and history, count for ``requireChecks``, and cannot be retired: a
retirement is refused saying to change the rules instead.

:class:`WithPlatformChecks` adds them to a :class:`~zerocode.engine.check_suite.CheckStore`,
so every reader of the suite sees them and none stores them.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zerocode.apps.workspace import FileMissing, Workspace
from zerocode.data.access_probe import Probe, probes
from zerocode.data.model import DATA_MODEL, DataModel, DataModelInvalid, parse
from zerocode.engine.acceptance import Check
from zerocode.engine.check_suite import CheckStore, StoredCheck, SuiteRun, Tally
from zerocode.errors import Conflict

log = logging.getLogger(__name__)

ACCESS_PREFIX = "access-"
WHERE = "the platform's access check"


@dataclass(frozen=True, kw_only=True)
class PlatformCheck(StoredCheck):
    """A check of the platform's, never stored: what its runner needs to run it."""

    probe: Probe
    rules: dict[str, str] = field(default_factory=dict)


def is_platform(check_id: str) -> bool:
    return check_id.startswith(ACCESS_PREFIX)


def access_checks(model: DataModel | None) -> list[PlatformCheck]:
    if model is None:
        return []
    found = []
    for probe in probes(model):
        collection = model.collection(probe.collection)
        rules = {str(k): str(v) for k, v in (collection.rules if collection else {}).items()}
        found.append(
            PlatformCheck(
                id=ACCESS_PREFIX + probe.collection,
                check=Check(description=_description(probe), steps=(), expect=()),
                added_turn=0,
                probe=probe,
                rules=rules,
            )
        )
    return found


def _description(probe: Probe) -> str:
    said = []
    if probe.personal:
        said.append("another user can neither read, change nor delete a user's records")
    if probe.signed_in_only:
        ops = " or ".join(probe.signed_in_only)
        said.append(f"a visitor who is not signed in cannot {ops}")
    return f"{probe.collection}: " + "; ".join(said) + " (the platform's check of its rules)"


def model_in_files(workspace: Workspace) -> Callable[[str], DataModel | None]:
    """The data model an app's files hold now (None: none, or one that does not parse)."""

    def model(app_id: str) -> DataModel | None:
        try:
            return parse(workspace.read(app_id, DATA_MODEL))
        except (FileMissing, DataModelInvalid):
            return None  # no data; or an old invalid file (every write is checked)
        except Exception as exc:  # a store failing: the suite is read without them
            log.warning("data model of app %s unreadable: %s", app_id, type(exc).__name__)
            return None

    return model


class WithPlatformChecks:
    """A CheckStore whose suite holds the platform's checks beside the stored ones."""

    def __init__(self, store: CheckStore, models: Callable[[str], DataModel | None]) -> None:
        self.store, self.models = store, models

    def list(self, app_id: str) -> builtins.list[StoredCheck]:
        return [*self.store.list(app_id), *access_checks(self.models(app_id))]

    def add(self, app_id: str, check: Check, turn: int) -> StoredCheck:
        return self.store.add(app_id, check, turn)

    def retire(self, app_id: str, check_id: str, reason: str, turn: int) -> StoredCheck:
        if is_platform(check_id):
            raise Conflict(
                f"{check_id} is the platform's own check of the data model's rules and cannot "
                "be retired; change the rules in zerocode.data.json instead"
            )
        return self.store.retire(app_id, check_id, reason, turn)

    def record_run(self, app_id: str, run: SuiteRun) -> SuiteRun:
        return self.store.record_run(app_id, run)

    def runs(self, app_id: str, limit: int = 20) -> builtins.list[SuiteRun]:
        return self.store.runs(app_id, limit)

    def screenshot(self, app_id: str, run: int, check_id: str) -> bytes | None:
        return self.store.screenshot(app_id, run, check_id)

    def stamp_deploy(self, app_id: str, build_id: str, tally: Tally) -> None:
        self.store.stamp_deploy(app_id, build_id, tally)

    def deploy_stamps(self, app_id: str) -> dict[str, Tally]:
        return self.store.deploy_stamps(app_id)

    def delete_app(self, app_id: str) -> None:
        self.store.delete_app(app_id)

    def __getattr__(self, name: str) -> Any:  # what an adapter adds (left_not_run, tests' helpers)
        return getattr(self.store, name)
