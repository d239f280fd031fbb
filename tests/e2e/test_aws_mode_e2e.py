"""AWS mode run whole: ``zerocode serve`` with ZEROCODE_MODE=aws against moto's server.

What runs, and what stands in for what:

* The stack is synthesized from infra/ (tests/aws_stack.py) and its tables, buckets, KMS
  key, user pool, app client, admin group, model secret and KeyValueStore are created on
  **moto's server** (a subprocess, ``python -m moto.server``) from the template's own
  properties. The server gets the **API function's environment from the template**, every
  reference resolved to what was created, except three things: no ``AWS_*`` Lambda and
  Lambda Web Adapter variables (this is ``zerocode serve``, not the function),
  ``ZEROCODE_REDIS_URL`` naming this machine's **real Redis** in place of ElastiCache (the
  window cache, rate limits and the turns' event logs in Redis Streams, as in the stack),
  and no ``ZEROCODE_MODEL_BASE_URL``
  (the offline scripted model answers; the model key is still read from the secret at
  start-up, so a missing or unreadable secret fails the start).
* Where each AWS client goes is plain environment that every boto3 program honours:
  ``AWS_ENDPOINT_URL`` (moto) and ``AWS_ENDPOINT_URL_CODEBUILD`` /
  ``AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE`` (tests/aws_standins.py, reached as an HTTP
  proxy; its doc says why). No code in zerocode knows it is under test. A request that
  escapes to any other host is refused and fails the test.
* **Authentication**: ``zerocode serve`` is not behind API Gateway, so no authorizer has
  verified anything and the server must not take claims from a request header (the test
  sends a forged ``x-amzn-request-context`` naming an admin and gets 401). The test does
  what an API client does: registers and signs in through the API (Cognito on moto: the
  account must come out a confirmed user of the stack's pool) and sends the Cognito access
  token as a bearer token, which the server checks with Cognito on every request. The
  authorizer-claims path of the Lambda function is tested in
  tests/integration/bootstrap/test_aws_mode.py.
* **Deletion**: afterwards no table item, current bucket object or site pointer mentions
  the app. The workspaces bucket is versioned, so deleted objects stay as noncurrent
  versions (recoverable, by design); the test requires that only those remain and that the
  bucket's lifecycle rule expires them.
* **CodeBuild** is the stand-in: a build stays IN_PROGRESS until the test, playing
  CodeBuild, runs the platform's buildspec as CodeBuild would in the platform's image
  (``run_the_buildspec``: the real in-box program, toolchain, Vite and Chromium, with the
  build's own variables and a container's canary credentials), which fetches its source by
  its one link and hands back its archive by the link inside. Previews (and, in the html
  test, every build) are played as soon as they start (the turn polls for them); a Vue
  deploy build is finished by the **build_events function** (functions/build_events/
  handler.py, run as a subprocess with the BuildEvents function's environment from the
  template) on the EventBridge "CodeBuild Build State Change" event CodeBuild would send,
  which unpacks the archive and publishes it.
* **Visitors**: the site router (the template's CloudFront Function code) runs under Node
  (tests/infra/cf_function_harness.mjs) with the stand-in KeyValueStore's items (the hot
  set); a key it does not hold goes on to the Lambda@Edge router
  (functions/edge_router/router.py, in-process), which reads the stack's pointer table on
  moto; the object routed to is read from the builds bucket: what CloudFront would serve.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from functions.edge_router.router import PointerLookup, TtlCache
from functions.edge_router.router import route as edge_route
from tests.aws_stack import ROOT, MotoStack, create_on_moto, synthesize
from tests.aws_standins import (
    CONTAINER_CANARIES,
    BuildRole,
    CodeBuildRun,
    StandIns,
    decode_jwt,
    run_the_buildspec,
)
from tests.conftest import REDIS_URL, redis_client_or_skip
from tests.e2e.conftest import Turn, chat, create, free_port, parse_sse, shown_build
from tests.e2e.test_repair import feedback
from tests.e2e.test_turns_outlive import replay, start_and_leave
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from tests.pictures import pixel, png
from zerocode.adapters.aws.build_handoff import COVER_PATH, PNG_MAGIC, TASK_CHECKS, TASK_VARIABLE
from zerocode.adapters.aws.codebuild_builder import BUILDSPEC
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.bootstrap.settings import Settings
from zerocode.gateway import REQUEST_CONTEXT

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (CDK synth needs it)")

PASSWORD = "correct horse battery"
HARNESS = ROOT / "tests" / "infra" / "cf_function_harness.mjs"
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
# Lambda runtime and Lambda Web Adapter configuration, not zerocode's: `zerocode serve` is
# not the function, and must not believe it runs under the adapter.
NOT_FOR_SERVE = ("AWS_",)
ELASTICACHE = ("ZEROCODE_REDIS_URL",)  # replaced by this machine's Redis
OFFLINE_MODEL = ("ZEROCODE_MODEL_BASE_URL",)


def _wait_for(url: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer:\n{log.read_text()[-5000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def moto_client(moto_url: str, service: str, **credentials: str) -> Any:
    """A boto3 client on moto's server (the test's fake credentials unless given)."""
    import boto3

    keys = credentials or {
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
        "aws_session_token": "testing",
    }
    return boto3.client(service, region_name="us-east-1", endpoint_url=moto_url, **keys)


class WarmBuildEvents:
    """EventBridge delivering CodeBuild's final states to ``functions/build_events``, as a
    warm Lambda container runs it: one process with the BuildEvents function's environment,
    its handler imported once, one invocation per event (in the order delivered)."""

    SCRIPT = (
        "import json, sys\n"
        "import handler\n"
        "for line in sys.stdin:\n"
        "    result = handler.handler(json.loads(line), None)\n"
        "    print('RESULT ' + json.dumps(result), flush=True)\n"
    )

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("wb"),
            text=True,
            cwd=ROOT / "functions" / "build_events",
            env=env,
        )
        self.lock = threading.Lock()

    def deliver(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.proc.stdin.write(json.dumps(event) + "\n")
            self.proc.stdin.flush()
            while line := self.proc.stdout.readline():
                if line.startswith("RESULT "):
                    result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
                    return result
        raise AssertionError("build_events stopped: see build-events.log")

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


@dataclass
class AwsPlatform:
    """moto, the stand-ins, the stack on them, and ``zerocode serve`` in AWS mode."""

    moto_url: str
    standins: StandIns
    stack: MotoStack
    work: Path
    api: str = ""
    events: WarmBuildEvents | None = None  # build_events, delivered each build's final state

    @property
    def log(self) -> Path:
        return self.work / "server.log"

    def aws(self, service: str, **credentials: str) -> Any:
        return moto_client(self.moto_url, service, **credentials)

    def setting(self, name: str) -> str:
        return self.stack.function_environment("zerocode Api")[f"ZEROCODE_{name}"]

    def pointers(self) -> dict[str, str]:
        """Every site and preview pointer of the pointer table (the truth; issue 27), not the
        hot set's ledger items there (``hotset:…``)."""
        items = self.aws("dynamodb").scan(TableName=self.setting("POINTERS_TABLE"))["Items"]
        return {
            i["pointer"]["S"]: f"{i['app_id']['S']}/{i['build_id']['S']}"
            for i in items
            if "app_id" in i
        }

    def kvs(self) -> Any:
        """A client of the stand-in KeyValueStore's data plane (reached as a proxy)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "cloudfront-keyvaluestore",
            region_name="us-east-1",
            endpoint_url=self.standins.client_environment()[
                "AWS_ENDPOINT_URL_CLOUDFRONT_KEYVALUESTORE"
            ],
            config=Config(proxies={"http": self.standins.proxy_url}),
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def hot_set(self) -> dict[str, str]:
        """Every key of the sites KeyValueStore, read over its data-plane API (ListKeys)."""
        kvs = self.kvs()
        items: dict[str, str] = {}
        kwargs: dict[str, Any] = {"KvsARN": self.setting("SITES_KVS_ARN"), "MaxResults": 50}
        while True:
            page = kvs.list_keys(**kwargs)
            items |= {i["Key"]: i["Value"] for i in page.get("Items", [])}
            if not page.get("NextToken"):
                return items
            kwargs["NextToken"] = page["NextToken"]

    def environment(self, function: str) -> dict[str, str]:
        """A function's environment from the template, for a process on this machine: the
        machine's own AWS and zerocode settings (and proxies) left out, moto's and the
        stand-ins' endpoints put in."""
        reach = self.standins.client_environment()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AWS_", "ZEROCODE_")) and k not in reach
        }
        env |= {
            k: v
            for k, v in self.stack.function_environment(function).items()
            if not k.startswith(NOT_FOR_SERVE + ELASTICACHE + OFFLINE_MODEL)
        }
        redis_client_or_skip()
        env["ZEROCODE_REDIS_URL"] = REDIS_URL
        env |= FAKE_CREDENTIALS | reach
        env |= {
            "AWS_ENDPOINT_URL": self.moto_url,
            "AWS_CONFIG_FILE": str(self.work / "no-aws-config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self.work / "no-aws-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
            "ZEROCODE_DATA_DIR": str(self.work / "data"),
        }
        return env


@contextlib.contextmanager
def running_platform(work: Path, context: dict[str, str] | None = None) -> Iterator[AwsPlatform]:
    """moto's server, the stand-ins, the stack synthesized (with ``context`` over the
    defaults) and made on moto, and ``zerocode serve`` with the API function's settings."""
    moto_port = free_port()
    moto_url = f"http://127.0.0.1:{moto_port}"
    moto_log = work / "moto.log"
    moto = subprocess.Popen(  # starts while the stack synthesizes
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(moto_port)],
        stdout=moto_log.open("wb"),
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
    )
    standins = StandIns().start()
    server: subprocess.Popen[bytes] | None = None
    platform: AwsPlatform | None = None
    try:
        template = synthesize(work / "cdk.out", context)
        _wait_for(f"{moto_url}/moto-api/", moto, moto_log)
        stack = create_on_moto(
            template,
            lambda service: moto_client(moto_url, service),
            "zc-e2e",
            codebuild_project=standins.codebuild.add_project,
            key_value_store=standins.kvs.add_store,
        )
        platform = AwsPlatform(moto_url, standins, stack, work)
        platform.events = WarmBuildEvents(
            platform.environment("zerocode BuildEvents"), work / "build-events.log"
        )
        port, sites_port = free_port(), free_port()
        platform.api = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "zerocode.entrypoints.cli",
                "serve",
                "--port",
                str(port),
                "--sites-port",
                str(sites_port),
            ],
            stdout=platform.log.open("wb"),
            stderr=subprocess.STDOUT,
            env=platform.environment("zerocode Api") | {"ZEROCODE_ACCESS_LOG": "1"},
        )
        _wait_for(f"{platform.api}/api/health", server, platform.log)
        yield platform
    finally:
        if server is not None:
            _stop(server)
        if platform is not None and platform.events is not None:
            platform.events.stop()
        standins.stop()
        _stop(moto)


