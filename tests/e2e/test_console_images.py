"""The builder's images in the console, in real headless Chromium (issue 41): images put on
a message (the file button) are scaled, shown, sent and shown again from the history after a
reload; the Images tab uploads a logo the model then places; a picked image of the preview
is replaced by an upload without a model turn. Screenshots go to test-artifacts/console-ui/."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.test_chat_images import screenshot
from tests.e2e.test_console_ui import browser, shot  # noqa: F401 (a fixture)
from tests.e2e.test_console_versions import made_app
from tests.e2e.test_versions import versions_of
from tests.pictures import pixel, png


def image_file(name: str, data: bytes) -> dict[str, Any]:
    return {"name": name, "mimeType": "image/png", "buffer": data}


def test_images_put_on_a_message_are_sent_and_shown_again_after_a_reload(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page for a bakery", "html")
    app_id = app["id"]
    page.goto(f"{server.api}/console/#/apps/{app_id}")
    page.wait_for_selector("#attach")
    page.set_input_files("#attach-file", files=[image_file("shot.png", screenshot())])
    page.wait_for_selector("#attached img[src^='data:image/']")
    assert page.get_attribute("#attached img", "alt") == "Attached image 1"
    page.fill("#message", 'Change the title to "Warm"')
    page.click("#send")
    page.wait_for_selector("#attached", state="hidden")  # taken by the message
    page.locator("#messages .msg.user .pics img").first.wait_for()
    page.wait_for_function(
        "() => !document.querySelector('#messages [data-turn=running]')", timeout=60_000
    )
    entries = owner.get(f"/api/apps/{app_id}/history").json()["entries"]
    (sent,) = [e for e in entries if e["role"] == "user" and e.get("images")]
    assert sent["images"][0]["type"] == "image/png" and sent["images"][0]["width"] == 1280

    page.reload()
    page.wait_for_selector(f"#messages img[data-sha='{sent['images'][0]['sha256']}'][src^='data:']")
    shot(page, "images-1-message")
    assert page.errors == []


def test_a_logo_uploaded_in_the_images_tab_is_placed_and_replaced_by_picking_it(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page for a tea house", "html")
    app_id = app["id"]
    page.goto(f"{server.api}/console/#/apps/{app_id}")
    page.click("#tab-images")
    page.wait_for_selector("#asset-list li")  # "no images yet"
    page.set_input_files("#asset-file", files=[image_file("Logo.png", png((60, 40), (0, 0, 255)))])
    page.wait_for_selector("#asset-list li[data-path='assets/logo.png'] img[src^='data:']")
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('Uploaded assets/logo.png')"
    )
    assert versions_of(owner, app_id)[0]["kind"] == "edit"
    shot(page, "images-2-tab")
    # The version's diff shows the picture it added, as that version has it.
    page.click("#tab-versions")
    page.wait_for_selector(
        "#version-diff [data-path='assets/logo.png'] img.asset-view[src^='data:']"
    )

    page.fill("#message", "Use my logo in the header")
    page.click("#send")
    page.wait_for_function(
        "() => !document.querySelector('#messages [data-turn=running]')", timeout=60_000
    )
    page.click("#tab-preview")
    frame = page.frame_locator("#preview")
    frame.locator("img[src='assets/logo.png']").wait_for()

    page.click("#edit")
    frame.locator("img[src='assets/logo.png']").click()
    page.wait_for_selector("#replace-image")
    page.set_input_files("#replace-file", files=[image_file("new.png", png((60, 40), (0, 160, 0)))])
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('Replaced assets/logo.png')",
        timeout=60_000,
    )
    kept = owner.get(f"/api/apps/{app_id}/assets/logo.png").content
    assert pixel(kept) == (0, 160, 0)
    assert versions_of(owner, app_id)[0]["summary"].startswith("replaced assets/logo.png")
    shot(page, "images-3-replaced")
    assert page.errors == []
