"""A deploy's publish report on AWS (issue 44, point 5), host side: the CodeBuild builder
finishing a deploy build (S3 on moto, CodeBuild's answer stubbed) makes its report from the
unpacked site and the box's look at the page (``report.json``: crafted here as a box, or a
hostile one, would hand it back) and stores it before the build reads succeeded. The box's
own look runs for real in test_buildbox.py."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.integration.adapters.test_codebuild_builder import (
    BUCKET,
    PNG,
    SITE,
    archive,
    builder_for,
    codebuild_client,
    hand_back,
)
from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.aws.build_report import page_look
from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder
from zerocode.bootstrap.reports import aws_reporter
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.builds import SiteMeta, new_build_id
from zerocode.publishing.publish_report import PublishReport, ReportState, Summary

META = SiteMeta("Bird Log", "A log of birds", url="https://k3y.apps.example/")
PAGE = (
    b"<!doctype html><html><head><title>Birds</title></head><body><main><h1>Birds</h1>"
    b'<a href="gone.html">gone</a> <a href="/about">about</a> <img src="bird.png">'
    b'<script src="assets/index-1a2b3c4d.js"></script></main></body></html>'
)
LOOK = {
    "loaded": True,
    "problems": [
        "uncaught TypeError: birds is undefined (at /assets/index-1a2b3c4d.js:1:9)",
        "console.error: Failed to load resource: the server responded with a status of 404 "
        "(File not found) (at /favicon.ico:0:0)",
    ],
    "failed": ["/favicon.ico (HTTP 404)", "/missing.js (HTTP 404)"],
    "links": ["/gone.html", "/about", "/rendered-only.html", "https://elsewhere.example/x"],
    "violations": [
        {"rule": "html-has-lang", "impact": "serious", "help": "lang", "where": ["html"]},
        {"rule": "image-alt", "impact": "critical", "help": "Images need alt", "where": ["img"]},
        {"rule": "region", "impact": "moderate", "help": "landmarks", "where": ["h1"]},
    ],
    "why": None,
    "a11yWhy": None,
}


# The box's site: the page, its script and its image.
SITE_FILES: dict[str, bytes | None] = {
    **SITE,
    "dist/index.html": PAGE,
    "dist/assets/index-1a2b3c4d.js": b"x=1",
    "dist/bird.png": PNG,
}


class Reports:
    """The PublishReports port in memory (its contract: test_publish_report_store_contract)."""

    def __init__(self, *, fails: bool = False) -> None:
        self.kept: dict[str, PublishReport] = {}
        self.fails = fails

    def put(self, report: PublishReport) -> None:
        if self.fails:
            raise RuntimeError("the table is away")
        self.kept[report.build_id] = report

    def get(self, app_id: str, build_id: str) -> PublishReport | None:
        return self.kept.get(build_id)

    def summaries(self, app_id: str, build_ids: list[str]) -> dict[str, Summary]:
        return {b: self.kept[b].summary() for b in build_ids if b in self.kept}

    def delete_app(self, app_id: str) -> int:
        self.kept.clear()
        return 0


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


def deployed(
    builder: CodeBuildBuilder,
    s3: Any,
    files: dict[str, bytes | None],
    *,
    preview: bool = False,
    vue: bool = False,
    site: SiteMeta | None = META,
) -> str:
    """A build handing back ``files`` (beside the site) finished as build_events would."""
    bid = new_build_id()
    hand_back(s3, bid, archive({**SITE_FILES, "check.json": b"{}", "cover.png": PNG, **files}))
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": "SUCCEEDED"}]},
            {"ids": ["zc:1"]},
        )
        done = builder.outcome("app1", bid, "zc:1", preview=preview, site=site, vue=vue)
    assert done is not None and done.ok, done
    return bid


def checks_of(report: PublishReport) -> dict[str, Any]:
    return {c.id: c for c in report.checks}


def test_a_deploys_report_merges_its_files_and_the_boxs_look(s3: Any) -> None:
    """What the platform added after the box looked (the favicon, lang) is not held against
    the site; everything else the box saw is, named once."""
    builder = builder_for(codebuild_client(), s3)
    builder.reports = store = Reports()
    bid = deployed(builder, s3, {handoff.REPORT_FILE: json.dumps(LOOK).encode()})
    report = store.kept[bid]
    assert report.state is ReportState.DONE and report.app_id == "app1"
    checks = checks_of(report)
    assert list(checks) == [
        "meta",
        "icons",
        "compression",
        "caching",
        "crawl",
        "links",
        "console",
        "a11y",
    ]
    for passing in ("meta", "icons", "compression", "caching", "crawl"):
        assert checks[passing].passed, checks[passing]
    assert "CloudFront compresses" in (checks["compression"].note or "")
    assert any("immutable" in d for d in checks["caching"].details), checks["caching"]
    links = "\n".join(checks["links"].details)
    assert checks["links"].passed is False
    assert "index.html → gone.html (not in the site)" in links
    assert "/rendered-only.html (not in the site)" in links
    assert "home page requested /missing.js (HTTP 404)" in links
    assert "favicon" not in links and "about" not in links and "elsewhere" not in links
    assert "bird.png" not in links
    assert checks["console"].details == (LOOK["problems"][0],)  # type: ignore[index]
    assert checks["a11y"].passed is False
    assert [d.split(" ")[0] for d in checks["a11y"].details] == ["image-alt"]


def test_a_preview_gets_no_report_and_a_store_that_fails_fails_no_deploy(s3: Any) -> None:
    builder = builder_for(codebuild_client(), s3)
    builder.reports = store = Reports()
    deployed(builder, s3, {handoff.REPORT_FILE: json.dumps(LOOK).encode()}, preview=True)
    assert store.kept == {}
    builder.reports = Reports(fails=True)
    deployed(builder, s3, {handoff.REPORT_FILE: json.dumps(LOOK).encode()})  # still ok


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (None, "handed back no look"),
        (b"{not json", "not JSON"),
        (b"[]", "not of the expected shape"),
        (json.dumps({**LOOK, "problems": [1, 2]}).encode(), "not of the expected shape"),
        (json.dumps({**LOOK, "violations": [{"rule": 1}]}).encode(), "expected shape"),
        (json.dumps({**LOOK, "links": ["/a" * (1 << 19)]}).encode(), "over 1024 KiB"),
    ],
)
def test_a_look_missing_malformed_or_too_large_leaves_its_checks_not_run(
    s3: Any, raw: bytes | None, why: str
) -> None:
    """The box ran the app's code: what it hands back is read by the platform's bounds, and
    a look that cannot be read is no pass. A Vue site's links are then not run too."""
    builder = builder_for(codebuild_client(), s3)
    builder.reports = store = Reports()
    files: dict[str, bytes | None] = {} if raw is None else {handoff.REPORT_FILE: raw}
    checks = checks_of(store.kept[deployed(builder, s3, files, vue=True)])
    for check in ("console", "a11y"):
        assert checks[check].passed is None and why in (checks[check].note or ""), checks[check]
    # The page's own file links are still checked: gone.html is named, whatever the box said.
    assert checks["links"].passed is False
    page = PAGE.replace(b'<a href="gone.html">gone</a>', b"")
    bid = new_build_id()
    hand_back(s3, bid, archive({**SITE_FILES, "dist/index.html": page, **files}))
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": "SUCCEEDED"}]},
            {"ids": ["zc:1"]},
        )
        assert builder.outcome("app1", bid, "zc:1", site=META, vue=True) is not None
    links = checks_of(store.kept[bid])["links"]
    assert links.passed is None and "made by its scripts" in (links.note or ""), links


