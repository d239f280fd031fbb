"""AWS wiring of the site pointers (issue 27): with ZEROCODE_POINTERS_TABLE the DynamoDB
table is the truth and the KeyValueStore its hot set, bounded by a ledger in the table;
without it, the store alone."""

from __future__ import annotations

from zerocode.adapters.aws.cloudfront_publisher import HotSetLedger, KvsPublisher
from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
from zerocode.bootstrap import aws_parts
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.hot_set import HotSetPublisher
from zerocode.publishing.pointers import SiteTarget

KVS_ARN = "arn:aws:cloudfront::123456789012:key-value-store/9a0c4f9e-3b5f-4c9e-9d7e-0a1b2c3d4e5f"


def settings(pointers_table: str | None = None) -> Settings:
    return Settings(
        mode="aws", aws_region="us-east-1", sites_kvs_arn=KVS_ARN, pointers_table=pointers_table
    )


def test_without_a_pointer_table_the_store_is_the_publisher(aws: None) -> None:
    assert isinstance(aws_parts.site_publisher(settings()), KvsPublisher)


def test_with_a_pointer_table_it_is_the_truth_and_the_store_its_hot_set(aws: None) -> None:
    import boto3

    create_pointers_table(boto3.client("dynamodb", region_name="us-east-1"), "zc-pointers")
    publisher = aws_parts.site_publisher(settings(pointers_table="zc-pointers"))
    assert isinstance(publisher, HotSetPublisher)
    assert isinstance(publisher.truth, DynamoPointerStore)
    assert publisher.truth.table == "zc-pointers"
    assert isinstance(publisher.hot, KvsPublisher) and publisher.hot.kvs_arn == KVS_ARN
    assert isinstance(publisher.ledger, HotSetLedger) and publisher.ledger.table == "zc-pointers"
    publisher.truth.point("site:deploykey1", SiteTarget("app1", "b1"))
    assert publisher.target("site:deploykey1") == SiteTarget("app1", "b1")
