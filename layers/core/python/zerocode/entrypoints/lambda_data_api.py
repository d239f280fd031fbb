"""The data API as its own Lambda function on AWS (issue 39, point 7; docs/data.md).

The sites distribution sends ``/_api/*`` of every preview and site here (caching off),
through the function's URL, under Lambda Web Adapter like the API. The function holds only
what the data API needs: the app-data table, the pointer table (read), the rate limiter
and the origin secret; no accounts, no model key, no buckets, no builds.

A function URL is reachable from anywhere, so the function believes nothing a caller
could choose unless CloudFront vouches for it: CloudFront adds the origin secret
(:data:`ORIGIN_SECRET`, from Secrets Manager, never in the template) to every request it
forwards, and the viewer's own Host (:data:`VIEWER_HOST`, written by the ``/_api/*``
behavior's viewer-request function over anything the viewer sent) and address
(``CloudFront-Viewer-Address``). A request without the secret is refused (403) before
anything is read. The Host names the app and the space as on the local sites server.
"""

from __future__ import annotations

import hmac
import os

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from zerocode.bootstrap.aws_parts import app_data_stores, aws_client, client, require
from zerocode.bootstrap.parts import data_backend, rate_limiter
from zerocode.bootstrap.settings import Settings
from zerocode.errors import ZerocodeError
from zerocode.http.app_api import API_METHODS, AppApi, DataSite, Viewer
from zerocode.observability import configure_logging

ORIGIN_SECRET = "x-zerocode-origin"
VIEWER_HOST = "x-zerocode-host"
VIEWER_ADDRESS = "cloudfront-viewer-address"
HEALTH = "/_health"  # Lambda Web Adapter's readiness check; CloudFront never sends it here


class NotThroughCloudFront(ZerocodeError):
    status = 403
    code = "forbidden"


def cloudfront_viewer(secret: str) -> Viewer:
    """The viewer's host and address as CloudFront tells them, only with its secret."""
    expected = secret.encode()

    def viewer(request: Request) -> tuple[str, str | None]:
        given = request.headers.get(ORIGIN_SECRET, "").encode()
        if not expected or not hmac.compare_digest(given, expected):
            raise NotThroughCloudFront("the data API is served through the app's own origin")
        address = request.headers.get(VIEWER_ADDRESS, "")
        # "198.51.100.10:46532", "2001:db8::1:46532": the port is after the last colon.
        return request.headers.get(VIEWER_HOST, ""), address.rpartition(":")[0] or None

    return viewer


def origin_secret(settings: Settings) -> str:
    require(settings, "data_origin_secret_arn")
    found = client("secretsmanager", settings.aws_region).get_secret_value(
        SecretId=settings.data_origin_secret_arn
    )
    secret = str(found.get("SecretString") or "").strip()
    if len(secret) < 32:
        raise RuntimeError("the data API's origin secret is missing or shorter than 32 characters")
    return secret


def data_site(settings: Settings) -> DataSite:
    """The DynamoDB backend, the shared limiter, the pointer table and CloudFront's word."""
    from zerocode.adapters.dynamodb.pointers import DynamoPointerStore

    require(settings, "pointers_table")
    assert settings.pointers_table is not None
    rates = rate_limiter(settings)
    pointers = DynamoPointerStore(aws_client("dynamodb", settings), settings.pointers_table)
    return DataSite(
        limits=settings.data_limits(),
        urls=settings.site_urls(),
        backend=data_backend(settings, app_data_stores(settings), rates),
        rates=rates,
        target=pointers.target,
        viewer=cloudfront_viewer(origin_secret(settings)),
    )


def create_data_app(site: DataSite) -> Starlette:
    api = AppApi(site)

    async def data(request: Request) -> Response:
        return await api(request, request.path_params["path"])  # refuses without the secret

    async def health(request: Request) -> Response:
        return PlainTextResponse("ok")

    return Starlette(
        routes=[
            Route(HEALTH, health, methods=["GET"]),
            Route("/_api/{path:path}", data, methods=[*API_METHODS]),
        ]
    )


def main() -> None:
    configure_logging()
    settings = Settings()
    port = int(os.environ.get("AWS_LWA_PORT") or os.environ.get("PORT") or 8080)
    uvicorn.run(create_data_app(data_site(settings)), host="127.0.0.1", port=port, log_config=None)


if __name__ == "__main__":
    main()
