"""KvsPublisher against botocore's Stubber on a real cloudfront-keyvaluestore client.

moto has no KeyValueStore, so the Stubber checks every request against the real service
model and answers with canned responses, including the conflicts a busy store returns.

The client is built with ``signature_version=UNSIGNED``. The service's endpoint rules ask
for SigV4A, and botocore resolves that *before* the Stubber's ``before-call`` hook
answers: without ``awscrt`` a default client raises ``MissingDependencyException`` on
every call, stub or not (``test_default_client_needs_awscrt`` pins this down).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore import UNSIGNED
from botocore.compat import HAS_CRT
from botocore.config import Config
from botocore.exceptions import ClientError, MissingDependencyException
from botocore.stub import Stubber

from zerocode.adapters.aws.cloudfront_publisher import KvsPublisher
from zerocode.errors import Conflict
from zerocode.publishing.pointers import SiteTarget

ARN = "arn:aws:cloudfront::123456789012:key-value-store/327284aa-bcd5-499f-a3ff-26b9a9d31b58"
POINTER = "site:deploykey1"
TARGET = SiteTarget("app1", "b1")
SIZES = {"ItemCount": 1, "TotalSizeInBytes": 24}


def _client(config: Config | None = None) -> Any:
    return boto3.client(
        "cloudfront-keyvaluestore",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=config,
    )


@pytest.fixture
def stub() -> Iterator[Stubber]:
    with Stubber(_client(Config(signature_version=UNSIGNED))) as stubber:
        yield stubber


def _publisher(stub: Stubber, **kw: Any) -> KvsPublisher:
    return KvsPublisher(stub.client, ARN, **kw)


def expect_describe(stub: Stubber, etag: str) -> None:
    stub.add_response(
        "describe_key_value_store",
        {"KvsARN": ARN, "ETag": etag, "Created": datetime(2024, 1, 1, tzinfo=UTC), **SIZES},
        {"KvsARN": ARN},
    )


def expect_put(stub: Stubber, etag: str, error: str | None = None, message: str = "") -> None:
    params = {"KvsARN": ARN, "Key": POINTER, "Value": "app1/b1", "IfMatch": etag}
    if error is None:
        stub.add_response("put_key", {"ETag": etag + "-next", **SIZES}, params)
    else:
        stub.add_client_error("put_key", error, message, expected_params=params)


def expect_delete(stub: Stubber, etag: str, error: str | None = None) -> None:
    params = {"KvsARN": ARN, "Key": POINTER, "IfMatch": etag}
    if error is None:
        stub.add_response("delete_key", {"ETag": etag + "-next", **SIZES}, params)
    else:
        stub.add_client_error("delete_key", error, expected_params=params)


# point


def test_point_writes_with_the_described_etag(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_put(stub, "e1")
    _publisher(stub).point(POINTER, TARGET)
    stub.assert_no_pending_responses()


def test_point_retries_a_stale_etag_with_a_fresh_one(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_put(stub, "e1", "ConflictException", "another writer changed the store")
    expect_describe(stub, "e2")
    expect_put(stub, "e2")
    _publisher(stub).point(POINTER, TARGET)
    stub.assert_no_pending_responses()


def test_point_retries_a_validation_error_about_the_etag(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_put(stub, "e1", "ValidationException", "Provided ETag does not match")
    expect_describe(stub, "e2")
    expect_put(stub, "e2")
    _publisher(stub).point(POINTER, TARGET)
    stub.assert_no_pending_responses()


def test_point_gives_up_after_max_attempts(stub: Stubber) -> None:
    for etag in ("e1", "e2", "e3"):
        expect_describe(stub, etag)
        expect_put(stub, etag, "ConflictException")
    with pytest.raises(Conflict, match="raced other updates"):
        _publisher(stub, max_attempts=3).point(POINTER, TARGET)
    stub.assert_no_pending_responses()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("ValidationException", "Key length exceeds limit"),
        ("AccessDeniedException", "not authorized"),
        ("ServiceQuotaExceededException", "store is full"),
    ],
)
def test_point_does_not_retry_other_errors(stub: Stubber, code: str, message: str) -> None:
    expect_describe(stub, "e1")
    expect_put(stub, "e1", code, message)
    with pytest.raises(ClientError) as info:
        _publisher(stub).point(POINTER, TARGET)
    assert info.value.response["Error"]["Code"] == code
    stub.assert_no_pending_responses()


# target


def test_target_decodes_the_stored_value(stub: Stubber) -> None:
    stub.add_response(
        "get_key", {"Key": POINTER, "Value": "app1/b1", **SIZES}, {"KvsARN": ARN, "Key": POINTER}
    )
    assert _publisher(stub).target(POINTER) == TARGET
    stub.assert_no_pending_responses()


def test_target_of_a_missing_pointer_is_none(stub: Stubber) -> None:
    stub.add_client_error(
        "get_key",
        "ResourceNotFoundException",
        http_status_code=404,
        expected_params={"KvsARN": ARN, "Key": POINTER},
    )
    assert _publisher(stub).target(POINTER) is None
    stub.assert_no_pending_responses()


# remove


def test_remove_deletes_with_the_described_etag(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_delete(stub, "e1")
    _publisher(stub).remove(POINTER)
    stub.assert_no_pending_responses()


def test_remove_is_idempotent(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_delete(stub, "e1", "ResourceNotFoundException")
    _publisher(stub).remove(POINTER)
    stub.assert_no_pending_responses()


def test_remove_retries_a_stale_etag(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_delete(stub, "e1", "ConflictException")
    expect_describe(stub, "e2")
    expect_delete(stub, "e2")
    _publisher(stub).remove(POINTER)
    stub.assert_no_pending_responses()


def test_remove_gives_up_after_max_attempts(stub: Stubber) -> None:
    for etag in ("e1", "e2"):
        expect_describe(stub, etag)
        expect_delete(stub, etag, "ConflictException")
    with pytest.raises(Conflict):
        _publisher(stub, max_attempts=2).remove(POINTER)
    stub.assert_no_pending_responses()


def test_remove_from_a_missing_store_is_an_error(stub: Stubber) -> None:
    """Only a missing *key* counts as already removed; a wrong store ARN must surface."""
    stub.add_client_error(
        "describe_key_value_store",
        "ResourceNotFoundException",
        http_status_code=404,
        expected_params={"KvsARN": ARN},
    )
    with pytest.raises(ClientError):
        _publisher(stub).remove(POINTER)
    stub.assert_no_pending_responses()


def test_max_attempts_must_allow_one_write() -> None:
    with pytest.raises(ValueError):
        KvsPublisher(object(), ARN, max_attempts=0)


def test_default_client_needs_awscrt() -> None:
    """Why the fixture's client is UNSIGNED: SigV4A is chosen before the Stubber answers."""
    with Stubber(_client()) as stub:
        expect_describe(stub, "e1")
        if HAS_CRT:
            assert stub.client.describe_key_value_store(KvsARN=ARN)["ETag"] == "e1"
        else:
            with pytest.raises(MissingDependencyException):
                stub.client.describe_key_value_store(KvsARN=ARN)


