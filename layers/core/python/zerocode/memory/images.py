"""The images users attach to their messages: kept apart from the transcript, by digest.

The transcript and the window name an image (:class:`~zerocode.memory.messages.ImageRef`:
its digest, type, pixel size and bytes); its bytes live in the app's ImageStore (files
locally, S3 on AWS), never in DynamoDB, Redis or the window cache. Only the model call
that sends an image loads it (:func:`loaded`), checked against its digest, so the window
a restore rebuilds is the same text, byte for byte, whether or not a cache held it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from zerocode.errors import NotFound
from zerocode.memory.messages import ImageRef, Message, UserMessage

_SHA = re.compile(r"[0-9a-f]{64}")


class ImageMissing(NotFound):
    code = "image_missing"


class ImageStore(Protocol):
    def put(self, app_id: str, sha256: str, data: bytes) -> None:
        """Keep ``data`` (whose digest is ``sha256``); the same image again is a no-op."""
        ...

    def get(self, app_id: str, sha256: str) -> bytes:
        """Raises ImageMissing."""
        ...

    def delete_app(self, app_id: str) -> int: ...


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_digest(value: str) -> str:
    """``value`` when it is an image's digest (it names a file or a key), else ImageMissing."""
    if not _SHA.fullmatch(value):
        raise ImageMissing(f"{value[:80]!r} is not an image's digest")
    return value


def loaded(messages: Sequence[Message], app_id: str, store: ImageStore) -> tuple[Message, ...]:
    """``messages`` with each image's bytes filled in for the model call (the same objects
    where there is none). ImageMissing when an image is gone or not what it was."""
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.images:
            images = tuple(_load(app_id, image, store) for image in message.images)
            message = replace(message, images=images)
        out.append(message)
    return tuple(out)


def _load(app_id: str, image: ImageRef, store: ImageStore) -> ImageRef:
    data = store.get(app_id, image.sha256)
    if digest(data) != image.sha256:
        raise ImageMissing(
            f"the image {image.sha256[:12]} of this conversation is not what was attached "
            "(its stored bytes changed); attach it again"
        )
    return replace(image, data=data)
