"""Composition root: settings in, adapters out. The only place that knows both modes."""

from __future__ import annotations

from pathlib import Path

from zerocode.accounts.service import Accounts, AccountService
from zerocode.apps.deletion import DeletionSweep
from zerocode.apps.storage_health import CachedProbe, Probes
from zerocode.apps.versions import Versions
from zerocode.bootstrap.aws_parts import cognito
from zerocode.bootstrap.parts import (
    budgets,
    chat_model,
    data_backend,
    engine_limits,
    memory,
    prices,
    rate_limiter,
    turn_log,
    workspace_limits,
)
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.reports import local_reporter
from zerocode.bootstrap.settings import Settings
from zerocode.engine.model import ChatModel
from zerocode.engine.platform_checks import WithPlatformChecks, model_in_files
from zerocode.engine.turn import Engine
from zerocode.engine.turns import Turns
from zerocode.publishing.build_signals import BuildSignals
from zerocode.publishing.builds import Builder
from zerocode.publishing.eviction import PreviewSweep
from zerocode.publishing.pointers import Publisher, SiteTarget
from zerocode.publishing.prerender import Prerenderer
from zerocode.publishing.preview_covers import PreviewCovers
from zerocode.publishing.service import Publishing
from zerocode.publishing.site_visits import SiteVisits, site_app
from zerocode.publishing.visit_logs import VisitLogs


