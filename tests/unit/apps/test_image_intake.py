"""An upload taken in (apps/image_intake.py): each accepted type re-encoded as itself with
nothing but its pixels; hostile files refused from their header or neutralised; the limits
are the settings'."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from tests.pictures import (
    HOSTILE_SVG,
    POLYGLOT_TAIL,
    bomb,
    jpeg_with_gps,
    long_gif,
    pixel,
    png,
    polyglot,
)
from tests.properties import examples
from zerocode.apps.image_intake import (
    ImageLimits,
    ImageRefused,
    ImageTooLarge,
    ImageUnsupported,
    describe,
    sniff,
    take,
)

LIMITS = ImageLimits()


def saved(fmt: str, size: tuple[int, int] = (48, 40), mode: str = "RGBA", **kw: object) -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, (10, 120, 200, 255)[: len(mode)]).save(out, fmt, **kw)
    return out.getvalue()


@pytest.mark.parametrize(
    ("fmt", "mode", "media", "ext"),
    [
        ("PNG", "RGBA", "image/png", "png"),
        ("PNG", "P", "image/png", "png"),
        ("JPEG", "RGB", "image/jpeg", "jpg"),
        ("WEBP", "RGBA", "image/webp", "webp"),
        ("GIF", "P", "image/gif", "gif"),
        ("AVIF", "RGB", "image/avif", "avif"),
        ("ICO", "RGBA", "image/x-icon", "ico"),
    ],
)
def test_each_accepted_type_is_re_encoded_as_itself(
    fmt: str, mode: str, media: str, ext: str
) -> None:
    size = (48, 48) if fmt == "ICO" else (48, 40)  # an icon's sizes are square
    data = saved(fmt, size, mode=mode)
    image = take(data, LIMITS)
    assert (image.media_type, image.ext, (image.width, image.height)) == (media, ext, size)
    assert sniff(image.data) == sniff(data) and image.frames == 1
    assert describe(image.data) == (media, *size)


def test_a_polyglot_keeps_its_pixels_and_loses_its_page() -> None:
    image = take(polyglot(), LIMITS)
    assert POLYGLOT_TAIL not in image.data and b"<script" not in image.data
    assert pixel(image.data) == (200, 30, 40)


def test_exif_gps_and_comments_are_gone_and_the_orientation_is_in_the_pixels() -> None:
    image = take(jpeg_with_gps(), LIMITS)
    assert (image.width, image.height) == (200, 300)  # turned upright as the EXIF said
    with Image.open(io.BytesIO(image.data)) as im:
        assert not im.getexif() and "comment" not in im.info and "icc_profile" not in im.info
    assert b"taken at home" not in image.data


def test_png_text_chunks_are_dropped() -> None:
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Author", "someone@example.com")
    image = take(saved("PNG", pnginfo=info), LIMITS)
    assert b"someone@example.com" not in image.data


def test_an_animation_keeps_its_frames_within_the_limit() -> None:
    frames = [Image.new("RGB", (20, 20), (i * 40, 0, 0)) for i in range(5)]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=80, loop=0)
    image = take(out.getvalue(), LIMITS)
    assert image.frames == 5 and image.media_type == "image/gif"
    with Image.open(io.BytesIO(image.data)) as im:
        assert getattr(im, "n_frames", 1) == 5


@pytest.mark.parametrize(
    ("data", "error", "says"),
    [
        (HOSTILE_SVG, ImageUnsupported, "SVG is not accepted"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", ImageUnsupported, "SVG"),
        (b"<html><script>alert(1)</script>", ImageUnsupported, "not a PNG, JPEG"),
        (b"GIF89a" + b"\0" * 4, ImageRefused, "could not be read"),
        (png()[:50], ImageRefused, "cut short or damaged"),
        (bomb(), ImageTooLarge, "decompression bomb"),
        (bomb(5000), ImageTooLarge, "5000×5000 px; the limit is 4096"),
        (long_gif(), ImageRefused, "10,000 frames; the limit is 300"),
    ],
)
def test_hostile_files_are_refused_saying_why(data: bytes, error: type, says: str) -> None:
    with pytest.raises(error, match=says):
        take(data, LIMITS)


def test_the_limits_are_the_settings() -> None:
    small = ImageLimits(max_file_bytes=20_000, max_side=64, max_frames=3)
    with pytest.raises(ImageTooLarge, match="the limit is 20,000 bytes"):
        take(png((64, 64)) + b"\0" * 20_000, small)
    with pytest.raises(ImageTooLarge, match="limit is 64 px a side"):
        take(png((65, 10)), small)
    with pytest.raises(ImageRefused, match="4 frames; the limit is 3"):
        take(long_gif(4), small)
    assert take(png((64, 64)), small).width == 64


def test_an_upload_replacing_an_asset_takes_the_assets_type() -> None:
    image = take(saved("PNG", mode="RGBA"), LIMITS, as_ext="jpg")
    assert (image.media_type, image.ext) == ("image/jpeg", "jpg")
    assert sniff(image.data) == ("JPEG", "image/jpeg", "jpg")


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=2048), st.sampled_from([b"", b"\x89PNG\r\n\x1a\n", b"GIF89a"]))
def test_any_bytes_are_an_image_or_a_clear_refusal(data: bytes, head: bytes) -> None:
    try:
        image = take(head + data, LIMITS)
    except (ImageRefused, ImageTooLarge, ImageUnsupported) as exc:
        assert exc.status in (400, 413, 415) and exc.message
    else:
        assert describe(image.data) is not None
