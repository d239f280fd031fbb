"""A check a builder's own edit broke (issue 38: "a builder's edit is final; checks follow
it"): found, shown as "your edit changed this", and updated to what the page now shows.

A check counts as changed by an edit when its newest verdict is a failure on the files of a
version of kind ``edit`` and it passed before. The builder then chooses: update it (the
platform rewrites the text expectation that failed to the text the page showed), retire it,
or undo the edit (restore the version before it). An update keeps the record: the old check
is retired, naming its successor, and the model is told in a note (M9).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from zerocode.apps.versions import Version, VersionKind
from zerocode.engine.acceptance import MAX_DESCRIPTION, MAX_TEXT, Check
from zerocode.engine.check_suite import CheckResult, StoredCheck, SuiteRun, check_number
from zerocode.engine.check_suite import check_id as check_id_of
from zerocode.engine.closing import close_crashed
from zerocode.engine.parts import EngineParts, app_lease, io
from zerocode.errors import Conflict, InvalidInput, NotFound

BUSY = "a turn is running for this app; update the check once it has finished"


@dataclass(frozen=True)
class Rewrite:
    """What an update would change: expectation ``index`` of the check, to ``text``."""

    index: int
    text: str


def rewrite_of(check: StoredCheck, result: CheckResult | None) -> Rewrite | None:
    """The rewrite an update makes, when the failure names a text the platform can put in
    the check (a ``text`` or ``attribute`` expectation's; the runner's found text, quoted);
    None otherwise (the builder can still retire the check or undo the edit)."""
    ev = result.evidence if result is not None and result.status == "failed" else None
    if ev is None or not ev.where.startswith("expect[") or not ev.where.endswith("]"):
        return None
    index = ev.where[len("expect[") : -1]
    if not index.isdigit() or int(index) >= len(check.check.expect):
        return None
    if check.check.expect[int(index)].kind not in ("text", "attribute"):
        return None
    try:
        found = ast.literal_eval(ev.actual)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(found, str) or len(found) > MAX_TEXT:
        return None
    if any(ord(c) < 32 and c not in "\t\n" for c in found):
        return None
    return Rewrite(int(index), found)


def rewritten(check: Check, rewrite: Rewrite) -> Check:
    """``check`` expecting ``rewrite.text`` where it expected another (an exact text stays
    exact, a "contains" now contains the whole text found), its description naming it."""
    old = check.expect[rewrite.index]
    new = (
        replace(old, equals=rewrite.text)
        if old.contains is None
        else replace(old, contains=rewrite.text)
    )
    expect = (*check.expect[: rewrite.index], new, *check.expect[rewrite.index + 1 :])
    was = old.equals if old.contains is None else old.contains
    said = check.description  # "The heading reads “Bakery”" says the new text too
    if isinstance(was, str) and was.strip() and was in said:
        said = said.replace(was, rewrite.text)
        said = said if len(said) <= MAX_DESCRIPTION else said[: MAX_DESCRIPTION - 1] + "…"
    return replace(check, description=said, expect=expect)


def edit_changed(
    check: StoredCheck, runs: Sequence[SuiteRun], versions: Sequence[Version]
) -> dict[str, Any] | None:
    """``editChanged`` of the check as ``GET …/checks`` shows it (``runs`` newest first,
    ``versions`` the newest, newest first), or None when no edit of the builder broke it."""
    if not check.live:
        return None
    mine = [(r, x) for r in runs if (x := _result(r, check.id)) is not None]
    if not mine or mine[0][1].status != "failed":
        return None
    if not any(x.status == "passed" for _, x in mine[1:]):
        return None  # it never passed: nothing an edit changed
    by_digest: dict[str, Version] = {}
    for v in versions:
        by_digest.setdefault(v.digest, v)
    edited = by_digest.get(mine[0][0].digest or "")
    if edited is None or edited.kind is not VersionKind.EDIT:
        return None
    before = next((v for v in versions if v.number < edited.number), None)
    return {
        "versionId": edited.id,
        "beforeId": before.id if before is not None else None,
        "updatable": rewrite_of(check, mine[0][1]) is not None,
    }


async def update_by_user(engine: EngineParts, app_id: str, check_id: str) -> StoredCheck:
    """The check rewritten to what the page showed when it last failed: the new check
    added, the old one retired naming it, the model told (M9); under the app's turn lease
    (409 while a turn runs). InvalidInput when the failure names no text to put in it."""
    store = engine.checks
    if store is None:
        raise NotFound("acceptance checks are not kept on this platform")
    async with app_lease(engine, app_id, BUSY):
        every = await io(store.list, app_id)
        found = next((c for c in every if c.id == check_id), None)
        if found is None:
            raise NotFound(f"check {check_id[:20]} not found")
        if not found.live:
            raise Conflict(f"check {check_id} is retired")
        runs = await io(store.runs, app_id, 20)
        newest = next((x for r in runs if (x := _result(r, found.id)) is not None), None)
        rewrite = rewrite_of(found, newest)
        if rewrite is None:
            raise InvalidInput(
                f"check {found.id} did not fail on a text the platform can rewrite: "
                "retire it, or undo the edit"
            )
        # Numbers are never reused, and the lease keeps anyone else from adding one now.
        successor = check_id_of(max((check_number(c.id) or 0) for c in every) + 1)
        note = (
            f"[zerocode checks: the user's own edit changed what check {found.id} "
            f'("{found.check.description}") expected, and the edit is deliberate. The user '
            f"updated the check in the console: {found.id} is retired and {successor} takes "
            f"its place, its expect[{rewrite.index}] now expecting {rewrite.text!r}.]"
        )
        crashed = await io(close_crashed, engine, app_id)
        turn = await io(engine.memory.record_note, app_id, note, crashed)
        why = f"updated by the user to what the page shows after their edit: {successor}"
        await io(store.retire, app_id, found.id, why, turn)  # first: room for its successor
        return await io(store.add, app_id, rewritten(found.check, rewrite), turn)


def _result(run: SuiteRun, check_id: str) -> CheckResult | None:
    return next((r for r in run.results if r.check_id == check_id), None)
