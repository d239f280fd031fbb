"""The data function as AWS runs it (zerocode/entrypoints/lambda_data_api.py), on moto: the
app-data and pointer tables, the rate limiter's table and the origin secret in Secrets
Manager. Requests carry what CloudFront adds (the secret, the viewer's host and address);
the function believes none of it without the secret, and refuses before reading anything."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from starlette.testclient import TestClient

from tests.integration.bootstrap.test_aws_mode import ClientSpy
from zerocode.adapters.dynamodb.app_data import create_app_data_table
from zerocode.adapters.dynamodb.build_models import DynamoBuildModels
from zerocode.adapters.dynamodb.lease import create_leases_table
from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
from zerocode.adapters.model.offline.data_apps import NOTES_MODEL
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints.lambda_data_api import (
    ORIGIN_SECRET,
    VIEWER_ADDRESS,
    VIEWER_HOST,
    create_data_app,
    data_site,
)
from zerocode.publishing.pointers import SiteTarget

SECRET = "s" * 48
DOMAIN = "sites.example.com"
SITE, PREVIEW = f"deploykey1.{DOMAIN}", f"p-previewkey1.{DOMAIN}"
NOTES = NOTES_MODEL  # the offline model's notes app: sign-in, owner rules


@pytest.fixture
def settings(aws: None) -> Settings:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    create_app_data_table(ddb, "t-app-data")
    create_pointers_table(ddb, "t-pointers")
    create_leases_table(ddb, "t-leases")
    arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
        Name="t-origin", SecretString=SECRET
    )["ARN"]
    pointers = DynamoPointerStore(ddb, "t-pointers")
    pointers.point("site:deploykey1", SiteTarget("app1", "b1"))
    pointers.point("preview:previewkey1", SiteTarget("app1", "b1"))
    DynamoBuildModels(ddb, "t-app-data").put("app1", "b1", json.dumps(NOTES).encode())
    return Settings(
        mode="aws",
        app_data_table="t-app-data",
        pointers_table="t-pointers",
        leases_table="t-leases",
        data_origin_secret_arn=arn,
        sites_url=f"https://{DOMAIN}",
        sites_domain=DOMAIN,
        data_rate_visitor=20,
    )


@pytest.fixture
def function(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    spy = ClientSpy(monkeypatch)
    with TestClient(
        create_data_app(data_site(settings)), base_url="https://abc.lambda-url.us-east-1.on.aws"
    ) as client:
        yield client
    assert set(spy.services) <= {"dynamodb", "secretsmanager"}  # nothing else is reachable


def via_cloudfront(host: str, address: str = "198.51.100.10:46532", **more: str) -> dict[str, str]:
    return {ORIGIN_SECRET: SECRET, VIEWER_HOST: host, VIEWER_ADDRESS: address, **more}


def changing(host: str, **more: str) -> dict[str, str]:
    return via_cloudfront(host, origin=f"https://{host}", **more)


def test_without_cloudfronts_secret_nothing_is_believed_or_read(function: TestClient) -> None:
    for headers in (
        {VIEWER_HOST: SITE},
        {ORIGIN_SECRET: "s" * 47, VIEWER_HOST: SITE},
        {ORIGIN_SECRET: "", VIEWER_HOST: SITE},
    ):
        refused = function.get("/_api/auth/me", headers=headers)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert function.get("/_api/client.js").status_code == 403
    assert function.get("/_health").text == "ok"


def test_end_users_keep_their_own_notes_in_each_space(function: TestClient) -> None:
    ada_up = function.post(
        "/_api/auth/signup",
        headers=changing(SITE),
        json={"username": "ada", "password": "a long password"},
    )
    assert ada_up.status_code == 201
    cookie = ada_up.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" in cookie
    ada = {"cookie": cookie.split(";")[0]}
    function.cookies.clear()  # each request below says whose it is
    made = function.post(
        "/_api/data/notes", headers=changing(SITE, **ada), json={"title": "Buy flour"}
    )
    assert made.status_code == 201
    listed = function.get("/_api/data/notes", headers=via_cloudfront(SITE, **ada)).json()
    assert [n["title"] for n in listed["records"]] == ["Buy flour"]
    bob_up = function.post(
        "/_api/auth/signup",
        headers=changing(SITE),
        json={"username": "bob", "password": "another password"},
    )
    bob = {"cookie": bob_up.headers["set-cookie"].split(";")[0]}
    function.cookies.clear()
    assert function.get("/_api/data/notes", headers=via_cloudfront(SITE, **bob)).json() == {
        "records": [],
        "cursor": None,
    }
    note = f"/_api/data/notes/{made.json()['id']}"
    assert function.get(note, headers=via_cloudfront(SITE, **bob)).status_code == 404
    assert function.delete(note, headers=changing(SITE, **bob)).status_code == 404
    assert function.get("/_api/data/notes", headers=via_cloudfront(SITE)).status_code == 401
    # Ada's cookie is nobody's at the preview (another space), and the preview seeds nothing.
    me = function.get("/_api/auth/me", headers=via_cloudfront(PREVIEW, **ada)).json()
    assert me == {"user": None}
    preview_up = function.post(
        "/_api/auth/signup",
        headers=changing(PREVIEW),
        json={"username": "ada", "password": "a long password"},
    )
    assert "SameSite=None" in preview_up.headers["set-cookie"]
    assert "Partitioned" in preview_up.headers["set-cookie"]


def test_the_viewer_is_cloudfronts_not_the_requests(function: TestClient) -> None:
    # The Host a caller sent is the function URL's; only CloudFront's header names the app.
    nobody = function.get("/_api/auth/me", headers={ORIGIN_SECRET: SECRET, "host": SITE})
    assert nobody.status_code == 404 and nobody.json()["error"]["code"] == "no_backend"
    forged = function.post(
        "/_api/auth/signup",
        headers=via_cloudfront(SITE, origin="https://evil.example"),
        json={"username": "eve", "password": "a long password"},
    )
    assert forged.status_code == 403 and forged.json()["error"]["code"] == "cross_site"
    unknown = function.get("/_api/auth/me", headers=via_cloudfront(f"nosuchkey1.{DOMAIN}"))
    assert unknown.status_code == 404


def test_rate_limits_count_each_viewer_address_in_the_shared_limiter(
    function: TestClient,
) -> None:
    for _ in range(20):
        ok = function.get("/_api/auth/me", headers=via_cloudfront(SITE, "203.0.113.7:1000"))
        assert ok.status_code == 200
    limited = function.get("/_api/auth/me", headers=via_cloudfront(SITE, "203.0.113.7:2000"))
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    other = function.get("/_api/auth/me", headers=via_cloudfront(SITE, "2001:db8::1:2000"))
    assert other.status_code == 200  # another viewer; its IPv6 address is parsed whole
