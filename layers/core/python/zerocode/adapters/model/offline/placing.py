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

from zerocode.adapters.model.offline.base import H1, text_of

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


def img_tag(image: Uploaded) -> str:
    width = max(1, round(HEIGHT * image.width / image.height))
    return (
        f'<img src="{image.url}" alt="{image.name.replace("-", " ").title()}" '
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
