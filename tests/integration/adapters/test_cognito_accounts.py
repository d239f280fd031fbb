"""CognitoAccounts (AWS-mode accounts) on moto's Cognito user pools."""

from __future__ import annotations

from typing import Any

import moto.cognitoidp  # noqa: F401 - moto[cognitoidp] is a dev dependency: fail, never skip
import pytest

from zerocode.accounts.service import Role, Unauthenticated
from zerocode.adapters.aws.cognito_accounts import CognitoAccounts, create_user_pool, parse_groups
from zerocode.errors import Conflict, InvalidInput


class Counted:
    def __init__(self, client: Any) -> None:
        self.calls: list[str] = []
        client.meta.events.register("before-call", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls.append(model.name)


@pytest.fixture
def client(aws: None) -> Any:
    import boto3

    return boto3.client("cognito-idp", region_name="us-east-1")


@pytest.fixture
def accounts(client: Any) -> CognitoAccounts:
    pool_id, client_id = create_user_pool(client, "zerocode-test")
    return CognitoAccounts(client, pool_id, client_id)


def test_register_login_authenticate_round_trip(accounts: CognitoAccounts) -> None:
    user = accounts.register("Alice.Dev", "correct horse", name="  Alice  ")
    assert (user.account, user.name, user.role, user.password_hash) == (
        "alice.dev",
        "Alice",
        Role.USER,
        "",
    )
    assert user.id

    token, logged_in = accounts.login("ALICE.dev", "correct horse")
    assert token and logged_in.id == user.id and logged_in.account == "alice.dev"
    assert logged_in.name == "Alice" and logged_in.role is Role.USER

    seen = accounts.authenticate(token)
    assert seen is not None and (seen.id, seen.account, seen.name, seen.role) == (
        user.id,
        "alice.dev",
        "Alice",
        Role.USER,
    )
    assert seen.password_hash == ""


def test_name_defaults_to_the_account(accounts: CognitoAccounts) -> None:
    assert accounts.register("bob_1", "password1").name == "bob_1"
    assert accounts.login("bob_1", "password1")[1].name == "bob_1"


def test_register_confirms_the_user(accounts: CognitoAccounts, client: Any) -> None:
    accounts.register("carol", "password1")
    status = client.admin_get_user(UserPoolId=accounts.user_pool_id, Username="carol")
    assert status["UserStatus"] == "CONFIRMED"


def test_duplicate_account_is_a_conflict(accounts: CognitoAccounts) -> None:
    accounts.register("alice", "password1")
    with pytest.raises(Conflict):
        accounts.register("ALICE", "password2")


@pytest.mark.parametrize(
    ("account", "password"),
    [
        ("ab", "password1"),  # too short
        ("has space", "password1"),
        (None, "password1"),
        ("x" * 65, "password1"),
        ("alice", "short"),
        ("alice", "p" * 129),
        ("alice", None),
    ],
)
def test_bad_input_is_rejected_before_any_request(
    accounts: CognitoAccounts, client: Any, account: object, password: object
) -> None:
    counted = Counted(client)
    with pytest.raises(InvalidInput):
        accounts.register(account, password)
    assert counted.calls == []


def test_counter_sees_requests(accounts: CognitoAccounts, client: Any) -> None:
    """The hook the test above relies on does see the adapter's requests."""
    counted = Counted(client)
    accounts.register("dave", "password1")
    assert counted.calls == ["AdminCreateUser", "AdminSetUserPassword"]


def test_password_rejected_by_cognito_is_invalid_input(client: Any) -> None:
    pool_id = client.create_user_pool(
        PoolName="strict",
        Policies={
            "PasswordPolicy": {
                "MinimumLength": 8,
                "RequireNumbers": True,
                "RequireSymbols": False,
                "RequireUppercase": False,
                "RequireLowercase": False,
            }
        },
    )["UserPool"]["Id"]
    client_id = client.create_user_pool_client(
        UserPoolId=pool_id, ClientName="strict", ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH"]
    )["UserPoolClient"]["ClientId"]
    with pytest.raises(InvalidInput) as caught:
        CognitoAccounts(client, pool_id, client_id).register("erin", "no digits here")
    assert "password" in caught.value.message.lower()


def test_wrong_password_and_unknown_account_fail_alike(accounts: CognitoAccounts) -> None:
    accounts.register("alice", "password1")
    messages = []
    for account, password in [
        ("alice", "wrong-password"),
        ("nobody", "password1"),
        (None, "password1"),
        ("alice", None),
        ("alice", ""),
    ]:
        with pytest.raises(Unauthenticated) as caught:
            accounts.login(account, password)
        messages.append(caught.value.message)
    assert set(messages) == {"wrong account or password"}


def test_authenticate_rejects_junk(accounts: CognitoAccounts) -> None:
    assert accounts.authenticate(None) is None
    assert accounts.authenticate("") is None
    assert accounts.authenticate("not-a-token") is None


def test_logout_invalidates_the_token(accounts: CognitoAccounts) -> None:
    """moto does revoke on GlobalSignOut: GetUser then answers NotAuthorizedException."""
    accounts.register("alice", "password1")
    token, _ = accounts.login("alice", "password1")
    accounts.logout(token)
    assert accounts.authenticate(token) is None
    accounts.logout(token)  # already invalid: ignored
    accounts.logout("not-a-token")
    accounts.logout("")
    fresh, _ = accounts.login("alice", "password1")
    assert accounts.authenticate(fresh) is not None


def test_make_admin_creates_the_group_and_sets_the_role(
    accounts: CognitoAccounts, client: Any
) -> None:
    user = accounts.register("alice", "password1")
    token, _ = accounts.login("alice", "password1")
    admin = accounts.make_admin("ALICE")
    assert admin.role is Role.ADMIN and admin.is_admin and admin.id == user.id
    seen = accounts.authenticate(token)
    assert seen is not None and seen.role is Role.ADMIN

    accounts.register("bob_", "password1")
    assert accounts.make_admin("bob_").role is Role.ADMIN  # the group exists by now
    groups = client.list_groups(UserPoolId=accounts.user_pool_id)["Groups"]
    assert [g["GroupName"] for g in groups] == ["admin"]


def test_make_admin_of_unknown_account_is_invalid_input(accounts: CognitoAccounts) -> None:
    with pytest.raises(InvalidInput):
        accounts.make_admin("nobody")


@pytest.mark.parametrize(
    "groups", [["admin", "beta"], "admin,beta", "beta admin", "[beta admin]", "beta, admin"]
)
def test_user_from_claims_reads_admins_in_every_group_format(
    accounts: CognitoAccounts, groups: object
) -> None:
    user = accounts.user_from_claims(
        {"sub": "s-1", "cognito:username": "alice", "name": "Alice", "cognito:groups": groups}
    )
    assert (user.id, user.account, user.name, user.role, user.password_hash) == (
        "s-1",
        "alice",
        "Alice",
        Role.ADMIN,
        "",
    )


@pytest.mark.parametrize("groups", [None, [], "", "beta", ["beta"], "administrators"])
def test_user_from_claims_without_admin_group_is_a_user(
    accounts: CognitoAccounts, groups: object
) -> None:
    claims: dict[str, Any] = {"sub": "s-2", "cognito:username": "bob_"}
    if groups is not None:
        claims["cognito:groups"] = groups
    user = accounts.user_from_claims(claims)
    assert user.role is Role.USER and user.name == "bob_"


def test_user_from_claims_needs_a_subject(accounts: CognitoAccounts) -> None:
    with pytest.raises(Unauthenticated):
        accounts.user_from_claims({"cognito:username": "alice"})
    with pytest.raises(Unauthenticated):
        accounts.user_from_claims({"sub": "s-3"})


def test_parse_groups() -> None:
    assert parse_groups("[a, b  c]") == ["a", "b", "c"]
    assert parse_groups(("a",)) == ["a"]
    assert parse_groups(42) == []


def test_list_users_pages_searches_by_prefix_and_shows_admins(accounts: CognitoAccounts) -> None:
    for account in ("anna", "andrew", "bert"):
        accounts.register(account, "password1")
    accounts.make_admin("bert")
    first, cursor = accounts.list_users(limit=2)
    assert len(first) == 2 and cursor
    rest, end = accounts.list_users(cursor=cursor, limit=2)
    assert end is None
    everyone = {u.account: u.role for u in first + rest}
    assert everyone == {"anna": Role.USER, "andrew": Role.USER, "bert": Role.ADMIN}
    assert sorted(u.account for u in accounts.list_users(query="AN")[0]) == ["andrew", "anna"]
    assert accounts.list_users(query='a" or "') == ([], None)  # cannot break the filter


# -- sign-up only through the platform -----------------------------------------------------


def test_the_pool_admits_no_self_sign_up_and_register_still_works(
    accounts: CognitoAccounts, client: Any
) -> None:
    """The pool the platform makes (as the stack's, tests/infra) allows admin-created users
    only; registering goes through AdminCreateUser with a permanent password, so the user
    can sign in at once and was never in FORCE_CHANGE_PASSWORD when it returned."""
    pool = client.describe_user_pool(UserPoolId=accounts.user_pool_id)["UserPool"]
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    user = accounts.register("frank", "password1", name="Frank")
    raw = client.admin_get_user(UserPoolId=accounts.user_pool_id, Username="frank")
    assert raw["UserStatus"] == "CONFIRMED"
    attributes = {a["Name"]: a["Value"] for a in raw["UserAttributes"]}
    assert attributes["sub"] == user.id and attributes["name"] == "Frank"
    assert accounts.login("frank", "password1")[1].id == user.id


def test_a_password_cognito_refuses_leaves_no_account_behind(client: Any) -> None:
    """AdminCreateUser succeeded, setting the permanent password did not: the user is
    deleted again, so the name is free and no unusable account remains."""
    pool_id, client_id = create_user_pool(client, "strict-digits")
    client.update_user_pool(
        UserPoolId=pool_id,
        Policies={
            "PasswordPolicy": {
                "MinimumLength": 8,
                "RequireNumbers": True,
                "RequireSymbols": False,
                "RequireUppercase": False,
                "RequireLowercase": False,
            }
        },
        AdminCreateUserConfig={"AllowAdminCreateUserOnly": True},
    )
    accounts = CognitoAccounts(client, pool_id, client_id)
    counted = Counted(client)
    with pytest.raises(InvalidInput):
        accounts.register("grace", "no digits here")
    assert counted.calls == ["AdminCreateUser", "AdminSetUserPassword", "AdminDeleteUser"]
    assert client.list_users(UserPoolId=pool_id)["Users"] == []
    assert accounts.register("grace", "digits 123").account == "grace"


# -- revocation: tokens re-checked with Cognito at most once a minute ----------------------


class Clock:
    """Wall-clock seconds that move only when a test says so."""

    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def container(accounts: CognitoAccounts, clock: Clock) -> CognitoAccounts:
    """Another Lambda container of the same API: same pool, its own token checks."""
    return CognitoAccounts(accounts.client, accounts.user_pool_id, accounts.client_id, clock=clock)


def test_a_token_is_checked_with_cognito_once_a_minute(
    accounts: CognitoAccounts, client: Any
) -> None:
    clock = Clock()
    api = container(accounts, clock)
    accounts.register("alice", "password1")
    token, _ = accounts.login("alice", "password1")
    counted = Counted(client)
    assert api.authenticate(token) is not None
    assert counted.calls == ["GetUser", "AdminListGroupsForUser"]
    clock.now += 59
    assert api.authenticate(token) is not None
    assert counted.calls == ["GetUser", "AdminListGroupsForUser"]  # still the same check
    clock.now += 2
    assert api.authenticate(token) is not None
    assert counted.calls == ["GetUser", "AdminListGroupsForUser"] * 2
    assert api.authenticate("not-a-token") is None
    assert api.authenticate("not-a-token") is None  # a refusal is remembered too
    assert counted.calls.count("GetUser") == 3


def test_after_logout_every_container_refuses_the_token_within_a_minute(
    accounts: CognitoAccounts,
) -> None:
    clock = Clock()
    here, there = container(accounts, clock), container(accounts, clock)
    accounts.register("alice", "password1")
    token, _ = here.login("alice", "password1")
    other_session, _ = here.login("alice", "password1")
    assert there.authenticate(token) is not None  # checked, trusted for a minute
    here.logout(token)
    assert here.authenticate(token) is None  # the container that signed out: at once
    assert here.authenticate(other_session) is None  # GlobalSignOut ends every session
    clock.now += 30
    assert there.authenticate(token) is not None  # another container: its check stands...
    clock.now += 31
    assert there.authenticate(token) is None  # ... for a minute at most


def test_removal_from_admin_takes_effect_within_a_minute(
    accounts: CognitoAccounts, client: Any
) -> None:
    clock = Clock()
    api = container(accounts, clock)
    accounts.register("root", "password1")
    accounts.make_admin("root")
    token, _ = accounts.login("root", "password1")
    seen = api.authenticate(token)
    assert seen is not None and seen.role is Role.ADMIN
    client.admin_remove_user_from_group(
        UserPoolId=accounts.user_pool_id, Username="root", GroupName="admin"
    )
    clock.now += 59
    assert api.authenticate(token).role is Role.ADMIN  # type: ignore[union-attr]
    clock.now += 2
    after = api.authenticate(token)
    assert after is not None and after.role is Role.USER


def test_make_admin_is_seen_at_once_by_the_container_that_made_it(
    accounts: CognitoAccounts,
) -> None:
    accounts.register("alice", "password1")
    token, user = accounts.login("alice", "password1")
    assert user.role is Role.USER and accounts.authenticate(token).role is Role.USER  # type: ignore[union-attr]
    accounts.make_admin("alice")
    assert accounts.authenticate(token).role is Role.ADMIN  # type: ignore[union-attr]


def test_a_deleted_user_is_refused_within_a_minute(accounts: CognitoAccounts, client: Any) -> None:
    clock = Clock()
    api = container(accounts, clock)
    accounts.register("alice", "password1")
    token, _ = accounts.login("alice", "password1")
    assert api.authenticate(token) is not None
    client.admin_delete_user(UserPoolId=accounts.user_pool_id, Username="alice")
    clock.now += 61
    assert api.authenticate(token) is None


class ExpiringTokenClient:
    """GetUser for a token moto did not issue: answers as Cognito would for a live one."""

    def __init__(self) -> None:
        self.calls = 0

    def get_user(self, AccessToken: str) -> dict[str, Any]:
        self.calls += 1
        return {"Username": "alice", "UserAttributes": [{"Name": "sub", "Value": "s-1"}]}

    def admin_list_groups_for_user(self, **_: Any) -> dict[str, Any]:
        return {"Groups": []}


def jwt_expiring_at(exp: float) -> str:
    import base64
    import json

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part({'sub': 's-1', 'exp': int(exp)})}.sig"


