"""The API in AWS mode on moto: Cognito accounts, the caller from API Gateway authorizer
claims (as Lambda Web Adapter forwards them), DynamoDB apps, leases, rate limits and pending
deletions, S3 workspaces. The ASGI app is the one the Lambda function serves."""

from __future__ import annotations

import base64
import io
import json
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from typing import Any, cast

import boto3
import pytest
from fastapi.testclient import TestClient

from tests.integration.publishing.test_vue_template_builds import created_files
from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder
from zerocode.adapters.aws.cognito_accounts import create_user_pool
from zerocode.adapters.dynamodb.app_data import create_app_data_table
from zerocode.adapters.dynamodb.apps import create_apps_table
from zerocode.adapters.dynamodb.builds import create_builds_table
from zerocode.adapters.dynamodb.checks import create_checks_table
from zerocode.adapters.dynamodb.deletions import create_deletions_table
from zerocode.adapters.dynamodb.display import create_display_table
from zerocode.adapters.dynamodb.lease import create_leases_table
from zerocode.adapters.dynamodb.transcript import create_transcript_table
from zerocode.adapters.dynamodb.turn_log import create_turn_events_table
from zerocode.adapters.dynamodb.usage import create_usage_table
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.adapters.model.openai import OpenAIChatModel
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.publisher import SqlitePublisher
from zerocode.bootstrap import aws_parts, parts, wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.data.records import new_record
from zerocode.entrypoints import build_events, cli
from zerocode.gateway import REQUEST_CONTEXT
from zerocode.http.app import create_app
from zerocode.publishing.preview_covers import PNG_MAGIC

PASSWORD = "correct horse battery"


@pytest.fixture
def aws_settings(aws: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """AWS mode as the API function runs it: ZEROCODE_TRUST_GATEWAY_CLAIMS (which the stack
    sets on that function only) in a Lambda runtime (AWS_LAMBDA_FUNCTION_NAME)."""
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "ZerocodeStack-Api")
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    cognito = boto3.client("cognito-idp", region_name="us-east-1")
    create_transcript_table(ddb, "t-transcript")
    create_display_table(ddb, "t-display")
    create_apps_table(ddb, "t-apps")
    create_leases_table(ddb, "t-leases")
    create_deletions_table(ddb, "t-deletions")
    create_builds_table(ddb, "t-builds")
    create_turn_events_table(ddb, "t-turn-events")  # no cache here: turns log to DynamoDB
    create_checks_table(ddb, "t-checks")
    create_app_data_table(ddb, "t-app-data")
    create_usage_table(ddb, "t-usage")
    s3.create_bucket(Bucket="t-workspaces")
    s3.create_bucket(Bucket="t-payloads")
    pool, app_client = create_user_pool(cognito, "zerocode-aws-mode")
    return Settings(
        mode="aws",
        transcript_table="t-transcript",
        display_table="t-display",
        apps_table="t-apps",
        leases_table="t-leases",
        deletions_table="t-deletions",
        builds_table="t-builds",
        turn_events_table="t-turn-events",
        checks_table="t-checks",
        app_data_table="t-app-data",
        usage_table="t-usage",
        workspace_bucket="t-workspaces",
        payload_bucket="t-payloads",
        cognito_user_pool_id=pool,
        cognito_client_id=app_client,
        rate_chat=3,
        npm_cache_dir=tmp_path / "npm",
        trust_gateway_claims=True,
    )


@pytest.fixture
def platform(aws_settings: Settings, tmp_path: Any, local_builder: LocalBuilder) -> Platform:
    """AWS mode as configured, except two parts moto cannot stand in for: the builder
    (CodeBuild) builds locally, and site pointers (CloudFront KeyValueStore, which moto has
    no data plane for; its adapter is tested with botocore Stubber) live in SQLite."""
    return wiring.platform(
        aws_settings,
        builder=local_builder,
        publisher=SqlitePublisher(SqliteDatabase(tmp_path / "pointers.db")),
    )


@pytest.fixture
def client(platform: Platform) -> Iterator[TestClient]:
    with TestClient(create_app(platform), base_url="https://api.example") as c:
        yield c


def gateway(token: str) -> dict[str, str]:
    """What reaches the function for a request the gateway's Cognito authorizer let through
    with this token, as Lambda Web Adapter forwards it: the verified claims (every value a
    string) in the request context, and the Authorization header the client sent."""
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    flat = {k: ",".join(v) if isinstance(v, list) else str(v) for k, v in claims.items()}
    context = {"requestId": "r-1", "stage": "prod", "authorizer": {"claims": flat}}
    return {REQUEST_CONTEXT: json.dumps(context), "Authorization": f"Bearer {token}"}


