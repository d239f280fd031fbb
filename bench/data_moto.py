"""The data API as AWS runs it, on moto (bench/data.py's second half): the data function
(``python -m zerocode.entrypoints.lambda_data_api``, uvicorn, as Lambda Web Adapter starts
it) in a subprocess against moto's server in another, with the app-data, pointer and
leases tables and the origin secret made as the stack makes them. Requests carry what
CloudFront adds (the secret, the viewer's host and address).

What it measures is the function's own path (routing, the pointer and model lookups, the
session, the store's transactions and queries) plus moto's, over local HTTP: moto answers
from memory in Python, so its figures say how the code behaves under load, not DynamoDB's
latency (single-digit milliseconds within a region). The rate limiter is this machine's
Redis, as ElastiCache is in the default profile, with the limits raised out of the way.
(Without a cache, the cheap profile's DynamoDB limiter keeps one sliding log per key: a
site's key takes every visitor's request, and 8 clients at once made it refuse some as
contended, docs/operations.md.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import httpx

from tests.e2e.conftest import free_port
from tests.e2e.test_aws_mode_e2e import _stop, _wait_for

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("ZEROCODE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
SECRET = "b" * 48
DOMAIN = "sites.example.com"
PREVIEW = f"p-benchkey01.{DOMAIN}"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@contextmanager
def data_function(model: dict[str, Any]) -> Iterator[Callable[[], httpx.Client]]:
    """moto and the data function running, the app's preview pointing at a build with
    ``model``; yields a maker of clients that speak as CloudFront does."""
    from zerocode.adapters.dynamodb.app_data import create_app_data_table
    from zerocode.adapters.dynamodb.build_models import DynamoBuildModels
    from zerocode.adapters.dynamodb.lease import create_leases_table
    from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
    from zerocode.publishing.pointers import SiteTarget

    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ZEROCODE_"))}
    moto_port, port = free_port(), free_port()
    moto_url = f"http://127.0.0.1:{moto_port}"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log"
        moto = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(moto_port)],
            stdout=(Path(tmp) / "moto.log").open("wb"),
            stderr=subprocess.STDOUT,
            env=clean,
        )
        function: subprocess.Popen[bytes] | None = None
        try:
            _wait_for(f"{moto_url}/moto-api/", moto, log)
            ddb = boto3.client("dynamodb", endpoint_url=moto_url, **_boto())
            for make, name in (
                (create_app_data_table, "b-app-data"),
                (create_pointers_table, "b-pointers"),
                (create_leases_table, "b-leases"),
            ):
                make(ddb, name)
            secret = boto3.client("secretsmanager", endpoint_url=moto_url, **_boto())
            arn = secret.create_secret(Name="b-origin", SecretString=SECRET)["ARN"]
            DynamoPointerStore(ddb, "b-pointers").point(
                "preview:benchkey01", SiteTarget("app1", "b1")
            )
            DynamoBuildModels(ddb, "b-app-data").put("app1", "b1", json.dumps(model).encode())
            function = subprocess.Popen(
                [sys.executable, "-m", "zerocode.entrypoints.lambda_data_api"],
                stdout=log.open("wb"),
                stderr=subprocess.STDOUT,
                env=clean
                | CREDENTIALS
                | {
                    "AWS_ENDPOINT_URL": moto_url,
                    "AWS_EC2_METADATA_DISABLED": "true",
                    "PORT": str(port),
                    "PYTHONPATH": str(ROOT / "layers" / "core" / "python"),
                    "ZEROCODE_MODE": "aws",
                    "ZEROCODE_APP_DATA_TABLE": "b-app-data",
                    "ZEROCODE_POINTERS_TABLE": "b-pointers",
                    "ZEROCODE_LEASES_TABLE": "b-leases",
                    "ZEROCODE_DATA_ORIGIN_SECRET_ARN": arn,
                    "ZEROCODE_SITES_DOMAIN": DOMAIN,
                    "ZEROCODE_SITES_URL": f"https://{DOMAIN}",
                    "ZEROCODE_DATA_RATE_VISITOR": "1000000",
                    "ZEROCODE_DATA_RATE_SITE": "1000000",
                    "ZEROCODE_REDIS_URL": REDIS_URL,
                },
            )
            base = f"http://127.0.0.1:{port}"
            _wait_for(f"{base}/_health", function, log)

            def client() -> httpx.Client:
                return httpx.Client(
                    base_url=base,
                    timeout=60,
                    headers={
                        "x-zerocode-origin": SECRET,
                        "x-zerocode-host": PREVIEW,
                        "cloudfront-viewer-address": "198.51.100.10:443",
                        "origin": f"https://{PREVIEW}",
                    },
                )

            yield client
        finally:
            for proc in (function, moto):
                if proc is not None:
                    _stop(proc)


def _boto() -> dict[str, str]:
    return {
        "region_name": "us-east-1",
        "aws_access_key_id": "testing",
        "aws_secret_access_key": "testing",
    }