def test_what_the_box_says_is_bounded_and_its_why_is_never_a_pass() -> None:
    look = page_look(
        json.dumps(
            {
                **LOOK,
                "problems": [f"error {n} " + "x" * 1000 for n in range(100)],
                "why": "the box says all is well",
            }
        ).encode()
    )
    assert len(look.problems) == 20 and all(len(p) <= 300 for p in look.problems)
    assert look.why == "not run: the box says all is well"


def test_on_aws_reports_are_made_by_the_codebuild_builder_only(aws: None) -> None:
    """The wiring: a CodeBuild builder is handed the checks table's store and the API
    reports pending while a deploy builds; another builder, or reports off, make none and
    say why."""
    settings = Settings(mode="aws", checks_table="zc-checks")
    builder = builder_for(codebuild_client(), boto3.client("s3", region_name="us-east-1"))
    reporter = aws_reporter(settings, apps=None, publisher=None, builder=builder)  # type: ignore[arg-type]
    assert builder.reports is reporter.store and reporter.not_made is None
    off = aws_reporter(
        Settings(mode="aws", checks_table="zc-checks", publish_report=False),
        apps=None,  # type: ignore[arg-type]
        publisher=None,  # type: ignore[arg-type]
        builder=builder_for(codebuild_client(), boto3.client("s3", region_name="us-east-1")),
    )
    assert "ZEROCODE_PUBLISH_REPORT=0" in (off.not_made or "")
    other = aws_reporter(settings, apps=None, publisher=None, builder=None)  # type: ignore[arg-type]
    assert "CodeBuild builder" in (other.not_made or "")
