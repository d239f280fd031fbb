"""The publish report beside the deploy in the console (issue 44, point 5), in real headless
Chromium against the real server: deploying an app whose page links a missing page shows,
under the Deploys table, the live deploy's report once it is made, every check with its
verdict, the failed one naming what is wrong and what to change, a passed one folding what
was checked, and no serious accessibility violation; an earlier deploy's report is one click
away; in Chinese the titles follow.
Screenshots go to test-artifacts/console-ui/."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.test_console_a11y import scan
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)
from tests.e2e.test_console_versions import made_app
from zerocode.adapters.local.chromium_report import AXE_FILE


def test_the_report_shows_beside_the_deploy_with_what_to_fix(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page about godwits", "html")
    url = f"/api/apps/{app['id']}/files/index.html"
    first = owner.get(url).text
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    page.click("#deploy")
    page.wait_for_selector("#deploy-url", timeout=TURN_MS)
    edited = first.replace("</main>", '<a href="flocks.html">Flocks</a></main>', 1)
    assert owner.put(url, json={"content": edited}).status_code == 200
    page.click("#deploy")
    page.wait_for_selector("tr[data-build] button.rollback", timeout=TURN_MS)
    report = page.locator("#publish-report")
    live = owner.get(f"/api/apps/{app['id']}").json()["deployBuildId"]
    assert report.get_attribute("data-build") == live
    page.wait_for_selector("#publish-report .report-checks", timeout=TURN_MS)
    assert report.locator(".report-check").count() == 8
    assert page.inner_text("#publish-report-title").startswith("Publish report · ")
    links = report.locator(".report-check[data-check=links]")
    assert "failed" in (links.get_attribute("class") or "")
    assert links.locator(".check-status").inner_text() == "failed"
    assert links.locator(".check-desc").inner_text() == "Links within the site"
    assert links.locator(".report-details li").inner_text() == (
        "index.html → flocks.html (not in the site)"
    )
    assert links.locator(".report-fix").inner_text().startswith("To fix: Point each link")
    meta = report.locator(".report-check[data-check=meta]")
    assert meta.locator(".check-status").inner_text() == "passed"
    assert meta.locator("details").get_attribute("open") is None  # folded
    assert "1 failed" in report.locator(".report-tally .visually-hidden").inner_text()
    links.scroll_into_view_if_needed()
    shot(page, "13-publish-report")
    # No serious accessibility violation on the page with the report (axe-core: the copy
    # the platform ships).
    assert scan(page, AXE_FILE.read_text(encoding="utf-8"), "publish report") == []

    # The first deploy's report, from its row; it linked nothing missing.
    earlier = page.locator("tr[data-build]", has=page.locator("button.rollback"))
    earlier.locator("button.show-report").click()
    page.wait_for_function(
        "id => document.querySelector('#publish-report').dataset.build === id"
        " && document.querySelector('#publish-report .report-checks')",
        arg=earlier.get_attribute("data-build"),
        timeout=TURN_MS,
    )
    earlier_links = report.locator(".report-check[data-check=links] .check-status")
    assert earlier_links.inner_text() == "passed", report.inner_text()

    page.select_option("#lang", "zh-CN")  # the page drawn again, the live report with it
    page.wait_for_function(
        "() => (document.querySelector('#publish-report-title') || {}).textContent"
        "?.startsWith('发布报告 · ') && document.querySelector('#publish-report .report-checks')",
        timeout=TURN_MS,
    )
    assert page.is_visible("#publish-report .report-checks")
    assert report.locator(".report-check[data-check=links] .check-desc").inner_text() == "站内链接"
    assert page.errors == []
