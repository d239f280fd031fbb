from __future__ import annotations

import pytest

from zerocode.memory.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from zerocode.memory.validation import InvalidWindow, is_valid, validate

A = ToolCall("a", "read_file", "{}")
B = ToolCall("b", "read_dir", "{}")
CALLS = AssistantMessage(None, (A, B))
RA, RB = ToolResult.success(A, "x"), ToolResult.success(B, "y")


def test_valid_parallel_calls_in_any_answer_order() -> None:
    validate([SystemMessage("s"), UserMessage("u"), CALLS, RB, RA, AssistantMessage("done")])


@pytest.mark.parametrize(
    ("messages", "index", "words"),
    [
        ([SystemMessage("s"), RA], 1, "no preceding"),
        ([UserMessage("u"), CALLS, RA, UserMessage("next")], 3, "not answered"),
        ([UserMessage("u"), CALLS, RA], 3, "never answered"),
        ([UserMessage("u"), CALLS, RA, RB, RA], 4, "second time"),
        ([UserMessage("u"), CALLS, RA, RB, AssistantMessage("t"), RA], 5, "no preceding"),
        ([CALLS, RA, CALLS, RA, RB], 2, "not answered"),
    ],
)
def test_rule_breaks_name_the_offending_index(
    messages: list[Message], index: int, words: str
) -> None:
    with pytest.raises(InvalidWindow) as caught:
        validate(messages)
    assert caught.value.index == index
    assert words in caught.value.reason
    assert not is_valid(messages)
