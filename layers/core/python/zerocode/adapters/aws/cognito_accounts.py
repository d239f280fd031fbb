"""Accounts on Amazon Cognito (AWS mode): the counterpart of ``zerocode.accounts.service.Accounts``.

Cognito keeps the passwords and issues the tokens, so ``User.password_hash`` is always ""
and ``User.id`` is the Cognito ``sub``. Input is checked with the same rules as local mode
before any request is made. Only the platform creates users (``AdminCreateUser`` with a
permanent password; the pool refuses self sign-up through its public client id), and an
admin is a member of the Cognito group ``admin``.

Revocation (docs/accounts.md): a token is checked with Cognito (``GetUser``, which fails for
a token revoked by sign-out, and the user's groups) at most once per ``check_seconds`` (60)
per token and process, so after a logout or a removal from ``admin`` every guarded route
refuses the old token, or its admin rights, within a minute. Behind API Gateway the
authorizer's claims name the caller (``user_from_gateway``), and the same cached check says
whether the token still stands and what the caller's role is now.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from botocore.exceptions import ClientError

from zerocode.accounts.service import (
    InvalidCredentials,
    Role,
    Unauthenticated,
    User,
    check_account,
    check_password,
)
from zerocode.adapters.aws.errors import error_code, error_message
from zerocode.errors import AccountTaken, InvalidInput

ADMIN_GROUP = "admin"
_WRONG = "wrong account or password"
_SIGN_IN_FAILED = {
    "NotAuthorizedException",
    "UserNotFoundException",
    "UserNotConfirmedException",
    "PasswordResetRequiredException",
}
_BAD_TOKEN = {"NotAuthorizedException", "UserNotFoundException"}


def _message(exc: ClientError) -> str:
    return error_message(exc) or error_code(exc)


def _display_name(name: object, account: str) -> str:
    return name.strip()[:60] if isinstance(name, str) and name.strip() else account


def parse_groups(groups: object) -> list[str]:
    """``cognito:groups`` as a list, whether a list or a string like "a,b", "a b" or "[a b]"."""
    if isinstance(groups, str):
        return [g for g in re.split(r"[\s,]+", groups.strip().strip("[]")) if g]
    if isinstance(groups, list | tuple):
        return [str(g) for g in groups if str(g)]
    return []


def _role(groups: list[str]) -> Role:
    return Role.ADMIN if ADMIN_GROUP in groups else Role.USER


# Cognito's default access-token lifetime; the session cookie lives as long as the token.
ACCESS_TOKEN_SECONDS = 3600.0
# How long one check of a token with Cognito (GetUser and the user's groups) is trusted in a
# process: the bound on how late a logout or a removal from the admin group takes effect.
CHECK_SECONDS = 60.0
CHECKED_TOKENS_MAX = 10_000  # per process; the oldest checks are forgotten first
_SUB = re.compile(r"^[0-9a-fA-F-]{1,64}$")
_SEARCHABLE = re.compile(r"^[a-z0-9_.@-]+$")
COGNITO_PAGE_MAX = 60


class CognitoAccounts:
    def __init__(
        self,
        client: Any,
        user_pool_id: str,
        client_id: str,
        token_seconds: float = ACCESS_TOKEN_SECONDS,
        check_seconds: float = CHECK_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.user_pool_id, self.client_id = client, user_pool_id, client_id
        self.token_seconds, self.check_seconds, self.clock = token_seconds, check_seconds, clock
        # sha256(token) -> (checked until, the user or None for a refused token). Keyed by
        # the whole token, never by a claim read from it unverified.
        self._checked: OrderedDict[str, tuple[float, User | None]] = OrderedDict()
        self._lock = threading.Lock()

    def register(self, account: object, password: object, name: object = None) -> User:
        """Create the user with the admin API and a permanent password (the pool allows
        no other way in: its self sign-up is off, so the platform's rules and limits,
        ``check_account``, ``check_password`` and the front door's throttles, are the only
        door). A user whose password could not be set is deleted again."""
        clean = check_account(account)
        secret = check_password(password)
        display = _display_name(name, clean)
        try:
            answer = self.client.admin_create_user(
                UserPoolId=self.user_pool_id,
                Username=clean,
                TemporaryPassword=secret,  # checked against the pool's policy here
                MessageAction="SUPPRESS",  # no invitation: the password is already chosen
                UserAttributes=[{"Name": "name", "Value": display}],
            )
        except ClientError as exc:
            if error_code(exc) == "UsernameExistsException":
                raise AccountTaken(f"account {clean!r} is taken") from exc
            if error_code(exc) in {"InvalidPasswordException", "InvalidParameterException"}:
                raise InvalidInput(_message(exc)) from exc
            raise
        try:
            self.client.admin_set_user_password(
                UserPoolId=self.user_pool_id, Username=clean, Password=secret, Permanent=True
            )
        except Exception as exc:
            # Left in FORCE_CHANGE_PASSWORD the account could never sign in here (and would
            # hold the name): remove it, then fail as the password step did.
            self.client.admin_delete_user(UserPoolId=self.user_pool_id, Username=clean)
            if isinstance(exc, ClientError) and error_code(exc) == "InvalidPasswordException":
                raise InvalidInput(_message(exc)) from exc
            raise
        user = self._user(answer.get("User", {}), set())
        return replace(user, account=clean, role=Role.USER)

    def login(self, account: object, password: object) -> tuple[str, User]:
        """An access token; the same failure whether the account or the password is wrong."""
        if not isinstance(account, str) or not isinstance(password, str) or not password:
            raise InvalidCredentials(_WRONG)
        try:
            answer = self.client.initiate_auth(
                ClientId=self.client_id,
                AuthFlow="USER_PASSWORD_AUTH",
                AuthParameters={"USERNAME": account.lower(), "PASSWORD": password},
            )
        except ClientError as exc:
            if error_code(exc) in _SIGN_IN_FAILED:
                raise InvalidCredentials(_WRONG) from exc
            raise
        result = answer.get("AuthenticationResult")
        if not result:
            raise Unauthenticated(
                f"sign-in needs a step this platform does not support: "
                f"{answer.get('ChallengeName')}"
            )
        token = str(result["AccessToken"])
        user = self.authenticate(token)
        if user is None:  # Cognito just issued it; only a race with a deletion gets here
            raise InvalidCredentials(_WRONG)
        return token, user

    def authenticate(self, token: str | None) -> User | None:
        """The token's user with the role it has now, or None for a token Cognito refuses
        (unknown, expired or revoked). Checked with Cognito at most once per
        ``check_seconds`` per token in this process."""
        if not token:
            return None
        key, now = hashlib.sha256(token.encode()).hexdigest(), self.clock()
        with self._lock:
            hit = self._checked.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]
        user = self._check(token)
        until = now + self.check_seconds
        expires = _expiry(token)
        if user is not None and expires is not None:
            until = min(until, expires)  # never trusted past its own expiry
        with self._lock:
            self._checked[key] = (until, user)
            self._checked.move_to_end(key)
            while len(self._checked) > CHECKED_TOKENS_MAX:
                self._checked.popitem(last=False)
        return user

    def _check(self, token: str) -> User | None:
        try:
            answer = self.client.get_user(AccessToken=token)
        except ClientError as exc:
            if error_code(exc) in _BAD_TOKEN:
                return None
            raise
        user = self._user({**answer, "Attributes": answer.get("UserAttributes", [])}, set())
        try:
            groups = self._groups(user.account)
        except ClientError as exc:
            if error_code(exc) == "UserNotFoundException":  # deleted since GetUser
                return None
            raise
        return replace(user, role=_role(groups))

    def user_from_gateway(self, claims: Mapping[str, Any], token: str | None) -> User | None:
        """The caller behind API Gateway: the authorizer verified the token's signature and
        expiry and named its user in ``claims``; whether the token still stands (no logout
        since) and the caller's role now come from the cached Cognito check of the same
        token. None when the token is revoked, missing, or not the one the claims are of."""
        named = self.user_from_claims(claims)
        live = self.authenticate(token)
        if live is None or live.id != named.id:
            return None
        return live

    def logout(self, token: str) -> None:
        """Revokes every token of the user (Cognito signs out all sessions at once); this
        process forgets its checks of them at once, other processes within a minute."""
        if not token:
            return
        user = self.authenticate(token)
        try:
            self.client.global_sign_out(AccessToken=token)
        except ClientError as exc:
            if error_code(exc) not in _BAD_TOKEN:
                raise
        if user is not None:
            self._forget(user.id)

    def _forget(self, user_id: str) -> None:
        """Drop this process's checks of the user's tokens (their role or validity changed
        here; other processes see it when their checks run out, within ``check_seconds``)."""
        with self._lock:
            for key, (_, checked) in list(self._checked.items()):
                if checked is not None and checked.id == user_id:
                    del self._checked[key]

    def make_admin(self, account: str) -> User:
        clean = account.lower()
        for attempt in range(2):
            try:
                self.client.admin_add_user_to_group(
                    UserPoolId=self.user_pool_id, Username=clean, GroupName=ADMIN_GROUP
                )
                break
            except ClientError as exc:
                if error_code(exc) == "UserNotFoundException":
                    raise InvalidInput(f"no account {account!r}; register it first") from exc
                if error_code(exc) != "ResourceNotFoundException" or attempt:
                    raise
                self._create_admin_group()
        admin = self._admin_get_user(clean)
        self._forget(admin.id)
        return admin

    def list_users(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> tuple[list[User], str | None]:
        """One page of accounts. Cognito filters by prefix only, so ``query`` matches the
        start of the account (locally it is a substring), and pages come in Cognito's order.
        Roles come from one listing of the ``admin`` group, not a request per user; failed
        logins are Cognito's business and show as 0."""
        kwargs: dict[str, Any] = {
            "UserPoolId": self.user_pool_id,
            "Limit": max(1, min(limit, COGNITO_PAGE_MAX)),
        }
        if query:
            needle = query.strip().lower()
            if not _SEARCHABLE.match(needle):
                return [], None  # no account can contain it (and it cannot break the filter)
            kwargs["Filter"] = f'username ^= "{needle}"'
        if cursor:
            kwargs["PaginationToken"] = cursor
        try:
            page = self.client.list_users(**kwargs)
        except ClientError as exc:
            if cursor and error_code(exc) in {
                "InvalidParameterException",
                "NotAuthorizedException",
            }:
                raise InvalidInput("cursor is not one returned by this API") from exc
            raise
        admins = self._admins()
        users = [self._user(u, admins) for u in page.get("Users", [])]
        next_token = page.get("PaginationToken")
        return users, (str(next_token) if next_token else None)

    def account_of(self, user_id: str) -> str | None:
        """The account (Cognito user name) whose ``sub`` is ``user_id``."""
        if not _SUB.match(user_id):
            return None  # not a sub: it cannot break the filter, and no user has it
        page = self.client.list_users(
            UserPoolId=self.user_pool_id, Filter=f'sub = "{user_id}"', Limit=1
        )
        users = page.get("Users", [])
        return str(users[0]["Username"]) if users else None

    def user_from_claims(self, claims: Mapping[str, Any]) -> User:
        """The caller from API Gateway Cognito authorizer claims (ID or access token)."""
        sub = claims.get("sub")
        account = claims.get("cognito:username") or claims.get("username")
        if not isinstance(sub, str) or not sub or not isinstance(account, str) or not account:
            raise Unauthenticated("token has no user")
        return User(
            id=sub,
            account=account,
            name=_display_name(claims.get("name"), account),
            role=_role(parse_groups(claims.get("cognito:groups"))),
            password_hash="",
        )

    def _admins(self) -> set[str]:
        names: set[str] = set()
        kwargs: dict[str, Any] = {"UserPoolId": self.user_pool_id, "GroupName": ADMIN_GROUP}
        while True:
            try:
                page = self.client.list_users_in_group(**kwargs)
            except ClientError as exc:
                if error_code(exc) == "ResourceNotFoundException":  # no admin group yet
                    return names
                raise
            names |= {str(u["Username"]) for u in page.get("Users", [])}
            if not page.get("NextToken"):
                return names
            kwargs["NextToken"] = page["NextToken"]

    @staticmethod
    def _user(raw: Mapping[str, Any], admins: set[str]) -> User:
        attributes = {a["Name"]: a["Value"] for a in raw.get("Attributes", [])}
        name = str(raw["Username"])
        created: Any = raw.get("UserCreateDate")
        return User(
            id=str(attributes.get("sub", name)),
            account=name,
            name=_display_name(attributes.get("name"), name),
            role=Role.ADMIN if name in admins else Role.USER,
            password_hash="",
            created_at=created.timestamp() if hasattr(created, "timestamp") else 0.0,
        )

    def _groups(self, account: str) -> list[str]:
        groups: list[str] = []
        kwargs: dict[str, Any] = {"UserPoolId": self.user_pool_id, "Username": account}
        while True:
            page = self.client.admin_list_groups_for_user(**kwargs)
            groups += [str(g["GroupName"]) for g in page.get("Groups", [])]
            if not page.get("NextToken"):
                return groups
            kwargs["NextToken"] = page["NextToken"]

    def _create_admin_group(self) -> None:
        try:
            self.client.create_group(
                UserPoolId=self.user_pool_id,
                GroupName=ADMIN_GROUP,
                Description="zerocode administrators",
            )
        except ClientError as exc:
            if error_code(exc) != "GroupExistsException":  # another caller created it first
                raise

    def _admin_get_user(self, account: str) -> User:
        answer = self.client.admin_get_user(UserPoolId=self.user_pool_id, Username=account)
        user = self._user({**answer, "Attributes": answer.get("UserAttributes", [])}, set())
        return replace(user, role=_role(self._groups(user.account)))


