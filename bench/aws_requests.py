"""What one chat turn asks of AWS: boto3 calls by service and operation, DynamoDB request
units, S3 requests, Redis commands (docs/operations.md, "What it costs").

AWS mode runs in-process on moto (as tests/integration/bootstrap/test_aws_mode.py wires
it): the real DynamoDB and S3 adapters, the CodeBuild builder (moto does not run builds:
each build is played as it starts, handing back the source's files as its site, as that
test does), the pointer table on moto with SQLite standing in for the KeyValueStore (moto
has no data plane for it; its calls are counted from the code in the document). The offline
scripted model answers, so the model's own time and price are not in these figures.

Two runs: ``cheap`` (no Redis: turn events and rate limits in DynamoDB, the window cache in
the process) and ``default`` (``--redis-url``: this machine's Redis standing in for
ElastiCache: window cache, rate limits and turn events there). Each run signs up, creates
one html app (a creation, two changes, and a change paced to last ~16 s) and one Vue
app (a creation and a change), and counts each turn separately.

    .venv/bin/python bench/aws_requests.py [--redis-url redis://localhost:6379/11] [--json FILE]

Counting: every boto3 call passes ``BaseClient._make_api_call``, wrapped here. DynamoDB
units are computed from item sizes as DynamoDB's documentation states them (a write unit per
1 KB written, a read unit per 4 KB read strongly consistent, half that eventually consistent,
twice either inside a transaction); for UpdateItem and DeleteItem the item is read before and
after by an uncounted call, since the larger size is billed. Calls the played build box makes
(its presigned GET of the source and PUT of the archive) are counted under ``build``.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "layers" / "core" / "python"), str(ROOT)]

os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_LAMBDA_FUNCTION_NAME": "ZerocodeStack-Api",
    }
)

import boto3  # noqa: E402
import botocore.client  # noqa: E402
from moto import mock_aws  # noqa: E402

REGION = "us-east-1"
PASSWORD = "correct horse battery"

# ---- counting --------------------------------------------------------------------------


_PARTY = threading.local()


class Tally:
    def __init__(self) -> None:
        self.calls: Counter[tuple[str, str, str]] = Counter()  # (party, service, op/target)
        self.rru: defaultdict[str, float] = defaultdict(float)  # by table
        self.wru: Counter[str] = Counter()
        self.redis: Counter[str] = Counter()
        self.redis_kb: float = 0.0
        self.redis_ecpu: int = 0

    @property
    def party(self) -> str:
        return getattr(_PARTY, "name", "api")  # per thread: the box plays in StartBuild's

    @party.setter
    def party(self, name: str) -> None:
        _PARTY.name = name

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]


TALLY = Tally()
_original = botocore.client.BaseClient._make_api_call


def _size(value: Any) -> int:
    """An attribute value's size as DynamoDB counts it (close enough for units)."""
    ((kind, v),) = value.items()
    if kind in ("S",):
        return len(v.encode())
    if kind == "B":
        return len(v) if isinstance(v, (bytes, bytearray)) else len(str(v))
    if kind == "N":
        return len(str(v)) // 2 + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "M":
        return 3 + sum(len(k.encode()) + _size(x) for k, x in v.items())
    if kind == "L":
        return 3 + sum(1 + _size(x) for x in v)
    if kind in ("SS", "NS", "BS"):
        return sum(len(str(x)) for x in v)
    return 0


def item_size(item: dict[str, Any] | None) -> int:
    if not item:
        return 0
    return sum(len(k.encode()) + _size(v) for k, v in item.items())


