"""An app's own end users: sign-up, sign-in and sessions (issue 39, point 3).

End users belong to one app and one space (the preview's users are not the live site's)
and are never the builders' accounts: nothing here reads or writes those. Passwords are
hashed with scrypt (memory-hard; the same cost and format as the builders' accounts,
``zerocode.accounts.service``). A session is a random token the visitor holds in an
HttpOnly cookie; the store keeps only its SHA-256, under the app and space it was made
for, so a token is worth nothing at any other app or space even if sent there by hand.

Sign-in is throttled as the console's front door is (``accounts/throttle.py``), scoped to
the app and space: at most :attr:`EndUserLimits.failed_logins` failed sign-ins per
username per window (then every sign-in to it is refused before its password is checked),
and at most :attr:`EndUserLimits.attempts` sign-ups and sign-ins per client address per app
per window (which bounds guessing across usernames, sign-up spam and the scrypt work one
address can ask for).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Protocol

from zerocode.accounts.ratelimit import RateLimited, RateLimiter, enforce
from zerocode.accounts.service import dummy_hash, hash_password, token_hash, verify_password
from zerocode.data.records import Space, timestamp
from zerocode.errors import Conflict, InvalidInput, NotFound, ZerocodeError

USERNAME = re.compile(r"^[a-z0-9][a-z0-9._-]{2,31}$")
MIN_PASSWORD, MAX_PASSWORD = 8, 128
SESSION_SECONDS = 30 * 86_400
DEFAULT_MOST_USERS = 10_000  # end users per app and space
_USER_ID_CHARS = 16  # hex: 64 random bits


class UsernameTaken(Conflict):
    code = "username_taken"


class UsersFull(Conflict):
    code = "users_full"


class WrongPassword(ZerocodeError):
    """The same answer whether the username or the password is wrong."""

    status = 401
    code = "wrong_credentials"


@dataclass(frozen=True)
class EndUser:
    id: str
    username: str
    created_at: str
    password_hash: str = ""

    def shown(self) -> dict[str, Any]:
        """The user as the data API and the console show them (never the hash)."""
        return {"id": self.id, "username": self.username, "createdAt": self.created_at}


@dataclass(frozen=True)
class Session:
    token: str  # the visitor's (kept by them alone; the store has its hash)
    user: EndUser
    expires_at: float


class EndUserStore(Protocol):
    def create(self, app_id: str, space: Space, user: EndUser, most: int) -> None:
        """Add ``user``: UsernameTaken if their name is taken in the app's space, UsersFull
        past ``most`` users (the count and the insert are one step)."""
        ...

    def by_username(self, app_id: str, space: Space, username: str) -> EndUser | None: ...

    def get(self, app_id: str, space: Space, user_id: str) -> EndUser | None: ...

    def list(
        self, app_id: str, space: Space, after: str | None, limit: int
    ) -> tuple[list[EndUser], str | None]:
        """By username; ``after`` is the last page's last username."""
        ...

    def remove(self, app_id: str, space: Space, user_id: str) -> bool:
        """Delete the user and every session of theirs; whether they existed."""
        ...

    def put_session(
        self, app_id: str, space: Space, token_sha: str, user_id: str, expires_at: float
    ) -> None: ...

    def session_user(self, app_id: str, space: Space, token_sha: str, now: float) -> EndUser | None:
        """The user a live session of this app and space names; None otherwise."""
        ...

    def delete_session(self, app_id: str, space: Space, token_sha: str) -> None: ...

    def clear(self, app_id: str, space: Space | None = None) -> int:
        """Delete the users and sessions of one space (or both); how many users."""
        ...

    def delete_app(self, app_id: str) -> int: ...


@dataclass(frozen=True)
class EndUserLimits:
    failed_logins: int = 5  # per username per window
    attempts: int = 20  # sign-ups and sign-ins per client address per app per window
    window_seconds: float = 15 * 60
    most: int = DEFAULT_MOST_USERS


