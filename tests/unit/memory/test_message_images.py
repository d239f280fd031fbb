"""A message's images in the transcript (memory/messages.py, tokens.py, elision.py,
images.py): kept by reference and digest, sent inline only when loaded, costed by OpenAI's
rule, named instead of shown once older than the newest few."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zerocode.memory.elision import elide, newest_images
from zerocode.memory.images import ImageMissing, loaded
from zerocode.memory.messages import (
    ImageRef,
    UserMessage,
    from_dict,
    from_openai_list,
    to_dict,
    to_openai,
)
from zerocode.memory.tokens import image_tokens, message_tokens
from zerocode.memory.transcript import Entry, EntryKind, Unit

DATA = b"\x89PNG\r\n\x1a\n-pretend-pixels"
SHA = hashlib.sha256(DATA).hexdigest()
IMAGE = ImageRef(SHA, "image/png", 1280, 720, len(DATA))


class Store:
    def __init__(self, **kept: bytes) -> None:
        self.kept = kept

    def put(self, app_id: str, sha256: str, data: bytes) -> None:
        self.kept[sha256] = data

    def get(self, app_id: str, sha256: str) -> bytes:
        if sha256 not in self.kept:
            raise ImageMissing("gone")
        return self.kept[sha256]

    def delete_app(self, app_id: str) -> int:
        return 0


def test_the_transcript_keeps_a_reference_and_the_model_call_the_image() -> None:
    message = UserMessage("like this", (IMAGE,))
    stored = to_dict(message)
    text, part = stored["content"]
    assert text == {"type": "text", "text": "like this"}
    assert part["image_url"]["url"] == (
        f"zerocode-image:{SHA}?type=image/png&w=1280&h=720&bytes={len(DATA)}"
    )
    assert from_dict(stored) == message and from_openai_list([stored]) == [message]
    with pytest.raises(ValueError, match="was not loaded"):
        to_openai(message, inline=True)  # never sent without its bytes, never dropped
    (sent,) = loaded([message], "app", Store(**{SHA: DATA}))
    url = to_openai(sent, inline=True)["content"][1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and sent == message  # data not compared
    assert "base64" not in str(to_dict(sent))  # the stored form never holds the bytes


def test_a_changed_or_missing_image_is_a_clear_error() -> None:
    message = UserMessage("x", (IMAGE,))
    with pytest.raises(ImageMissing, match="not what was attached"):
        loaded([message], "app", Store(**{SHA: DATA + b"!"}))
    with pytest.raises(ImageMissing):
        loaded([message], "app", Store())


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ([{"type": "image_url", "image_url": {"url": IMAGE.ref}}], "start with its text"),
        (
            [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {"url": "data:x"}}],
            "not a zerocode image reference",
        ),
        ([{"type": "text", "text": "x"}, {"type": "audio"}], "only image_url parts"),
    ],
)
def test_malformed_stored_parts_are_refused(content: list[object], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        from_openai_list([{"role": "user", "content": content}])


@pytest.mark.parametrize(
    ("size", "tokens"),
    [
        ((512, 512), 255),
        ((1024, 1024), 765),
        ((2048, 4096), 1105),
        ((100, 40), 255),
        ((768, 2048), 1445),
        ((4096, 8192), 1105),
    ],
)
def test_an_image_costs_by_openais_rule(size: tuple[int, int], tokens: int) -> None:
    assert image_tokens(*size) == tokens
    plain = message_tokens(UserMessage("hi"))
    shown = message_tokens(UserMessage("hi", (ImageRef(SHA, "image/png", *size, 1),)))
    assert shown - plain == tokens


@given(st.integers(1, 20_000), st.integers(1, 20_000))
def test_no_image_costs_more_than_the_window_plans_for(w: int, h: int) -> None:
    assert 255 <= image_tokens(w, h) <= image_tokens(768, 2048)


def test_older_images_are_named_and_the_newest_kept() -> None:
    message = UserMessage("like this", (IMAGE,))
    slim = elide(message, 512)
    assert isinstance(slim, UserMessage)
    assert slim.images == () and slim.content.startswith("like this\n\n[image elided: ")
    assert f"1280×720 px, {len(DATA)} B, sha256 {SHA[:16]}" in slim.content
    assert elide(message, 512, keep_images=True) is message

    def unit(turn: int, images: int) -> Unit:
        sent = UserMessage(f"t{turn}", (IMAGE,) * images)
        entry = Entry(
            seq=turn, turn=turn, unit=turn, turn_start=turn, kind=EntryKind.USER, message=sent
        )
        return Unit((entry,))

    units = [unit(1, 2), unit(2, 0), unit(3, 3), unit(4, 1)]
    assert newest_images(units, 4) == {3, 4}
    assert newest_images(units, 3) == {4}  # turn 3's images go together or not at all
    assert newest_images(units, 0) == frozenset()
