"""Images for tests, made with Pillow: plain ones and hostile ones (a polyglot, a bomb, an
animation of too many frames, SVG that runs script)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def png(size: tuple[int, int] = (64, 32), colour: tuple[int, ...] = (200, 30, 40)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def jpeg_with_gps(size: tuple[int, int] = (300, 200)) -> bytes:
    """A JPEG whose EXIF says where it was taken, rotated a quarter turn, with a comment."""
    im = Image.new("RGB", size, (10, 200, 10))
    exif = im.getexif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to show
    exif[0x8825] = {1: "N", 2: (51.0, 30.0, 0.0), 3: "W", 4: (0.0, 7.0, 0.0)}
    out = io.BytesIO()
    im.save(out, "JPEG", exif=exif, comment=b"taken at home")
    return out.getvalue()


POLYGLOT_TAIL = b"<html><body><script>document.title='pwned'</script></body></html>"


def polyglot() -> bytes:
    """A valid PNG with an HTML page after its end: a browser sniffing it finds the page."""
    return png() + POLYGLOT_TAIL


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb(side: int = 100_000) -> bytes:
    """A few kB that claim a ``side``×``side`` picture (a decompression bomb)."""
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\0" * (side * 3 + 1) * 8, 9)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", rows)
        + _chunk(b"IEND", b"")
    )


def long_gif(frames: int = 10_000) -> bytes:
    """An animated GIF of ``frames`` small frames, each unlike the last."""
    pictures = [Image.new("P", (4, 4), 0) for _ in range(frames)]
    for i, picture in enumerate(pictures):
        picture.putpixel((i % 4, (i // 4) % 4), i % 255 + 1)
    out = io.BytesIO()
    pictures[0].save(out, "GIF", save_all=True, append_images=pictures[1:])
    return out.getvalue()


HOSTILE_SVG = (
    b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" '
    b'xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(1)">'
    b"<script>fetch('/api/users/me')</script>"
    b'<foreignObject><iframe src="https://evil.example/"/></foreignObject>'
    b'<image xlink:href="https://evil.example/track.png"/></svg>'
)


def pixel(data: bytes, at: tuple[int, int] = (0, 0)) -> tuple[int, ...]:
    with Image.open(io.BytesIO(data)) as im:
        value = im.convert("RGB").getpixel(at)
    assert isinstance(value, tuple)
    return value
