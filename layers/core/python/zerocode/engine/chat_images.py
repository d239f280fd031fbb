"""Images in a chat message: data URLs taken in, kept by digest, named in the transcript.

A message may carry a few images (a screenshot to copy, a sketch, a mock-up) as data URLs,
as OpenAI's API takes them. Each is decoded, checked and re-encoded like an upload of the
builder's (:mod:`zerocode.apps.image_intake`: its real type, its size, no metadata), kept
in the app's ImageStore by digest, and the turn's user message names it
(:class:`~zerocode.memory.messages.ImageRef`). A model that does not see images is never
sent one: the request is refused before the turn starts, saying so.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field

from zerocode.apps.image_intake import CleanImage, ImageLimits, sniff, take
from zerocode.errors import InvalidInput, PayloadTooLarge, ZerocodeError
from zerocode.memory.images import ImageStore, digest
from zerocode.memory.messages import ImageRef

# What a model takes in an image part (OpenAI: PNG, JPEG, WebP, GIF without motion).
SENT_TYPES = {"png": "png", "jpg": "jpg", "webp": "webp", "gif": "gif", "avif": "png", "ico": "png"}
_DATA_URL = re.compile(r"data:(image/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]*)", re.DOTALL)


class ImagesNotSupported(InvalidInput):
    code = "images_not_supported"


class TooManyImages(PayloadTooLarge):
    code = "too_many_images"


@dataclass(frozen=True)
class ChatImageRules:
    most: int = 4  # images a message may carry
    limits: ImageLimits = field(
        default_factory=lambda: ImageLimits(max_file_bytes=1_572_864, max_frames=1)
    )
    vision: bool = True  # the model sees images
    model: str = ""  # which, for the refusal

    def body_bytes(self) -> int:
        """The largest request these allow: every image as base64, and room for the rest."""
        per_image = (self.limits.max_file_bytes + 2) // 3 * 4 + 64
        return self.most * per_image


def check_images(urls: list[str], rules: ChatImageRules) -> None:
    """Refusals that need no decoding: a model that does not see images, too many."""
    if not urls:
        return
    if not rules.vision:
        raise ImagesNotSupported(
            f"the model that answers here ({rules.model or 'the configured model'}) does not "
            "take images; describe the picture in words, or (operators) set "
            "ZEROCODE_MODEL_VISION=1 for a model that does"
        )
    if len(urls) > rules.most:
        raise TooManyImages(f"a message carries at most {rules.most} images; it has {len(urls)}")


def take_images(
    store: ImageStore, app_id: str, urls: list[str], rules: ChatImageRules
) -> tuple[ImageRef, ...]:
    """Each data URL checked, re-encoded and kept; the references the message carries."""
    check_images(urls, rules)
    clean: list[CleanImage] = []
    for index, url in enumerate(urls, start=1):
        data = _decoded(url, index, rules)
        kind = sniff(data)
        # AVIF and icons are sent as PNG: not every model takes them.
        as_ext = SENT_TYPES[kind[2]] if kind is not None else None
        try:
            image = take(data, rules.limits, as_ext=as_ext if kind and as_ext != kind[2] else None)
        except ZerocodeError as exc:
            raise type(exc)(f"image {index}: {exc.message}") from None
        clean.append(image)
    refs = []
    for image in clean:  # kept once every image passed: a refused message keeps none
        sha = digest(image.data)
        store.put(app_id, sha, image.data)
        refs.append(ImageRef(sha, image.media_type, image.width, image.height, len(image.data)))
    return tuple(refs)


def _decoded(url: str, index: int, rules: ChatImageRules) -> bytes:
    if not isinstance(url, str) or not url.startswith("data:"):
        raise InvalidInput(
            f"image {index} must be the image itself as a data URL (data:image/png;base64,…); "
            "a link to an image elsewhere is not fetched"
        )
    found = _DATA_URL.fullmatch(url)
    if found is None:
        raise InvalidInput(f"image {index} is not a base64 data URL of an image type")
    text = re.sub(r"\s+", "", found.group(2))
    most = (rules.limits.max_file_bytes + 2) // 3 * 4
    if len(text) > most:
        raise PayloadTooLarge(
            f"image {index} is {len(text) * 3 // 4:,} bytes; the limit is "
            f"{rules.limits.max_file_bytes:,} bytes an image (the console scales images down "
            "before sending; scale it down and attach it again)"
        )
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput(f"image {index}: the data URL is not valid base64") from None
