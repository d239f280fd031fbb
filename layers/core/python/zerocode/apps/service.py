"""App operations the API and the entry points call: create (the model routes the mode and
names the app), rename, the admin's changes, delete (the app first, then its data), forget the
conversation, and the featured apps (cached for a few minutes).

What they need of the layers above (the model, publishing, the step journal) are the ports
below: ``Namer`` (``zerocode.engine.naming``), ``Unpublisher``
(``zerocode.publishing.service.Publishing``) and ``AppData``; bootstrap wires them."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from zerocode.apps.deletion import DeletionSweep, PendingDeletions, purge
from zerocode.apps.records import App, AppPage, AppStore, CodeGenType, check_name, new_app_id
from zerocode.apps.versions import VersionStore
from zerocode.apps.workspace import Workspace
from zerocode.errors import InvalidInput, Unavailable
from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.facade import Memory

log = logging.getLogger(__name__)


class Namer(Protocol):
    """Routes a new app's mode and names it: the model's answers, as text
    (``zerocode.engine.naming.ModelNamer``). ``owner`` and ``app_id``: whose the new app
    is, and the id it will have, under which the requests' usage is kept (issue 43)."""

    async def route(self, prompt: str, *, owner: str, app_id: str) -> str: ...

    async def name(self, prompt: str, *, owner: str, app_id: str) -> str: ...


class AppData(Protocol):
    """A store holding data of apps, emptied of one app's when it is deleted (builds,
    build outputs, covers)."""

    def delete_app(self, app_id: str, /) -> object: ...


class JournalData(Protocol):
    """The step journal (``zerocode.engine.journal.StepJournal``): the app's last step."""

    def clear(self, app_id: str, /) -> None: ...


class Unpublisher(Protocol):
    """What deleting an app needs of publishing (``zerocode.publishing.service.Publishing``):
    its site and preview taken down, and the stores of its build outputs and covers."""

    def unpublish(self, app: App) -> None: ...

    @property
    def builder(self) -> AppData: ...

    @property
    def covers(self) -> AppData | None: ...

    @property
    def preview_cover_store(self) -> AppData | None: ...


@dataclass(kw_only=True)
class AppService:
    apps: AppStore
    memory: Memory
    display: DisplayHistoryStore
    workspace: Workspace
    namer: Namer
    deletions: PendingDeletions
    builds: AppData
    publishing: Unpublisher
    versions: VersionStore | None = None
    journal: JournalData | None = None
    checks: AppData | None = None  # the app's acceptance checks and their runs
    records: AppData | None = None  # the app's own data, both spaces (zerocode/data)
    images: AppData | None = None  # the images of users' messages (memory/images.py)
    # The app's model requests and days (accounts/usage.py); its owner's days keep them.
    usage: AppData | None = None
    # Its site's visits by day (publishing/visits.py).
    visits: AppData | None = None
    reports: AppData | None = None  # its deploys' publish reports (publishing/publish_report.py)

    async def create(self, owner: str, prompt: str, mode: CodeGenType | None) -> App:
        """Route the mode with the model when the client gave none, and name the app. The
        app's id is chosen first: the requests' usage is kept under it (an app whose record
        then fails to be written leaves those requests on its owner's account only)."""
        app_id = new_app_id()
        if mode is None:
            answer = await self.namer.route(prompt, owner=owner, app_id=app_id)
            mode = parse_mode(answer)
        name = await self.namer.name(prompt, owner=owner, app_id=app_id)
        try:
            clean = check_name(name.strip().strip("\"'`").splitlines()[0] if name.strip() else "")
        except InvalidInput:
            clean = check_name(" ".join(prompt.split()[:5])[:60] or "Untitled app")
        app = App(id=app_id, owner=owner, name=clean, code_gen_type=mode, init_prompt=prompt)
        await asyncio.to_thread(self.apps.put, app)
        return app

    def rename(self, app: App, name: str) -> App:
        renamed = app.renamed(check_name(name))
        self.apps.put(renamed)
        return renamed

    def update(self, app: App, *, name: str | None, require_checks: bool | None) -> App:
        """What the owner changes of an app (``PATCH``): its name, its deploy setting."""
        if name is None and require_checks is None:
            raise InvalidInput("nothing to change: give name or requireChecks")
        changed = app.renamed(check_name(name)) if name is not None else app.touched()
        if require_checks is not None:
            changed = replace(changed, require_checks=require_checks)
        self.apps.put(changed)
        return changed

    def admin_update(
        self,
        app: App,
        name: str | None = None,
        cover: str | None = None,
        priority: int | None = None,
    ) -> App:
        """Change what an admin may change; a field left None stays, an empty cover clears."""
        changes: dict[str, Any] = {"updated_at": time.time()}
        if name is not None:
            changes["name"] = check_name(name)
        if cover is not None:
            changes["cover"] = cover or None
        if priority is not None:
            changes["priority"] = priority
        updated = replace(app, **changes)
        self.apps.put(updated)
        return updated

    def delete(self, app: App) -> bool:
        """The app disappears for users first, then its data. False when some data could
        not be deleted yet: it is unreachable and :meth:`retry_deletions` finishes the job.

        Its site and preview stop being served before anything else: the pointers are known
        only from the app record, so if that fails nothing else has happened yet and the
        user can simply delete again."""
        try:
            self.publishing.unpublish(app)
        except Exception as exc:
            log.error("could not unpublish app %s: %s", app.id, exc, extra={"app_id": app.id})
            raise Unavailable("could not take the app's site down; try deleting again") from exc
        self.deletions.add(app.id)  # remembered before anything is gone, so a crash resumes
        self.apps.delete(app.id)
        return purge(app.id, self._purge_steps(), self.deletions)

    def deletion_sweep(self) -> DeletionSweep:
        return DeletionSweep(self.deletions, self._purge_steps())

    def retry_deletions(self) -> int:
        """Finish deletions that failed midway; returns how many completed."""
        return self.deletion_sweep().run()

    def clear_history(self, app: App) -> None:
        """Forget the app's conversation, both the model's transcript and the history shown
        to people, and the images its messages carried; its files stay."""
        self.memory.delete(app.id)
        self.display.delete_app(app.id)
        if self.images is not None:
            self.images.delete_app(app.id)

    def _purge_steps(self) -> list[Callable[[str], object]]:
        return purge_steps(
            self.memory,
            self.display,
            self.workspace,
            self.publishing.builder,
            self.builds,
            covers=self.publishing.covers,
            preview_covers=self.publishing.preview_cover_store,
            versions=self.versions,
            journal=self.journal,
            checks=self.checks,
            records=self.records,
            images=self.images,
            usage=self.usage,
            visits=self.visits,
            reports=self.reports,
        )


