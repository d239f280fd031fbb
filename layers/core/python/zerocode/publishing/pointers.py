"""Publisher port: which build a public key serves, and the URL a visitor uses for it.

A site (key ``deployKey``) and a Vue or HTML preview (key ``previewKey``) are both a pointer
from a key to one immutable build output, ``builds/{appId}/{buildId}/``. Publishing or
rolling back flips that pointer in one atomic write; a visitor sees the old build or the new
one, never a mix, and never a build that failed.

Every preview and every site is its own origin, on another site than the API
(docs/security.md, "Origins and the console"): the key is the first label of the host name,
``http://{deployKey}.localhost:8001/`` and ``http://p-{previewKey}.localhost:8001/`` locally,
``https://{label}.{sitesDomain}/`` on AWS with a custom domain. Without one, AWS serves the
shared-origin path scheme, ``{sitesUrl}/sites/{deployKey}/`` and ``/preview/{previewKey}/``.
Host names ignore case and allow 63 characters per label, so keys made now are lowercase
letters and digits; older mixed-case keys get a new one on their next preview or deploy.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

from zerocode.errors import InvalidInput

# Pointer keys are namespaced so a preview key can never be used as a site key, or back.
SITE_PREFIX, PREVIEW_PREFIX = "site:", "preview:"
# A preview's host label is "p-" + its key; a site's is its key (which never holds a "-").
PREVIEW_LABEL = "p-"
_PUBLIC_KEY = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
_HOST_KEY = re.compile(r"^[a-z0-9]{8,61}$")
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


def is_host_key(key: str) -> bool:
    """Whether ``key`` can be a host label as it is (keys made before per-app origins may
    hold capitals, ``-`` or ``_``, which a host name cannot carry faithfully)."""
    return bool(_HOST_KEY.match(key))


def pointer_of_label(label: str) -> str | None:
    """The pointer a host label names: ``p-{previewKey}`` a preview, ``{deployKey}`` a
    site; None for anything else."""
    label = label.lower()
    if label.startswith(PREVIEW_LABEL):
        key = label[len(PREVIEW_LABEL) :]
        return PREVIEW_PREFIX + key if is_host_key(key) else None
    return SITE_PREFIX + label if is_host_key(label) else None


@dataclass(frozen=True)
class SiteUrls:
    """Where visitors find previews and sites.

    ``base`` is the sites server's own URL (covers, and the path scheme). With ``domain`` set
    (``localhost:8001``, ``sites.example.com``), each preview and site is the origin
    ``{scheme}://{label}.{domain}``; without it they share ``base`` under ``/sites/{key}/`` and
    ``/preview/{key}/`` (one origin for every app: docs/security.md says what that costs).
    """

    base: str
    domain: str | None = None

    @property
    def per_app_origins(self) -> bool:
        return self.domain is not None

    @property
    def scheme(self) -> str:
        return urlsplit(self.base).scheme or "https"

    @property
    def domain_host(self) -> str | None:
        """The domain without its port, lowercase (what app host names end with)."""
        return urlsplit(f"//{self.domain}").hostname if self.domain else None

    def site(self, deploy_key: str) -> str:
        if self.domain is None:
            return f"{self.base}/sites/{check_public_key(deploy_key)}/"
        return self._origin(check_public_key(deploy_key)) + "/"

    def preview(self, preview_key: str) -> str:
        if self.domain is None:
            return f"{self.base}/preview/{check_public_key(preview_key)}/"
        return self._origin(PREVIEW_LABEL + check_public_key(preview_key)) + "/"

    def template(self, *, preview: bool) -> str:
        """The URL form, for people (``http://p-{key}.localhost:8001/``)."""
        if self.domain is None:
            return f"{self.base}/{'preview' if preview else 'sites'}/{{key}}/"
        return f"{self.scheme}://{PREVIEW_LABEL if preview else ''}{{key}}.{self.domain}/"

    def usable(self, key: str) -> bool:
        """Whether ``key`` works in this scheme's URLs (every well-formed key does in the
        path scheme; a host needs a lowercase one)."""
        return is_host_key(key) if self.per_app_origins else bool(_PUBLIC_KEY.match(key))

    def pointer_of_host(self, host: str) -> str | None:
        """The pointer for a request's ``Host`` (port ignored): only ``{label}.{domain}``
        with one label names one; None for the bare domain or any other host."""
        suffix = self.domain_host
        name = (urlsplit(f"//{host}").hostname or "") if host else ""
        if suffix is None or not name.endswith("." + suffix):
            return None
        label = name[: -len(suffix) - 1]
        return pointer_of_label(label) if "." not in label else None

    def _origin(self, label: str) -> str:
        return f"{self.scheme}://{label.lower()}.{self.domain}"


def site_urls(base: str, domain: str | None, local_port: int | None = None) -> SiteUrls:
    """The URLs of the sites server at ``base``, each app its own origin under ``domain``.
    Locally (``local_port``, the sites server's port) every app is its own origin under
    ``localhost`` when no domain is given (browsers resolve ``*.localhost`` to loopback); on
    AWS (no local port) only when a custom domain is configured."""
    if domain is None and local_port is not None:
        domain = f"localhost:{local_port}"
    return SiteUrls(base, domain.strip().strip(".").lower() or None if domain else None)


class Publisher(Protocol):
    def point(self, pointer: str, target: SiteTarget) -> None:
        """Make ``pointer`` serve ``target`` from now on, in one atomic write."""
        ...

    def target(self, pointer: str) -> SiteTarget | None: ...

    def remove(self, pointer: str) -> None:
        """Stop serving the pointer (idempotent)."""
        ...


class PointerStore(Publisher, Protocol):
    """A Publisher whose pointers can be walked and conditionally removed (the preview
    sweep: ``zerocode.publishing.eviction``)."""

    def pointers(self, prefix: str) -> Iterator[tuple[str, SiteTarget | None]]:
        """Every pointer starting with ``prefix`` and what it names (None: a value that is
        no pointer)."""
        ...

    def remove_if(self, pointer: str, expected: SiteTarget | None) -> bool:
        """Remove ``pointer`` only while it still names ``expected``, with no write of
        another in between; whether it was removed."""
        ...