@pytest.fixture(scope="module")
def aws_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AwsPlatform]:
    with running_platform(tmp_path_factory.mktemp("aws-e2e")) as platform:
        yield platform


# -- helpers ----------------------------------------------------------------------------------


@dataclass
class Account:
    name: str
    token: str
    http: httpx.Client


def sign_up(platform: AwsPlatform) -> Account:
    """Register and sign in through the API; the bearer token is Cognito's access token."""
    name = f"user-{secrets.token_hex(4)}"
    http = httpx.Client(base_url=platform.api, timeout=httpx.Timeout(120, connect=5))
    body = {"account": name, "password": PASSWORD}
    registered = http.post("/api/users/register", json=body)
    assert registered.status_code == 201, registered.text
    signed_in = http.post("/api/users/login", json=body)
    assert signed_in.status_code == 200, signed_in.text
    token = str(signed_in.json()["token"])
    http.cookies.clear()  # bearer only, as an API client would
    http.headers["Authorization"] = f"Bearer {token}"
    return Account(name, token, http)


def query_app(platform: AwsPlatform, table_setting: str, app_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = platform.aws("dynamodb").query(
        TableName=platform.setting(table_setting),
        KeyConditionExpression="app_id = :a",
        ExpressionAttributeValues={":a": {"S": app_id}},
    )["Items"]
    return items


def route(platform: AwsPlatform, uri: str) -> dict[str, Any]:
    """What the template's CloudFront Function does with a visitor's request for ``uri``,
    given the KeyValueStore's current items (the hot set)."""
    assert NODE is not None
    (code,) = [
        p["FunctionCode"]
        for p in platform.stack.of_type("AWS::CloudFront::Function").values()
        if "kvs" in p["FunctionCode"]
    ]
    function = platform.work / "site_router.js"
    function.write_text(code)
    event = {"request": {"uri": uri, "method": "GET", "headers": {}, "querystring": {}}}
    proc = subprocess.run(
        [NODE, str(HARNESS), str(function)],
        input=json.dumps({"kvs": platform.hot_set(), "events": [event]}),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)[0]
    return result


def fetch_object(platform: AwsPlatform, url: str) -> bytes:
    """An object of the builds bucket, by the distribution's path to it."""
    key = url.removeprefix(platform.setting("SITES_URL") + "/")
    body = platform.aws("s3").get_object(Bucket=platform.setting("BUILDS_BUCKET"), Key=key)
    return bytes(body["Body"].read())


def visit(platform: AwsPlatform, url: str) -> str:
    """The page CloudFront would serve for ``url``: routed, then read from the builds
    bucket (the distribution's origin)."""
    return fetch(platform, url).decode()


def fetch(platform: AwsPlatform, url: str) -> bytes:
    """What CloudFront would serve for ``url``, as bytes."""
    body = platform.aws("s3").get_object(
        Bucket=platform.setting("BUILDS_BUCKET"), Key=origin_uri(platform, url).lstrip("/")
    )["Body"]
    return bytes(body.read())


def origin_uri(platform: AwsPlatform, url: str, *, hot: bool | None = None) -> str:
    """The object CloudFront asks the builds bucket for: the viewer function's rewrite, and
    for a key not in the hot set, the Lambda@Edge router's (functions/edge_router), which
    reads the pointer table on moto (a fresh cache each time: no TTL to wait for here).
    ``hot``: whether the viewer must have resolved it from the KeyValueStore."""
    sites_url = platform.setting("SITES_URL")
    assert url.startswith(sites_url + "/"), (url, sites_url)
    routed = route(platform, url.removeprefix(sites_url))
    assert "uri" in routed, routed
    uri = str(routed["uri"])
    if hot is not None:
        assert uri.startswith("/builds/" if hot else "/_edge/"), uri
    if uri.startswith("/_edge/"):
        lookup = PointerLookup(
            platform.aws("dynamodb"),
            platform.setting("POINTERS_TABLE"),
            TtlCache(100),
            ttl_seconds=0,
            negative_ttl_seconds=0,
        )
        routed = edge_route(routed, lookup)
        assert "uri" in routed, routed
        uri = str(routed["uri"])
    return uri


@dataclass
class Box:
    """CodeBuild running the platform's buildspec in its image: the real in-box program,
    toolchain, Vite and Chromium (tests/aws_standins.run_the_buildspec). ``played``: every
    run; ``built``: the builds among them (not an acceptance suite's checks runs)."""

    platform: AwsPlatform
    toolchain: Path
    chromium: str
    played: list[subprocess.CompletedProcess[str]]
    built: list[subprocess.CompletedProcess[str]] = field(default_factory=list)

    @functools.cached_property
    def role(self) -> BuildRole:
        """The project's role on moto, whose session named after each run the box runs as."""
        (project,) = self.platform.stack.of_type("AWS::CodeBuild::Project").values()
        arn = self.platform.stack.resolve(project["ServiceRole"])
        return BuildRole(self.platform.moto_url, str(arn))

    def play(self, run: CodeBuildRun) -> CodeBuildRun:
        codebuild = self.platform.standins.codebuild
        try:
            done = run_the_buildspec(
                run,
                role=self.role,
                toolchain=self.toolchain,
                chromium=self.chromium,
                workdir=self.platform.work / "box" / run.id.replace(":", "-"),
            )
        except Exception:
            codebuild.finish(run.id, "FAILED")
            raise
        self.played.append(done)
        if not is_checks_run(run):
            self.built.append(done)
        finished = codebuild.finish(run.id, "SUCCEEDED" if done.returncode == 0 else "FAILED")
        assert self.platform.events is not None
        self.platform.events.deliver(finished.event())  # EventBridge, at once
        return finished


def is_checks_run(run: CodeBuildRun) -> bool:
    """A run of an app's acceptance suite (adapters/aws/build_acceptance.py), not a build."""
    return run.variables.get(TASK_VARIABLE) == TASK_CHECKS


@pytest.fixture(scope="module")
def box(aws_platform: AwsPlatform, toolchain_dir: Path) -> Box:
    import asyncio

    modules, why = asyncio.run(ToolchainStore(toolchain_dir, Settings().npm_cache).ensure())
    assert modules is not None, why
    return Box(aws_platform, modules.parent, chromium_or_skip(), [])


def wait_built(http: httpx.Client, app_id: str, build_id: str) -> dict[str, Any]:
    """Ask for the build until it is finished (each ask polls CodeBuild, as the console does)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        build: dict[str, Any] = http.get(f"/api/apps/{app_id}/builds/{build_id}").json()
        if build["state"] in ("succeeded", "failed"):
            return build
        time.sleep(0.5)
    raise AssertionError(f"build {build_id} did not finish")


def assert_no_canary(platform: AwsPlatform, box: Box) -> None:
    """No credential a CodeBuild container holds is in any build's log or in the bucket."""
    s3, bucket = platform.aws("s3"), platform.setting("BUILDS_BUCKET")
    objects = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    stored = b"".join(s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in objects)
    logs = "".join(d.stdout + d.stderr for d in box.played)
    for canary in [*CONTAINER_CANARIES.values(), *box.role.secrets]:
        assert canary.encode() not in stored and canary not in logs


# What a presigned link (GET, PUT, DELETE or POST) carries: none may be in a run's record.
PRESIGNED = ("X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "AWSAccessKeyId")


def assert_no_link_in_any_run(platform: AwsPlatform) -> int:
    """No CodeBuild request (StartBuild, as sent), record (BatchGetBuilds, the console) or
    state-change event (build_events, its failed-events queue) of any run holds a link or a
    credential: the runs read their sources as themselves. How many runs were looked at."""
    runs = platform.standins.codebuild.runs()
    for run in runs:
        said = json.dumps([run.request, run.describe(), run.event()])
        for mark in PRESIGNED:
            assert mark.lower() not in said.lower(), (mark, run.id)
        variables = run.variables.values()
        assert not any("://" in v or "?" in v for v in variables), run.variables
    return len(runs)


def build_events(platform: AwsPlatform, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """functions/build_events/handler.py as Lambda runs it (its directory the code root, the
    BuildEvents function's environment), one invocation per event."""
    script = (
        "import json, sys\n"
        "import handler\n"
        "results = [handler.handler(e, None) for e in json.load(sys.stdin)]\n"
        "print('RESULTS ' + json.dumps(results))\n"
    )
    env = platform.environment("zerocode BuildEvents")
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(events),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT / "functions" / "build_events",
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("RESULTS ")]
    results: list[dict[str, Any]] = json.loads(line.removeprefix("RESULTS "))
    return results


def assert_gone(platform: AwsPlatform, app_id: str) -> None:
    """No table item, bucket object or site pointer mentions the app. In a versioned bucket
    a deleted object leaves noncurrent versions behind (recoverable, by design); they must
    be noncurrent only, and the bucket's lifecycle must expire them."""
    ddb, s3 = platform.aws("dynamodb"), platform.aws("s3")
    for logical_id, table in platform.stack.tables().items():
        items = ddb.scan(TableName=table)["Items"]
        left = [i for i in items if app_id in json.dumps(i)]
        assert left == [], f"{logical_id} still holds {left}"
    for logical_id, bucket in platform.stack.buckets().items():
        current = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
        left = [o["Key"] for o in current if app_id in o["Key"]]
        assert left == [], f"{logical_id} still holds {left}"
        listed = s3.list_object_versions(Bucket=bucket)
        versions = [v for v in listed.get("Versions", []) if app_id in v["Key"]]
        if not versions:
            continue
        assert not [v["Key"] for v in versions if v["IsLatest"]], logical_id
        props = platform.stack.of_type("AWS::S3::Bucket")[logical_id]
        assert props.get("VersioningConfiguration", {}).get("Status") == "Enabled", logical_id
        rules = props.get("LifecycleConfiguration", {}).get("Rules", [])
        assert any(
            r.get("Status") == "Enabled"
            and ("NoncurrentVersionExpiration" in r or "NoncurrentVersionExpirationInDays" in r)
            for r in rules
        ), f"{logical_id} keeps the deleted app's old versions with no rule to expire them"
    for pointers in (platform.pointers(), platform.hot_set()):
        assert [k for k, v in pointers.items() if v.startswith(app_id + "/")] == []


def assert_stayed_local(platform: AwsPlatform) -> None:
    """Every AWS request went to moto or a stand-in, KeyValueStore ones SigV4A-signed."""
    assert platform.standins.escaped == [], "requests went past moto and the stand-ins"
    assert platform.standins.unsigned == [], "KeyValueStore requests were not SigV4A-signed"


def preview_key(app: dict[str, Any]) -> str:
    path = urlsplit(app["previewUrl"]).path  # /preview/{key}/ (no sites domain configured)
    assert path.startswith("/preview/"), app["previewUrl"]
    return str(path.split("/")[2])


def succeeded(turn: Turn) -> None:
    assert turn.done is not None and turn.done["status"] == "succeeded", (turn.errors, turn.text)
    assert turn.builds and turn.builds[-1]["status"] == "succeeded", turn.builds


# -- the tests -------------------------------------------------------------------------------


def test_an_html_app_on_aws_from_sign_up_to_deletion(aws_platform: AwsPlatform, box: Box) -> None:
    platform = aws_platform
    platform.standins.codebuild.on_start = box.play  # every build runs in the box at once
    health = httpx.get(f"{platform.api}/api/health").json()
    assert health["status"] == "ok", health

    # Register and sign in: the account is a confirmed Cognito user; the token is Cognito's.
    alice = sign_up(platform)
    pool, client_id = (
        platform.setting("COGNITO_USER_POOL_ID"),
        platform.setting("COGNITO_CLIENT_ID"),
    )
    cognito_user = platform.aws("cognito-idp").admin_get_user(UserPoolId=pool, Username=alice.name)
    assert cognito_user["UserStatus"] == "CONFIRMED"
    sub = {a["Name"]: a["Value"] for a in cognito_user["UserAttributes"]}["sub"]
    token = decode_jwt(alice.token)
    assert token["token_use"] == "access" and token["client_id"] == client_id
    me = alice.http.get("/api/users/me")
    assert me.status_code == 200, me.text
    assert me.json()["id"] == sub and me.json()["account"] == alice.name
    assert httpx.get(f"{platform.api}/api/users/me").status_code == 401
    forged = httpx.get(
        f"{platform.api}/api/users/me", headers={"Authorization": "Bearer not-a-cognito-token"}
    )
    assert forged.status_code == 401
    # `zerocode serve` is not behind API Gateway: a request context naming alice (an admin,
    # even) is the client's own claim, not an authorizer's, and counts for nothing.
    claims = {"sub": sub, "cognito:username": alice.name, "cognito:groups": "admin"}
    spoof = json.dumps({"requestId": "r-1", "authorizer": {"claims": claims}})
    for path in ("/api/users/me", "/api/admin/users"):
        spoofed = httpx.get(f"{platform.api}{path}", headers={REQUEST_CONTEXT: spoof})
        assert spoofed.status_code == 401, (path, spoofed.text)

    # Create: the app is an item of the apps table, owned by the Cognito sub.
    app = create(alice.http, "A page about otters", "html")
    item = platform.aws("dynamodb").get_item(
        TableName=platform.setting("APPS_TABLE"), Key={"id": {"S": app["id"]}}
    )["Item"]
    assert item["owner"]["S"] == sub

    # Chat over SSE: transcript and display in DynamoDB, files in the workspaces bucket,
    # the preview copied to the builds bucket and pointed at in the pointer table.
    turn = chat(alice.http, app["id"], "Make a page about otters")
    succeeded(turn)
    # Its events are in the Redis Streams log: a reattach replays them whole, ids and all.
    with alice.http.stream("GET", f"/api/apps/{app['id']}/turns/1/events") as replayed:
        again = parse_sse(replayed.iter_lines())
    assert again.ids == turn.ids and again.order == turn.order and again.done == turn.done
    assert query_app(platform, "TRANSCRIPT_TABLE", app["id"])
    assert len(query_app(platform, "DISPLAY_TABLE", app["id"])) == 2  # the request, the answer
    s3 = platform.aws("s3")
    s3.head_object(
        Bucket=platform.setting("WORKSPACE_BUCKET"), Key=f"workspaces/{app['id']}/index.html"
    )
    app = alice.http.get(f"/api/apps/{app['id']}").json()
    preview_build = turn.builds[-1]["buildId"]
    assert platform.pointers()[f"preview:{preview_key(app)}"] == f"{app['id']}/{preview_build}"
    assert "otter" in visit(platform, app["previewUrl"]).lower()
    # The preview build's own screenshot is the app's cover until it is deployed, private:
    # kept out of builds/ and served by the API to its owner (issue 26, point 7).
    assert app["cover"] is None and app["previewCover"], app
    assert app["previewCover"].endswith(f"?build={preview_build}")
    shot = alice.http.get(app["previewCover"])
    assert shot.status_code == 200 and shot.content.startswith(PNG_MAGIC)
    builds_bucket = platform.setting("BUILDS_BUCKET")
    s3.head_object(Bucket=builds_bucket, Key=f"preview-covers/{app['id']}/{preview_build}.png")

    # Context: the window the model sees next, rebuilt from the DynamoDB transcript.
    window = alice.http.get(f"/api/apps/{app['id']}/context")
    assert window.status_code == 200, window.text
    messages = window.json()["messages"]
    # The turn's last word is the model's; after it, the note telling it what its checks
    # block did (a turn of its own, M9).
    assert messages[0]["role"] == "system" and messages[-2]["role"] == "assistant"
    assert messages[-1]["role"] == "user" and "added c1" in messages[-1]["content"]

    # Acceptance checks are kept in DynamoDB and run in a checks run of the build box.
    assert turn.done is not None and turn.done["checks"]["passed"] >= 1, turn.done
    assert turn.done["checks"]["failed"] == 0 == turn.done["checks"]["notRun"]
    suite = alice.http.get(f"/api/apps/{app['id']}/checks").json()
    assert suite["checks"] and {c["status"] for c in suite["checks"]} == {"passed"}
    assert suite["runs"][0]["whyNotRun"] is None
    assert any(m["role"] == "user" and "otters" in json.dumps(m) for m in messages)

    # An image of the builder's (issue 41): the multipart form through the API, re-encoded
    # into the S3 workspace, built in the box and kept in the builds bucket as an image.
    logo = png((24, 24), (250, 200, 0)) + b"<script>alert(1)</script>"
    uploaded = alice.http.post(
        f"/api/apps/{app['id']}/assets", files={"file": ("logo.png", logo, "image/png")}
    )
    assert uploaded.status_code == 201, uploaded.text
    assert uploaded.json()["build"]["state"] == "succeeded", uploaded.json()
    kept = s3.get_object(
        Bucket=platform.setting("WORKSPACE_BUCKET"), Key=f"workspaces/{app['id']}/assets/logo.png"
    )["Body"].read()
    assert b"<script" not in kept and pixel(kept) == (250, 200, 0)
    shown = s3.get_object(
        Bucket=builds_bucket,
        Key=f"builds/{app['id']}/{uploaded.json()['build']['id']}/assets/logo.png",
    )
    assert shown["ContentType"] == "image/png" and shown["Body"].read() == kept

    # An image on a message (issue 41): kept by digest in the app's versions folder, never
    # in DynamoDB; the transcript names it.
    pasted = "data:image/png;base64," + base64.b64encode(png((40, 30), (0, 90, 200))).decode()
    message = {"message": 'Change the title to "Otter Bay"', "images": [pasted]}
    with alice.http.stream("POST", f"/api/apps/{app['id']}/chat", json=message) as r:
        assert r.status_code == 200, r.read()
        succeeded(parse_sse(r.iter_lines()))
    entries = alice.http.get(f"/api/apps/{app['id']}/history").json()["entries"]
    (sha,) = [i["sha256"] for e in entries for i in e.get("images") or ()]
    s3.head_object(
        Bucket=platform.setting("WORKSPACE_BUCKET"), Key=f"versions/{app['id']}/images/{sha}"
    )
    stored = json.dumps(query_app(platform, "TRANSCRIPT_TABLE", app["id"]), default=str)
    assert "base64" not in stored and f"zerocode-image:{sha}" in stored
    assert alice.http.get(f"/api/apps/{app['id']}/images/{sha}").status_code == 200

    # Deploy: nothing to compile, but the page is checked and its cover taken in the build's
    # browser, so it builds on CodeBuild too and is published through the KeyValueStore
    # once finished; a visitor's request for the site URL reaches that build.
    asked = alice.http.post(f"/api/apps/{app['id']}/deploy")
    assert asked.status_code == 202, asked.text
    deployed = wait_built(alice.http, app["id"], asked.json()["buildId"])
    assert deployed["state"] == "succeeded", deployed
    app = alice.http.get(f"/api/apps/{app['id']}").json()
    assert app["cover"] == app["deployUrl"] + COVER_PATH
    assert fetch(platform, app["cover"]).startswith(PNG_MAGIC)
    assert app["deployBuildId"] == deployed["id"]
    assert app["deployUrl"] == f"{platform.setting('SITES_URL')}/sites/{app['deployKey']}/"
    site = platform.pointers()[f"site:{app['deployKey']}"]
    assert site == f"{app['id']}/{deployed['id']}"
    page = visit(platform, app["deployUrl"])
    assert "otter" in page.lower() and "__zerocode/picker.js" not in page  # no picker on sites
    assert fetch(platform, app["deployUrl"] + "assets/logo.png") == kept

    # Routing at scale (issue 27): the pointer table is the truth and the KeyValueStore only
    # a hot set, so this new key is not in the store: the viewer function sends the request
    # on, and the Lambda@Edge router resolves it from the table. A second deploy is one
    # write, seen within the routing's TTL.
    key, url, first = f"site:{app['deployKey']}", app["deployUrl"], deployed["id"]
    assert key not in platform.hot_set()
    assert origin_uri(platform, url, hot=False) == f"/builds/{app['id']}/{first}/index.html"
    redeploy = alice.http.post(f"/api/apps/{app['id']}/deploy")
    assert redeploy.status_code == 202, redeploy.text
    second = wait_built(alice.http, app["id"], redeploy.json()["buildId"])["id"]
    assert platform.pointers()[key] == f"{app['id']}/{second}"
    assert key not in platform.hot_set()
    assert origin_uri(platform, url, hot=False) == f"/builds/{app['id']}/{second}/index.html"
    # A rollback writes the table and promotes the key into the hot set by itself: the
    # viewer function serves the old build at once, no CloudFront or router cache between.
    rolled = alice.http.post(f"/api/apps/{app['id']}/rollback", json={"buildId": first})
    assert rolled.status_code == 200 and rolled.json()["deployBuildId"] == first, rolled.text
    assert platform.hot_set()[key] == platform.pointers()[key] == f"{app['id']}/{first}"
    assert origin_uri(platform, url, hot=True) == f"/builds/{app['id']}/{first}/index.html"
    # From then on the table and the store's copy are written together.
    rolled = alice.http.post(f"/api/apps/{app['id']}/rollback", json={"buildId": second})
    assert rolled.status_code == 200, rolled.text
    assert platform.hot_set()[key] == platform.pointers()[key] == f"{app['id']}/{second}"
    assert origin_uri(platform, url, hot=True) == f"/builds/{app['id']}/{second}/index.html"
    assert "otter" in visit(platform, url).lower()

    assert_no_canary(platform, box)

    # Delete: nothing of the app is left in any table, bucket or pointer.
    assert alice.http.delete(f"/api/apps/{app['id']}").status_code == 204
    assert alice.http.get(f"/api/apps/{app['id']}").status_code == 404
    assert_gone(platform, app["id"])
    assert_stayed_local(platform)


def test_a_vue_app_on_aws_is_checked_repaired_and_deployed_by_codebuild(
    aws_platform: AwsPlatform, box: Box
) -> None:
    platform = aws_platform
    codebuild = platform.standins.codebuild

    def play_previews(run: CodeBuildRun) -> None:
        """CodeBuild running a preview build or a checks run (the turn waits for them);
        deploys wait."""
        if run.variables.get("ZEROCODE_PREVIEW") == "1" or is_checks_run(run):
            box.play(run)

    codebuild.on_start = play_previews
    bob = sign_up(platform)
    app = create(bob.http, "A Vue todo app with an about page", "vue_project")

    # The first try throws in the browser: the build's own check finds it, the turn shows
    # the model, the model repairs it, and the second preview build is clean.
    turn = chat(bob.http, app["id"], "A Vue todo app with an about page [[flaw=runtime]]")
    succeeded(turn)
    assert [b["status"] for b in turn.builds if b["status"] != "running"] == ["succeeded"] * 2
    assert turn.order.count("repair") == 1
    messages = bob.http.get(f"/api/apps/{app['id']}/context").json()["messages"]
    shown = feedback(messages)
    assert shown and "fails in the browser" in shown[0] and "TypeError" in shown[0], shown
    runs = [
        r
        for r in codebuild.runs()
        if r.variables["ZEROCODE_APP_ID"] == app["id"] and not is_checks_run(r)
    ]
    assert [r.variables["ZEROCODE_BUILD_ID"] for r in runs][-1] == turn.builds[-1]["buildId"]
    app = bob.http.get(f"/api/apps/{app['id']}").json()
    assert platform.pointers()[f"preview:{preview_key(app)}"] == (
        f"{app['id']}/{turn.builds[-1]['buildId']}"
    )
    preview = visit(platform, app["previewUrl"])
    assert "__zerocode/picker.js" in preview  # previews carry the element picker

    # What the platform asked CodeBuild for: its own buildspec, no source of the project's,
    # no credential, no link: names only. The source waits under the run's own session.
    asked = bob.http.post(f"/api/apps/{app['id']}/deploy")
    assert asked.status_code == 202, asked.text
    build_id = asked.json()["buildId"]
    assert asked.json()["state"] == "running"
    (run,) = [r for r in codebuild.runs() if r.variables["ZEROCODE_BUILD_ID"] == build_id]
    assert run.project == platform.setting("CODEBUILD_PROJECT")
    assert run.request["buildspecOverride"] == BUILDSPEC
    assert run.request["sourceTypeOverride"] == "NO_SOURCE"
    variables = run.variables
    assert set(variables) == {
        "ZEROCODE_APP_ID",
        "ZEROCODE_BUILD_ID",
        "ZEROCODE_KIND",
        "ZEROCODE_PREVIEW",
        "ZEROCODE_OWN_ORIGIN",
        "ZEROCODE_SOURCE_BUCKET",
    }
    assert variables["ZEROCODE_PREVIEW"] == "0"
    assert variables["ZEROCODE_OWN_ORIGIN"] == "0"  # sites under /sites/{key}/ here
    assert variables["ZEROCODE_SOURCE_BUCKET"] == platform.setting("BUILDS_BUCKET")
    assert "testing" not in json.dumps(run.request)  # not the server's own credentials
    session = f"{platform.setting('BUILD_ROLE_ID')}:AWSCodeBuild-{run.id.rsplit(':', 1)[1]}"
    assert objects(platform, "sources/") == [f"sources/{session}/{app['id']}/{build_id}.zip"]

    # Still building: asking for the build polls CodeBuild, which says IN_PROGRESS, and
    # nothing is published.
    polled = bob.http.get(f"/api/apps/{app['id']}/builds/{build_id}").json()
    assert polled["state"] == "running", polled
    report = bob.http.get(f"/api/apps/{app['id']}/deploys/{build_id}/report").json()
    assert report["state"] == "pending", report  # made as the build is finished
    assert bob.http.get(f"/api/apps/{app['id']}").json()["deployBuildId"] is None
    assert not [k for k in platform.pointers() if k.startswith("site:")]

    # CodeBuild builds in the box, hands back its archive, and EventBridge invokes
    # build_events with its event, which unpacks and publishes it.
    finished = box.play(run)
    assert finished.status == "SUCCEEDED", box.built[-1].stdout[-3000:]
    results = build_events(platform, [finished.event(), finished.event()])  # and a repeat
    assert results == [{"result": "succeeded", "buildId": build_id}] * 2

    app = bob.http.get(f"/api/apps/{app['id']}").json()
    assert app["deployBuildId"] == build_id
    assert platform.pointers()[f"site:{app['deployKey']}"] == f"{app['id']}/{build_id}"
    page = visit(platform, app["deployUrl"])
    assert '<div id="app" data-v-app="">' in page and "__zerocode/picker.js" not in page
    # Issue 44: its routes were prerendered in the box and told to the KeyValueStore (the
    # viewer function's, once the site is hot: tests/infra/test_site_router.py) and to the
    # pointer table (the edge router's, for a cold site, as this one is).
    assert platform.hot_set()[f"routes:{app['id']}/{build_id}"] == "about"
    prefix = f"{platform.setting('SITES_URL')}/builds/{app['id']}/{build_id}/"
    about = fetch_object(platform, prefix + "about/index.html").decode()
    assert "<h1>About</h1>" in about and "<h1>About</h1>" not in page
    assert '<meta name="description"' in about  # completed by the API like index.html
    assert '<div id="app"></div>' in fetch_object(platform, prefix + ".shell.html").decode()
    assert visit(platform, app["deployUrl"] + "about") == about
    assert (
        visit(platform, app["deployUrl"] + "elsewhere")
        == fetch_object(platform, prefix + ".shell.html").decode()
    )
    assert "location.pathname" in page  # its <base>, from the address (the path scheme)
    build = bob.http.get(f"/api/apps/{app['id']}/builds/{build_id}").json()
    assert build["state"] == "succeeded", build
    # The build's own screenshot is the app's cover, served with its site.
    assert app["cover"] == app["deployUrl"] + COVER_PATH
    assert fetch(platform, app["cover"]).startswith(PNG_MAGIC)
    # Its publish report (issue 44, point 5): the site's files checked as build_events
    # finished the build, the page looked at in the box's browser; every check passes.
    report = bob.http.get(f"/api/apps/{app['id']}/deploys/{build_id}/report").json()
    assert report["state"] == "done", report
    verdicts = {c["id"]: (c["status"], c["details"], c["note"]) for c in report["checks"]}
    assert all(status == "passed" for status, _, _ in verdicts.values()), verdicts
    assert "CloudFront" in verdicts["compression"][2], verdicts["compression"]
    assert report["summary"] == {"state": "done", "passed": 8, "failed": 0, "notRun": 0}
    assert_no_canary(platform, box)

    # Delete: the sources and outputs CodeBuild used go too.
    assert bob.http.delete(f"/api/apps/{app['id']}").status_code == 204
    assert_gone(platform, app["id"])
    assert_stayed_local(platform)


def test_on_aws_a_failing_acceptance_check_is_found_in_the_box_repaired_and_gates_deploys(
    aws_platform: AwsPlatform, box: Box
) -> None:
    """Issue 42, point 1: the suite runs in a checks run of the build box (the same page
    code and confinement as locally), its failure is repaired like a local one, and
    ``requireChecks`` means on AWS what it means locally."""
    platform = aws_platform
    codebuild = platform.standins.codebuild
    codebuild.on_start = box.play  # previews, checks runs and deploys: each runs at once
    carol = sign_up(platform)
    app = create(carol.http, "A Vue counter", "vue_project")
    turn = chat(carol.http, app["id"], "A Vue counter [[flaw=potemkin]]")
    succeeded(turn)
    failed = [c for c in turn.checks if c["round"] == 0 and c["status"] == "failed"]
    assert failed, turn.checks
    evidence = failed[0]["evidence"]
    shot = carol.http.get(evidence["screenshot"])
    assert shot.status_code == 200 and shot.content.startswith(PNG_MAGIC)
    assert [r["kind"] for r in turn.repairs] == ["acceptance"]
    repaired = [c for c in turn.checks if c["round"] == 1]
    assert repaired and all(c["status"] == "passed" for c in repaired), repaired
    runs = [r for r in codebuild.runs() if r.variables["ZEROCODE_APP_ID"] == app["id"]]
    checked = [r.variables["ZEROCODE_CHECKED_BUILD"] for r in runs if is_checks_run(r)]
    previews = [b["buildId"] for b in turn.builds if b["status"] == "succeeded"]
    assert checked == previews and len(checked) == 2  # one checks run per preview
    assert not [k for k in objects(platform, "staging/") if app["id"] in k]

    # requireChecks: the suite passes on the shown preview, so the deploy goes ahead and
    # its build is stamped with the suite's state.
    setting = carol.http.patch(f"/api/apps/{app['id']}", json={"requireChecks": True})
    assert setting.status_code == 200, setting.text
    asked = carol.http.post(f"/api/apps/{app['id']}/deploy")
    assert asked.status_code == 202, asked.text
    build = wait_built(carol.http, app["id"], asked.json()["buildId"])
    assert build["state"] == "succeeded", build
    listed = carol.http.get(f"/api/apps/{app['id']}/builds").json()["builds"]
    deployed = next(b for b in listed if b["id"] == build["id"])
    assert deployed["checks"]["failed"] == 0 and deployed["checks"]["notRun"] == 0
    assert deployed["checks"]["passed"] >= 1
    assert_no_canary(platform, box)
    # Previews, checks runs and the deploy: none carried a link anywhere CodeBuild keeps it.
    assert assert_no_link_in_any_run(platform) >= 5
    assert_stayed_local(platform)


def objects(platform: AwsPlatform, prefix: str) -> list[str]:
    s3, bucket = platform.aws("s3"), platform.setting("BUILDS_BUCKET")
    return [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])]


