"""The builder's own images placed where asked (issue 41): "use my logo" puts the uploaded
logo in the page's header, as a real model told of an upload would.

The script knows the app's images from the platform's upload notes in the conversation
(``[zerocode: the user uploaded assets/logo.png …; it is … 512×512 px``, engine/user_edit.py),
as it knows the page from the code blocks: from the request's messages alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from zerocode.adapters.model.offline.base import H1, Request, Script, ScriptedCall, text_of

# A request about an image of the builder's: it names one.
_ASKS = re.compile(r"(?<![a-z])(logo|image|picture|photo|icon)s?(?![a-z])|标志|图标|图片|照片")
_UPLOADED = re.compile(
    r"\[zerocode: the user (?:uploaded|replaced) (?:public/)?(assets/[A-Za-z0-9_-]+\.[a-z]+)"
    r"[^\]]*?(\d+)×(\d+) px"
)
HEIGHT = 48  # the placed image's height in CSS pixels


@dataclass(frozen=True)
class Uploaded:
    url: str  # assets/logo.png
    width: int
    height: int

    @property
    def name(self) -> str:
        return self.url.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def uploads(earlier: list[dict[str, Any]]) -> list[Uploaded]:
    """The images the conversation says were uploaded, newest last (one per name)."""
    found: dict[str, Uploaded] = {}
    for message in earlier:
        if message.get("role") != "user":
            continue
        for url, width, height in _UPLOADED.findall(text_of(message)):
            found.pop(url, None)
            found[url] = Uploaded(url, int(width), int(height))
    return list(found.values())


def asks_for_image(text: str) -> bool:
    return _ASKS.search(text.lower()) is not None


def wanted(text: str, earlier: list[dict[str, Any]]) -> Uploaded | None:
    """The upload a request asks to use: one it names, else the newest; None when the
    request names no image or none was uploaded."""
    lowered = text.lower()
    if not _ASKS.search(lowered):
        return None
    found = uploads(earlier)
    named = [u for u in found if u.name.lower() in lowered or u.url in lowered]
    chosen = named or found
    return chosen[-1] if chosen else None


def img_tag(image: Uploaded, *, vue: bool = False) -> str:
    """The image at its place: in a Vue template its URL bound as a string, so Vite leaves
    it to the browser (a plain ``src`` would be bundled as a module)."""
    width = max(1, round(HEIGHT * image.width / image.height))
    src = f":src=\"'{image.url}'\"" if vue else f'src="{image.url}"'
    return (
        f'<img {src} alt="{image.name.replace("-", " ").title()}" '
        f'width="{width}" height="{HEIGHT}" class="logo">'
    )


def placed(page: str, image: Uploaded) -> str | None:
    """``page`` with the image before its first heading (the header's start), or None when
    it has no heading or shows the image already."""
    if f'src="{image.url}"' in page:
        return None
    h1 = H1.search(page)
    if h1 is None:
        return None
    return page[: h1.start()] + img_tag(image) + "\n      " + page[h1.start() :]


# A Vue project: list_assets, then read the home view, then put the image before its heading.
_LISTED = re.compile(
    r"^public/(assets/[A-Za-z0-9_-]+\.[a-z]+) \([^,]+, (\d+)×(\d+) px", re.MULTILINE
)


def vue_next(
    req: Request,
    names: set[str],
    results: list[tuple[str, bool, str]],
    files: dict[str, str],
    home: str,
) -> Script | None:
    """The next step of a Vue turn placing an image, or None when the turn is not one."""
    if names == {"list_assets"}:
        if not _uploads_in([c for _, ok, c in results if ok]):
            return Script("You have not uploaded any images yet, so nothing was changed.")
        return Script("", (ScriptedCall.of("read_file", path=home),))
    listings = _listings(req)
    if names != {"read_file"} or not listings:
        return None
    listed = _uploads_in(listings)
    lowered = req.text.lower()
    image = next((u for u in listed if u.name.lower() in lowered), listed[0] if listed else None)
    page = files.get(home, "")
    h1 = H1.search(page)
    if image is None or h1 is None or f"'{image.url}'" in page:
        return Script(
            f"{home} already shows it or has no heading to put it beside; nothing changed."
        )
    old = h1.group(0)
    new = img_tag(image, vue=True) + "\n    " + old
    return Script("", (ScriptedCall.of("modify_file", path=home, old=old, new=new),))


def _uploads_in(listings: list[str]) -> list[Uploaded]:
    """The images list_assets named, in its order."""
    return [Uploaded(u, int(w), int(h)) for c in listings for u, w, h in _LISTED.findall(c)]


def _listings(req: Request) -> list[str]:
    """What this turn's list_assets calls answered (none: the turn placed no image)."""
    ids = {
        c.get("id")
        for m in req.since
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or ()
        if c.get("function", {}).get("name") == "list_assets"
    }
    return [
        text_of(m) for m in req.since if m.get("role") == "tool" and m.get("tool_call_id") in ids
    ]
