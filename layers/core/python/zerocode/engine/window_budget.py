"""The smallest token budget a window may have: room for what every window pins.

Every window holds the app's system prompt and the current turn's request, and neither is
ever dropped (docs/memory.md, ``pin``); with the running summary on, it also reserves the
summary's room. A ``ZEROCODE_WINDOW_MAX_TOKENS`` below their sum would give windows over
their budget, so the settings refuse it when they load (``bootstrap/settings.py``).

The request is costed at its largest: ``max_message_chars`` characters plus every field of
the element picked in the preview at its longest, at one token per character (a
character o200k encodes as one token each: the top of ordinary text — English costs ~0.2
tokens a character, code ~0.35, Chinese or Japanese ~0.7). Characters that cost more
(Ge'ez script ~1.8, rare ideographs, emoji and private-use characters 2–4) can make a
request exceed this bound; such a request is still never dropped, so its window exceeds
the budget by the excess.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from zerocode.engine import prompts
from zerocode.errors import InvalidInput
from zerocode.memory.facade import user_content
from zerocode.memory.messages import SystemMessage, UserMessage
from zerocode.memory.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TokenCounter,
    count_tokens,
    image_tokens,
    message_tokens,
)

# The system prompts of the apps' turns (engine/turn.py, PROMPT_OF; a test keeps them equal).
WINDOW_PROMPTS = ("html", "multi_file", "vue_project")
# The picked element's fields and their longest values (http/schemas.py, ElementIn; a test
# keeps them equal).
ELEMENT_LIMITS = {"pagePath": 300, "tag": 40, "selector": 500, "text": 500, "src": 500}
# The most one image of a message costs (OpenAI's rule: a 768×2048 picture is 8 tiles).
MOST_IMAGE_TOKENS = image_tokens(768, 2048)
# One o200k token per character, alone or repeated.
FILLER = "中"
# Most bytes one character takes in UTF-8 (the request's byte bound below).
_MAX_UTF8 = 4
ENV = "ZEROCODE_WINDOW_MAX_TOKENS"


@dataclass(frozen=True, kw_only=True)
class WindowMinimum:
    """What the smallest budget must hold, in tokens (message framing included)."""

    prompt: str  # the largest system prompt's name
    system: int
    request: int  # the largest pinned request
    summary: int  # the running summary's reserved room; 0 with the summary off
    images: int = 0  # the request's images at their costliest (0: messages carry none)

    @property
    def tokens(self) -> int:
        return self.system + self.request + self.images + self.summary + REPLY_PRIMING

    def explain(self, max_tokens: int) -> str:
        summary = f", the running summary's room ({self.summary})" if self.summary else ""
        summary += f", the request's images at most ({self.images})" if self.images else ""
        return (
            f"{ENV}={max_tokens} is below the minimum window of {self.tokens} tokens: every "
            f"window keeps the system prompt (the largest, {self.prompt}: {self.system}), the "
            f"current request (up to {self.request}: the longest message and picked element)"
            f"{summary} and reply priming ({REPLY_PRIMING}); set it to {self.tokens} or more"
        )


def largest_request(max_message_chars: int) -> str:
    """The longest request a turn can pin, as the model sees it."""
    element = {name: FILLER * size for name, size in ELEMENT_LIMITS.items()}
    return user_content(FILLER * max_message_chars, element)


def window_minimum(
    max_message_chars: int,
    summary_max_tokens: int | None,
    count: TokenCounter = count_tokens,
    images: int = 0,
) -> WindowMinimum:
    """The minimum budget; ``summary_max_tokens`` None when the running summary is off;
    ``images``: how many a message may carry."""
    systems = {  # each kind's prompt as an Ask turn has it: the longer (engine/ask.py)
        name: message_tokens(SystemMessage(prompts.asking(prompts.load(name))), count)
        for name in WINDOW_PROMPTS
    }
    prompt = max(systems, key=lambda name: systems[name])
    asked = prompts.asked(largest_request(max_message_chars))
    request = message_tokens(UserMessage(asked), count)
    summary = 0 if summary_max_tokens is None else MESSAGE_OVERHEAD + summary_max_tokens
    return WindowMinimum(
        prompt=prompt,
        system=systems[prompt],
        request=request,
        summary=summary,
        images=images * MOST_IMAGE_TOKENS,
    )


def byte_bound(max_message_chars: int, summary_max_tokens: int | None, images: int = 0) -> int:
    """An upper bound of :func:`window_minimum` with o200k that needs no tokenizer: a
    byte-level BPE token is at least one byte, so a text costs at most its UTF-8 bytes."""
    systems = max(len(prompts.asking(prompts.load(name)).encode()) for name in WINDOW_PROMPTS)
    request = _MAX_UTF8 * len(prompts.asked(largest_request(max_message_chars)))
    summary = 0 if summary_max_tokens is None else summary_max_tokens
    return (
        systems
        + request
        + summary
        + images * MOST_IMAGE_TOKENS
        + 3 * MESSAGE_OVERHEAD
        + REPLY_PRIMING
    )


def check_window_budget(
    max_tokens: int,
    max_message_chars: int,
    summary_max_tokens: int | None,
    count: TokenCounter = count_tokens,
    images: int = 0,
) -> None:
    """ValueError, naming the setting, the minimum and why, when ``max_tokens`` is below
    :func:`window_minimum`. A budget above :func:`byte_bound` passes without loading the
    tokenizer (processes that never build a window load settings too)."""
    if count is count_tokens and max_tokens >= byte_bound(
        max_message_chars, summary_max_tokens, images
    ):
        return
    minimum = window_minimum(max_message_chars, summary_max_tokens, count, images)
    if max_tokens < minimum.tokens:
        raise ValueError(minimum.explain(max_tokens))


@functools.cache
def request_bound(max_message_chars: int) -> int:
    """The most tokens a request may cost: what the minimum budget was sized for."""
    return message_tokens(UserMessage(largest_request(max_message_chars)), count_tokens)


def check_request(text: str, element: dict[str, Any] | None, max_message_chars: int) -> None:
    """InvalidInput when a request costs more tokens than the minimum window allows for
    (characters that take several tokens each: emoji, rare scripts), so the window's
    minimum holds for every request that is accepted."""
    cost = message_tokens(UserMessage(user_content(text, element)), count_tokens)
    bound = request_bound(max_message_chars)
    if cost > bound:
        raise InvalidInput(
            f"message is too long for the model's window ({cost} tokens with the picked "
            f"element; at most {bound}): shorten it"
        )
