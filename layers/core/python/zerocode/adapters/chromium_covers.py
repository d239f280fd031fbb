"""Cover images: a screenshot of the published site in headless Chromium.

Optional by design: without Playwright's Python package or a Chromium executable there is
simply no cover, and a failed screenshot never fails the deploy that asked for it (the
caller logs it). Chromium is driven through Playwright with the system browser, so nothing
is downloaded at run time. Covers are files next to the builds, one per published build:
``covers/{appId}/{buildId}.png``, served by the sites origin.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from zerocode.apps import App
from zerocode.workspace import PathRefused, check_app_id

VIEWPORT = {"width": 1200, "height": 750}
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-dev-shm-usage"]


def find_chromium(configured: str | None = None) -> str | None:
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class ChromiumCovers:
    def __init__(self, root: Path, sites_url: str, executable: str,
                 timeout_ms: float = 15_000) -> None:
        self.root, self.sites_url, self.executable = root, sites_url.rstrip("/"), executable
        self.timeout_ms = timeout_ms

    async def __call__(self, app: App) -> str | None:
        if not app.deploy_url or not app.deploy_build_id:
            return None
        from playwright.async_api import async_playwright

        target = self.root / check_app_id(app.id) / f"{check_app_id(app.deploy_build_id)}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=self.executable,
                                               args=CHROMIUM_ARGS, headless=True)
            try:
                page = await browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
                await page.goto(app.deploy_url, wait_until="networkidle",
                                timeout=self.timeout_ms)
                await page.screenshot(path=str(target), type="png")
            finally:
                await browser.close()
        return f"{self.sites_url}/covers/{app.id}/{app.deploy_build_id}.png"

    def path(self, app_id: str, file: str) -> Path | None:
        """A cover file, for the sites origin (None for anything that is not one)."""
        if not file.endswith(".png"):
            return None
        try:
            found = self.root / check_app_id(app_id) / f"{check_app_id(file[:-4])}.png"
        except PathRefused:
            return None
        return found if found.is_file() else None

    def delete_app(self, app_id: str) -> int:
        target = self.root / check_app_id(app_id)
        if not target.exists():
            return 0
        shutil.rmtree(target)
        return 1


def chromium_covers(root: Path, sites_url: str, executable: str | None) -> ChromiumCovers | None:
    """Covers if Playwright and a Chromium are installed, else None (no covers)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return None
    found = find_chromium(executable)
    return ChromiumCovers(root, sites_url, found) if found else None