def test_on_aws_a_turn_reattached_after_40_s_is_followed_to_its_end(
    aws_platform: AwsPlatform, box: Box
) -> None:
    """Issue 42, point 2: a turn whose preview build takes its time (CodeBuild holds it),
    left after its first event, reattached 40 s later (past API Gateway's default 29 s: the
    reattach route has the 15-minute integration, tests/infra) gets every event it missed,
    live until its end: no gap, no duplicate."""
    platform = aws_platform
    release = threading.Event()

    def slow_previews(run: CodeBuildRun) -> None:
        if run.variables.get("ZEROCODE_PREVIEW") == "1":
            release.wait(120)  # CodeBuild taking its time over the preview build
        box.play(run)

    platform.standins.codebuild.on_start = slow_previews
    dave = sign_up(platform)
    app = create(dave.http, "A page about clocks", "html")
    try:
        seen = start_and_leave(dave.http, app["id"], "A page about clocks", keep=1)
        time.sleep(40)
        current = dave.http.get(f"/api/apps/{app['id']}/turns/current")
        assert current.status_code == 200 and current.json()["status"] == "running"
        threading.Timer(2, release.set).start()  # the build ends while the client follows
        turn = replay(dave.http, app["id"], 1, headers={"Last-Event-ID": seen[-1]})
    finally:
        release.set()
    assert turn.ended == ("succeeded", 1)
    assert turn.ids == [f"1:{n}" for n in range(2, len(turn.ids) + 2)]
    assert [b["status"] for b in turn.builds] == ["running", "succeeded"]


