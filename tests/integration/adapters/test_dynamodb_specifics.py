"""What only the DynamoDB adapter has to get right: request shape, item size limits, S3, TTL."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.factories import step, turn_entries, user
from zerocode.errors import Conflict, PayloadTooLarge
from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult
from zerocode.memory.transcript import Entry, EntryKind

APP = "app-1"
TRANSCRIPT, DISPLAY, BUCKET = "zc-transcript", "zc-display", "zc-payloads"


@dataclass
class Aws:
    client: Any
    s3: Any
    operations: list[str]  # DynamoDB operations sent, in order, since the last clear()

    def store(self, **kw: Any) -> Any:
        from zerocode.adapters.dynamodb.transcript import DynamoTranscriptStore

        kw.setdefault("s3", self.s3)
        kw.setdefault("payload_bucket", BUCKET)
        return DynamoTranscriptStore(self.client, TRANSCRIPT, **kw)

    def item(self, app_id: str, seq: int) -> dict[str, Any]:
        return dict(
            self.client.get_item(
                TableName=TRANSCRIPT, Key={"app_id": {"S": app_id}, "seq": {"N": str(seq)}}
            ).get("Item", {})
        )

    def objects(self, prefix: str = "transcript/") -> list[str]:
        listing = self.s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
        return [o["Key"] for o in listing.get("Contents", [])]


@pytest.fixture
def env(aws: None) -> Iterator[Aws]:
    import boto3

    from zerocode.adapters.dynamodb.display import create_display_table
    from zerocode.adapters.dynamodb.transcript import create_transcript_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    create_transcript_table(client, TRANSCRIPT)
    create_display_table(client, DISPLAY)
    operations: list[str] = []

    def record(request: Any, **_: Any) -> None:  # once per HTTP request, retries included
        operations.append(request.headers["X-Amz-Target"].decode().split(".")[-1])

    client.meta.events.register("before-send.dynamodb", record)
    yield Aws(client, s3, operations)


def noise(size: int, seed: int = 0) -> str:
    """Text zlib cannot shrink much (about 6 bits per character)."""
    rng = random.Random(seed)
    return "".join(rng.choices(string.ascii_letters + string.digits, k=size))


def write_step(seq: int, contents: list[str]) -> list[Entry]:
    """A CALL writing files followed by one RESULT per call whose content is the file."""
    calls = tuple(
        ToolCall(
            f"c{seq}_{i}", "write_file", json.dumps({"path": f"src/f{i}.vue", "content": "ok"})
        )
        for i in range(len(contents))
    )
    out = [
        Entry(
            seq=seq,
            turn=1,
            unit=seq,
            turn_start=1,
            kind=EntryKind.CALL,
            message=AssistantMessage(None, calls),
        )
    ]
    out += [
        Entry(
            seq=seq + i,
            turn=1,
            unit=seq,
            turn_start=1,
            kind=EntryKind.RESULT,
            message=ToolResult.success(call, text),
        )
        for i, (call, text) in enumerate(zip(calls, contents, strict=True), start=1)
    ]
    return out


def test_a_step_is_one_transact_write_items_request(env: Aws) -> None:
    store = env.store()
    store.append(APP, [user(1, 1)], expected_head=0)
    assert env.operations == ["TransactWriteItems"]
    env.operations.clear()
    store.append(APP, step(2, 1, 1, calls=3), expected_head=1)
    assert env.operations == ["TransactWriteItems"]
    assert [e.seq for e in store.tail(APP, 10)] == [1, 2, 3, 4, 5]


def test_head_and_short_tail_are_one_query_each(env: Aws) -> None:
    store = env.store()
    for turn in range(1, 11):
        head = store.head(APP).seq
        store.append(APP, turn_entries(head + 1, turn, steps=1, calls=2), expected_head=head)
    env.operations.clear()
    assert store.head(APP).seq == 50
    assert len(store.tail(APP, 7)) == 7
    assert env.operations == ["Query", "Query"]


def test_tail_follows_pages_cut_short_by_the_1mb_response_limit(env: Aws) -> None:
    store = env.store()
    # Nine results of ~250 KB compressed each: inline (bodyz), about four per 1 MB page.
    entries = [user(1, 1), *write_step(2, [noise(330_000, seed=i) for i in range(9)])]
    store.append(APP, entries, expected_head=0)
    assert all("bodyz" in env.item(APP, seq) for seq in range(3, 12))
    env.operations.clear()
    assert store.tail(APP, 10) == entries[-10:]
    assert 1 < env.operations.count("Query") == len(env.operations)
    env.operations.clear()
    assert store.tail(APP, 2) == entries[-2:]
    assert env.operations == ["Query"]


def test_offload_needed_without_bucket_is_refused_before_any_write(env: Aws) -> None:
    for store in (env.store(s3=None, payload_bucket=None), env.store(payload_bucket=None)):
        env.operations.clear()
        with pytest.raises(PayloadTooLarge, match="no payload bucket"):
            store.append(APP, [user(1, 1), *write_step(2, [noise(600_000)])], expected_head=0)
        assert env.operations == []
        assert store.tail(APP, 10) == []
    assert env.objects() == []


def test_large_bodies_are_compressed_or_offloaded_and_delete_removes_them(env: Aws) -> None:
    store = env.store()
    small, compressible, incompressible = "done", "<p>hello</p>\n" * 20_000, noise(600_000)
    entries = [user(1, 1), *write_step(2, [small, compressible, incompressible])]
    store.append(APP, entries, expected_head=0)
    store.append("app-10", [user(1, 1), *write_step(2, [incompressible])], expected_head=0)

    assert set(env.item(APP, 3)) >= {"body"} and "bodyz" not in env.item(APP, 3)
    zipped = env.item(APP, 4)
    assert "bodyz" in zipped and "body" not in zipped and "bodyref" not in zipped
    assert len(zipped["bodyz"]["B"]) < len(compressible) // 20
    offloaded = env.item(APP, 5)
    assert "bodyref" in offloaded and "body" not in offloaded and "bodyz" not in offloaded
    key = offloaded["bodyref"]["S"]
    assert key == f"transcript/{APP}/{5:012d}-{entries[4].uid}.json.z"
    assert env.s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] > 300 * 1024
    assert store.tail(APP, 10) == entries
    assert store.get(APP, 5) == entries[4]

    assert store.delete_app(APP) == len(entries)
    assert env.objects(f"transcript/{APP}/") == []
    assert len(env.objects("transcript/app-10/")) == 1  # a prefix of another app is not ours
    assert store.tail("app-10", 10)[-1].message == ToolResult.success(
        ToolCall("c2_0", "write_file", json.dumps({"path": "src/f0.vue", "content": "ok"})),
        incompressible,
    )


def test_steps_over_the_transaction_size_limit_offload_the_largest_bodies(env: Aws) -> None:
    """Moto does not enforce DynamoDB's 4 MB per transaction; the adapter must."""
    from zerocode.adapters.dynamodb.transcript import INLINE_MAX, TRANSACTION_BUDGET

    contents = [noise(330_000, seed=i) for i in range(20)]  # ~250 KB compressed each
    entries = [user(1, 1), *write_step(2, contents)]
    with pytest.raises(PayloadTooLarge):
        env.store(payload_bucket=None).append(APP, entries, expected_head=0)

    store = env.store()
    store.append(APP, entries, expected_head=0)
    items = [env.item(APP, seq) for seq in range(1, len(entries) + 1)]
    inline = sum(len(i["bodyz"]["B"]) for i in items if "bodyz" in i)
    assert all(len(i["bodyz"]["B"]) <= INLINE_MAX for i in items if "bodyz" in i)
    assert 0 < inline <= TRANSACTION_BUDGET
    assert len(env.objects()) == sum("bodyref" in i for i in items) > 0
    assert store.tail(APP, 30) == entries