def sign_up(client: TestClient, account: str) -> str:
    assert (
        client.post(
            "/api/users/register", json={"account": account, "password": PASSWORD}
        ).status_code
        == 201
    )
    answer = client.post("/api/users/login", json={"account": account, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    client.cookies.clear()  # each request below names its caller explicitly
    return str(answer.json()["token"])


def create_html_app(client: TestClient, token: str) -> dict[str, Any]:
    made = client.post(
        "/api/apps",
        headers=gateway(token),
        json={"initPrompt": "A page about otters", "codeGenType": "html"},
    )
    assert made.status_code == 201, made.text
    return dict(made.json())


def test_the_caller_comes_from_the_authorizer_claims(
    client: TestClient, platform: Platform
) -> None:
    token = sign_up(client, "alice")
    me = client.get("/api/users/me", headers=gateway(token))
    assert me.status_code == 200, me.text
    claims_sub = json.loads(gateway(token)[REQUEST_CONTEXT])["authorizer"]["claims"]["sub"]
    assert me.json()["account"] == "alice" and me.json()["id"] == claims_sub
    # Routes the gateway leaves open (e.g. listing, public for featured) still know the
    # caller from the bearer token, checked with Cognito.
    mine = client.get("/api/apps", headers={"Authorization": f"Bearer {token}"})
    assert mine.status_code == 200 and mine.json()["apps"] == []
    assert client.get("/api/users/me").status_code == 401
    assert client.get("/api/apps").status_code == 401
    assert client.get("/api/apps?scope=featured").status_code == 200


def test_a_turn_in_aws_mode_writes_dynamodb_and_s3(client: TestClient, platform: Platform) -> None:
    token = sign_up(client, "alice")
    app = create_html_app(client, token)
    with client.stream(
        "POST",
        f"/api/apps/{app['id']}/chat",
        headers=gateway(token),
        json={"message": "Make a page about otters"},
    ) as streamed:
        assert streamed.status_code == 200
        body = "".join(streamed.iter_text())
    done = json.loads(
        [line for line in body.splitlines() if line.startswith("data:")][-1].removeprefix("data:")
    )
    assert done["status"] == "succeeded", body
    # Each model request is in the usage ledger's table, as done says (issue 43).
    assert platform.engine.usage is not None
    kept = platform.engine.usage.of_turn(app["id"], done["turn"])
    assert len(kept) == done["usage"]["requests"] >= 1
    assert sum(k.input_tokens for k in kept) == done["usage"]["inputTokens"]
    (day,) = platform.engine.usage.days("app", app["id"], kept[0].day, kept[0].day)
    (named,) = platform.engine.usage.of_turn(app["id"], 0)  # its creation named it
    assert day.requests == len(kept) + 1 and named.model and not named.estimated
    files = client.get(f"/api/apps/{app['id']}/files", headers=gateway(token)).json()["files"]
    assert "index.html" in [f["path"] for f in files]
    s3 = boto3.client("s3", region_name="us-east-1")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="t-workspaces")["Contents"]]
    assert f"workspaces/{app['id']}/index.html" in keys
    history = client.get(f"/api/apps/{app['id']}/history", headers=gateway(token)).json()
    assert [e["role"] for e in history["entries"]] == ["ai", "user"]
    context = client.get(f"/api/apps/{app['id']}/context", headers=gateway(token)).json()
    # The answer, then the note on what its checks block did (kept in the checks table).
    assert context["messages"][-2]["role"] == "assistant"
    assert context["messages"][-1]["content"].startswith("[zerocode checks:")


def test_other_users_and_anonymous_callers_cannot_reach_an_app(client: TestClient) -> None:
    alice, bob = sign_up(client, "alice"), sign_up(client, "bobby")
    app = create_html_app(client, alice)
    for path in ("", "/history", "/context", "/files", "/download"):
        assert (
            client.get(f"/api/apps/{app['id']}{path}", headers=gateway(bob)).status_code == 404
        ), path
        assert client.get(f"/api/apps/{app['id']}{path}").status_code == 401, path
    assert client.get(f"/api/apps/{app['id']}", headers=gateway(alice)).status_code == 200


