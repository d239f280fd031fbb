"""A builder's image taken in: its real type sniffed, its size bounded before a pixel is
decoded, its pixels re-encoded into a new file (no metadata, no trailing bytes), or refused.

Why re-encode rather than check: a file that passes a check is still the file the builder
sent, with whatever else it carries (EXIF with GPS, an HTML or script body after the image's
end, a second format's header further in). A re-encoded file holds the pixels and nothing
else, so what a site serves from the assets folder is an image by construction.

Only the formats a page shows are opened (PNG, JPEG, WebP, GIF, AVIF, ICO), each by its own
signature (never the name or the declared type), and Pillow is told to try those alone:
none of its other decoders (EPS, PSD, TGA...) ever sees an upload. SVG is refused: it is a
document that can run script, not an image (docs/security.md, "The builder's images").

A decompression bomb is refused from its header: the sides (``max_side``), the frames
(``max_frames``) and their product (``MAX_TOTAL_PIXELS``) are read before anything is
decoded. Pillow's own bomb guard stays on behind that.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, ImageSequence

from zerocode.errors import InvalidInput, PayloadTooLarge, ZerocodeError

# Pixels of every frame together: a 4,096-pixel square is 16.8 million; an animation may
# have a few frames of that size or many small ones, never a gigapixel to decode.
MAX_TOTAL_PIXELS = 64 * 1024 * 1024

# Signature → (Pillow's format, media type, the extension the file is given).
_JPEG = ("JPEG", "image/jpeg", "jpg")
_PNG = ("PNG", "image/png", "png")
_GIF = ("GIF", "image/gif", "gif")
_WEBP = ("WEBP", "image/webp", "webp")
_AVIF = ("AVIF", "image/avif", "avif")
_ICO = ("ICO", "image/x-icon", "ico")
_BY_EXT = {k[2]: k for k in (_JPEG, _PNG, _GIF, _WEBP, _AVIF, _ICO)}
SHOWN = "PNG, JPEG, WebP, GIF, AVIF or ICO"


class ImageRefused(InvalidInput):
    """The file is of an accepted type but not a sound image (corrupt, too many frames)."""

    code = "image_refused"


class ImageTooLarge(PayloadTooLarge):
    code = "image_too_large"


class ImageUnsupported(ZerocodeError):
    """Not an image of an accepted type (whatever its name or declared type says)."""

    status = 415
    code = "unsupported_image_type"


@dataclass(frozen=True)
class ImageLimits:
    max_file_bytes: int = 5 * 1024 * 1024  # the upload, and the file kept
    max_side: int = 4096
    max_frames: int = 300


@dataclass(frozen=True)
class CleanImage:
    """A clean image: its new bytes and what they are."""

    data: bytes
    media_type: str
    ext: str
    width: int
    height: int
    frames: int


def sniff(data: bytes) -> tuple[str, str, str] | None:
    """(Pillow format, media type, extension) of ``data`` by its signature, or None."""
    if data[:3] == b"\xff\xd8\xff":
        return _JPEG
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return _PNG
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return _GIF
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _WEBP
    if data[4:8] == b"ftyp" and data[8:12] in (b"avif", b"avis"):
        return _AVIF
    if data[:4] == b"\x00\x00\x01\x00":
        return _ICO
    return None


def _looks_like_svg(data: bytes) -> bool:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<?xml", b"<svg", b"<!doctype svg")) or b"<svg" in head


def _unsupported(data: bytes) -> ImageUnsupported:
    if _looks_like_svg(data):
        return ImageUnsupported(
            "SVG is not accepted: an SVG file is a document that can run script and load "
            "other files, not only a picture. Export it as PNG or WebP and upload that"
        )
    return ImageUnsupported(
        f"the file is not a {SHOWN} image (its content was read, not its name or type)"
    )


def describe(data: bytes) -> tuple[str, int, int] | None:
    """(media type, width, height) of an image from its header alone, or None."""
    kind = sniff(data)
    if kind is None:
        return None
    try:
        with Image.open(io.BytesIO(data), formats=[kind[0]]) as im:
            return kind[1], im.width, im.height
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        return None


def take(data: bytes, limits: ImageLimits, *, as_ext: str | None = None) -> CleanImage:
    """``data`` re-encoded as a clean image of its own type (or of the type the extension
    ``as_ext`` names: an upload replacing an asset keeps its name), or the reason it cannot
    be."""
    if len(data) > limits.max_file_bytes:
        raise ImageTooLarge(
            f"the image is {len(data):,} bytes; the limit is {limits.max_file_bytes:,} "
            "bytes a file (make it smaller and upload it again)"
        )
    kind = sniff(data)
    if kind is None:
        raise _unsupported(data)
    fmt, media, ext = kind if as_ext is None else _BY_EXT[as_ext]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=[kind[0]]) as im:
                frames = _bounded(im, limits)
                out, (width, height) = _encode(im, fmt, frames)
    except ZerocodeError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageTooLarge(
            "the image's header claims far more pixels than a picture on a page has (a "
            f"decompression bomb?); the limit is {limits.max_side} px a side"
        ) from None
    except (OSError, ValueError, SyntaxError, EOFError, IndexError):
        raise ImageRefused(
            f"the file starts as {kind[2].upper()} but could not be read as an image (is it cut "
            "short or damaged?)"
        ) from None
    if len(out) > limits.max_file_bytes:
        raise ImageTooLarge(
            f"the image re-encoded is {len(out):,} bytes; the limit is "
            f"{limits.max_file_bytes:,} bytes a file (make it smaller and upload it again)"
        )
    return CleanImage(out, media, ext, width, height, frames)


def _bounded(im: Image.Image, limits: ImageLimits) -> int:
    """The frame count, once the header's sides and frames are within the limits."""
    width, height = im.size
    if width < 1 or height < 1:
        raise ImageRefused("the image has no pixels")
    if max(width, height) > limits.max_side:
        raise ImageTooLarge(
            f"the image is {width}×{height} px; the limit is {limits.max_side} px a side "
            "(scale it down and upload it again)"
        )
    frames = getattr(im, "n_frames", 1)  # GIF, WebP: counted from the blocks, not decoded
    if frames > limits.max_frames:
        raise ImageRefused(
            f"the image has {frames:,} frames; the limit is {limits.max_frames:,} "
            "(shorten the animation)"
        )
    if frames * width * height > MAX_TOTAL_PIXELS:
        raise ImageTooLarge(
            f"the animation is {frames} frames of {width}×{height} px, more pixels than the "
            f"platform takes ({MAX_TOTAL_PIXELS:,}); make it smaller or shorter"
        )
    return frames


