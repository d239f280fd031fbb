"""Apps: what a user made. The record names the mode, the preview key and the publication."""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

from zerocode.apps.guards import check_characters
from zerocode.errors import InvalidInput

MAX_NAME = 60
MAX_PAGE = 50
FEATURED_PRIORITY = 99  # an app with at least this priority is featured
MAX_PRIORITY = 99_999
_APP_ID = re.compile(r"^[a-z0-9]{20}$")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
# Public keys are lowercase letters and digits, so each can be a host label as it is
# (zerocode.publishing.pointers: the preview and the site are each their own origin).
PREVIEW_KEY_CHARS = 26  # 134 bits: previews are unlisted, the key is their only secret
DEPLOY_KEY_CHARS = 12  # 62 bits: sites are public, the key only has to be unique


def _random_key(length: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def new_preview_key() -> str:
    return _random_key(PREVIEW_KEY_CHARS)


def new_deploy_key() -> str:
    return _random_key(DEPLOY_KEY_CHARS)


class CodeGenType(StrEnum):
    HTML = "html"
    MULTI_FILE = "multi_file"
    VUE_PROJECT = "vue_project"


@dataclass(frozen=True, kw_only=True)
class App:
    id: str
    owner: str
    name: str
    code_gen_type: CodeGenType
    init_prompt: str
    # Unguessable key of the preview, its own origin on the sites server (not the app id).
    preview_key: str = field(default_factory=new_preview_key)
    # The deploy record: the public key (random, stable per app once made), the URL, and the
    # build the site serves; written right after the pointer flips, so they name one build.
    deploy_key: str | None = None
    deploy_url: str | None = None
    cover: str | None = None
    priority: int = 0
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    deploy_build_id: str | None = None
    deployed_at: float | None = None
    # A deploy is refused while the app's acceptance checks fail (the owner's setting).
    require_checks: bool = False
    # The preview build whose screenshot is the app's private cover, while it has no deploy
    # cover (zerocode.publishing.preview_covers); only its owner and admins see it.
    preview_cover: str | None = None

    def renamed(self, name: str) -> App:
        return replace(self, name=check_name(name), updated_at=time.time())

    def touched(self) -> App:
        return replace(self, updated_at=time.time())


def new_app_id() -> str:
    """20 lowercase alphanumerics: safe in paths, S3 keys and DynamoDB keys."""
    return _random_key(20)


def is_app_id(value: str) -> bool:
    return bool(_APP_ID.match(value))


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("name must be a non-empty string")
    clean = " ".join(name.split())
    if len(clean) > MAX_NAME:
        raise InvalidInput(f"name must be at most {MAX_NAME} characters")
    check_characters(clean, field="name")
    return clean


def name_matches(name: str, query: str | None) -> bool:
    """Name search: a case-insensitive substring; no query matches everything."""
    return not query or query.casefold() in name.casefold()


def check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    return limit


@dataclass(frozen=True)
class AppPage:
    apps: list[App]
    next_cursor: str | None


class AppStore(Protocol):
    def put(self, app: App) -> None: ...

    def get(self, app_id: str) -> App | None: ...

    def list_by_owner(
        self, owner: str, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        """Newest first; ``cursor`` is the ``next_cursor`` of the previous page;
        ``query`` keeps the apps whose name contains it."""
        ...

    def list_featured(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        """Apps with priority >= FEATURED_PRIORITY: highest priority first, then newest."""
        ...

    def list_all(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        """Every app, newest first (for admins)."""
        ...

    def delete(self, app_id: str) -> bool: ...