def test_admins_are_the_cognito_admin_group_and_the_cli_makes_them(
    client: TestClient,
    aws_settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    alice = sign_up(client, "alice")
    app = create_html_app(client, alice)
    for key, value in aws_settings.model_dump(mode="json").items():
        if value is not None and key in {"mode", "cognito_user_pool_id", "cognito_client_id"}:
            monkeypatch.setenv(f"ZEROCODE_{key.upper()}", str(value))
    monkeypatch.setattr(sys, "stdin", io.StringIO(PASSWORD + "\n"))
    assert cli.main(["admin", "create", "root.admin", "--password-stdin"]) == 0
    assert "root.admin is an admin" in capsys.readouterr().out

    admin = client.post(
        "/api/users/login", json={"account": "root.admin", "password": PASSWORD}
    ).json()["token"]
    client.cookies.clear()
    assert client.get("/api/admin/users", headers=gateway(alice)).status_code == 403
    listed = client.get("/api/admin/users", headers=gateway(admin))
    assert listed.status_code == 200, listed.text
    roles = {u["account"]: u["role"] for u in listed.json()["users"]}
    assert roles == {"alice": "user", "root.admin": "admin"}
    found = client.get("/api/admin/users?q=ro", headers=gateway(admin)).json()["users"]
    assert [u["account"] for u in found] == ["root.admin"]
    apps = client.get("/api/admin/apps", headers=gateway(admin)).json()["apps"]
    assert [(a["id"], a["owner"]) for a in apps] == [(app["id"], app_owner(client, alice))]
    featured = client.patch(
        f"/api/admin/apps/{app['id']}", headers=gateway(admin), json={"priority": 99}
    )
    assert featured.status_code == 200
    public = client.get("/api/apps?scope=featured").json()["apps"]
    assert [a["id"] for a in public] == [app["id"]]


def app_owner(client: TestClient, token: str) -> str:
    return str(client.get("/api/users/me", headers=gateway(token)).json()["id"])


def test_rate_limits_are_shared_through_dynamodb(client: TestClient) -> None:
    token = sign_up(client, "alice")
    app = create_html_app(client, token)
    statuses = []
    for _ in range(4):
        answer = client.post(
            f"/api/apps/{app['id']}/chat",
            headers=gateway(token),
            json={"message": "Change the title"},
        )
        statuses.append(answer.status_code)
    assert statuses == [200, 200, 200, 429]
    assert int(answer.headers["Retry-After"]) >= 1
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    sub = app_owner(client, token)
    item = ddb.get_item(TableName="t-leases", Key={"key": {"S": f"chat:{sub}"}})
    assert "Item" in item  # the log lives in DynamoDB, so every container sees it


def test_deleting_an_app_removes_it_everywhere(client: TestClient, platform: Platform) -> None:
    token = sign_up(client, "alice")
    app = create_html_app(client, token)
    client.post(
        f"/api/apps/{app['id']}/chat",
        headers=gateway(token),
        json={"message": "Make a page about otters"},
    )
    assert platform.memory.units(app["id"])
    keep_app_data(platform, app["id"])
    assert client.delete(f"/api/apps/{app['id']}", headers=gateway(token)).status_code == 204
    assert client.get(f"/api/apps/{app['id']}", headers=gateway(token)).status_code == 404
    assert platform.memory.units(app["id"]) == []
    assert platform.display.page(app["id"]).entries == []
    s3 = boto3.client("s3", region_name="us-east-1")
    assert s3.list_objects_v2(Bucket="t-workspaces").get("KeyCount") == 0
    assert platform.deletions.pending() == []
    assert app_data_of(app["id"]) == []
    # The app's part of the usage ledger is gone; its owner's days keep what was spent.
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    usage = ddb.scan(TableName="t-usage")["Items"]  # a test may scan
    assert not [i for i in usage if app["id"] in i["pk"]["S"]]
    assert [i for i in usage if i["pk"]["S"].startswith("account#")]


def keep_app_data(platform: Platform, app_id: str) -> None:
    """Records, an end user with a session and a build model in both spaces, on DynamoDB."""
    backend = platform.backend
    assert backend is not None
    for space in ("preview", "live"):
        backend.records.create(app_id, space, "notes", new_record(None, {"t": space}), 10)
        backend.end_users.sign_up(
            app_id, space, {"username": "ada", "password": "a long password"}, None
        )
    backend.build_models.put(app_id, "b1", b'{"collections": {}}')
    assert len(app_data_of(app_id)) == 2 * (2 + 3 + 1) + 1  # record+count, user x2+count+session


def app_data_of(app_id: str) -> list[str]:
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    items = ddb.scan(TableName="t-app-data")["Items"]  # a test may scan
    return [i["key"]["S"] for i in items if i["scope"]["S"].startswith(f"{app_id}#")]


def test_logout_revokes_the_token(client: TestClient) -> None:
    token = sign_up(client, "alice")
    bearer = {"Authorization": f"Bearer {token}"}
    assert client.post("/api/users/logout", headers=bearer).status_code == 204
    assert client.get("/api/users/me", headers=bearer).status_code == 401


def test_aws_mode_refuses_to_start_without_its_settings(aws: None) -> None:
    with pytest.raises(RuntimeError, match="ZEROCODE_WORKSPACE_BUCKET"):
        wiring.platform(Settings(mode="aws"))


@pytest.fixture
def remote(aws_settings: Settings, tmp_path: Any) -> Platform:
    """AWS mode with its CodeBuild builder (moto; moto does not run the build, so tests put
    the artifact CodeBuild would upload). Site pointers live in SQLite (see ``platform``)."""
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="t-builds")
    boto3.client("codebuild", region_name="us-east-1").create_project(
        name="t-project",
        source={"type": "S3", "location": "t-builds/sources/none.zip"},
        artifacts={"type": "S3", "location": "t-builds"},
        environment={
            "type": "ARM_CONTAINER",
            "image": "aws/codebuild/amazonlinux2-aarch64-standard:3.0",
            "computeType": "BUILD_GENERAL1_SMALL",
        },
        serviceRole="arn:aws:iam::123456789012:role/t-codebuild",
    )
    settings = aws_settings.model_copy(
        update={
            "codebuild_project": "t-project",
            "builds_bucket": "t-builds",
            "build_data_role_arn": "arn:aws:iam::123456789012:role/t-build-data",
            "build_role_id": "AROATBUILDPROJECT01",
            # moto's CodeBuild sends no events (no build_events runs here): ask it at once.
            "build_fallback_seconds": 1,
        }
    )
    return wiring.platform(
        settings, publisher=SqlitePublisher(SqliteDatabase(tmp_path / "pointers.db"))
    )