class EndUsers:
    """Sign-up, sign-in and sessions of the end users of any app, in one of its spaces."""

    def __init__(
        self,
        store: EndUserStore,
        limiter: RateLimiter,
        limits: EndUserLimits | None = None,
        now: Any = time.time,
    ) -> None:
        self.store, self.limiter = store, limiter
        self.limits = limits or EndUserLimits()
        self.now = now

    def sign_up(
        self, app_id: str, space: Space, body: Any, address: str | None
    ) -> tuple[Session, EndUser]:
        username, password = _credentials(body, checked=True)
        self._count_attempt(app_id, space, address)
        user = EndUser(
            id=secrets.token_hex(_USER_ID_CHARS // 2),
            username=username,
            created_at=timestamp(),
            password_hash=hash_password(password),
        )
        self.store.create(app_id, space, user, self.limits.most)
        return self._session(app_id, space, user), user

    def sign_in(
        self, app_id: str, space: Space, body: Any, address: str | None
    ) -> tuple[Session, EndUser]:
        username, password = _credentials(body, checked=False)
        self._count_attempt(app_id, space, address)
        key = _failed_key(app_id, space, username)
        limits = self.limits
        state = self.limiter.peek(key, limits.failed_logins, limits.window_seconds)
        if not state.allowed:
            raise RateLimited(
                f"sign-in to {username[:32]} is paused after {limits.failed_logins} wrong "
                f"passwords; try again in {max(1, round(state.retry_after / 60))} minutes",
                state.retry_after,
            )
        user = self.store.by_username(app_id, space, username)
        ok = verify_password(password, user.password_hash if user else dummy_hash())
        if user is None or not ok:
            self.limiter.hit(key, limits.failed_logins, limits.window_seconds)
            raise WrongPassword("wrong username or password")
        return self._session(app_id, space, user), user

    def visitor(self, app_id: str, space: Space, token: str | None) -> EndUser | None:
        """Who holds ``token`` at this app and space (None: nobody signed in)."""
        if not token or len(token) > 200:
            return None
        return self.store.session_user(app_id, space, token_hash(token), self.now())

    def sign_out(self, app_id: str, space: Space, token: str | None) -> None:
        if token and len(token) <= 200:
            self.store.delete_session(app_id, space, token_hash(token))

    def page(
        self, app_id: str, space: Space, after: str | None, limit: int
    ) -> tuple[list[EndUser], str | None]:
        return self.store.list(app_id, space, after, limit)

    def remove(self, app_id: str, space: Space, user_id: str) -> None:
        """The builder removes an end user: they and their sessions are gone at once."""
        if not self.store.remove(app_id, space, user_id):
            raise NotFound("no such user of this app")

    def _session(self, app_id: str, space: Space, user: EndUser) -> Session:
        token = secrets.token_urlsafe(32)
        expires = self.now() + SESSION_SECONDS
        self.store.put_session(app_id, space, token_hash(token), user.id, expires)
        return Session(token, user, expires)

    def _count_attempt(self, app_id: str, space: Space, address: str | None) -> None:
        if address is None:
            return
        limits = self.limits
        key = "end-user-attempts:" + _digest(f"{app_id}\0{space}\0{address}")
        try:
            enforce(self.limiter, key, limits.attempts, limits.window_seconds)
        except RateLimited as exc:
            raise RateLimited(
                f"sign-up and sign-in from this address are paused after {limits.attempts} "
                f"attempts; try again in {max(1, round(exc.retry_after / 60))} minutes",
                exc.retry_after,
            ) from None


def _credentials(body: Any, *, checked: bool) -> tuple[str, str]:
    """``{username, password}``; a sign-up's are held to the rules, a sign-in's only to
    their sizes (a wrong one is just wrong)."""
    if not isinstance(body, dict):
        raise InvalidInput("the body is a JSON object: {username, password}")
    username, password = body.get("username"), body.get("password")
    if not isinstance(username, str) or not (
        USERNAME.match(username.lower()) if checked else 0 < len(username) <= 32
    ):
        raise InvalidInput(
            "username: 3 to 32 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise InvalidInput(f"password: {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return username.lower(), password


def _failed_key(app_id: str, space: Space, username: str) -> str:
    return "end-user-failed:" + _digest(f"{app_id}\0{space}\0{username}")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:32]