def _raw_get(client: Any, table: str, key: dict[str, Any]) -> dict[str, Any] | None:
    answer = _original(client, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
    item: dict[str, Any] | None = answer.get("Item")
    return item


def _write_units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def _read_units(size: int, *, consistent: bool) -> float:
    units = max(1, math.ceil(size / 4096))
    return units if consistent else units / 2


def _sizes_before(client: Any, operation: str, params: dict[str, Any]) -> dict[int, int]:
    """The items an UpdateItem, DeleteItem or transaction will change, sized before it does
    (DynamoDB bills the larger of before and after)."""
    if operation in ("UpdateItem", "DeleteItem"):
        return {-1: item_size(_raw_get(client, params["TableName"], params["Key"]))}
    if operation != "TransactWriteItems":
        return {}
    before = {}
    for i, entry in enumerate(params["TransactItems"]):
        ((kind, body),) = entry.items()
        if kind in ("Update", "Delete", "ConditionCheck"):
            before[i] = item_size(_raw_get(client, body["TableName"], body["Key"]))
    return before


def _count_writes(
    client: Any, operation: str, params: dict[str, Any], before: dict[int, int]
) -> None:
    if operation == "PutItem":
        TALLY.wru[params["TableName"]] += _write_units(item_size(params["Item"]))
    elif operation in ("UpdateItem", "DeleteItem"):
        table = params["TableName"]
        after = (
            item_size(_raw_get(client, table, params["Key"])) if operation == "UpdateItem" else 0
        )
        TALLY.wru[table] += _write_units(max(before[-1], after))
    elif operation == "TransactWriteItems":
        for i, entry in enumerate(params["TransactItems"]):
            ((kind, body),) = entry.items()
            table = body["TableName"]
            if kind == "Put":
                size = item_size(body["Item"])
            elif kind == "Update":
                size = max(before[i], item_size(_raw_get(client, table, body["Key"])))
            else:
                size = before[i]
            TALLY.wru[table] += 2 * _write_units(size)
    elif operation == "BatchWriteItem":
        for table, requests in params["RequestItems"].items():
            for request in requests:
                put = request.get("PutRequest")
                TALLY.wru[table] += _write_units(item_size(put["Item"]) if put else 0)


def _count_reads(operation: str, params: dict[str, Any], answer: dict[str, Any]) -> None:
    consistent = bool(params.get("ConsistentRead"))
    if operation == "GetItem":
        size = item_size(answer.get("Item"))
        TALLY.rru[params["TableName"]] += _read_units(size, consistent=consistent)
    elif operation in ("Query", "Scan"):
        size = sum(item_size(i) for i in answer.get("Items", []))
        TALLY.rru[params["TableName"]] += _read_units(size, consistent=consistent)
    elif operation == "BatchGetItem":
        for table, items in answer.get("Responses", {}).items():
            consistent = bool(params["RequestItems"][table].get("ConsistentRead"))
            for i in items:
                TALLY.rru[table] += _read_units(item_size(i), consistent=consistent)
    elif operation == "TransactGetItems":
        for entry, got in zip(params["TransactItems"], answer.get("Responses", []), strict=False):
            size = item_size(got.get("Item"))
            TALLY.rru[entry["Get"]["TableName"]] += 2 * _read_units(size, consistent=True)


def _counted(self: Any, operation: str, params: dict[str, Any]) -> Any:
    service = self.meta.service_model.service_name
    target = params.get("TableName") or params.get("Bucket") or ""
    TALLY.calls[(TALLY.party, service, f"{operation} {target}".strip())] += 1
    if service != "dynamodb":
        return _original(self, operation, params)
    before = _sizes_before(self, operation, params)
    answer = _original(self, operation, params)
    _count_writes(self, operation, params, before)
    _count_reads(operation, params, answer)
    return answer


botocore.client.BaseClient._make_api_call = _counted


def _redis_bytes(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, (int, float)):
        return len(str(value))
    if isinstance(value, dict):
        return sum(_redis_bytes(k) + _redis_bytes(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sum(_redis_bytes(v) for v in value)
    return len(str(value))


def _tally_redis(args: tuple[Any, ...], answer: Any) -> None:
    name = str(args[0]).upper()
    if name in ("EVALSHA", "EVAL", "SCRIPT LOAD"):
        name = f"{name} {str(args[1])[:8]}"
    TALLY.redis[name] += 1
    kb = max(_redis_bytes(args[1:]), _redis_bytes(answer)) / 1024
    TALLY.redis_kb += kb
    # ElastiCache Serverless: a simple command, 1 ECPU per KB transferred (at least 1);
    # scripts and blocking reads consume more by their work (not measurable here: 1 per KB).
    TALLY.redis_ecpu += max(1, math.ceil(kb))


def _wrap_redis() -> None:
    import redis.asyncio.client as aclient
    import redis.client as sclient

    sync_exec: Any = sclient.Redis.execute_command
    async_exec: Any = aclient.Redis.execute_command

    def sync_counted(self: Any, *args: Any, **options: Any) -> Any:
        answer = sync_exec(self, *args, **options)
        _tally_redis(args, answer)
        return answer

    async def async_counted(self: Any, *args: Any, **options: Any) -> Any:
        answer = await async_exec(self, *args, **options)
        _tally_redis(args, answer)
        return answer

    sclient.Redis.execute_command = sync_counted  # type: ignore[method-assign]
    aclient.Redis.execute_command = async_counted  # type: ignore[method-assign]


# ---- the platform on moto --------------------------------------------------------------


def _stack(tmp: Path, redis_url: str | None) -> Any:
    from zerocode.adapters.aws.cognito_accounts import create_user_pool
    from zerocode.adapters.dynamodb.apps import create_apps_table
    from zerocode.adapters.dynamodb.builds import create_builds_table
    from zerocode.adapters.dynamodb.checks import create_checks_table
    from zerocode.adapters.dynamodb.deletions import create_deletions_table
    from zerocode.adapters.dynamodb.display import create_display_table
    from zerocode.adapters.dynamodb.lease import create_leases_table
    from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
    from zerocode.adapters.dynamodb.transcript import create_transcript_table
    from zerocode.adapters.dynamodb.turn_log import create_turn_events_table
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.publisher import SqlitePublisher
    from zerocode.bootstrap import aws_parts, wiring
    from zerocode.bootstrap.settings import Settings
    from zerocode.publishing.hot_set import HotSetPublisher

    aws_parts.client.cache_clear()
    ddb = boto3.client("dynamodb", region_name=REGION)
    s3 = boto3.client("s3", region_name=REGION)
    for make, name in (
        (create_transcript_table, "t-transcript"),
        (create_display_table, "t-display"),
        (create_apps_table, "t-apps"),
        (create_leases_table, "t-leases"),
        (create_deletions_table, "t-deletions"),
        (create_builds_table, "t-builds"),
        (create_turn_events_table, "t-turn-events"),
        (create_checks_table, "t-checks"),
        (create_pointers_table, "t-site-pointers"),
    ):
        make(ddb, name)
    for bucket in ("t-workspaces", "t-payloads", "t-builds"):
        s3.create_bucket(Bucket=bucket)
    s3.put_bucket_versioning(Bucket="t-workspaces", VersioningConfiguration={"Status": "Enabled"})
    pool, app_client = create_user_pool(boto3.client("cognito-idp", region_name=REGION), "zc")
    boto3.client("codebuild", region_name=REGION).create_project(
        name="t-project",
        source={"type": "S3", "location": "t-builds/sources/none.zip"},  # moto needs one
        artifacts={"type": "S3", "location": "t-builds"},
        environment={
            "type": "ARM_CONTAINER",
            "image": "aws/codebuild/amazonlinux2-aarch64-standard:3.0",
            "computeType": "BUILD_GENERAL1_SMALL",
        },
        serviceRole="arn:aws:iam::123456789012:role/t-codebuild",
    )
    settings = Settings(
        mode="aws",
        transcript_table="t-transcript",
        display_table="t-display",
        apps_table="t-apps",
        leases_table="t-leases",
        deletions_table="t-deletions",
        builds_table="t-builds",
        turn_events_table="t-turn-events",
        checks_table="t-checks",
        pointers_table="t-site-pointers",
        workspace_bucket="t-workspaces",
        payload_bucket="t-payloads",
        builds_bucket="t-builds",
        codebuild_project="t-project",
        build_data_role_arn="arn:aws:iam::123456789012:role/t-build-data",
        cognito_user_pool_id=pool,
        cognito_client_id=app_client,
        npm_cache_dir=tmp / "npm",
        trust_gateway_claims=True,
        redis_url=redis_url,
        rate_chat=100,  # the limiter still runs; six turns a minute must not be refused
    )
    hot = SqlitePublisher(SqliteDatabase(tmp / "kvs.db"))  # the KeyValueStore's stand-in
    truth = DynamoPointerStore(aws_parts.aws_client("dynamodb", settings), "t-site-pointers")
    platform = wiring.platform(settings, publisher=HotSetPublisher(truth, hot))
    _play_builds(platform)
    return platform


def _archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("out", "out/dist"):
            entry = tarfile.TarInfo(name)
            entry.type = tarfile.DIRTYPE
            tar.addfile(entry)
        for name, data in files.items():
            entry = tarfile.TarInfo(f"out/dist/{name}")
            entry.size = len(data)
            tar.addfile(entry, io.BytesIO(data))
    return buffer.getvalue()


def _play_builds(platform: Any) -> None:
    """As tests/integration/bootstrap/test_aws_mode.py's play_builds_at_start: the box's
    GET and DELETE of its source and the upload of its archive (a PUT here for the POST),
    counted as the build's."""
    builder = platform.publishing.builder

    put = builder.sources.put

    def play(runner: str, app_id: str, build_id: str, sent: dict[str, bytes]) -> None:
        put(runner, app_id, build_id, sent)  # the platform puts the source, then the box runs
        key = builder.sources.key(runner, app_id, build_id)
        TALLY.party = "build"
        try:
            zipped = builder.s3.get_object(Bucket="t-builds", Key=key)["Body"].read()
            builder.s3.delete_object(Bucket="t-builds", Key=key)
            with zipfile.ZipFile(io.BytesIO(zipped)) as source:
                files = {
                    n: source.read(n) for n in source.namelist() if not n.startswith(".zerocode/")
                }
            builder.s3.put_object(
                Bucket="t-builds", Key=builder.staging_key(app_id, build_id), Body=_archive(files)
            )
        finally:
            TALLY.party = "api"

    builder.sources.put = play


def _gateway(token: str) -> dict[str, str]:
    import base64

    from zerocode.gateway import REQUEST_CONTEXT

    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    flat = {k: ",".join(v) if isinstance(v, list) else str(v) for k, v in claims.items()}
    context = {"requestId": "r-1", "stage": "prod", "authorizer": {"claims": flat}}
    return {REQUEST_CONTEXT: json.dumps(context), "Authorization": f"Bearer {token}"}


def _snapshot() -> dict[str, Any]:
    calls: dict[str, int] = defaultdict(int)
    for (party, service, op), n in sorted(TALLY.calls.items()):
        calls[f"{party} {service} {op}"] += n
    return {
        "calls": dict(calls),
        "rru": dict(TALLY.rru),
        "wru": dict(TALLY.wru),
        "redis": dict(TALLY.redis),
        "redis_kb": round(TALLY.redis_kb, 1),
        "redis_ecpu": TALLY.redis_ecpu,
    }


# (app kind, its first prompt, the turns' messages). The offline model changes a page's first
# heading to a request's first quoted string; ``[[pace=N]]`` waits N ms before each chunk,
# so that turn lasts long enough to show what a turn costs per second it runs.
APPS = (
    (
        "html",
        "A page about otters",
        [
            "A page about otters",
            'Change the title to "Otters at play"',
            'Change the title to "Otters at rest"',
            'Change the title to "Slow otters" [[pace=300]]',
        ],
    ),
    (
        "vue_project",
        "A Vue todo list",
        ["A Vue todo list", 'Change the title to "Todo, today"'],
    ),
)


def run(profile: str, redis_url: str | None) -> dict[str, Any]:
    from fastapi.testclient import TestClient

    from zerocode.http.app import create_app

    results: dict[str, Any] = {"profile": profile, "turns": {}}
    with mock_aws(), tempfile.TemporaryDirectory() as tmp:
        platform = _stack(Path(tmp), redis_url)
        with TestClient(create_app(platform), base_url="https://api.example") as client:
            client.post("/api/users/register", json={"account": "alice", "password": PASSWORD})
            token = client.post(
                "/api/users/login", json={"account": "alice", "password": PASSWORD}
            ).json()["token"]
            client.cookies.clear()
            headers = _gateway(token)
            for kind, prompt, messages in APPS:
                TALLY.reset()
                made = client.post(
                    "/api/apps", headers=headers, json={"initPrompt": prompt, "codeGenType": kind}
                )
                assert made.status_code == 201, made.text
                app_id = made.json()["id"]
                results["turns"][f"{kind} create app (POST /api/apps)"] = _snapshot()
                for n, message in enumerate(messages):
                    TALLY.reset()
                    started = time.monotonic()
                    answer = client.post(
                        f"/api/apps/{app_id}/chat", headers=headers, json={"message": message}
                    )
                    assert answer.status_code == 200, (message, answer.status_code, answer.text)
                    done = [line for line in answer.text.splitlines() if line.startswith("data:")][
                        -1
                    ]
                    status = json.loads(done.removeprefix("data:")).get("status")
                    snap = _snapshot()
                    snap["status"] = status
                    snap["seconds"] = round(time.monotonic() - started, 1)
                    snap["events"] = answer.text.count("\nid: ") + answer.text.startswith("id: ")
                    snap["response_bytes"] = len(answer.content)
                    results["turns"][f"{kind} turn {n + 1}"] = snap
    return results


# S3's request classes (us-east-1: PUT, COPY, POST and LIST at $0.005 per 1,000, GET and the
# rest at $0.0004; DELETE free). Tagging is counted with PUT, as docs/operations.md does.
PUT_CLASS = {
    "PutObject",
    "CopyObject",
    "ListObjectsV2",
    "ListObjects",
    "ListObjectVersions",
    "PutObjectTagging",
    "DeleteObjectTagging",
    "CreateMultipartUpload",
    "UploadPart",
    "CompleteMultipartUpload",
}
GET_CLASS = {"GetObject", "HeadObject", "GetObjectTagging"}


def _s3(calls: dict[str, int], bucket: str, kinds: set[str]) -> int:
    return sum(
        n
        for k, n in calls.items()
        if k.startswith("api s3 ") and k.split()[2] in kinds and k.split()[3] == bucket
    )


def summary(result: dict[str, Any]) -> str:
    """Per turn: DynamoDB units (the turn-event log's apart), S3 requests by bucket (the
    builds bucket's belong to the build), Redis commands; then every call."""
    lines = [f"== profile {result['profile']}"]
    for name, snap in result["turns"].items():
        calls, rru, wru = snap["calls"], snap["rru"], snap["wru"]
        ddb = sum(n for k, n in calls.items() if k.startswith("api dynamodb "))
        lines.append(
            f"-- {name}: {snap.get('status') or ''} events={snap.get('events')} "
            f"s={snap.get('seconds')} SSE bytes={snap.get('response_bytes')}\n"
            f"   DynamoDB calls={ddb} RRU={sum(rru.values()):g} "
            f"(turn events {rru.get('t-turn-events', 0):g}) WRU={sum(wru.values())} "
            f"(turn events {wru.get('t-turn-events', 0)})\n"
            f"   S3 workspaces PUT-class={_s3(calls, 't-workspaces', PUT_CLASS)} "
            f"GET-class={_s3(calls, 't-workspaces', GET_CLASS)}; "
            f"payloads PUT-class={_s3(calls, 't-payloads', PUT_CLASS)} "
            f"GET-class={_s3(calls, 't-payloads', GET_CLASS)}; "
            f"builds PUT-class={_s3(calls, 't-builds', PUT_CLASS)} "
            f"GET-class={_s3(calls, 't-builds', GET_CLASS)}\n"
            f"   Redis commands={sum(snap['redis'].values())} ~{snap['redis_kb']} KB "
            f"~{snap['redis_ecpu']} ECPU {snap['redis'] or ''}"
        )
        for k, n in sorted(calls.items()):
            lines.append(f"     {n:4d}  {k}")
        lines.append(f"     RRU by table {rru}")
        lines.append(f"     WRU by table {wru}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--redis-url", default=None, help="a Redis for the default profile's run (else skipped)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write every count here")
    args = parser.parse_args(argv)
    results = [run("cheap", None)]
    if args.redis_url:
        _wrap_redis()
        results.append(run("default", args.redis_url))
    for result in results:
        print(summary(result))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