def purge_steps(
    memory: Memory,
    display: DisplayHistoryStore,
    workspace: Workspace,
    builder: AppData,
    builds: AppData,
    covers: AppData | None = None,
    preview_covers: AppData | None = None,
    versions: VersionStore | None = None,
    journal: JournalData | None = None,
    checks: AppData | None = None,
    records: AppData | None = None,
    images: AppData | None = None,
    usage: AppData | None = None,
    visits: AppData | None = None,
    reports: AppData | None = None,
) -> list[Callable[[str], object]]:
    """Every store an app's data lives in, in the order its deletion empties them.

    The step journal's record (the app's last step: its tools and file paths) goes first:
    on AWS the deletion sweep function has no rights on the leases table that holds it, so
    only the API's own deletion clears it (a record left by a deletion the sweep finished
    expires by TTL, ``adapters/dynamodb/journal.py``)."""
    steps: list[Callable[[str], object]] = [] if journal is None else [journal.clear]
    steps += [
        memory.delete,
        display.delete_app,
        workspace.delete_app,
        builder.delete_app,
        builds.delete_app,
    ]
    if versions is not None:
        steps.append(versions.delete_app)
    if covers is not None:
        steps.append(covers.delete_app)
    if preview_covers is not None:
        steps.append(preview_covers.delete_app)
    if checks is not None:
        steps.append(checks.delete_app)
    if records is not None:
        steps.append(records.delete_app)
    if images is not None:
        steps.append(images.delete_app)
    if usage is not None:
        steps.append(usage.delete_app)
    if visits is not None:
        steps.append(visits.delete_app)
    if reports is not None:
        steps.append(reports.delete_app)
    return steps


class FeaturedApps:
    """The featured apps, each page kept for ``seconds``: anyone may ask for them, often.
    One per API process; an admin's change clears it here, other processes catch up."""

    MAX_PAGES = 1000

    def __init__(self, apps: AppStore, seconds: float) -> None:
        self.apps, self.seconds = apps, seconds
        self._pages: dict[tuple[str | None, int, str | None], tuple[float, AppPage]] = {}

    def page(self, cursor: str | None, limit: int, query: str | None) -> AppPage:
        key, now = (cursor, limit, query), time.monotonic()
        hit = self._pages.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        page = self.apps.list_featured(cursor, limit, query)
        if len(self._pages) > self.MAX_PAGES:
            self._pages.clear()
        self._pages[key] = (now + self.seconds, page)
        return page

    def clear(self) -> None:
        self._pages.clear()


def parse_mode(answer: str) -> CodeGenType:
    """The first mode named in the routing answer; a single page when the answer is unclear."""
    lowered = answer.lower()
    found = [(lowered.find(m.value), m) for m in CodeGenType if m.value in lowered]
    if not found:
        log.warning("routing answer named no mode, using html: %r", answer[:200])
        return CodeGenType.HTML
    return min(found)[1]