def test_on_aws_a_text_edit_and_a_restore_answer_once_their_builds_have_run(
    aws_platform: AwsPlatform, box: Box
) -> None:
    """Issue 42, point 2: an edit and a restore wait for their preview build on CodeBuild
    (the long routes' integration on AWS) and answer with it, its page then shown."""
    platform = aws_platform
    platform.standins.codebuild.on_start = box.play
    erin = sign_up(platform)
    app = create(erin.http, "A page about otters", "html")
    succeeded(chat(erin.http, app["id"], "A page about otters"))
    before = visit(platform, erin.http.get(f"/api/apps/{app['id']}").json()["previewUrl"])
    assert "<h1>Otters</h1>" in before
    picked = {"tag": "h1", "text": "Otters", "buildId": shown_build(erin.http, app["id"])}
    body = {"element": picked, "newText": "River otters"}
    edited = erin.http.post(f"/api/apps/{app['id']}/edits/text", json=body)
    assert edited.status_code == 200, edited.text
    assert edited.json()["build"]["state"] == "succeeded", edited.json()
    app = erin.http.get(f"/api/apps/{app['id']}").json()
    shown = platform.pointers()[f"preview:{preview_key(app)}"]
    assert shown == f"{app['id']}/{edited.json()['build']['id']}"
    assert "<h1>River otters</h1>" in visit(platform, app["previewUrl"])

    restored = erin.http.post(f"/api/apps/{app['id']}/versions/v1/restore")
    assert restored.status_code == 200, restored.text
    assert restored.json()["build"]["state"] == "succeeded", restored.json()
    assert "<h1>Otters</h1>" in visit(platform, app["previewUrl"])
    runs = [
        r for r in platform.standins.codebuild.runs() if r.variables["ZEROCODE_APP_ID"] == app["id"]
    ]
    built = [r.variables["ZEROCODE_BUILD_ID"] for r in runs if not is_checks_run(r)]
    assert built[-2:] == [edited.json()["build"]["id"], restored.json()["build"]["id"]]