def _encode(im: Image.Image, fmt: str, frames: int) -> tuple[bytes, tuple[int, int]]:
    """The pixels into a new file of format ``fmt``: no EXIF, XMP, text chunks, comments or
    colour profile (pixels are taken as sRGB, what a page assumes), nothing after the end."""
    out = io.BytesIO()
    if fmt == "ICO":
        sizes = sorted(im.ico.sizes()) if hasattr(im, "ico") else [im.size]
        _plain(im.convert("RGBA")).save(out, "ICO", sizes=sizes)
        return out.getvalue(), im.size
    if fmt == "JPEG":
        upright = ImageOps.exif_transpose(im)  # the orientation EXIF gave, kept in the pixels
        if _has_alpha(upright):  # JPEG has none: what was transparent shows white
            rgba = upright.convert("RGBA")
            upright = Image.new("RGB", rgba.size, (255, 255, 255))
            upright.paste(rgba, mask=rgba.getchannel("A"))
        mode = "L" if upright.mode in ("L", "1") else "RGB"
        _plain(upright.convert(mode)).save(out, "JPEG", quality=88, optimize=True)
        return out.getvalue(), upright.size
    if frames > 1:
        return _animation(im, fmt, out), im.size
    clean = _plain(_web_mode(im, fmt))
    clean.save(out, fmt, **_options(fmt))
    return out.getvalue(), im.size


def _animation(im: Image.Image, fmt: str, out: io.BytesIO) -> bytes:
    durations: list[int] = []
    pictures: list[Image.Image] = []
    for frame in ImageSequence.Iterator(im):
        durations.append(int(frame.info.get("duration", 100) or 100))
        pictures.append(_plain(frame.convert("RGBA")))
    first, rest = pictures[0], pictures[1:]
    loop = int(im.info.get("loop", 0) or 0)
    extra = {"disposal": 2} if fmt == "GIF" else {}
    first.save(
        out,
        fmt,
        save_all=True,
        append_images=rest,
        duration=durations,
        loop=loop,
        **extra,
        **_options(fmt),
    )
    return out.getvalue()


def _web_mode(im: Image.Image, fmt: str) -> Image.Image:
    if fmt == "GIF":
        return im.convert("P") if im.mode != "P" else im
    if fmt == "PNG" and im.mode in ("1", "L", "LA", "P", "RGB", "RGBA"):
        return im
    return im.convert("RGBA" if _has_alpha(im) else "RGB")


def _has_alpha(im: Image.Image) -> bool:
    return im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info


def _plain(im: Image.Image) -> Image.Image:
    """A copy holding the pixels (and a palette's transparency) only: ``info`` carries EXIF,
    XMP, ICC, comments and text chunks into a save, so it is emptied."""
    clean = im.copy()
    kept = im.info.get("transparency")
    clean.info.clear()
    if kept is not None:
        clean.info["transparency"] = kept
    return clean


def _options(fmt: str) -> dict[str, object]:
    if fmt == "WEBP":
        return {"quality": 90, "method": 4}
    if fmt == "AVIF":
        return {"quality": 80}
    if fmt == "PNG":
        return {"optimize": False}
    return {}