def build_event(build: dict[str, Any], app_id: str, status: str = "SUCCEEDED") -> dict[str, Any]:
    """The EventBridge event CodeBuild sends when a build finishes (trimmed to what counts)."""
    return {
        "version": "0",
        "source": "aws.codebuild",
        "detail-type": "CodeBuild Build State Change",
        "detail": {
            "build-status": status,
            "project-name": "t-project",
            "build-id": f"arn:aws:codebuild:us-east-1:123456789012:build/{build['id']}",
            "additional-information": {
                "environment": {
                    "environment-variables": [
                        {"name": "ZEROCODE_APP_ID", "value": app_id, "type": "PLAINTEXT"},
                        {"name": "ZEROCODE_BUILD_ID", "value": build["id"], "type": "PLAINTEXT"},
                    ]
                }
            },
        },
    }


def vue_app(client: TestClient, remote: Platform, token: str) -> dict[str, Any]:
    made = client.post(
        "/api/apps",
        headers=gateway(token),
        json={"initPrompt": "A Vue todo list", "codeGenType": "vue_project"},
    )
    assert made.status_code == 201, made.text
    for path, content in created_files("A Vue todo list").items():
        remote.workspace.write(made.json()["id"], path, content.encode())
    return dict(made.json())


def archive_of(files: dict[str, bytes], beside: dict[str, bytes] | None = None) -> bytes:
    """The one tar a build hands back: the site under ``out/dist/``; ``beside``: files of
    ``out/`` itself (the screenshot, ``cover.png``)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("out", "out/dist"):
            entry = tarfile.TarInfo(name)
            entry.type = tarfile.DIRTYPE
            tar.addfile(entry)
        found = {f"dist/{name}": data for name, data in files.items()} | (beside or {})
        for name, data in found.items():
            entry = tarfile.TarInfo(f"out/{name}")
            entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


def upload_artifact(app_id: str, build_id: str, html: str) -> None:
    """What a build hands back by its output POST when it succeeded."""
    boto3.client("s3", region_name="us-east-1").put_object(
        Bucket="t-builds",
        Key=f"staging/{app_id}/{build_id}.tar",
        Body=archive_of({"index.html": html.encode()}),
    )


def play_builds_at_start(platform: Platform, cover: bytes | None = None) -> None:
    """moto's CodeBuild runs nothing (and says SUCCEEDED when asked): play each build as
    it starts, as an html build's box would, handing back the source's own files (and
    ``cover`` as its screenshot). The real box runs in
    tests/integration/adapters/test_buildbox.py and the AWS e2e."""
    builder = platform.publishing.builder
    assert isinstance(builder, CodeBuildBuilder)

    put = builder.sources.put

    def play(runner: str, app_id: str, build_id: str, sent: dict[str, bytes]) -> None:
        put(runner, app_id, build_id, sent)  # the platform puts the source, then the box runs
        key = builder.sources.key(runner, app_id, build_id)
        zipped = builder.s3.get_object(Bucket="t-builds", Key=key)["Body"].read()
        with zipfile.ZipFile(io.BytesIO(zipped)) as source:
            files = {n: source.read(n) for n in source.namelist() if not n.startswith(".zerocode/")}
        handed = archive_of(files, {"cover.png": cover} if cover else None)
        builder.s3.put_object(
            Bucket="t-builds", Key=builder.staging_key(app_id, build_id), Body=handed
        )

    builder.sources.put = play  # type: ignore[method-assign,assignment]


def test_deploys_on_codebuild_finish_through_build_events(remote: Platform) -> None:
    with TestClient(create_app(remote), base_url="https://api.example") as client:
        token = sign_up(client, "alice")
        app = vue_app(client, remote, token)
        asked = client.post(f"/api/apps/{app['id']}/deploy", headers=gateway(token))
        assert asked.status_code == 202 and asked.json()["state"] == "running"
        first = client.get(
            f"/api/apps/{app['id']}/builds/{asked.json()['buildId']}", headers=gateway(token)
        ).json()
        # moto reports the build SUCCEEDED at once, but nothing was handed back: polling
        # (GET on the build) must not publish a build whose output is missing.
        assert first["state"] == "failed" and "no output" in first["error"]
        assert (
            client.get(f"/api/apps/{app['id']}", headers=gateway(token)).json()["deployBuildId"]
            is None
        )

        # A deploy build says "succeeded" only once its site is published: when the site
        # pointer flips, its record still says running (a client that polls it and then reads
        # the app never sees "succeeded" without the new deployUrl).
        seen: list[str] = []
        point = remote.publishing.publisher.point

        def pointing(name: str, target: Any) -> None:
            found = remote.publishing.builds.get(target.app_id, target.build_id)
            seen.append(found.state.value if found is not None else "none")
            point(name, target)

        remote.publishing.publisher.point = pointing  # type: ignore[method-assign,assignment]
        older = client.post(f"/api/apps/{app['id']}/deploy", headers=gateway(token)).json()
        newer = client.post(f"/api/apps/{app['id']}/deploy", headers=gateway(token)).json()
        assert older["buildId"] < newer["buildId"]
        upload_artifact(app["id"], older["buildId"], "<p>older</p>")
        upload_artifact(app["id"], newer["buildId"], "<p>newer</p>")
        # The newer build's event arrives first, the older one's after it.
        ids = {"id": newer["buildId"]}
        assert build_events.handle(remote.publishing, build_event(ids, app["id"])) == {
            "result": "succeeded",
            "buildId": newer["buildId"],
        }
        ids = {"id": older["buildId"]}
        assert (
            build_events.handle(remote.publishing, build_event(ids, app["id"]))["result"]
            == "succeeded"
        )
        record = client.get(f"/api/apps/{app['id']}", headers=gateway(token)).json()
        assert record["deployBuildId"] == newer["buildId"]  # the newest success stays
        assert seen == ["running"]  # flipped once (the older one was not), before "succeeded"
        pointer = remote.publishing.publisher.target(f"site:{record['deployKey']}")
        assert pointer is not None and pointer.build_id == newer["buildId"]
        # A repeated event changes nothing; events of other projects are ignored.
        assert (
            build_events.handle(remote.publishing, build_event(ids, app["id"]))["result"]
            == "succeeded"
        )
        assert build_events.handle(remote.publishing, {"detail-type": "x"})["result"] == "ignored"
        assert (
            build_events.handle(
                remote.publishing, build_event(ids, app["id"], status="IN_PROGRESS")
            )["result"]
            == "ignored"
        )


def test_html_previews_and_deploys_on_aws_build_in_codebuild_too(remote: Platform) -> None:
    play_builds_at_start(remote)
    with TestClient(create_app(remote), base_url="https://api.example") as client:
        token = sign_up(client, "alice")
        app = create_html_app(client, token)
        turn = client.post(
            f"/api/apps/{app['id']}/chat",
            headers=gateway(token),
            json={"message": "Make a page about otters"},
        )
        assert 'event: done\ndata: {"status":"succeeded"' in turn.text, turn.text
        asked = client.post(f"/api/apps/{app['id']}/deploy", headers=gateway(token)).json()
        assert asked["state"] == "running"  # checked (and covered) in CodeBuild's box
        done = client.get(
            f"/api/apps/{app['id']}/builds/{asked['buildId']}", headers=gateway(token)
        ).json()
        assert done["state"] == "succeeded", done
        record = client.get(f"/api/apps/{app['id']}", headers=gateway(token)).json()
        assert record["deployBuildId"] == asked["buildId"]
        s3 = boto3.client("s3", region_name="us-east-1")
        page = s3.get_object(
            Bucket="t-builds", Key=f"builds/{app['id']}/{asked['buildId']}/index.html"
        )
        assert b"otter" in page["Body"].read().lower()
        preview_key = record["previewUrl"].split("/")[-2]
        preview = remote.publishing.publisher.target(f"preview:{preview_key}")
        assert preview is not None and preview.app_id == app["id"]
        assert client.delete(f"/api/apps/{app['id']}", headers=gateway(token)).status_code == 204
        assert s3.list_objects_v2(Bucket="t-builds").get("KeyCount") == 0


def test_a_preview_cover_on_aws_is_private_to_its_owner_until_a_deploy_has_one(
    remote: Platform,
) -> None:
    """Issue 26, point 7. Each preview build's box takes a screenshot; the builder keeps it
    under preview-covers/ (CloudFront reads only builds/), the app names it, and the API
    serves it to the owner and admins alone. A deploy's cover then takes its place."""
    shot = PNG_MAGIC + b"the box's screenshot"
    play_builds_at_start(remote, cover=shot)
    with TestClient(create_app(remote), base_url="https://api.example") as client:
        token, other = sign_up(client, "alice"), sign_up(client, "mallory")
        app = create_html_app(client, token)
        base = f"/api/apps/{app['id']}"
        turn = client.post(
            f"{base}/chat", headers=gateway(token), json={"message": "Make a page about otters"}
        )
        assert 'event: done\ndata: {"status":"succeeded"' in turn.text, turn.text
        record = client.get(base, headers=gateway(token)).json()
        assert record["cover"] is None and record["previewCover"], record
        built = record["previewCover"].split("build=")[1]
        mine = client.get(record["previewCover"], headers=gateway(token))
        assert mine.status_code == 200 and mine.content == shot
        assert mine.headers["content-type"] == "image/png"
        assert "private" in mine.headers["cache-control"]
        assert client.get(f"{base}/cover", headers=gateway(other)).status_code == 404
        assert client.get(f"{base}/cover").status_code == 401
        s3 = boto3.client("s3", region_name="us-east-1")
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="t-builds").get("Contents", [])]
        assert f"preview-covers/{app['id']}/{built}.png" in keys
        assert not any(k.startswith("builds/") and k.endswith(".png") for k in keys), keys

        asked = client.post(f"{base}/deploy", headers=gateway(token)).json()
        done = client.get(f"{base}/builds/{asked['buildId']}", headers=gateway(token)).json()
        assert done["state"] == "succeeded", done
        deployed = client.get(base, headers=gateway(token)).json()
        assert deployed["cover"] and deployed["cover"].endswith("/__zerocode/cover.png")
        assert deployed["previewCover"] is None  # the deploy's cover is the app's now
        assert client.get(f"{base}/cover", headers=gateway(token)).status_code == 404
        assert client.delete(base, headers=gateway(token)).status_code == 204
        assert s3.list_objects_v2(Bucket="t-builds").get("KeyCount") == 0


