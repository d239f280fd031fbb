"""Accounts on the SQLite user store: hashing, tokens, expiry, admins."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from zerocode.accounts.service import (
    Accounts,
    Role,
    Unauthenticated,
    hash_password,
    token_hash,
    verify_password,
)
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.users import SqliteUserStore
from zerocode.errors import Conflict, InvalidInput


@pytest.fixture
def accounts(tmp_path: Path) -> Accounts:
    return Accounts(SqliteUserStore(SqliteDatabase(tmp_path / "users.sqlite3")))


def test_password_hash_is_salted_scrypt_and_verifies() -> None:
    first, second = hash_password("correct horse"), hash_password("correct horse")
    assert first.startswith("scrypt$") and first != second
    assert verify_password("correct horse", first) and not verify_password("wrong", first)
    assert not verify_password("correct horse", "md5$abc$def")
    assert not verify_password("correct horse", "garbage")


def test_tokens_are_stored_hashed_and_expire(accounts: Accounts, tmp_path: Path) -> None:
    accounts.register("dana-1", "correct horse")
    token, user = accounts.login("dana-1", "correct horse")
    assert accounts.authenticate(token) == user
    db = SqliteDatabase(tmp_path / "users.sqlite3")
    stored = [r[0] for r in db.conn.execute("SELECT token_hash FROM tokens")]
    assert stored == [token_hash(token)] and token not in stored
    short = Accounts(accounts.users, token_seconds=0.2)
    brief, _ = short.login("dana-1", "correct horse")
    assert short.authenticate(brief) is not None
    time.sleep(0.3)
    assert short.authenticate(brief) is None
    accounts.logout(token)
    assert accounts.authenticate(token) is None and accounts.authenticate("") is None


def test_register_rules_and_duplicates(accounts: Accounts) -> None:
    accounts.register("Erin-1", "correct horse", "  Erin  ")
    with pytest.raises(Conflict):
        accounts.register("erin-1", "another password")
    for account, password in (("abc", "long enough"), ("ok-name", "short"), (None, "x" * 9)):
        with pytest.raises(InvalidInput):
            accounts.register(account, password)
    user = accounts.users.by_account("erin-1")
    assert user is not None and user.name == "Erin" and user.role is Role.USER


def test_failed_logins_are_counted_and_unknown_accounts_fail_alike(accounts: Accounts) -> None:
    accounts.register("finn-1", "correct horse")
    for attempt in ("nope nope", "still wrong"):
        with pytest.raises(Unauthenticated) as wrong:
            accounts.login("finn-1", attempt)
    with pytest.raises(Unauthenticated) as unknown:
        accounts.login("nobody-1", "nope nope")
    assert wrong.value.message == unknown.value.message
    user = accounts.users.by_account("finn-1")
    assert user is not None and user.failed_logins == 2


def test_make_admin(accounts: Accounts) -> None:
    accounts.register("gail-1", "correct horse")
    assert accounts.make_admin("GAIL-1").is_admin
    token, user = accounts.login("gail-1", "correct horse")
    assert user.is_admin and accounts.authenticate(token) == user
    with pytest.raises(InvalidInput):
        accounts.make_admin("nobody-1")
