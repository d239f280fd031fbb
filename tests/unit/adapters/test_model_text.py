"""A model's streamed text and tool arguments are text: a lone surrogate becomes U+FFFD."""

from __future__ import annotations

from zerocode.adapters.model.openai import _text


def test_lone_surrogates_become_the_replacement_character() -> None:
    assert _text("a \ud800 b \udfff") == "a \ufffd b \ufffd"
    assert _text("emoji 😀 and 中文 stay") == "emoji 😀 and 中文 stay"
    assert _text('{"content": "\\ud800"}') == '{"content": "\\ud800"}'  # an escape is text
