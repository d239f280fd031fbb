"""The apps' data on AWS, whole, on moto (issue 39's "Done when" in AWS mode).

The stack is synthesized with a sites domain (each app its own origin, which the data API
needs) and made on moto's server as tests/e2e/test_aws_mode_e2e.py makes it; ``zerocode
serve`` runs with the API function's settings, and the **data function**
(``python -m zerocode.entrypoints.lambda_data_api``, as Lambda Web Adapter starts it) with
the DataApi function's settings from the template. CloudFront is played by this test for
``/_api/*``, as the distribution in the template does it: the origin secret its origin
header names (read from the secret on moto), the viewer's Host in ``x-zerocode-host`` and
the viewer's address. Builds are CodeBuild playing the platform's buildspec in the box
(the real in-box program: Vite, Chromium, the box's own data API and the access probe).

A notes app (Vue, sign-in, ``owner`` rules) is made by a turn; two end users sign up on its
preview, each keeps a note and, on a fresh visit with their cookie, sees only their own; a
stranger is refused; the builder sees both notes in the API's data view; a deploy keeps the
live space apart while the preview is reset, and a rollback keeps live data.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.aws_standins import CodeBuildRun
from tests.e2e.conftest import chat, create, free_port
from tests.e2e.test_aws_mode_e2e import (
    AwsPlatform,
    Box,
    _stop,
    _wait_for,
    assert_stayed_local,
    build_events,
    is_checks_run,
    running_platform,
    sign_up,
    succeeded,
)
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.bootstrap.settings import Settings

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

DOMAIN = "sites.example.com"
CONTEXT = {
    "sitesDomain": DOMAIN,
    "sitesCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/0123-abcd",
}
SITES = "zerocode published sites and previews"
PASSWORD = "a long password"


@dataclass
class DataPlatform:
    platform: AwsPlatform
    function: str  # the data function's URL (its function URL, as CloudFront reaches it)
    secret: str  # what CloudFront sends in its origin header
    header: str  # that header's name


@pytest.fixture(scope="module")
def data_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DataPlatform]:
    import subprocess
    import sys

    work = tmp_path_factory.mktemp("aws-data-e2e")
    with running_platform(work, CONTEXT) as platform:
        header, secret = origin_header(platform)
        port = free_port()
        log = work / "data-function.log"
        function = subprocess.Popen(
            [sys.executable, "-m", "zerocode.entrypoints.lambda_data_api"],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            env=platform.environment("zerocode DataApi") | {"PORT": str(port)},
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_for(f"{url}/_health", function, log)
            yield DataPlatform(platform, url, secret, header)
        finally:
            _stop(function)


def origin_header(platform: AwsPlatform) -> tuple[str, str]:
    """The custom header the sites distribution's /_api/* origin sends, and its value: the
    template holds a dynamic reference to a secret, read here from the secret on moto."""
    (config,) = [
        d["DistributionConfig"]
        for d in platform.stack.of_type("AWS::CloudFront::Distribution").values()
        if d["DistributionConfig"]["Comment"] == SITES
    ]
    (behavior,) = [b for b in config["CacheBehaviors"] if b["PathPattern"] == "/_api/*"]
    (origin,) = [o for o in config["Origins"] if o["Id"] == behavior["TargetOriginId"]]
    (custom,) = origin["OriginCustomHeaders"]
    reference = custom["HeaderValue"]["Fn::Join"][1]
    (secret_id,) = [p["Ref"] for p in reference if isinstance(p, dict) and "Ref" in p]
    arn = platform.stack.refs[secret_id]
    value = platform.aws("secretsmanager").get_secret_value(SecretId=arn)["SecretString"]
    return str(custom["HeaderName"]), str(value)


@dataclass
class Visitor:
    """A browser's view of one app's origin through CloudFront: its own cookie, kept
    between visits as a browser keeps it."""

    data: DataPlatform
    host: str
    address: str
    cookie: str | None = None
    http: httpx.Client = field(init=False)

    def __post_init__(self) -> None:
        self.http = httpx.Client(base_url=self.data.function, timeout=60)

    def ask(self, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {
            self.data.header: self.data.secret,  # what CloudFront adds
            "x-zerocode-host": self.host,  # the /_api/* viewer-request function's
            "cloudfront-viewer-address": f"{self.address}:443",
        }
        if method != "GET":
            headers["origin"] = f"https://{self.host}"
        if self.cookie:
            headers["cookie"] = self.cookie
        answer = self.http.request(method, f"/_api/{path}", json=body, headers=headers)
        made = answer.headers.get("set-cookie")
        if made:
            self.cookie = made.split(";")[0] if "Max-Age=0" not in made else None
        return answer

    def again(self) -> Visitor:
        """A fresh visit (a reload) by the same browser: only the cookie is carried."""
        return Visitor(self.data, self.host, self.address, self.cookie)


def titles(answer: httpx.Response) -> list[str]:
    assert answer.status_code == 200, answer.text
    return [r["title"] for r in answer.json()["records"]]


@pytest.fixture(scope="module")
def box(data_platform: DataPlatform, toolchain_dir: Path) -> Box:
    import asyncio

    modules, why = asyncio.run(ToolchainStore(toolchain_dir, Settings().npm_cache).ensure())
    assert modules is not None, why
    return Box(data_platform.platform, modules.parent, chromium_or_skip(), [])


def key_of(url: str, prefix: str = "") -> str:
    found = re.match(rf"https://{prefix}([a-z0-9]+)\.{re.escape(DOMAIN)}/", url)
    assert found, url
    return found.group(1)


def deploy(platform: AwsPlatform, box: Box, http: httpx.Client, app_id: str) -> str:
    asked = http.post(f"/api/apps/{app_id}/deploy", json={})
    assert asked.status_code == 202, asked.text
    build_id = str(asked.json()["buildId"])
    (run,) = [
        r
        for r in platform.standins.codebuild.runs()
        if r.variables["ZEROCODE_BUILD_ID"] == build_id
    ]
    finished = box.play(run)
    assert finished.status == "SUCCEEDED", box.built[-1].stdout[-3000:]
    assert build_events(platform, [finished.event()]) == [
        {"result": "succeeded", "buildId": build_id}
    ]
    return build_id


def test_a_notes_app_keeps_each_users_notes_on_aws(data_platform: DataPlatform, box: Box) -> None:
    platform = data_platform.platform

    def play_previews(run: CodeBuildRun) -> None:
        if run.variables.get("ZEROCODE_PREVIEW") == "1" or is_checks_run(run):
            box.play(run)

    platform.standins.codebuild.on_start = play_previews
    builder = sign_up(platform)
    app = create(builder.http, "A notes app with sign-in", "vue_project")
    turn = chat(builder.http, app["id"], "A notes app with sign-in")
    succeeded(turn)
    # Its acceptance checks ran in a checks run of the box, beside the box's own data API
    # (sign-up, reload, a new visitor) and the platform's access check of its rules.
    verdicts = {c["id"]: c["status"] for c in turn.checks}
    assert "access-notes" in verdicts and set(verdicts.values()) == {"passed"}, turn.checks
    # The build checked the page against its own data API and probed its rules: clean.
    assert [b["status"] for b in turn.builds if b["status"] != "running"] == ["succeeded"]
    played = box.built[-1].stdout
    # ... in the image's Chromium, whose version every build's log records.
    assert re.search(r"runtime check in Chromium \d+\.[\d.]+: 0 problem\(s\)", played), played[
        -3000:
    ]
    app = builder.http.get(f"/api/apps/{app['id']}").json()
    preview = f"p-{key_of(app['previewUrl'], 'p-')}.{DOMAIN}"

    # Two end users on the preview, each from an address of their own.
    ada = Visitor(data_platform, preview, "198.51.100.1")
    bob = Visitor(data_platform, preview, "198.51.100.2")
    for visitor, name, note in ((ada, "ada", "Ada's note"), (bob, "bob", "Bob's note")):
        signed = visitor.ask("POST", "auth/signup", {"username": name, "password": PASSWORD})
        assert signed.status_code == 201, signed.text
        assert "SameSite=None" in signed.headers["set-cookie"]  # a preview's, framed
        kept = visitor.ask("POST", "data/notes", {"title": note})
        assert kept.status_code == 201, kept.text
    assert titles(ada.again().ask("GET", "data/notes")) == ["Ada's note"]
    assert titles(bob.again().ask("GET", "data/notes")) == ["Bob's note"]
    stranger = Visitor(data_platform, preview, "198.51.100.3")
    refused = stranger.ask("GET", "data/notes")
    assert refused.status_code == 401, refused.text
    adas = ada.ask("GET", "data/notes").json()["records"][0]
    assert bob.ask("GET", f"data/notes/{adas['id']}").status_code == 404
    assert bob.ask("DELETE", f"data/notes/{adas['id']}").status_code == 404

    # The builder sees both users' notes (the API reads the same table).
    seen = builder.http.get(f"/api/apps/{app['id']}/data/preview/notes")
    assert seen.status_code == 200, seen.text
    assert sorted(r["title"] for r in seen.json()["records"]) == ["Ada's note", "Bob's note"]

    # A deploy: the live site has its own users and notes.
    first = deploy(platform, box, builder.http, app["id"])
    app = builder.http.get(f"/api/apps/{app['id']}").json()
    live = f"{key_of(app['deployUrl'])}.{DOMAIN}"
    carol = Visitor(data_platform, live, "203.0.113.9")
    signed = carol.ask("POST", "auth/signup", {"username": "carol", "password": PASSWORD})
    assert signed.status_code == 201 and "SameSite=Lax" in signed.headers["set-cookie"]
    assert carol.ask("POST", "data/notes", {"title": "Live note"}).status_code == 201
    assert Visitor(data_platform, live, "203.0.113.9", ada.cookie).ask("GET", "auth/me").json() == {
        "user": None
    }  # a preview's session is nobody's on the site

    # The preview is reset; the live site keeps its data.
    reset = builder.http.delete(f"/api/apps/{app['id']}/data/preview")
    assert reset.status_code in (200, 204), reset.text
    assert builder.http.get(f"/api/apps/{app['id']}/data/preview/notes").json()["records"] == []
    assert titles(carol.again().ask("GET", "data/notes")) == ["Live note"]

    # Another deploy, then a rollback to the first: the live data stays.
    second = deploy(platform, box, builder.http, app["id"])
    assert second != first
    rolled = builder.http.post(f"/api/apps/{app['id']}/rollback", json={"buildId": first})
    assert rolled.status_code == 200, rolled.text
    assert platform.pointers()[f"site:{key_of(app['deployUrl'])}"] == f"{app['id']}/{first}"
    assert titles(carol.again().ask("GET", "data/notes")) == ["Live note"]
    live_seen = builder.http.get(f"/api/apps/{app['id']}/data/live/notes").json()
    assert [r["title"] for r in live_seen["records"]] == ["Live note"]

    # Deleting the app deletes its data in both spaces.
    assert builder.http.delete(f"/api/apps/{app['id']}").status_code == 204
    table = platform.stack.refs[
        next(k for k in platform.stack.of_type("AWS::DynamoDB::Table") if "AppData" in k)
    ]
    items = platform.aws("dynamodb").scan(TableName=table)["Items"]  # a test may scan
    assert [i for i in items if i["scope"]["S"].startswith(app["id"] + "#")] == []
    assert_stayed_local(platform)
