"""The window's bounds: the token budget, the message bound, and how much is elided."""

from __future__ import annotations

from dataclasses import dataclass

# The message bound's default: a safety bound, not the budget. The default token budget
# holds ~770 messages of the sample Vue session (~31 tokens a message once older payloads
# are elided; bench/memory.py), so tokens decide; it also bounds the entries a rebuild
# reads (WindowPolicy.tail_items).
DEFAULT_MAX_MESSAGES = 1000
# The largest step: 64 tool calls (ZEROCODE_MAX_TOOL_CALLS_PER_STEP's upper limit, since a
# step is one DynamoDB transaction of at most 100 items) and the message that made them.
MAX_STEP_MESSAGES = 65


@dataclass(frozen=True)
class WindowPolicy:
    """Bounds of the window. ``max_tokens`` is the budget; ``max_messages`` is a safety
    bound, large enough not to bind before the budget in ordinary sessions, and it sets
    how many entries a rebuild reads (:attr:`tail_items`). ``full_turns``: how many newest
    turns keep full payloads; ``images``: how many of the newest images stay shown.
    ``summary_max_tokens``: the most a stored running summary may cost (it is cut to
    fit)."""

    max_messages: int = DEFAULT_MAX_MESSAGES
    max_tokens: int = 24_000
    elide_min_chars: int = 512
    full_turns: int = 1
    summary: bool = False
    summary_max_tokens: int = 400
    # The newest images of the conversation stay in the window whatever turn sent them
    # (they cannot be read again as a file can); older ones are named, not shown.
    images: int = 4

    def __post_init__(self) -> None:
        if (
            self.max_messages < 3
            or self.max_tokens < 1
            or self.elide_min_chars < 64
            or self.full_turns < 1
            or self.summary_max_tokens < 16
            or self.images < 0
        ):
            raise ValueError(f"window policy out of range: {self}")

    @property
    def tail_items(self) -> int:
        """Entries to read from the store: enough for the largest window the bounds allow,
        which is ``max_messages`` plus the largest step (the current turn's newest unit is
        kept even past the bound, so a read must always hold it whole).

        With a running summary, twice that, so units that just left the window are
        still in the read and can be summarised before they are out of reach.
        """
        return (self.max_messages + MAX_STEP_MESSAGES) * (2 if self.summary else 1)
