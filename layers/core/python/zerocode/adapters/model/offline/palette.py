"""A picture read as a model with vision might read it (issue 41), deterministically: its
dominant colours and its shape, so an app built "like this screenshot" takes its palette.

The offline pages and projects are written in two colours (an accent for the heading and
the buttons, and a page background): a picture's palette replaces them. The accent is the
picture's most vivid colour, darkened until white text on it, and it on white, are easy to
read (a contrast of 4.5 or more); the background is its lightest colour, lightened to a
wash. Nothing here calls out: the bytes came in the request, as an image part.
"""

from __future__ import annotations

import colorsys
import io
import math
from dataclasses import dataclass

from PIL import Image

ACCENT = "#3b5bdb"  # the templates' accent (templates/page/style.css, templates/vue/*)
BACKGROUND = "#f4f6fb"  # and their page background
READABLE = 4.5  # WCAG AA for normal text


@dataclass(frozen=True)
class Palette:
    accent: str
    background: str
    colours: tuple[str, ...]  # the picture's dominant colours, most used first
    ratio: str  # its shape, "16:9"

    def said(self) -> str:
        return (
            f"I built it in the palette of your picture ({', '.join(self.colours[:4])}; "
            f"accent {self.accent}, background {self.background}; {self.ratio})."
        )


def palette_of(data: bytes) -> Palette | None:
    """The picture's palette, or None when the bytes are not a picture Pillow reads."""
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.seek(0)
            small = im.convert("RGB").resize((64, 64))
            width, height = im.size
    except (OSError, ValueError, SyntaxError, EOFError):
        return None
    counted = small.quantize(colors=6, method=Image.Quantize.MEDIANCUT).convert("RGB")
    found = counted.getcolors(64 * 64) or []
    colours: list[tuple[int, int, int]] = [
        (int(rgb[0]), int(rgb[1]), int(rgb[2]))  # type: ignore[index]
        for _, rgb in sorted(found, key=lambda c: (-c[0], str(c[1])))
    ]
    vivid = max(colours, key=_vividness)
    lightest = max(colours, key=_luminance)
    return Palette(
        accent=_hex(_readable(vivid)),
        background=_hex(_wash(lightest)),
        colours=tuple(_hex(c) for c in colours),
        ratio=_ratio(width, height),
    )


def recolour(text: str, palette: Palette) -> str:
    """``text`` (a page, a stylesheet, a tool call's arguments) in the picture's colours."""
    for old, new in ((ACCENT, palette.accent), (BACKGROUND, palette.background)):
        text = text.replace(old, new).replace(old.upper(), new)
    return text


def _vividness(rgb: tuple[int, int, int]) -> float:
    _h, s, v = colorsys.rgb_to_hsv(*(c / 255 for c in rgb))
    return s * v


def _luminance(rgb: tuple[int, int, int]) -> float:
    def linear(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _readable(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """``rgb`` darkened step by step until it reads against white (and white on it)."""
    colour = rgb
    while contrast(colour, (255, 255, 255)) < READABLE:
        colour = (int(colour[0] * 0.9), int(colour[1] * 0.9), int(colour[2] * 0.9))
    return colour


def _wash(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    """``rgb`` mixed with white until it is a light background (dark text reads on it)."""
    colour = rgb
    while _luminance(colour) < 0.85:
        colour = tuple(round(c + (255 - c) * 0.25) for c in colour)  # type: ignore[assignment]
    return colour


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _ratio(width: int, height: int) -> str:
    d = math.gcd(width, height) or 1
    w, h = width // d, height // d
    if w > 50 or h > 50:  # no small whole ratio: say it to one decimal
        return f"{width / height:.2f}:1"
    return f"{w}:{h}"