def platform(
    settings: Settings,
    model: ChatModel | None = None,
    builder: Builder | None = None,
    publisher: Publisher | None = None,
) -> Platform:
    """Everything the API needs, for the configured mode. ``model``, ``builder`` and
    ``publisher`` replace the configured ones (tests, and AWS mode until CodeBuild lands)."""
    if settings.mode == "aws":
        from zerocode.bootstrap.aws_wiring import aws_platform

        return aws_platform(settings, model, builder, publisher)
    from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
    from zerocode.adapters.local.build_shares import BuildShares
    from zerocode.adapters.local.builder import LocalBuilder, default_slots
    from zerocode.adapters.local.chromium import availability, scratch_spaces
    from zerocode.adapters.local.chromium_acceptance import ChromiumAcceptance
    from zerocode.adapters.local.chromium_check import chromium_check
    from zerocode.adapters.local.chromium_covers import chromium_covers
    from zerocode.adapters.local.disk_reserve import DiskReserve
    from zerocode.adapters.local.message_images import LocalMessageImages
    from zerocode.adapters.local.preview_covers import LocalPreviewCovers
    from zerocode.adapters.local.sandbox import Limits, sandbox
    from zerocode.adapters.local.toolchain_store import ToolchainStore
    from zerocode.adapters.local.workspace import LocalWorkspace
    from zerocode.adapters.sqlite.apps import SqliteAppStore
    from zerocode.adapters.sqlite.build_models import SqliteBuildModels
    from zerocode.adapters.sqlite.builds import SqliteBuildStore
    from zerocode.adapters.sqlite.checks import SqliteCheckStore
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.deletions import SqlitePendingDeletions
    from zerocode.adapters.sqlite.display import SqliteDisplayHistoryStore
    from zerocode.adapters.sqlite.end_users import SqliteEndUserStore
    from zerocode.adapters.sqlite.health import SqliteStorageProbe
    from zerocode.adapters.sqlite.journal import SqliteJournal
    from zerocode.adapters.sqlite.lease import SqliteLease
    from zerocode.adapters.sqlite.publisher import SqlitePublisher
    from zerocode.adapters.sqlite.records import SqliteRecordStore
    from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
    from zerocode.adapters.sqlite.usage import SqliteUsageLedger
    from zerocode.adapters.sqlite.users import SqliteUserStore
    from zerocode.adapters.sqlite.versions import SqliteVersionStore
    from zerocode.adapters.sqlite.visits import SqliteVisitStore

    db = SqliteDatabase(settings.sqlite_path)
    transcript = SqliteTranscriptStore(db, settings.retention_days)
    transcript.purge_expired()
    display = SqliteDisplayHistoryStore(db, settings.retention_days)
    model = model or chat_model(settings)
    apps, builds, lease = SqliteAppStore(db), SqliteBuildStore(db), SqliteLease(db)
    ledger = SqliteUsageLedger(db)
    mem = memory(settings, transcript, model, usage=ledger, apps=apps)
    workspace = LocalWorkspace(settings.data_dir / "workspaces", workspace_limits(settings))
    rates = rate_limiter(settings)
    journal = SqliteJournal(db)
    box = sandbox(override=settings.dangerously_unsandboxed_builds)
    covers = (
        chromium_covers(
            settings.data_dir / "covers", settings.public_sites_url, settings.chromium_path
        )
        if settings.covers
        else None
    )
    limits = Limits(
        seconds=settings.build_timeout_seconds,
        memory_bytes=settings.build_memory_mb << 20,
        processes=settings.build_max_processes,
        disk_bytes=settings.build_disk_mb << 20,
    )
    shares = BuildShares(
        settings.build_slots or default_slots(limits),
        settings.build_per_user,
        settings.build_queue_seconds,
    )
    publishing = Publishing(
        apps=apps,
        builds=builds,
        builder=builder
        or LocalBuilder(
            settings.data_dir,
            box,
            ToolchainStore(
                settings.toolchain_dir or settings.data_dir / "toolchain", settings.npm_cache
            ),
            limits,
            prepared_max=settings.build_prepared_boxes,
            prepared_seconds=settings.build_prepared_seconds,
            shares=shares,
            prerender=_prerender(settings),
        ),
        publisher=publisher or SqlitePublisher(db),
        workspace=workspace,
        lease=lease,
        urls=settings.site_urls(),
        covers=covers,
    )
    # Private covers of previews, taken here by the covers' browser (preview_covers.py).
    publishing.preview_covers = PreviewCovers(
        store=LocalPreviewCovers(settings.data_dir / "preview-covers"),
        apps=apps,
        publisher=publishing.publisher,
        urls=publishing.urls,
        camera=covers if settings.preview_covers else None,
        interval=settings.preview_cover_seconds,
    )
    backend = data_backend(
        settings, (SqliteRecordStore(db), SqliteEndUserStore(db), SqliteBuildModels(db)), rates
    )
    publishing.models = backend.build_models
    # Each published deploy's report, made here in the background (bootstrap/reports.py).
    publishing.reports = local_reporter(settings, db, apps, publishing.publisher)
    # The preview in a browser after each successful build (local only; needs Chromium),
    # and the app's acceptance checks in the same confined browser.
    check = (
        chromium_check(
            publishing.urls,
            settings.chromium_path,
            apps=apps,
            publisher=publishing.publisher,
            scratch=scratch_spaces(backend),
        )
        if settings.covers and settings.runtime_check
        else None
    )
    reserve = (
        DiskReserve(settings.data_dir, int(settings.disk_reserve_mb * 2**20))
        if settings.disk_reserve_mb
        else None
    )
    engine = Engine(
        memory=mem,
        display=display,
        workspace=workspace,
        preview=publishing.preview,
        model=model,
        lease=lease,
        journal=journal,
        limits=engine_limits(settings, build_ahead=settings.build_ahead is not False),
        runtime_check=check,
        versions=Versions(SqliteVersionStore(db)),
        # The suite holds the platform's access checks of the app's data beside the model's.
        checks=WithPlatformChecks(SqliteCheckStore(db), model_in_files(workspace)),
        acceptance=ChromiumAcceptance(check) if check is not None else None,
        preview_stages=publishing,
        reserve=reserve,
        images=LocalMessageImages(settings.data_dir / "message-images"),
        usage=ledger,
        budgets=budgets(settings),
        prices=prices(settings),
    )

    def site_root(target: SiteTarget) -> Path | None:
        """A local build's output directory (the sites origin serves it)."""
        build = builds.get(target.app_id, target.build_id)
        return Path(build.output) if build is not None and build.output else None

    return Platform(
        settings=settings,
        apps=apps,
        memory=mem,
        display=display,
        workspace=workspace,
        model=model,
        engine=engine,
        # One process owns a local data directory: its turns are all here (shared=False).
        turns=Turns(
            engine, turn_log(settings) if settings.redis_url else InProcessTurnLog(), shared=False
        ),
        accounts=Accounts(SqliteUserStore(db)),
        rates=rates,
        deletions=SqlitePendingDeletions(db),
        backend=backend,
        builds=builds,
        publishing=publishing,
        site_root=site_root,
        storage=CachedProbe(
            Probes(
                SqliteStorageProbe(settings.sqlite_path, settings.data_dir, settings.min_free_mb),
                *([reserve] if reserve is not None else []),
            ),
            settings.health_probe_seconds,
        ),
        build_isolation=(
            f"{box.description}; {shares.describe()}, {settings.build_disk_mb} MiB per build"
            if builder is None
            else "injected builder"
        ),
        browser=_browser(settings, availability(settings.chromium_path)),
        # Page views of the sites the sites server serves (issue 44; publishing/visits.py).
        visits=SiteVisits(
            SqliteVisitStore(db), app_of=site_app(lambda p: publishing.publisher.target(p))
        ),
    )