def test_on_aws_a_stopped_turn_stops_its_codebuild_build(
    aws_platform: AwsPlatform, box: Box
) -> None:
    """Issue 42, point 3: the builder stops a turn while its preview build runs on
    CodeBuild; the build is stopped there (StopBuild), not left to run for nobody."""
    platform = aws_platform
    codebuild = platform.standins.codebuild
    building = threading.Event()
    fay = sign_up(platform)
    app = create(fay.http, "A page about herons", "html")

    def hold_this_preview(run: CodeBuildRun) -> None:
        """CodeBuild never gets to this app's preview build; anything else still runs (an
        earlier test's suite, run after its restore, may start a checks run meanwhile)."""
        if run.variables.get("ZEROCODE_APP_ID") == app["id"]:
            building.set()
        else:
            box.play(run)

    codebuild.on_start = hold_this_preview
    start_and_leave(fay.http, app["id"], "A page about herons", keep=1)
    assert building.wait(60), "the preview build never started"
    stopped = fay.http.post(f"/api/apps/{app['id']}/turns/1/cancel")
    assert stopped.status_code == 202, stopped.text
    turn = replay(fay.http, app["id"], 1)
    assert turn.ended is not None and turn.ended[0] == "interrupted", turn.ended
    (run,) = [r for r in codebuild.runs() if r.variables["ZEROCODE_APP_ID"] == app["id"]]
    assert codebuild.stopped[-1] == run.id and run.status == "STOPPED"
    # Its source, put under the run's own session's prefix and never fetched, is gone too.
    assert not [k for k in objects(platform, "sources/") if f"/{app['id']}/" in k]
    assert_no_link_in_any_run(platform)
