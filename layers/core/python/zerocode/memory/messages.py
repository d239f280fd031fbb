"""The transcript's message model and its exact mapping to OpenAI chat messages.

The transcript keeps what the model saw, so every message converts 1:1 to and
from the chat-completions wire shape. A tool result's ``ok`` flag travels in
its content as the ``ERROR: `` prefix, because the wire format has no field
for it and the model must be able to see a failure.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

FAILED_PREFIX = "ERROR: "

OpenAIMessage = dict[str, Any]


@dataclass(frozen=True)
class SystemMessage:
    content: str
    role: Literal["system"] = field(default="system", init=False)


IMAGE_SCHEME = "zerocode-image:"
_IMAGE_REF = re.compile(
    r"zerocode-image:([0-9a-f]{64})\?type=(image/[a-z0-9.+-]+)&w=(\d+)&h=(\d+)&bytes=(\d+)"
)


@dataclass(frozen=True)
class ImageRef:
    """An image a user message carries, by reference: the transcript keeps what it is and
    its digest, never its bytes (those are in the app's ImageStore, memory/images.py).
    ``data`` is filled only for the model call that sends it, and never stored."""

    sha256: str
    media_type: str
    width: int
    height: int
    size: int  # bytes
    data: bytes | None = field(default=None, compare=False, repr=False, hash=False)

    @property
    def ref(self) -> str:
        """The image as the transcript and the window name it (an ``image_url`` URL)."""
        return (
            f"{IMAGE_SCHEME}{self.sha256}?type={self.media_type}&w={self.width}&h={self.height}"
            f"&bytes={self.size}"
        )

    def url(self, *, inline: bool) -> str:
        """The ``image_url`` URL: the reference, or (``inline``, for the model) the image
        itself as a data URL. An image not loaded cannot be sent: never dropped silently."""
        if not inline:
            return self.ref
        if self.data is None:
            raise ValueError(f"image {self.sha256[:12]} was not loaded for the model call")
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode()}"

    @classmethod
    def parse(cls, url: str) -> ImageRef:
        found = _IMAGE_REF.fullmatch(url)
        if found is None:
            raise ValueError(f"not a zerocode image reference: {url[:80]!r}")
        sha, media, width, height, size = found.groups()
        return cls(sha, media, int(width), int(height), int(size))


@dataclass(frozen=True)
class UserMessage:
    content: str
    images: tuple[ImageRef, ...] = ()
    role: Literal["user"] = field(default="user", init=False)


@dataclass(frozen=True)
class ToolCall:
    """One function call requested by the model; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when the model sent malformed JSON."""
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class AssistantMessage:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    role: Literal["assistant"] = field(default="assistant", init=False)

    def __post_init__(self) -> None:
        if self.content is None and not self.tool_calls:
            raise ValueError("an assistant message needs text or tool calls")
        ids = [c.id for c in self.tool_calls]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate tool call ids in one assistant message: {ids}")


@dataclass(frozen=True, kw_only=True)
class ToolResult:
    """The answer to one tool call. ``ok`` is mirrored by the ``ERROR: `` content prefix."""

    tool_call_id: str
    name: str
    content: str
    ok: bool = True
    role: Literal["tool"] = field(default="tool", init=False)

    def __post_init__(self) -> None:
        if self.ok == self.content.startswith(FAILED_PREFIX):
            state = "ok" if self.ok else "failed"
            raise ValueError(
                f"a {state} tool result must {'not ' if self.ok else ''}start with "
                f"{FAILED_PREFIX!r}; use ToolResult.failure() for failures"
            )

    @classmethod
    def success(cls, call: ToolCall, content: str) -> ToolResult:
        if content.startswith(FAILED_PREFIX):
            content = " " + content
        return cls(tool_call_id=call.id, name=call.name, content=content, ok=True)

    @classmethod
    def failure(cls, call: ToolCall, reason: str) -> ToolResult:
        return cls(tool_call_id=call.id, name=call.name, content=FAILED_PREFIX + reason, ok=False)


Message = SystemMessage | UserMessage | AssistantMessage | ToolResult


def to_openai(message: Message, *, inline: bool = False) -> OpenAIMessage:
    """One message in the chat-completions request shape. A user message with images has
    content parts (its text, then an ``image_url`` part per image: its reference, or with
    ``inline`` the image itself, for the model)."""
    if isinstance(message, UserMessage) and message.images:
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
        parts += [
            {"type": "image_url", "image_url": {"url": image.url(inline=inline)}}
            for image in message.images
        ]
        return {"role": "user", "content": parts}
    if isinstance(message, SystemMessage | UserMessage):
        return {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        out: OpenAIMessage = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
        return out
    return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}


def to_openai_list(messages: Iterable[Message], *, inline: bool = False) -> list[OpenAIMessage]:
    return [to_openai(m, inline=inline) for m in messages]


def from_openai_list(raw: Sequence[OpenAIMessage]) -> list[Message]:
    """Parse chat-completions messages; a tool message takes its name from the call it answers."""
    names: dict[str, str] = {}
    out: list[Message] = []
    for index, item in enumerate(raw):
        role = item.get("role")
        content = item.get("content")
        if role == "user" and isinstance(content, list):
            out.append(_user_with_images(index, content))
        elif role in ("system", "user"):
            if not isinstance(content, str):
                raise ValueError(f"message {index}: {role} content must be a string")
            out.append(SystemMessage(content) if role == "system" else UserMessage(content))
        elif role == "assistant":
            calls = tuple(_parse_call(index, c) for c in item.get("tool_calls") or ())
            if content is not None and not isinstance(content, str):
                raise ValueError(f"message {index}: assistant content must be a string or null")
            names.update((c.id, c.name) for c in calls)
            out.append(AssistantMessage(content, calls))
        elif role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str) or not isinstance(content, str):
                raise ValueError(f"message {index}: tool message needs tool_call_id and content")
            out.append(
                ToolResult(
                    tool_call_id=call_id,
                    name=names.get(call_id, ""),
                    content=content,
                    ok=not content.startswith(FAILED_PREFIX),
                )
            )
        else:
            raise ValueError(f"message {index}: unknown role {role!r}")
    return out


def _user_with_images(index: int, parts: list[Any]) -> UserMessage:
    """A user message of parts as :func:`to_openai` writes them: one text, then images by
    reference (a data URL is the wire's, never the transcript's)."""
    if not parts or not isinstance(parts[0], dict) or parts[0].get("type") != "text":
        raise ValueError(f"message {index}: user content parts must start with its text")
    text = parts[0].get("text")
    if not isinstance(text, str):
        raise ValueError(f"message {index}: the text part needs a string")
    images = []
    for part in parts[1:]:
        url = part.get("image_url", {}).get("url") if isinstance(part, dict) else None
        if not isinstance(url, str) or part.get("type") != "image_url":
            raise ValueError(f"message {index}: after the text, only image_url parts")
        images.append(ImageRef.parse(url))
    return UserMessage(text, tuple(images))


def _parse_call(index: int, raw: Any) -> ToolCall:
    try:
        fn = raw["function"]
        call = ToolCall(raw["id"], fn["name"], fn["arguments"])
    except (KeyError, TypeError) as exc:
        raise ValueError(f"message {index}: malformed tool call {raw!r}") from exc
    if not all(isinstance(v, str) for v in (call.id, call.name, call.arguments)):
        raise ValueError(f"message {index}: tool call fields must be strings")
    return call


def to_dict(message: Message) -> dict[str, Any]:
    """Storage form: the OpenAI shape plus what the wire drops (tool name, ok)."""
    out = to_openai(message)
    if isinstance(message, ToolResult):
        out["name"] = message.name
        out["ok"] = message.ok
    return out


def from_dict(raw: dict[str, Any]) -> Message:
    """Inverse of :func:`to_dict`; raises ValueError on anything malformed."""
    if raw.get("role") == "tool":
        content, name, ok = raw.get("content"), raw.get("name"), raw.get("ok")
        call_id = raw.get("tool_call_id")
        if not (
            isinstance(content, str)
            and isinstance(name, str)
            and isinstance(ok, bool)
            and isinstance(call_id, str)
        ):
            raise ValueError("malformed stored tool result")
        return ToolResult(tool_call_id=call_id, name=name, content=content, ok=ok)
    (message,) = from_openai_list([raw])
    return message