def _expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT, read without verifying it: used only to shorten how long
    a check Cognito answered is trusted, never to accept anything."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        exp = claims.get("exp") if isinstance(claims, dict) else None
        return float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None
    except (IndexError, ValueError):
        return None


def create_user_pool(client: Any, name: str) -> tuple[str, str]:
    """A user pool and an app client for CognitoAccounts: (user_pool_id, client_id).

    For tests and local tooling; the deployed pool comes from the infrastructure code.
    """
    pool = client.create_user_pool(
        PoolName=name,
        Policies={
            "PasswordPolicy": {
                "MinimumLength": 8,
                "RequireUppercase": False,
                "RequireLowercase": False,
                "RequireNumbers": False,
                "RequireSymbols": False,
            }
        },
        UsernameConfiguration={"CaseSensitive": False},
        # Only the platform creates users (CognitoAccounts.register): no self sign-up.
        AdminCreateUserConfig={"AllowAdminCreateUserOnly": True},
    )["UserPool"]
    app = client.create_user_pool_client(
        UserPoolId=pool["Id"],
        ClientName=f"{name}-app",
        GenerateSecret=False,
        ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
        AllowedOAuthFlowsUserPoolClient=False,  # no hosted UI, no OAuth flows, no callbacks
        EnableTokenRevocation=True,
    )["UserPoolClient"]
    return str(pool["Id"]), str(app["ClientId"])
