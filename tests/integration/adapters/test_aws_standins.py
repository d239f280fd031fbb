"""The KeyValueStore and CodeBuild stand-ins of the AWS-mode e2e (tests/aws_standins.py),
through real boto3 clients: the semantics KvsPublisher relies on hold there too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.aws_standins import StandIns
from zerocode.adapters.aws.cloudfront_publisher import KvsPublisher
from zerocode.errors import Conflict
from zerocode.publishing.pointers import SiteTarget

ARN = "arn:aws:cloudfront::123456789012:key-value-store/327284aa-bcd5-499f-a3ff-26b9a9d31b58"


@pytest.fixture
def standins() -> Iterator[StandIns]:
    running = StandIns().start()
    running.kvs.add_store(ARN)
    yield running
    running.stop()


def client(standins: StandIns, service: str, **config: Any) -> Any:
    name = service.upper().replace("-", "_")
    return boto3.client(
        service,
        region_name="us-east-1",
        endpoint_url=standins.client_environment()[f"AWS_ENDPOINT_URL_{name}"],
        config=Config(proxies={"http": standins.proxy_url}, **config),
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


class RacingClient:
    """A KVS client another writer beats between each DescribeKeyValueStore and the write,
    ``races`` times."""

    def __init__(self, inner: Any, rival: Any, races: int) -> None:
        self.inner, self.rival, self.races = inner, rival, races

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def describe_key_value_store(self, **kwargs: Any) -> Any:
        answer = self.inner.describe_key_value_store(**kwargs)
        if self.races:
            self.races -= 1
            etag = self.rival.describe_key_value_store(KvsARN=ARN)["ETag"]
            self.rival.put_key(
                KvsARN=ARN, Key=f"site:rival{self.races:04d}", Value="a/b", IfMatch=etag
            )
        return answer


def test_the_publisher_points_reads_and_removes_through_the_kvs_stand_in(
    standins: StandIns,
) -> None:
    publisher = KvsPublisher(client(standins, "cloudfront-keyvaluestore"), ARN)
    assert publisher.target("site:deploykey1") is None
    publisher.point("site:deploykey1", SiteTarget("app1", "b1"))
    publisher.point("site:deploykey1", SiteTarget("app1", "b2"))
    assert publisher.target("site:deploykey1") == SiteTarget("app1", "b2")
    publisher.remove("site:deploykey1")
    publisher.remove("site:deploykey1")  # already gone: fine
    assert standins.kvs.items(ARN) == {}
    assert standins.escaped == [] and standins.unsigned == []


def test_a_stale_etag_is_a_conflict_the_publisher_retries(standins: StandIns) -> None:
    kvs = client(standins, "cloudfront-keyvaluestore")
    etag = kvs.describe_key_value_store(KvsARN=ARN)["ETag"]
    kvs.put_key(KvsARN=ARN, Key="site:first0001", Value="a/b1", IfMatch=etag)
    with pytest.raises(ClientError) as stale:
        kvs.put_key(KvsARN=ARN, Key="site:second001", Value="a/b2", IfMatch=etag)
    assert stale.value.response["Error"]["Code"] == "ConflictException"

    racing = RacingClient(kvs, client(standins, "cloudfront-keyvaluestore"), races=2)
    KvsPublisher(racing, ARN).point("site:deploykey1", SiteTarget("app1", "b1"))
    assert standins.kvs.items(ARN)["site:deploykey1"] == "app1/b1"  # third try
    with pytest.raises(Conflict, match="raced"):
        KvsPublisher(RacingClient(kvs, kvs, races=3), ARN, max_attempts=3).point(
            "site:deploykey2", SiteTarget("app1", "b1")
        )


def test_unsigned_requests_unknown_stores_and_other_hosts_are_refused(
    standins: StandIns,
) -> None:
    unsigned = client(standins, "cloudfront-keyvaluestore", signature_version=UNSIGNED)
    with pytest.raises(ClientError, match="AccessDenied"):
        unsigned.describe_key_value_store(KvsARN=ARN)
    assert standins.unsigned
    other = ARN.replace("327284aa", "00000000")
    with pytest.raises(ClientError, match="ResourceNotFound"):
        client(standins, "cloudfront-keyvaluestore").describe_key_value_store(KvsARN=other)
    answer = httpx.get("http://sts.amazonaws.com/", proxy=standins.proxy_url)
    assert answer.status_code == 502
    assert standins.escaped == ["GET http://sts.amazonaws.com/"]


def test_codebuild_builds_run_until_they_are_finished(standins: StandIns) -> None:
    standins.codebuild.add_project("zc-vue", {})
    codebuild = client(standins, "codebuild")
    with pytest.raises(ClientError, match="ResourceNotFound"):
        codebuild.start_build(projectName="other")
    variables = [{"name": "ZEROCODE_BUILD_ID", "value": "b1", "type": "PLAINTEXT"}]
    started = codebuild.start_build(
        projectName="zc-vue", idempotencyToken="b1", environmentVariablesOverride=variables
    )["build"]
    again = codebuild.start_build(projectName="zc-vue", idempotencyToken="b1")["build"]
    assert again["id"] == started["id"]  # the same token starts no second build
    (build,) = codebuild.batch_get_builds(ids=[started["id"]])["builds"]
    assert build["buildStatus"] == "IN_PROGRESS"
    finished = standins.codebuild.finish(started["id"], "FAILED")
    (build,) = codebuild.batch_get_builds(ids=[started["id"]])["builds"]
    assert build["buildStatus"] == "FAILED" and build["phases"][-1]["phaseStatus"] == "FAILED"
    event = finished.event()
    assert event["detail"]["build-status"] == "FAILED"
    assert event["detail"]["additional-information"]["environment"]["environment-variables"] == (
        variables
    )