# pointers: the preview sweep walks the store (ListKeys has no prefix filter)


def test_pointers_pages_through_the_store_and_keeps_the_prefix(stub: Stubber) -> None:
    stub.add_response(
        "list_keys",
        {
            "Items": [
                {"Key": "preview:aaaaaaaa", "Value": "app1/b1"},
                {"Key": "site:bbbbbbbb", "Value": "app1/b0"},
                {"Key": "preview:cccccccc", "Value": "not a pointer"},
            ],
            "NextToken": "page-2",
        },
        {"KvsARN": ARN, "MaxResults": 50},
    )
    stub.add_response(
        "list_keys",
        {"Items": [{"Key": "preview:dddddddd", "Value": "app2/b2"}]},
        {"KvsARN": ARN, "MaxResults": 50, "NextToken": "page-2"},
    )
    assert list(_publisher(stub).pointers("preview:")) == [
        ("preview:aaaaaaaa", SiteTarget("app1", "b1")),
        ("preview:cccccccc", None),
        ("preview:dddddddd", SiteTarget("app2", "b2")),
    ]
    stub.assert_no_pending_responses()


def expect_get(stub: Stubber, value: str | None) -> None:
    if value is None:
        stub.add_client_error(
            "get_key",
            "ResourceNotFoundException",
            http_status_code=404,
            expected_params={"KvsARN": ARN, "Key": POINTER},
        )
    else:
        stub.add_response(
            "get_key", {"Key": POINTER, "Value": value, **SIZES}, {"KvsARN": ARN, "Key": POINTER}
        )


