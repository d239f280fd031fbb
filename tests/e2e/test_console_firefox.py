"""The console in real headless Firefox (Debian's firefox-esr, driven over its built-in
Marionette server with the marionette-driver package; no geckodriver, nothing downloaded):
register, create an HTML app, watch the first turn finish, pick the title in the preview,
change it, see the preview change, deploy, open the published site, and no JavaScript error
anywhere. Screenshots of each step are saved under test-artifacts/console-firefox/
(ZEROCODE_TEST_ARTIFACTS to move them).

Firefox gets a fresh throwaway profile whose prefs turn off everything that phones home
(updates, telemetry, studies, safe browsing, remote settings, ...). It also runs with
MOZ_DISABLE_NONLOCAL_CONNECTIONS=1, Mozilla's own test-harness switch: should anything still
try to reach a non-local address, Firefox aborts and this test fails loudly."""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server

ARTIFACTS = Path(os.environ.get("ZEROCODE_TEST_ARTIFACTS", "test-artifacts")) / "console-firefox"
TURN_S = 240
# marionette-driver's dependencies import telnetlib and call distro.linux_distribution().
pytestmark = pytest.mark.filterwarnings(
    "ignore::DeprecationWarning:mozinfo", "ignore::DeprecationWarning:mozrunner"
)

# On top of the prefs Marionette's own launcher writes for automation (imported below).
NO_NETWORK_PREFS: dict[str, bool | int | str] = {
    "app.update.auto": False,
    "app.update.disabledForTesting": True,
    "app.update.enabled": False,
    "app.normandy.enabled": False,
    "app.shield.optoutstudies.enabled": False,
    "messaging-system.rsexperimentloader.enabled": False,
    "nimbus.rollouts.enabled": False,
    "toolkit.telemetry.enabled": False,
    "toolkit.telemetry.unified": False,
    "toolkit.telemetry.archive.enabled": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "browser.ping-centre.telemetry": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.downloads.remote.enabled": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.provider.google4.updateURL": "",
    "browser.safebrowsing.provider.google.updateURL": "",
    "browser.safebrowsing.provider.mozilla.updateURL": "",
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "extensions.blocklist.enabled": False,
    "browser.region.update.enabled": False,
    "browser.region.network.url": "",
    "browser.search.geoip.url": "",
    "captivedetect.canonicalURL": "",
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "dom.push.serverURL": "",
    "network.trr.mode": 5,  # no DNS over HTTPS
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "network.predictor.enabled": False,
    "network.http.speculative-parallel-limit": 0,
    "browser.newtabpage.enabled": False,
    "identity.fxaccounts.enabled": False,
    "security.OCSP.enabled": 0,
    "security.remote_settings.crlite_filters.enabled": False,
    "marionette.port": 0,  # any free port; Firefox writes it to <profile>/MarionetteActivePort
}


