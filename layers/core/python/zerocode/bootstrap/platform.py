"""The platform's parts wired together, and the app-level operations the API calls."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zerocode.accounts.ratelimit import RateLimiter, enforce
from zerocode.accounts.service import AccountService, User
from zerocode.apps.deletion import PendingDeletions, purge
from zerocode.apps.records import App, AppStore, CodeGenType, check_name, new_app_id
from zerocode.apps.workspace import Workspace
from zerocode.bootstrap.settings import Settings
from zerocode.engine import prompts
from zerocode.engine.model import ChatModel, ModelReply, ModelRole, TextDelta
from zerocode.engine.turn import PROMPT_OF, Engine
from zerocode.errors import InvalidInput, Unavailable
from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.facade import Memory
from zerocode.memory.messages import Message, SystemMessage, UserMessage
from zerocode.publishing.builds import BuildStore
from zerocode.publishing.pointers import SiteTarget
from zerocode.publishing.service import Publishing

log = logging.getLogger(__name__)


@dataclass
class Platform:
    settings: Settings
    apps: AppStore
    memory: Memory
    display: DisplayHistoryStore
    workspace: Workspace
    model: ChatModel
    engine: Engine
    accounts: AccountService
    rates: RateLimiter
    deletions: PendingDeletions
    builds: BuildStore
    publishing: Publishing
    # Where a pointer's build lies on this machine, for the local sites origin (None on AWS,
    # where CloudFront serves the sites).
    site_root: Callable[[SiteTarget], Path | None]
    # Behind API Gateway: the caller from the authorizer's verified claims, which Lambda Web
    # Adapter forwards in x-amzn-request-context. None where no gateway vouches for them.
    gateway_claims: Callable[[Mapping[str, Any]], User] | None = None
    # How untrusted builds are isolated, for the banner and /api/health.
    build_isolation: str = "CodeBuild, per-build scoped credentials"

    def quota(self, action: str, user_id: str) -> None:
        """Raise RateLimited (429 with Retry-After) past the user's quota for ``action``."""
        limit = {"chat": self.settings.rate_chat, "create": self.settings.rate_create,
                 "deploy": self.settings.rate_deploy}[action]
        enforce(self.rates, f"{action}:{user_id}", limit, self.settings.rate_window_seconds)

    def system_prompt(self, app: App) -> str:
        return prompts.load(PROMPT_OF[app.code_gen_type])

    async def create_app(self, owner: str, prompt: str, mode: CodeGenType | None) -> App:
        """Route the mode with the model when the client gave none, and name the app."""
        if mode is None:
            answer = await self._ask(ModelRole.ROUTING, "routing", prompt)
            mode = parse_mode(answer)
        name = await self._ask(ModelRole.ROUTING, "naming", prompt)
        try:
            clean = check_name(name.strip().strip("\"'`").splitlines()[0] if name.strip() else "")
        except InvalidInput:
            clean = check_name(" ".join(prompt.split()[:5])[:60] or "Untitled app")
        app = App(new_app_id(), owner, clean, mode, prompt)
        self.apps.put(app)
        return app

    def delete_app(self, app: App) -> bool:
        """The app disappears for users first, then its data (M8). False when some data could
        not be deleted yet: it is unreachable and :meth:`retry_deletions` finishes the job.

        Its site and preview stop being served before anything else: the pointers are known
        only from the app record, so if that fails nothing else has happened yet and the
        user can simply delete again."""
        try:
            self.publishing.unpublish(app)
        except Exception as exc:
            log.error("could not unpublish app %s: %s", app.id, exc, extra={"app_id": app.id})
            raise Unavailable("could not take the app's site down; try deleting again") \
                from exc
        self.deletions.add(app.id)  # remembered before anything is gone, so a crash resumes
        self.apps.delete(app.id)
        return purge(app.id, self._purge_steps(), self.deletions)

    def retry_deletions(self) -> int:
        """Finish deletions that failed midway; returns how many completed."""
        return sum(purge(app_id, self._purge_steps(), self.deletions)
                   for app_id in self.deletions.pending())

    def _purge_steps(self) -> list[Callable[[str], object]]:
        steps: list[Callable[[str], object]] = [
            self.memory.delete, self.display.delete_app, self.workspace.delete_app,
            self.publishing.builder.delete_app, self.builds.delete_app]
        if self.publishing.covers is not None:
            steps.append(self.publishing.covers.delete_app)
        return steps

    async def _ask(self, role: ModelRole, prompt_name: str, text: str) -> str:
        messages: list[Message] = [SystemMessage(prompts.load(prompt_name)), UserMessage(text)]
        parts: list[str] = []
        async for event in self.model.stream(role, messages):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, ModelReply) and not parts:
                parts.append(event.message.content or "")
        return "".join(parts)


def parse_mode(answer: str) -> CodeGenType:
    """The first mode named in the routing answer; a single page when the answer is unclear."""
    lowered = answer.lower()
    found = [(lowered.find(m.value), m) for m in CodeGenType if m.value in lowered]
    if not found:
        log.warning("routing answer named no mode, using html: %r", answer[:200])
        return CodeGenType.HTML
    return min(found)[1]