def test_missing_or_damaged_payloads_make_unreadable_entries(env: Aws) -> None:
    store = env.store()
    entries = [user(1, 1), *write_step(2, [noise(600_000), "<p>x</p>" * 5_000])]
    store.append(APP, entries, expected_head=0)
    env.s3.delete_object(Bucket=BUCKET, Key=env.item(APP, 3)["bodyref"]["S"])
    env.client.update_item(
        TableName=TRANSCRIPT,
        Key={"app_id": {"S": APP}, "seq": {"N": "4"}},
        UpdateExpression="SET bodyz = :z",
        ExpressionAttributeValues={":z": {"B": b"not zlib"}},
    )

    tail = store.tail(APP, 10)
    assert [e.seq for e in tail] == [1, 2, 3, 4]
    assert tail[:2] == entries[:2]
    for entry in tail[2:]:
        assert entry.message is None and entry.error
        assert (entry.unit, entry.kind) == (2, EntryKind.RESULT)
        assert entry.uid == entries[entry.seq - 1].uid
    assert store.get(APP, 3) == tail[2]
    # A reader without the bucket cannot fetch the payload either, and says so.
    assert env.store(s3=None, payload_bucket=None).get(APP, 3).message is None


def test_conflict_leaves_no_stray_payloads(env: Aws) -> None:
    store = env.store()
    store.append(APP, [user(1, 1)], expected_head=0)
    store.append(APP, [user(2, 2)], expected_head=1)
    with pytest.raises(Conflict, match=APP):
        store.append(APP, [*write_step(2, [noise(600_000)])], expected_head=1)
    with pytest.raises(Conflict):  # ahead of the head: the ConditionCheck catches it
        store.append(APP, [user(6, 3)], expected_head=5)
    assert env.objects() == []
    assert [e.seq for e in store.tail(APP, 10)] == [1, 2]


def test_more_entries_than_one_transaction_holds_are_refused(env: Aws) -> None:
    store = env.store()
    with pytest.raises(ValueError, match="at most 99"):
        store.append(APP, [user(seq, 1) for seq in range(1, 101)], expected_head=0)
    assert env.operations == []


def test_tables_expire_items_by_ttl_and_creation_is_idempotent(env: Aws) -> None:
    from zerocode.adapters.dynamodb.display import create_display_table
    from zerocode.adapters.dynamodb.transcript import create_transcript_table

    create_transcript_table(env.client, TRANSCRIPT)
    create_display_table(env.client, DISPLAY)
    for table in (TRANSCRIPT, DISPLAY):
        ttl = env.client.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires_at"}
        described = env.client.describe_table(TableName=table)["Table"]
        assert described["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    keys = env.client.describe_table(TableName=TRANSCRIPT)["Table"]["AttributeDefinitions"]
    assert {"AttributeName": "seq", "AttributeType": "N"} in keys