def test_remove_if_deletes_under_the_etag_it_read_the_value_with(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_get(stub, "app1/b1")
    expect_delete(stub, "e1")
    assert _publisher(stub).remove_if(POINTER, TARGET) is True
    stub.assert_no_pending_responses()


def test_remove_if_leaves_a_pointer_that_names_another_build(stub: Stubber) -> None:
    """A turn flipped the preview to a new build after the sweep listed it: kept."""
    expect_describe(stub, "e1")
    expect_get(stub, "app1/b9")
    assert _publisher(stub).remove_if(POINTER, TARGET) is False
    stub.assert_no_pending_responses()


def test_remove_if_rechecks_when_a_write_slipped_in_between(stub: Stubber) -> None:
    """Read under e1, the delete fails on e1 (something wrote); read again under e2: the
    pointer was flipped, so it stays."""
    expect_describe(stub, "e1")
    expect_get(stub, "app1/b1")
    expect_delete(stub, "e1", "ConflictException")
    expect_describe(stub, "e2")
    expect_get(stub, "app1/b9")
    assert _publisher(stub).remove_if(POINTER, TARGET) is False
    stub.assert_no_pending_responses()


def test_remove_if_of_a_missing_pointer_is_false(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_get(stub, None)
    assert _publisher(stub).remove_if(POINTER, TARGET) is False
    stub.assert_no_pending_responses()


def test_remove_if_removes_a_value_that_is_no_pointer(stub: Stubber) -> None:
    expect_describe(stub, "e1")
    expect_get(stub, "garbage")
    expect_delete(stub, "e1")
    assert _publisher(stub).remove_if(POINTER, None) is True
    stub.assert_no_pending_responses()


def test_size_is_what_the_service_counts(stub: Stubber) -> None:
    stub.add_response(
        "describe_key_value_store",
        {
            "KvsARN": ARN,
            "ETag": "e1",
            "Created": datetime(2024, 1, 1, tzinfo=UTC),
            "ItemCount": 2,
            "TotalSizeInBytes": 133,
        },
        {"KvsARN": ARN},
    )
    size = _publisher(stub).size()
    assert (size.items, size.bytes) == (2, 133)
    stub.assert_no_pending_responses()


# a deploy's routes (issue 44: site_router.js reads them)


def test_a_deploys_routes_are_one_key_bounded_to_a_value(stub: Stubber) -> None:
    routes = ["/", "/about", "/notes/5", "/has space", *(f"/r{i:04d}" for i in range(300))]
    expected = " ".join(["about", "notes/5", *(f"r{i:04d}" for i in range(300))])
    expected = expected[: expected.rindex(" ", 0, 1000)]  # what fits in 1,000 bytes
    expect_describe(stub, "e1")
    stub.add_response(
        "put_key",
        {"ETag": "e2", **SIZES},
        {"KvsARN": ARN, "Key": "routes:app1/b1", "Value": expected, "IfMatch": "e1"},
    )
    _publisher(stub).put_routes("app1", "b1", routes)
    _publisher(stub).put_routes("app1", "b2", ["/"])  # no route: nothing written
    stub.assert_no_pending_responses()