def _browser(settings: Settings, available: str) -> str:
    """The banner's and /api/health's word on covers and the runtime check."""
    if not settings.covers:
        return "off (ZEROCODE_COVERS=0)"
    if not settings.runtime_check and not available.startswith("off"):
        return f"{available}; the runtime check is off (ZEROCODE_RUNTIME_CHECK=0)"
    return available


def publishing(
    settings: Settings, builder: Builder | None = None, publisher: Publisher | None = None
) -> Publishing:
    """Publishing alone: what ``functions/build_events`` needs to record a build's outcome
    and publish it (the apps, builds and leases tables, the workspace bucket, CodeBuild, the
    site pointers). No accounts (Cognito), no model (and so no model key), no memory.
    Locally there is one process, which builds the whole platform."""
    if settings.mode == "aws":
        from zerocode.bootstrap.aws_wiring import aws_publishing

        return aws_publishing(settings, builder, publisher)
    return platform(settings, builder=builder, publisher=publisher).publishing


def build_signals(settings: Settings) -> BuildSignals | None:
    """Where ``functions/build_events`` tells a CodeBuild run's end (AWS only: locally a
    build ends in the process that waits for it)."""
    if settings.mode != "aws":
        return None
    from zerocode.bootstrap.aws_parts import build_signals as aws_build_signals

    return aws_build_signals(settings)


def deletion_sweep(settings: Settings, builder: Builder | None = None) -> DeletionSweep:
    """What finishing pending deletions needs (M8): the pending-deletions table and every
    store an app's data lives in. No accounts, no model key, no site pointers (an app's
    sites are taken down before its deletion is recorded as pending)."""
    if settings.mode != "aws":
        return platform(settings, builder=builder).deletion_sweep()
    from zerocode.bootstrap.aws_wiring import aws_deletion_sweep

    return aws_deletion_sweep(settings, builder)


def preview_sweep(settings: Settings) -> PreviewSweep:
    """What the preview sweep needs (AWS only: locally the pointers live in SQLite, which
    has no ceiling, so there is nothing to sweep)."""
    if settings.mode != "aws":
        raise RuntimeError("the preview sweep runs on AWS (ZEROCODE_MODE=aws) only")
    from zerocode.bootstrap.aws_wiring import aws_preview_sweep

    return aws_preview_sweep(settings)


def visit_logs(settings: Settings) -> VisitLogs:
    """What ``functions/visit_logs`` needs to count CloudFront's log files (AWS only:
    locally the sites server counts the visits as it serves them)."""
    if settings.mode != "aws":
        raise RuntimeError("visits are counted from CloudFront's logs on AWS only")
    from zerocode.bootstrap.aws_wiring import aws_visit_logs

    return aws_visit_logs(settings)


def accounts(settings: Settings) -> AccountService:
    """The account service alone (for ``zerocode admin create``)."""
    if settings.mode == "aws":
        return cognito(settings)
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.users import SqliteUserStore

    return Accounts(SqliteUserStore(SqliteDatabase(settings.sqlite_path)))


def _prerender(settings: Settings) -> Prerenderer | None:
    """A deployed Vue site's routes rendered in the kept browser, where there is one."""
    from zerocode.adapters.local.browser_pool import kept_browser
    from zerocode.adapters.local.chromium import find_chromium, usable
    from zerocode.adapters.local.prerender_browser import BrowserPrerender

    if not (settings.covers and settings.prerender) or not usable():
        return None
    found = find_chromium(settings.chromium_path)
    return BrowserPrerender(kept_browser(found)) if found else None