class ClientSpy:
    """boto3.client, recording which services an entry point makes clients for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.services: list[str] = []
        self.real = boto3.client
        aws_parts.client.cache_clear()
        monkeypatch.setattr(boto3, "client", self)

    def __call__(self, service: str, *args: Any, **kwargs: Any) -> Any:
        self.services.append(service)
        return self.real(service, *args, **kwargs)


def lambda_environment(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """The function's settings as environment variables, without Cognito's, and with a model
    key secret that does not exist: an entry point that read it would fail."""
    for key, value in settings.model_dump(mode="json").items():
        if value is not None and key.endswith(("_table", "_bucket", "_project", "mode")):
            monkeypatch.setenv(f"ZEROCODE_{key.upper()}", str(value))
    monkeypatch.setenv(
        "ZEROCODE_SITES_KVS_ARN",
        "arn:aws:cloudfront::123456789012:key-value-store/9a0c4f9e-3b5f-4c9e-9d7e-0a1b2c3d4e5f",
    )
    monkeypatch.setenv("ZEROCODE_MODEL_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv(
        "ZEROCODE_MODEL_API_KEY_SECRET_ARN",
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:zc-no-such-key-AbCdEf",
    )
    for name in ("COGNITO_USER_POOL_ID", "COGNITO_CLIENT_ID", "MODEL_API_KEY"):
        monkeypatch.delenv(f"ZEROCODE_{name}", raising=False)


def load_function(name: str) -> Any:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[3] / "functions" / name / "handler.py"
    spec = importlib.util.spec_from_file_location(f"{name}_handler", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_events_function_builds_publishing_alone(
    remote: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No Cognito settings, no readable model key: the function still records and publishes
    a finished build, and never makes a Cognito or Secrets Manager client."""
    with TestClient(create_app(remote), base_url="https://api.example") as client:
        token = sign_up(client, "alice")
        app = vue_app(client, remote, token)
        first = client.post(f"/api/apps/{app['id']}/deploy", headers=gateway(token)).json()
        build = client.post(f"/api/apps/{app['id']}/deploy", headers=gateway(token)).json()
    del first
    upload_artifact(app["id"], build["buildId"], "<p>built</p>")
    lambda_environment(remote.settings, monkeypatch)
    # moto has no KeyValueStore data plane: the function's pointers are the test's SQLite ones.
    monkeypatch.setattr(aws_parts, "kvs_publisher", lambda settings: remote.publishing.publisher)
    spy = ClientSpy(monkeypatch)
    module = load_function("build_events")
    assert module.handler(build_event({"id": "b0000000000000000000"}, "nosuchapp"), None) == {
        "result": "ignored",
        "reason": "no such build (its app was deleted?)",
    }
    assert module.handler(build_event({"id": build["buildId"]}, app["id"]), None) == {
        "result": "succeeded",
        "buildId": build["buildId"],
    }
    assert remote.apps.get(app["id"]).deploy_build_id == build["buildId"]  # type: ignore[union-attr]
    assert set(spy.services) == {"dynamodb", "s3", "codebuild"}
    assert type(module._publishing().builder).__name__ == "CodeBuildBuilder"


