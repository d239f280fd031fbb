"""What the platform tells the model inside a turn when its work does not stand.

Real models write code that fails to build or throws in the browser, and answers that the
output limit cuts off. Rather than ending the turn on the first failure, the engine shows
the model what failed, bounded, and lets it try again (``repair_rounds`` times), or asks it
to continue a cut-off answer. Each message goes into the transcript as a ``feedback`` unit
(a user-role message after the assistant text it answers), so the model's window, and
/context, show exactly what the model was shown.

The first line of every message is a marker the offline and flawed scripted models
recognise (:data:`REPAIR_MARK`, :data:`CONTINUE_MARK`); real models just read the text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

REPAIR_MARK = "[zerocode repair"
CONTINUE_MARK = "[zerocode continue"
NOTE_MARK = "[zerocode"  # a platform note that is no repair request
MAX_LINES = 30  # of a log shown to the model
MAX_CHARS = 3000
MAX_CONTINUATIONS = 2

# Lines of a build log worth a model's attention: errors and where they are.
_ERRORISH = re.compile(
    r"error|failed|cannot|could not|unexpected|not found|missing|undefined|"
    r"\.vue|\.js|\.ts|\.css|line \d|:\d+:\d+|\^",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Failure:
    """Why the preview does not stand: the build failed, or the page fails at runtime."""

    kind: str  # "build" | "runtime" | "acceptance" | "refused" (the platform's, not repaired)
    summary: str  # one line for people (the SSE repair event's reason)
    details: tuple[str, ...]  # log lines or browser errors, for the model


def relevant(lines: Sequence[str]) -> tuple[str, ...]:
    """The lines of a log that say what failed, in order, bounded in count and size."""
    picked = [line for line in lines if _ERRORISH.search(line)] or list(lines)
    picked = picked[-MAX_LINES:]
    out: list[str] = []
    size = 0
    for line in picked:
        line = line if len(line) <= 300 else line[:300] + "…"
        if size + len(line) > MAX_CHARS:
            break
        out.append(line)
        size += len(line) + 1
    return tuple(out)


# What still fails when no repair round is left, by the failure's kind.
GIVING_UP = {
    "build": "preview build failed",
    "runtime": "built page fails",
    "acceptance": "acceptance checks still fail",
}
ACCEPTANCE_ADVICE = (
    "Fix the code so that these checks pass. If the user asked for a change that makes a "
    "check wrong, retire it ({how}) and say why."
)


def repair_message(failure: Failure, attempt: int, rounds: int, *, tools: bool = True) -> str:
    if failure.kind == "acceptance":
        how = "retire_check" if tools else 'with "retire" in the ```checks block'
        return (
            f"{REPAIR_MARK} {attempt}/{rounds}: acceptance checks fail]\n"
            f"{failure.summary}:\n"
            + "\n".join(failure.details)
            + "\n\n"
            + ACCEPTANCE_ADVICE.format(how=how)
        )
    what = (
        "the preview build failed"
        if failure.kind == "build"
        else "the built page fails in the browser"
    )
    body = "\n".join(failure.details) or failure.summary
    return (
        f"{REPAIR_MARK} {attempt}/{rounds}: {what}]\n"
        f"{failure.summary}\n\nErrors:\n{body}\n\n"
        "Fix the code so that it works; change only what is needed."
    )


def refused_message(failure: Failure) -> str:
    """The platform could not build the preview (no build slot, no box): the model is told
    the files stand and the failure is not theirs, so it changes nothing because of it."""
    return (
        f"{NOTE_MARK} note: the preview was not built]\n{failure.summary}\n\n"
        "This is the platform's limit, not a fault in the app's files, which are saved as "
        "they are; do not change them because of it. The user can rebuild the preview later."
    )


def continue_message() -> str:
    return (
        f"{CONTINUE_MARK}: your answer was cut off by the output limit]\n"
        "Continue exactly where it stopped, without repeating anything."
    )
