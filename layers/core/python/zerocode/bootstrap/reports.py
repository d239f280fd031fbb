"""The publish report's parts (issue 44, point 5), per mode: where reports are kept, and
what makes them (locally the placed output, the site's answers, the kept browser; on AWS
the CodeBuild builder, from the build's output and its box's look at the page)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zerocode.apps.records import AppStore
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.builds import Builder
from zerocode.publishing.pointers import Publisher
from zerocode.publishing.report_runner import PublishReporter

if TYPE_CHECKING:
    from zerocode.adapters.sqlite.database import SqliteDatabase

# Why a deploy on AWS has no report, when none are made there.
AWS_OFF = "publish reports are off on this platform (ZEROCODE_PUBLISH_REPORT=0)"
AWS_NOT_CODEBUILD = (
    "publish reports are made on AWS by the CodeBuild builder as it finishes a deploy build; "
    "this platform's builder makes none"
)


def local_reporter(
    settings: Settings, db: SqliteDatabase, apps: AppStore, publisher: Publisher
) -> PublishReporter | None:
    """Reports kept in SQLite and made here; the browser's checks where covers are on and a
    confined browser can run (:func:`zerocode.adapters.local.chromium.availability`)."""
    if not settings.publish_report:
        return None
    from zerocode.adapters.local.browser_pool import kept_browser
    from zerocode.adapters.local.chromium import availability, find_chromium, usable
    from zerocode.adapters.local.chromium_report import ChromiumReport
    from zerocode.adapters.local.site_answers import HttpSiteAnswers
    from zerocode.adapters.sqlite.publish_reports import SqlitePublishReports

    reporter = PublishReporter(
        store=SqlitePublishReports(db), apps=apps, publisher=publisher, answers=HttpSiteAnswers()
    )
    executable = find_chromium(settings.chromium_path)
    if not settings.covers:
        reporter.no_browser = "not run: the platform's browser is off (ZEROCODE_COVERS=0)"
    elif executable is None or not usable():
        reporter.no_browser = f"not run: the platform's browser is {availability(executable)}"
    else:
        reporter.inspector = ChromiumReport(kept_browser(executable))
    return reporter


def aws_reporter(
    settings: Settings, apps: AppStore, publisher: Publisher, builder: Builder | None = None
) -> PublishReporter:
    """Reports kept in the checks table (DynamoDB), made by the CodeBuild builder as it
    finishes each deploy build (adapters/aws/build_report.py: the box's look at the page and
    the site's files), read here; with another builder, or reports off, each deploy's
    report says why there is none."""
    from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder
    from zerocode.adapters.dynamodb.publish_reports import DynamoPublishReports
    from zerocode.bootstrap.aws_parts import aws_client

    store = DynamoPublishReports(aws_client("dynamodb", settings), settings.checks_table)
    if settings.publish_report and isinstance(builder, CodeBuildBuilder):
        builder.reports = store
        return PublishReporter(store=store, apps=apps, publisher=publisher)
    why = AWS_OFF if not settings.publish_report else AWS_NOT_CODEBUILD
    return PublishReporter(store=store, apps=apps, publisher=publisher, not_made=why)
