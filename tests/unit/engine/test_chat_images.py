"""A message's images taken in (engine/chat_images.py): data URLs decoded, re-encoded into
what a model takes, kept by digest; bad ones refused saying which and why."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from tests.pictures import HOSTILE_SVG, jpeg_with_gps, long_gif, png
from tests.unit.memory.test_message_images import Store
from zerocode.apps.image_intake import ImageLimits, ImageUnsupported, sniff
from zerocode.engine.chat_images import (
    ChatImageRules,
    ImagesNotSupported,
    TooManyImages,
    take_images,
)
from zerocode.errors import InvalidInput, PayloadTooLarge
from zerocode.memory.images import digest

RULES = ChatImageRules()


def url(data: bytes, kind: str = "image/png") -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def test_images_are_kept_by_digest_and_named() -> None:
    store = Store()
    refs = take_images(
        store, "app", [url(png((40, 30))), url(jpeg_with_gps(), "image/jpeg")], RULES
    )
    assert [(r.media_type, r.width, r.height) for r in refs] == [
        ("image/png", 40, 30),
        ("image/jpeg", 200, 300),  # upright, its EXIF gone
    ]
    for ref in refs:
        assert digest(store.kept[ref.sha256]) == ref.sha256 and ref.size == len(
            store.kept[ref.sha256]
        )
    assert b"taken at home" not in store.kept[refs[1].sha256]


def test_types_a_model_may_not_take_are_sent_as_png() -> None:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), (9, 9, 9)).save(out, "AVIF")
    (ref,) = take_images(Store(), "app", [url(out.getvalue(), "image/avif")], RULES)
    assert ref.media_type == "image/png"


@pytest.mark.parametrize(
    ("urls", "rules", "error", "says"),
    [
        (
            [url(png())],
            ChatImageRules(vision=False, model="deepseek-chat"),
            ImagesNotSupported,
            "deepseek-chat",
        ),
        ([url(png())] * 5, RULES, TooManyImages, "at most 4"),
        (["http://example.com/a.png"], RULES, InvalidInput, "data URL"),
        (["data:text/html;base64,PGgxPg=="], RULES, InvalidInput, "image type"),
        (["data:image/png;base64,!!!"], RULES, InvalidInput, "not a base64 data URL"),
        ([url(png()), url(HOSTILE_SVG)], RULES, ImageUnsupported, "image 2: SVG"),
        ([url(long_gif(2), "image/gif")], RULES, InvalidInput, "image 1: .*2 frames"),
        (
            [url(png() + b"\0" * 40_000)],
            ChatImageRules(limits=ImageLimits(max_file_bytes=20_000, max_frames=1)),
            PayloadTooLarge,
            "limit is 20,000 bytes an image",
        ),
    ],
)
def test_bad_images_are_refused_and_nothing_kept(
    urls: list[str], rules: ChatImageRules, error: type[Exception], says: str
) -> None:
    store = Store()
    with pytest.raises(error, match=says):
        take_images(store, "app", urls, rules)
    assert store.kept == {}  # not even the good image before a bad one


def test_the_body_bound_holds_every_image_as_base64() -> None:
    most = RULES.limits.max_file_bytes
    assert RULES.body_bytes() >= RULES.most * len(base64.b64encode(b"\0" * most))
    assert sniff(png()) is not None
