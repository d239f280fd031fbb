"""Publisher port: which build a public key serves.

A site (``/sites/{deployKey}/``) and a Vue or HTML preview (``/preview/{previewKey}/``) are
both a pointer from a key to one immutable build output, ``builds/{appId}/{buildId}/``.
Publishing or rolling back flips that pointer in one atomic write; a visitor sees the old
build or the new one, never a mix, and never a build that failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from zerocode.errors import InvalidInput

# Pointer keys are namespaced so a preview key can never be used as a site key, or back.
SITE_PREFIX, PREVIEW_PREFIX = "site:", "preview:"
_PUBLIC_KEY = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True)
class SiteTarget:
    app_id: str
    build_id: str

    def encode(self) -> str:
        """The pointer's stored value, ``{appId}/{buildId}`` (also the output's path)."""
        return f"{self.app_id}/{self.build_id}"

    @classmethod
    def decode(cls, value: str) -> SiteTarget:
        app_id, _, build_id = value.partition("/")
        if not _ID.match(app_id) or not _ID.match(build_id):
            raise ValueError(f"not a site pointer: {value!r}")
        return cls(app_id, build_id)


def site_pointer(deploy_key: str) -> str:
    return SITE_PREFIX + check_public_key(deploy_key)


def preview_pointer(preview_key: str) -> str:
    return PREVIEW_PREFIX + check_public_key(preview_key)


def check_public_key(key: str) -> str:
    if not _PUBLIC_KEY.match(key):
        raise InvalidInput("a site key is 8 to 64 letters, digits, - or _")
    return key


class Publisher(Protocol):
    def point(self, pointer: str, target: SiteTarget) -> None:
        """Make ``pointer`` serve ``target`` from now on, in one atomic write."""
        ...

    def target(self, pointer: str) -> SiteTarget | None: ...

    def remove(self, pointer: str) -> None:
        """Stop serving the pointer (idempotent)."""
        ...
