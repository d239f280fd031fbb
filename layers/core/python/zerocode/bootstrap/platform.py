"""The platform's parts wired together (the operations on apps are in apps/service.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerocode.accounts.ratelimit import RateLimiter, enforce
from zerocode.accounts.service import AccountService, User
from zerocode.apps.deletion import DeletionSweep, PendingDeletions
from zerocode.apps.records import App, AppStore, CodeGenType
from zerocode.apps.service import AppService
from zerocode.apps.service import purge_steps as purge_steps  # wiring's deletion sweep
from zerocode.apps.storage_health import StorageProbe
from zerocode.apps.workspace import Workspace
from zerocode.bootstrap.settings import Settings
from zerocode.data.backend import Backend
from zerocode.engine import prompts
from zerocode.engine.model import ChatModel
from zerocode.engine.naming import ModelNamer
from zerocode.engine.turn import PROMPT_OF, Engine
from zerocode.engine.turns import Turns
from zerocode.engine.usage import Meter
from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.facade import Memory
from zerocode.publishing.builds import BuildStore
from zerocode.publishing.pointers import SiteTarget
from zerocode.publishing.service import Publishing
from zerocode.publishing.site_visits import SiteVisits


@dataclass(kw_only=True)
class Platform:
    settings: Settings
    apps: AppStore
    memory: Memory
    display: DisplayHistoryStore
    workspace: Workspace
    model: ChatModel
    engine: Engine
    # The running turns and their event logs (engine/turns.py).
    turns: Turns
    accounts: AccountService
    rates: RateLimiter
    deletions: PendingDeletions
    builds: BuildStore
    publishing: Publishing
    # Where a pointer's build lies on this machine, for the local sites origin (None on AWS,
    # where CloudFront serves the sites).
    site_root: Callable[[SiteTarget], Path | None]
    # Behind API Gateway: the caller from the authorizer's verified claims, which Lambda Web
    # Adapter forwards in x-amzn-request-context, and the token they came with (None when it
    # no longer stands). None where no gateway vouches for them (gateway.py).
    gateway_claims: Callable[[Mapping[str, Any], str | None], User | None] | None = None
    # Whether storage takes writes now, for /api/health (None: not probed, always "ok").
    storage: StorageProbe | None = None
    # The apps' own data and end users (issue 39; locally on SQLite; not yet on AWS:
    # docs/data.md).
    backend: Backend | None = None
    # The published sites' visits (issue 44): counted by the local sites server, or from
    # CloudFront's logs on AWS (then only read here). None: not counted.
    visits: SiteVisits | None = None
    # How untrusted builds are isolated, for the banner and /api/health.
    build_isolation: str = "CodeBuild, per-build scoped credentials"
    # How the headless browser (covers, runtime check) is confined, or why it is off.
    browser: str = (
        "in each build: the build image's Chromium in CodeBuild, confined to the build's own "
        "output (no browser runs in Lambda)"
    )

    def quota(self, action: str, user_id: str) -> None:
        """Raise RateLimited (429 with Retry-After) past the user's quota for ``action``."""
        limit = {
            "chat": self.settings.rate_chat,
            "create": self.settings.rate_create,
            "deploy": self.settings.rate_deploy,
        }[action]
        enforce(self.rates, f"{action}:{user_id}", limit, self.settings.rate_window_seconds)

    def system_prompt(self, app: App) -> str:
        return prompts.load(PROMPT_OF[app.code_gen_type])

    @property
    def app_service(self) -> AppService:
        """The app operations over the parts as they are now (tests swap parts in)."""
        return AppService(
            apps=self.apps,
            memory=self.memory,
            display=self.display,
            workspace=self.workspace,
            namer=ModelNamer(self.model, Meter(self.engine.usage, self.engine.prices)),
            deletions=self.deletions,
            builds=self.builds,
            publishing=self.publishing,
            versions=self.engine.versions.store if self.engine.versions else None,
            journal=self.engine.journal,
            checks=self.engine.checks,
            records=self.backend,
            images=self.engine.images,
            usage=self.engine.usage,
            visits=self.visits,
            reports=self.publishing.report_store,
        )

    async def create_app(self, owner: str, prompt: str, mode: CodeGenType | None) -> App:
        """Route the mode with the model when the client gave none, and name the app."""
        return await self.app_service.create(owner, prompt, mode)

    def delete_app(self, app: App) -> bool:
        """The app disappears for users first, then its data (AppService.delete)."""
        return self.app_service.delete(app)

    def deletion_sweep(self) -> DeletionSweep:
        """Finishes deletions that failed midway (at start and every few minutes)."""
        return self.app_service.deletion_sweep()

    def retry_deletions(self) -> int:
        """Finish deletions that failed midway; returns how many completed."""
        return self.app_service.retry_deletions()
