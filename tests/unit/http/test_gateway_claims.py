"""Reading the API Gateway authorizer claims out of Lambda Web Adapter's request context."""

from __future__ import annotations

import json

import pytest

from zerocode.accounts.service import Role, Unauthenticated
from zerocode.adapters.aws.cognito_accounts import CognitoAccounts
from zerocode.gateway import (
    REQUEST_CONTEXT,
    authorization_token,
    behind_gateway,
    gateway_claims,
)


def context(value: object) -> dict[str, str]:
    return {REQUEST_CONTEXT: value if isinstance(value, str) else json.dumps(value)}


def test_claims_are_read_from_the_authorizer() -> None:
    claims = {"sub": "s-1", "cognito:username": "alice"}
    assert gateway_claims(context({"authorizer": {"claims": claims}})) == claims


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "not json",
        "null",
        "[]",
        json.dumps({"authorizer": None}),
        json.dumps({"authorizer": {"claims": {}}}),
        json.dumps({"authorizer": {"claims": "x"}}),
        json.dumps({"requestId": "r", "identity": {"sourceIp": "1.2.3.4"}}),
    ],
)
def test_no_claims_means_no_caller(raw: str) -> None:
    assert gateway_claims(context(raw)) is None
    assert gateway_claims({}) is None


def test_claims_become_a_user_with_the_role_of_its_groups() -> None:
    accounts = CognitoAccounts(client=None, user_pool_id="p", client_id="c")
    user = accounts.user_from_claims(
        {"sub": "s-1", "cognito:username": "alice", "cognito:groups": "[editors admin]"}
    )
    assert (user.id, user.account, user.role) == ("s-1", "alice", Role.ADMIN)
    access = accounts.user_from_claims({"sub": "s-2", "username": "bob"})  # an access token
    assert (access.account, access.role) == ("bob", Role.USER)
    with pytest.raises(Unauthenticated):
        accounts.user_from_claims({"cognito:username": "no-sub"})


@pytest.mark.parametrize(
    ("trust", "environ", "believed"),
    [
        (True, {"AWS_LAMBDA_FUNCTION_NAME": "ZerocodeStack-Api"}, True),
        (True, {}, False),  # zerocode serve with the function's settings copied
        (True, {"AWS_LAMBDA_FUNCTION_NAME": ""}, False),
        (False, {"AWS_LAMBDA_FUNCTION_NAME": "ZerocodeStack-BuildEvents"}, False),
        (False, {}, False),  # zerocode serve
    ],
)
def test_the_header_is_believed_only_under_lambda_with_the_setting(
    *, trust: bool, environ: dict[str, str], believed: bool
) -> None:
    assert behind_gateway(trust_claims=trust, environ=environ) is believed


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc.def.ghi", "abc.def.ghi"),
        ("bearer  abc.def.ghi ", "abc.def.ghi"),
        ("abc.def.ghi", "abc.def.ghi"),  # the bare token a Cognito authorizer also takes
        ("", None),
        ("Bearer ", None),
    ],
)
def test_the_token_the_authorizer_checked(header: str, token: str | None) -> None:
    assert authorization_token({"authorization": header} if header else {}) == token
