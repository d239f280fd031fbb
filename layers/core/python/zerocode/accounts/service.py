"""Accounts: people, their passwords and their bearer tokens (local mode).

Passwords are hashed with scrypt (slow on purpose, so a stolen table is costly
to attack); tokens are random and only their SHA-256 is stored, so a stolen
table cannot be replayed. Every check that fails says as little as possible.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Protocol

from zerocode.errors import InvalidInput, ZerocodeError

ACCOUNT_PATTERN = r"^[A-Za-z0-9_.@-]{4,64}$"
_ACCOUNT = re.compile(ACCOUNT_PATTERN)
MIN_PASSWORD, MAX_PASSWORD = 8, 128
# scrypt cost: ~50 ms per hash on a laptop core; n must be a power of two.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
TOKEN_SECONDS = 7 * 86_400


class Unauthenticated(ZerocodeError):
    status = 401
    code = "unauthenticated"


class InvalidCredentials(Unauthenticated):
    """A login that failed (not an expired session: the console says which)."""

    code = "invalid_credentials"


class Forbidden(ZerocodeError):
    status = 403
    code = "forbidden"


class Role(StrEnum):
    USER = "user"
    ADMIN = "admin"


@dataclass(frozen=True, kw_only=True)
class User:
    id: str
    account: str
    name: str
    role: Role
    password_hash: str
    created_at: float = field(default_factory=time.time)
    failed_logins: int = 0

    @property
    def is_admin(self) -> bool:
        return self.role is Role.ADMIN


class UserStore(Protocol):
    def create(self, user: User) -> None:
        """Raises zerocode.errors.Conflict when the account is taken."""
        ...

    def by_account(self, account: str) -> User | None: ...

    def get(self, user_id: str) -> User | None: ...

    def set_role(self, user_id: str, role: Role) -> None: ...

    def count_failed_login(self, user_id: str) -> None: ...

    def put_token(self, token_hash: str, user_id: str, expires_at: float) -> None: ...

    def token_user(self, token_hash: str, now: float) -> User | None:
        """The user of an unexpired token."""
        ...

    def delete_token(self, token_hash: str) -> None: ...

    def list_users(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> tuple[list[User], str | None]:
        """Accounts in name order (for admins), filtered by a substring of the account."""
        ...


class AccountService(Protocol):
    """What the API needs from accounts; local ``Accounts`` and ``CognitoAccounts`` both are one."""

    token_seconds: float

    def register(self, account: object, password: object, name: object = None) -> User: ...

    def login(self, account: object, password: object) -> tuple[str, User]: ...

    def authenticate(self, token: str | None) -> User | None: ...

    def logout(self, token: str) -> None: ...

    def make_admin(self, account: str) -> User: ...

    def account_of(self, user_id: str) -> str | None:
        """The account name of a user id (admin tables show names, not ids); None if gone."""
        ...

    def list_users(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> tuple[list[User], str | None]: ...


def check_account(account: object) -> str:
    if not isinstance(account, str) or not _ACCOUNT.match(account):
        raise InvalidInput("account must be 4 to 64 letters, digits or . _ @ -")
    return account.lower()


def check_password(password: object) -> str:
    if not isinstance(password, str) or not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise InvalidInput(f"password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters")
    return password


def hash_password(password: str) -> str:
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        scheme, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), **_SCRYPT)
    return hmac.compare_digest(candidate.hex(), digest)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@functools.cache
def dummy_hash() -> str:
    """A hash to verify against when the account does not exist, so "no such account"
    takes as long as "wrong password". Made on first use, not at import (scrypt is slow)."""
    return hash_password(secrets.token_urlsafe(12))


class Accounts:
    def __init__(self, users: UserStore, token_seconds: float = TOKEN_SECONDS) -> None:
        self.users, self.token_seconds = users, token_seconds

    def register(self, account: object, password: object, name: object = None) -> User:
        clean = check_account(account)
        secret = check_password(password)
        display = name.strip()[:60] if isinstance(name, str) and name.strip() else clean
        user = User(
            id=secrets.token_hex(10),
            account=clean,
            name=display,
            role=Role.USER,
            password_hash=hash_password(secret),
        )
        self.users.create(user)
        return user

    def login(self, account: object, password: object) -> tuple[str, User]:
        """A new token; the same slow failure whether the account or the password is wrong."""
        user = self.users.by_account(account.lower()) if isinstance(account, str) else None
        ok = verify_password(
            password if isinstance(password, str) else "",
            user.password_hash if user else dummy_hash(),
        )
        if user is None or not ok:
            if user is not None:
                self.users.count_failed_login(user.id)
            raise InvalidCredentials("wrong account or password")
        token = secrets.token_urlsafe(32)
        self.users.put_token(token_hash(token), user.id, time.time() + self.token_seconds)
        return token, user

    def authenticate(self, token: str | None) -> User | None:
        if not token:
            return None
        return self.users.token_user(token_hash(token), time.time())

    def logout(self, token: str) -> None:
        self.users.delete_token(token_hash(token))

    def account_of(self, user_id: str) -> str | None:
        user = self.users.get(user_id)
        return user.account if user else None

    def list_users(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> tuple[list[User], str | None]:
        return self.users.list_users(cursor, limit, query)

    def make_admin(self, account: str) -> User:
        user = self.users.by_account(account.lower())
        if user is None:
            raise InvalidInput(f"no account {account!r}; register it first")
        self.users.set_role(user.id, Role.ADMIN)
        return replace(user, role=Role.ADMIN)