def firefox_prefs() -> dict[str, Any]:
    from marionette_driver.geckoinstance import DesktopInstance, GeckoInstance

    prefs: dict[str, Any] = {**GeckoInstance.required_prefs, **DesktopInstance.desktop_prefs}
    for name, value in prefs.items():  # their placeholders for a dummy server: a dead address
        if isinstance(value, str):
            prefs[name] = value.replace("%(server)s", "127.0.0.1:9").replace(
                "{server}", "127.0.0.1:9"
            )
    return {**prefs, **NO_NETWORK_PREFS}


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the Firefox we started and every process it started (its own process group)."""
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=15)
    with suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture(scope="module")
def firefox() -> Iterator[Any]:
    executable = shutil.which("firefox-esr")
    if executable is None:
        if os.environ.get("ZEROCODE_REQUIRE_FIREFOX"):
            raise RuntimeError(
                "ZEROCODE_REQUIRE_FIREFOX is set but firefox-esr is not installed "
                "(apt-get install firefox-esr)"
            )
        pytest.skip("firefox-esr is not installed")
    if sys.version_info >= (3, 13) and not os.environ.get("ZEROCODE_REQUIRE_FIREFOX"):
        pytest.skip("marionette-driver needs telnetlib, which Python 3.13 removed")
    from marionette_driver.marionette import Marionette

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    profile = Path(tempfile.mkdtemp(prefix="zerocode-firefox-"))
    (profile / "user.js").write_text(
        "".join(
            f"user_pref({json.dumps(name)}, {json.dumps(value)});\n"
            for name, value in firefox_prefs().items()
        )
    )
    env = {
        **os.environ,
        "MOZ_HEADLESS": "1",
        "MOZ_DISABLE_NONLOCAL_CONNECTIONS": "1",
        "MOZ_CRASHREPORTER_DISABLE": "1",
        "MOZ_REMOTE_ALLOW_SYSTEM_ACCESS": "1",
    }  # chrome scope: read the console service
    with (ARTIFACTS / "firefox.log").open("wb") as log:
        proc = subprocess.Popen(
            [executable, "-marionette", "-headless", "-no-remote", "-profile", str(profile)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    client = None
    try:
        port_file, deadline = profile / "MarionetteActivePort", time.monotonic() + 60
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Firefox did not start; see {ARTIFACTS / 'firefox.log'}")
            time.sleep(0.05)
        client = Marionette(host="127.0.0.1", port=int(port_file.read_text()))
        client.start_session(timeout=60)
        client.set_window_rect(width=1280, height=900)
        yield client
    finally:
        if client is not None:
            with suppress(Exception):
                client.delete_session()
        stop(proc)
        shutil.rmtree(profile, ignore_errors=True)


def shot(ff: Any, name: str) -> None:
    (ARTIFACTS / f"{name}.png").write_bytes(base64.b64decode(ff.screenshot(full=True)))


def css(ff: Any, selector: str) -> Any:
    return ff.find_element("css selector", selector)


def wait(ff: Any, condition: Callable[[Any], Any], timeout: float = 30, message: str = "") -> Any:
    from marionette_driver import errors
    from marionette_driver.wait import Wait

    return Wait(
        ff,
        timeout=timeout,
        interval=0.1,
        ignored_exceptions=(
            errors.NoSuchElementException,
            errors.StaleElementException,
            errors.NoSuchFrameException,
        ),
    ).until(condition, message=message)


def wait_for_text(ff: Any, text: str, timeout: float = 30) -> None:
    wait(
        ff,
        lambda m: m.execute_script(
            "return document.body.innerText.includes(arguments[0])", script_args=(text,)
        ),
        timeout,
        f"page never showed {text!r}",
    )


def finished_turns(ff: Any, count: int) -> list[str]:
    """Wait until `count` turns ran to an end; their data-turn states."""

    def finished(m: Any) -> list[str] | None:
        turns = [
            str(t)
            for t in m.execute_script(
                "return [...document.querySelectorAll('[data-turn]')].map(e => e.dataset.turn)"
            )
        ]
        return turns if len(turns) >= count and "running" not in turns else None

    return list(wait(ff, finished, TURN_S, f"{count} turn(s) never finished"))


def preview_h1(ff: Any, timeout: float = 60, text: str | None = None) -> str:
    """The preview's first h1 once the frame has loaded its current src (the console reloads
    it after every turn), waiting for one that reads `text` if given."""

    def read(m: Any) -> str | None:
        m.switch_to_default_content()
        frame = css(m, "#preview")
        src = frame.get_property("src")
        m.switch_to_frame(frame)
        try:
            loaded = m.execute_script(
                "return document.readyState === 'complete' && location.href === arguments[0]",
                script_args=(src,),
            )
            h1 = str(css(m, "h1").text) if loaded else None
        finally:
            m.switch_to_default_content()
        return h1 if h1 and (text is None or h1 == text) else None

    return str(wait(ff, read, timeout, f"the preview never showed an h1 {text or ''}"))


def script_errors(ff: Any) -> list[str]:
    """Every JavaScript error a web page reported to Firefox's console service, in any tab
    or frame, from launch on (uncaught exceptions and unhandled rejections alike)."""
    with ff.using_context("chrome"):
        return list(
            ff.execute_script("""
            return Services.console.getMessageArray()
              .filter(m => m instanceof Ci.nsIScriptError && !m.isFromChromeContext
                           && !(m.flags & (Ci.nsIScriptError.warningFlag
                                           | Ci.nsIScriptError.infoFlag)))
              .map(m => `${m.category}: ${m.errorMessage} (${m.sourceName}:${m.lineNumber})`);
        """)
        )


def register(ff: Any, server: Server) -> None:
    ff.navigate(f"{server.api}/console/#/register")
    css(ff, "input[name=account]").send_keys(f"fx-{secrets.token_hex(4)}")
    css(ff, "input[name=password]").send_keys("correct horse")
    css(ff, "button[type=submit]").click()
    wait_for_text(ff, "Create an app")


def test_create_pick_change_and_deploy_in_firefox(firefox: Any, server: Server) -> None:
    ff = firefox
    register(ff, server)
    shot(ff, "1-registered")

    css(ff, "textarea[aria-label='describe your app']").send_keys("A page about foxes")
    css(ff, "select[aria-label=mode] option[value=html]").click()
    assert css(ff, "select[aria-label=mode]").get_property("value") == "html"
    css(ff, "form.create button[type=submit]").click()
    assert finished_turns(ff, 1) == ["succeeded"]
    steps = ff.execute_script(
        "return [...document.querySelectorAll('.steps li')].map(e => [e.className, e.textContent])"
    )
    assert ["ok", "save_file index.html"] in steps, steps
    assert preview_h1(ff)
    shot(ff, "2-first-turn")

    css(ff, "#edit").click()
    assert css(ff, "#edit").text == "Edit mode: on"
    ff.switch_to_frame(css(ff, "#preview"))
    css(ff, "h1").click()
    ff.switch_to_default_content()
    chip = wait(ff, lambda m: css(m, "#picked"), 10, "picking the h1 made no chip")
    assert "<h1>" in chip.text
    shot(ff, "3-picked-title")

    css(ff, "#message").send_keys('Change the title to "Firefox Notes"')
    css(ff, "#send").click()
    assert finished_turns(ff, 2) == ["succeeded", "succeeded"]
    assert not ff.find_elements("css selector", "#picked")  # the selection went with it
    assert preview_h1(ff, 30, text="Firefox Notes") == "Firefox Notes"
    shot(ff, "4-preview-changed")

    css(ff, "#deploy").click()
    url = str(
        wait(ff, lambda m: css(m, "#deploy-url"), TURN_S, "no deploy URL").get_attribute("href")
    )
    assert re.fullmatch(rf"http://[a-z0-9]{{12}}\.localhost:{server.sites_port}/", url), url
    shot(ff, "5-deployed")
    console = ff.current_window_handle
    ff.switch_to_window(ff.open(type="tab", focus=True)["handle"])
    ff.navigate(url)
    assert css(ff, "h1").text == "Firefox Notes"
    shot(ff, "6-published")
    ff.close()
    ff.switch_to_window(console)

    assert script_errors(ff) == []
