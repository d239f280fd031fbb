"""A repair round never reverts a builder's edit to satisfy an old check (issue 38: "a
builder's edit is final; checks follow it").

When a turn's checks fail and some of them are checks the builder's own edit broke
(engine/suite_update.py: they fail on an edit's files and passed before), the repair
message names them and says the edit is deliberate: the model updates or retires those
checks. For the rest of the turn, a tool call that would put back what the edit removed
while taking out what it wrote is refused, as a failed tool result saying why; so is an
html / multi-file answer whose file would (engine/answer_guard.py).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from zerocode.engine.check_suite import CheckResult, SuiteRun
from zerocode.engine.closing import close_crashed
from zerocode.engine.parts import EngineParts, app_lease, io
from zerocode.engine.suite_update import edit_changed
from zerocode.errors import Conflict

log = logging.getLogger("zerocode.engine.checks")

MAX_SHOWN = 80  # characters of an edited line quoted in a refusal


@dataclass(frozen=True)
class EditGuard:
    """The builder's edit a repair round must keep: its version, the checks it broke (their
    ids), and per file the lines it wrote and the lines it took out."""

    version: str
    broke: frozenset[str]
    lines: Mapping[str, tuple[frozenset[str], frozenset[str]]]  # path -> (written, removed)

    def refusal(
        self, path: str, current: bytes | None, new: bytes, *, tools: bool = True
    ) -> str | None:
        """Why writing ``new`` over ``current`` undoes the edit (None when it does not):
        it drops a line the edit wrote and brings back a line the edit took out. ``tools``:
        the advice names the check tools, else an answer's ```checks block."""
        if path not in self.lines or current is None:
            return None
        written, removed = self.lines[path]
        now, then = _lines(current), _lines(new)
        dropped = sorted((written & now) - then)
        back = (removed & then) - now
        if not dropped or not back:
            return None
        line = dropped[0] if len(dropped[0]) <= MAX_SHOWN else dropped[0][: MAX_SHOWN - 1] + "…"
        how = (
            "retire_check it, then add_check one that expects what the page shows now"
            if tools
            else "retire it and add one that expects what the page shows now, in the "
            "```checks block"
        )
        return (
            f"refused: this would undo the user's own edit of {path} ({self.version}: "
            f"{line!r}), which is deliberate and final. A check that expects what was there "
            f"before is out of date: update it ({how}) instead of changing the user's edit."
        )


def edit_guard(engine: EngineParts, app_id: str, turn: int) -> EditGuard | None:
    """The guard of the builder's newest edit that broke a live check before ``turn`` (the
    runs of the turn itself judge files no version holds yet), or None."""
    store, versions = engine.checks, engine.versions
    if store is None or versions is None:
        return None
    runs = [r for r in store.runs(app_id, 40) if r.turn < turn]
    newest = versions.store.list(app_id, None, 50)
    changed = {
        c.id: found
        for c in store.list(app_id)
        if (found := edit_changed(c, runs, newest)) is not None
    }
    if not changed:
        return None
    version_id = max((f["versionId"] for f in changed.values()), key=lambda v: int(v[1:]))
    edited = versions.get(app_id, version_id)
    before = versions.previous(edited)
    after = versions.files(edited)
    was = versions.files(before) if before is not None else {}
    lines = {}
    for path in sorted(set(after) | set(was)):
        old, new = _lines(was.get(path, b"")), _lines(after.get(path, b""))
        if old != new:
            lines[path] = (frozenset(new - old), frozenset(old - new))
    broke = frozenset(cid for cid, f in changed.items() if f["versionId"] == version_id)
    return EditGuard(version_id, broke, lines)


def repair_note(guard: EditGuard, *, tools: bool) -> str:
    """What the repair message adds when checks the builder's edit broke fail."""
    how = (
        "retire_check it and add_check one that expects what the page shows now"
        if tools
        else "retire it and add one that expects what the page shows now, in the ```checks block"
    )
    ids = ", ".join(sorted(guard.broke, key=lambda c: int(c[1:])))
    return (
        f"The user's own edit ({guard.version}) changed what {ids} expected; the edit is "
        f"deliberate and final. Do not undo it to make those checks pass: {how}."
    )


def _lines(data: bytes) -> set[str]:
    return {line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()}


async def tell_broken(engine: EngineParts, app_id: str, run: SuiteRun) -> None:
    """After a run of the checks on the files of the builder's edit: the checks the edit
    broke told to the model in a note (M9), with the edit being deliberate. Under the app's
    lease; when a turn holds it, that turn's repair message tells it instead."""
    guard = await io(edit_guard, engine, app_id, run.turn + 1)
    failed = {r.check_id: r for r in run.failed()}
    broke = sorted(guard.broke & set(failed), key=lambda c: int(c[1:])) if guard else []
    if guard is None or not broke or engine.versions is None:
        return
    edited = await io(engine.versions.get, app_id, guard.version)
    if edited.digest != run.digest:
        return  # a run of other files: the edit's own run told it, or will
    store = engine.checks
    assert store is not None  # edit_guard found checks
    told = [r for r in await io(store.runs, app_id, 40) if r.digest == run.digest]
    if any(r.number < run.number and set(broke) <= {x.check_id for x in r.failed()} for r in told):
        return  # an earlier run of these files told it already
    lines = [f"- {cid}: {_found(failed[cid])}" for cid in broke]
    note = (
        f"[zerocode checks: the user's own edit ({guard.version}) changed what these checks "
        "expected, and they now fail:\n" + "\n".join(lines) + "\nThe edit is deliberate and "
        "final: never undo it to make a check pass. Update those checks (retire them and add "
        "ones that expect what the page shows now) when you next change the app.]"
    )
    try:
        async with app_lease(engine, app_id, "a turn is running"):
            crashed = await io(close_crashed, engine, app_id)
            await io(engine.memory.record_note, app_id, note, crashed)
    except Conflict:
        log.info("app=%s: a turn started; its repair message tells the broken checks", app_id)


def _found(result: CheckResult) -> str:
    ev = result.evidence
    return f"{ev.where}: expected {ev.expected}, found {ev.actual}" if ev else "failed"
