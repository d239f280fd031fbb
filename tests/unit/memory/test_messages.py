from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.properties import examples
from zerocode.memory.messages import (
    FAILED_PREFIX,
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
    from_dict,
    from_openai_list,
    to_dict,
    to_openai_list,
)

PARALLEL = [
    {"role": "system", "content": "You build Vue apps."},
    {"role": "user", "content": "make the title red"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "src/App.vue"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "read_dir", "arguments": "{}"},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_a", "content": "<template>…</template>"},
    {"role": "tool", "tool_call_id": "call_b", "content": "ERROR: permission denied"},
    {
        "role": "assistant",
        "content": "I changed it.",
        "tool_calls": [
            {"id": "call_c", "type": "function", "function": {"name": "exit", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "call_c", "content": "ok"},
    {"role": "assistant", "content": "Done."},
]


def test_openai_round_trip_with_parallel_calls_is_exact() -> None:
    messages = from_openai_list(cast(list[dict[str, Any]], PARALLEL))
    assert to_openai_list(messages) == PARALLEL
    call = messages[2]
    assert isinstance(call, AssistantMessage) and [c.id for c in call.tool_calls] == [
        "call_a",
        "call_b",
    ]
    result_a, result_b = messages[3], messages[4]
    assert isinstance(result_a, ToolResult) and result_a.ok and result_a.name == "read_file"
    assert isinstance(result_b, ToolResult) and not result_b.ok and result_b.name == "read_dir"


def test_failure_is_visible_to_the_model_and_consistent() -> None:
    call = ToolCall("c", "modify_file", "{}")
    failed = ToolResult.failure(call, "old text not found")
    assert failed.content == FAILED_PREFIX + "old text not found" and not failed.ok
    with pytest.raises(ValueError):
        ToolResult(tool_call_id="c", name="modify_file", content="ERROR: x", ok=True)
    with pytest.raises(ValueError):
        ToolResult(tool_call_id="c", name="modify_file", content="fine", ok=False)
    # A successful payload that happens to start with the prefix cannot pass as a failure.
    assert ToolResult.success(call, "ERROR: is a word in this file").ok


def test_assistant_needs_content_or_calls_and_unique_ids() -> None:
    with pytest.raises(ValueError):
        AssistantMessage(None)
    with pytest.raises(ValueError):
        AssistantMessage(None, (ToolCall("a", "x", "{}"), ToolCall("a", "y", "{}")))


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "wizard", "content": "x"},
        {"role": "user", "content": None},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}]},
        {"role": "tool", "content": "x"},
    ],
)
def test_malformed_openai_messages_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        from_openai_list([bad])


def test_malformed_arguments_parse_to_none() -> None:
    assert ToolCall("a", "write_file", '{"path": ').parsed_arguments() is None
    assert ToolCall("a", "write_file", "[1]").parsed_arguments() is None
    assert ToolCall("a", "write_file", '{"path": "x"}').parsed_arguments() == {"path": "x"}


text = st.text(max_size=40)
calls = st.lists(
    st.tuples(st.text(min_size=1, max_size=8), text, text), max_size=3, unique_by=lambda t: t[0]
)


def _assistant(content: str | None, tool_calls: list[tuple[str, str, str]]) -> AssistantMessage:
    if content is None and not tool_calls:
        content = ""
    return AssistantMessage(content, tuple(ToolCall(*t) for t in tool_calls))


def _result(call_id: str, name: str, content: str, *, ok: bool) -> ToolResult:
    call = ToolCall(call_id, name, "{}")
    return ToolResult.success(call, content) if ok else ToolResult.failure(call, content)


messages = st.one_of(
    text.map(SystemMessage),
    text.map(UserMessage),
    st.builds(_assistant, st.none() | text, calls),
    st.builds(_result, text, text, text, ok=st.booleans()),
)


@settings(max_examples=examples(100))
@given(messages)
def test_storage_form_round_trips_any_message(message: object) -> None:
    assert from_dict(to_dict(message)) == message  # type: ignore[arg-type]
