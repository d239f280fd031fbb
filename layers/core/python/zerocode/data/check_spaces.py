"""The platform's own visits keep their data apart (issue 39, point 5; docs/data.md).

The runtime check and the acceptance checks load a preview as a visitor would, and a data
app's checks write: they sign a guestbook, sign up, add notes. Were that the preview's
space, every run of the suite would add to the builder's preview data, a sign-up that passed
once would fail the next time (the username is taken), and a check could pass or fail on
what the builder did by hand. So each browser context of the platform gets a scratch space
of its own: seeded from the data model like a preview, empty of users, and deleted when the
context closes.

The checking browser's requests to ``/_api/`` carry :data:`HEADER`, set on the platform's
side (the confinement fetches every request of the page; a page's own value is replaced),
naming a random run and a MAC over it and the app, under a secret of this process. The data
API believes it only for a preview of that app; a visitor who sends it by hand gets 403.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

HEADER = "x-zerocode-check"
PREFIX = "check-"
_VALUE = re.compile(r"^([0-9a-f]{16})\.([0-9a-f]{32})$")


class CheckSpaces:
    def __init__(self, secret: bytes | None = None) -> None:
        self.secret = secret or secrets.token_bytes(32)

    def new(self, app_id: str) -> tuple[str, str]:
        """A fresh scratch space of ``app_id``: (its name, the header value naming it)."""
        run = secrets.token_hex(8)
        return PREFIX + run, f"{run}.{self._mac(app_id, run)}"

    def space_of(self, app_id: str, value: str) -> str | None:
        """The scratch space a header value names for ``app_id``; None for a forged one (or
        one made for another app)."""
        found = _VALUE.match(value)
        if found is None:
            return None
        run, mac = found.groups()
        return PREFIX + run if hmac.compare_digest(mac, self._mac(app_id, run)) else None

    def _mac(self, app_id: str, run: str) -> str:
        message = f"{app_id}\0{run}".encode()
        return hmac.new(self.secret, message, hashlib.sha256).hexdigest()[:32]


def is_scratch(space: str) -> bool:
    return space.startswith(PREFIX)
