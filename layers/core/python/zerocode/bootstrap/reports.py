"""The publish report's parts (issue 44, point 5), per mode: where reports are kept, and
locally what makes them (the placed output, the site's answers, the kept browser)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from zerocode.apps.records import AppStore
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.pointers import Publisher
from zerocode.publishing.report_runner import PublishReporter

if TYPE_CHECKING:
    from zerocode.adapters.sqlite.database import SqliteDatabase

AWS_NOT_YET = (
    "publish reports are not made on AWS yet (issue 44): the report needs the placed output "
    "on the machine that publishes it"
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


def aws_reporter(settings: Settings, apps: AppStore, publisher: Publisher) -> PublishReporter:
    """Reports kept in the checks table (DynamoDB), none made yet: each deploy's says so."""
    from zerocode.adapters.dynamodb.publish_reports import DynamoPublishReports
    from zerocode.bootstrap.aws_parts import aws_client

    store = DynamoPublishReports(aws_client("dynamodb", settings), settings.checks_table)
    return PublishReporter(store=store, apps=apps, publisher=publisher, not_made=AWS_NOT_YET)