def test_a_check_is_never_trusted_past_the_tokens_expiry() -> None:
    clock, fake = Clock(), ExpiringTokenClient()
    accounts = CognitoAccounts(fake, "p", "c", clock=clock)
    token = jwt_expiring_at(clock.now + 10)
    assert accounts.authenticate(token) is not None and fake.calls == 1
    clock.now += 5
    assert accounts.authenticate(token) is not None and fake.calls == 1
    clock.now += 6  # past exp, well inside a minute: asked again
    accounts.authenticate(token)
    assert fake.calls == 2


# -- the caller behind API Gateway --------------------------------------------------------


def access_claims(token: str) -> dict[str, Any]:
    import base64
    import json

    payload = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))))


def test_gateway_claims_count_only_with_their_own_live_token(accounts: CognitoAccounts) -> None:
    accounts.register("alice", "password1")
    accounts.register("bobby", "password1")
    alice, _ = accounts.login("alice", "password1")
    bob, _ = accounts.login("bobby", "password1")
    seen = accounts.user_from_gateway(access_claims(alice), alice)
    assert seen is not None and seen.account == "alice"
    assert accounts.user_from_gateway(access_claims(alice), None) is None
    assert accounts.user_from_gateway(access_claims(alice), bob) is None  # not its token
    accounts.logout(alice)
    assert accounts.user_from_gateway(access_claims(alice), alice) is None


def test_gateway_claims_do_not_make_an_admin(accounts: CognitoAccounts) -> None:
    """The role comes from the group as it is now, not from the token's cognito:groups."""
    accounts.register("alice", "password1")
    token, _ = accounts.login("alice", "password1")
    claims = {**access_claims(token), "cognito:groups": ["admin"]}
    seen = accounts.user_from_gateway(claims, token)
    assert seen is not None and seen.role is Role.USER