def test_the_build_events_function_publishes_through_the_key_value_store(
    remote: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    lambda_environment(remote.settings, monkeypatch)
    publishing = wiring.publishing(Settings())
    assert type(publishing.publisher).__name__ == "KvsPublisher"
    assert not publishing.in_process  # CodeBuild builds; the event finishes them


def test_the_deletion_sweep_function_finishes_pending_deletions(
    remote: Platform, monkeypatch: pytest.MonkeyPatch
) -> None:
    with TestClient(create_app(remote), base_url="https://api.example") as client:
        token = sign_up(client, "alice")
        app = create_html_app(client, token)
        client.post(
            f"/api/apps/{app['id']}/chat",
            headers=gateway(token),
            json={"message": "Make a page about otters"},
        )
    s3 = boto3.client("s3", region_name="us-east-1")
    assert remote.memory.units(app["id"]) and s3.list_objects_v2(Bucket="t-workspaces").get(
        "KeyCount"
    )
    keep_app_data(remote, app["id"])
    remote.deletions.add(app["id"])  # the API died right after recording the deletion
    remote.apps.delete(app["id"])
    lambda_environment(remote.settings, monkeypatch)
    spy = ClientSpy(monkeypatch)
    module = load_function("deletion_sweep")
    assert module.handler({"source": "aws.events"}, None) == {"finished": 1, "pending": 0}
    assert remote.memory.units(app["id"]) == []
    assert remote.display.page(app["id"]).entries == []
    assert s3.list_objects_v2(Bucket="t-workspaces").get("KeyCount") == 0
    assert s3.list_objects_v2(Bucket="t-builds").get("KeyCount") == 0
    assert remote.deletions.pending() == []
    assert app_data_of(app["id"]) == []  # records, end users, sessions and models too
    assert set(spy.services) == {"dynamodb", "s3", "codebuild"}
    assert module.handler({}, None) == {"finished": 0, "pending": 0}


def test_the_model_key_is_read_from_secrets_manager_once_per_container(aws: None) -> None:
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    arn = secrets.create_secret(Name="zc-model-key", SecretString="sk-test-123\n")["ARN"]
    settings = Settings(model_base_url="http://127.0.0.1:9/v1", model_api_key_secret_arn=arn)
    aws_parts.model_api_key.cache_clear()
    assert cast(OpenAIChatModel, parts.chat_model(settings)).client.api_key == "sk-test-123"
    secrets.put_secret_value(SecretId=arn, SecretString="sk-rotated")
    assert (
        cast(OpenAIChatModel, parts.chat_model(settings)).client.api_key == "sk-test-123"
    )  # cached
    aws_parts.model_api_key.cache_clear()  # what a new container sees
    assert cast(OpenAIChatModel, parts.chat_model(settings)).client.api_key == "sk-rotated"
    empty = secrets.create_secret(Name="zc-empty", SecretBinary=b"\x00")["ARN"]
    with pytest.raises(RuntimeError, match="no string value"):
        aws_parts.model_api_key(empty, "us-east-1")
    aws_parts.model_api_key.cache_clear()


# -- whose word the request context header is (issue 16) ----------------------------------


class Clock:
    """Wall-clock seconds that move only when a test says so (token checks use it)."""

    def __init__(self) -> None:
        import time

        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def container(settings: Settings, tmp_path: Any, name: str, clock: Clock | None = None) -> Any:
    """One API process (a Lambda container, or ``zerocode serve``) over the shared moto
    backend, with its own token checks; its clock is ``clock`` when given."""
    from tests.conftest import any_build_sandbox
    from zerocode.adapters.local.toolchain_store import ToolchainStore

    builder = LocalBuilder(
        tmp_path, any_build_sandbox(), ToolchainStore(tmp_path / "toolchain", tmp_path / "npm")
    )
    built = wiring.platform(
        settings,
        builder=builder,
        publisher=SqlitePublisher(SqliteDatabase(tmp_path / f"{name}.db")),
    )
    if clock is not None:
        cast(Any, built.accounts).clock = clock
    return TestClient(create_app(built), base_url="https://api.example")


def forged(sub: str, account: str, groups: str = "admin") -> dict[str, str]:
    """A request context header written by the client itself, claiming to be an admin."""
    claims = {"sub": sub, "username": account, "cognito:groups": groups}
    return {REQUEST_CONTEXT: json.dumps({"authorizer": {"claims": claims}})}


@pytest.mark.parametrize(
    ("trust", "on_lambda"),
    [(False, False), (False, True), (True, False)],
    ids=["serve", "lambda-without-the-setting", "setting-without-lambda"],
)
def test_outside_lambda_web_adapter_the_request_context_header_is_ignored(
    aws_settings: Settings,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    *,
    trust: bool,
    on_lambda: bool,
) -> None:
    """``zerocode serve`` in AWS mode: a forged x-amzn-request-context naming an admin gets
    no one in; the caller is whoever their own token says, with their own role."""
    with container(aws_settings, tmp_path, "setup") as setup:
        alice = sign_up(setup, "alice")
        root = sign_up(setup, "root.admin")
        root_id = app_owner(setup, root)
    wiring.accounts(aws_settings).make_admin("root.admin")
    if not on_lambda:
        monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME")
    settings = aws_settings.model_copy(update={"trust_gateway_claims": trust})
    with container(settings, tmp_path, "serve") as serve:
        assert serve.app.state.platform.gateway_claims is None
        impostor = forged(root_id, "root.admin")
        assert serve.get("/api/admin/users", headers=impostor).status_code == 401
        assert serve.get("/api/users/me", headers=impostor).status_code == 401
        own_token = {**impostor, "Authorization": f"Bearer {alice}"}
        assert serve.get("/api/admin/users", headers=own_token).status_code == 403
        assert serve.get("/api/users/me", headers=own_token).json()["account"] == "alice"
        admin = {"Authorization": f"Bearer {root}"}
        assert serve.get("/api/admin/users", headers=admin).status_code == 200


def test_under_lambda_web_adapter_the_claims_need_their_own_live_token(
    aws_settings: Settings, tmp_path: Any
) -> None:
    with container(aws_settings, tmp_path, "api") as api:
        assert api.app.state.platform.gateway_claims is not None
        alice = sign_up(api, "alice")
        accounts = wiring.accounts(aws_settings)
        accounts.register("root.admin", PASSWORD)
        accounts.make_admin("root.admin")
        root = api.post(
            "/api/users/login", json={"account": "root.admin", "password": PASSWORD}
        ).json()["token"]
        api.cookies.clear()
        assert api.get("/api/admin/users", headers=gateway(root)).status_code == 200
        root_context = gateway(root)[REQUEST_CONTEXT]
        # The admin's claims with someone else's token, or with none: refused.
        mixed = {REQUEST_CONTEXT: root_context, "Authorization": f"Bearer {alice}"}
        assert api.get("/api/admin/users", headers=mixed).status_code == 401
        assert (
            api.get("/api/admin/users", headers={REQUEST_CONTEXT: root_context}).status_code == 401
        )
        # The gateway's Cognito authorizer also takes the bare token, without "Bearer".
        bare = {REQUEST_CONTEXT: root_context, "Authorization": root}
        assert api.get("/api/admin/users", headers=bare).status_code == 200


def test_after_logout_every_container_refuses_the_token_within_a_minute(
    aws_settings: Settings, tmp_path: Any
) -> None:
    """Logout signs the user out globally in Cognito; the container that served it refuses
    the token at once, every other container once its one-minute check runs out (the
    gateway's authorizer alone would let the token through until it expires)."""
    clock = Clock()
    with (
        container(aws_settings, tmp_path, "a", clock) as here,
        container(aws_settings, tmp_path, "b", clock) as there,
    ):
        token = sign_up(here, "alice")
        assert there.get("/api/users/me", headers=gateway(token)).status_code == 200
        assert here.post("/api/users/logout", headers=gateway(token)).status_code == 204
        assert here.get("/api/users/me", headers=gateway(token)).status_code == 401
        clock.now += 30
        assert there.get("/api/users/me", headers=gateway(token)).status_code == 200
        clock.now += 31
        assert there.get("/api/users/me", headers=gateway(token)).status_code == 401
        assert there.get("/api/apps", headers=gateway(token)).status_code == 401


def test_removal_from_the_admin_group_closes_admin_routes_within_a_minute(
    aws_settings: Settings, tmp_path: Any
) -> None:
    """The token still carries cognito:groups [admin] (the authorizer would pass it on for
    its whole hour); the role comes from the group as it is now, re-read every minute."""
    clock = Clock()
    with container(aws_settings, tmp_path, "api", clock) as api:
        sign_up(api, "root.admin")
        wiring.accounts(aws_settings).make_admin("root.admin")
        token = api.post(
            "/api/users/login", json={"account": "root.admin", "password": PASSWORD}
        ).json()["token"]
        api.cookies.clear()
        claims = json.loads(gateway(token)[REQUEST_CONTEXT])["authorizer"]["claims"]
        assert claims["cognito:groups"] == "admin"
        assert api.get("/api/admin/users", headers=gateway(token)).status_code == 200
        boto3.client("cognito-idp", region_name="us-east-1").admin_remove_user_from_group(
            UserPoolId=aws_settings.cognito_user_pool_id,
            Username="root.admin",
            GroupName="admin",
        )
        clock.now += 61
        assert api.get("/api/admin/users", headers=gateway(token)).status_code == 403
        assert api.get("/api/users/me", headers=gateway(token)).json()["role"] == "user"


def test_sign_up_on_cognito_goes_through_the_platforms_door_and_its_limits(
    aws_settings: Settings, tmp_path: Any
) -> None:
    """The pool refuses self sign-up (tests/infra), so registering is the API's: accounts
    are admin-created and confirmed, and the front door's per-address limit holds: past it
    no Cognito user is made."""
    settings = aws_settings.model_copy(update={"rate_login_address": 3})
    source = {REQUEST_CONTEXT: json.dumps({"identity": {"sourceIp": "203.0.113.9"}})}
    cognito = boto3.client("cognito-idp", region_name="us-east-1")
    pool = settings.cognito_user_pool_id
    described = cognito.describe_user_pool(UserPoolId=pool)["UserPool"]
    assert described["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    with container(settings, tmp_path, "api") as api:
        statuses = [
            api.post(
                "/api/users/register",
                headers=source,
                json={"account": f"user{n}", "password": PASSWORD},
            ).status_code
            for n in range(4)
        ]
    assert statuses == [201, 201, 201, 429]
    users = cognito.list_users(UserPoolId=pool)["Users"]
    assert sorted((u["Username"], u["UserStatus"]) for u in users) == [
        (f"user{n}", "CONFIRMED") for n in range(3)
    ]


def test_health_puts_a_probe_item_into_the_leases_table_and_tells_when_it_cannot(
    aws_settings: Settings, tmp_path: Any, local_builder: LocalBuilder
) -> None:
    """AWS has no disk to fill: health's storage probe is a DynamoDB put (issue 29)."""
    platform = wiring.platform(
        aws_settings.model_copy(update={"health_probe_seconds": 0}),
        builder=local_builder,
        publisher=SqlitePublisher(SqliteDatabase(tmp_path / "pointers.db")),
    )
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    with TestClient(create_app(platform), base_url="https://api.example") as client:
        assert client.get("/api/health").json()["status"] == "ok"
        probe = ddb.get_item(TableName="t-leases", Key={"key": {"S": "health:probe"}})
        assert "Item" in probe
        ddb.delete_table(TableName="t-leases")
        told = client.get("/api/health").json()
    assert told["status"] == "degraded" and "reason" not in told  # the reason: admins only
