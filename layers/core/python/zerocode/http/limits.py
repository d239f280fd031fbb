"""Request bodies are bounded before they are read whole: 413 ``payload_too_large``.

Pure ASGI middleware. A declared ``Content-Length`` over the limit is answered at once,
without reading a byte of the body; a body without one (chunked) is counted as it streams
in, and the moment it passes the limit the client gets the 413 and the application sees
the client gone (``http.disconnect``), so nothing more is read or buffered and whatever the
application answers after that is dropped. The largest legitimate body is a chat message
(``ZEROCODE_MAX_MESSAGE_CHARS``, 1000 characters, up to 4 bytes each) with a picked element
(about 1.3 kB of fields): a few kB, far under the default of 1 MiB. The routes that take an
image (:data:`UPLOADS`) have the image's bound and the form's room instead.
"""

from __future__ import annotations

import json
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CODE = "payload_too_large"


# The routes that take a builder's image (multipart): their bodies may be as large as an
# image (``ZEROCODE_ASSET_MAX_BYTES``) and the form around it; a chat message's, its images
# as base64 (``ZEROCODE_CHAT_IMAGES_MAX`` of ``ZEROCODE_CHAT_IMAGE_MAX_BYTES``).
UPLOADS = re.compile(r"/api/apps/[^/]+/(assets|edits/image)")
CHAT = re.compile(r"/api/apps/[^/]+/chat")
FORM_OVERHEAD = 64 * 1024


class BodyLimit:
    def __init__(
        self, app: ASGIApp, max_bytes: int, larger: tuple[tuple[re.Pattern[str], int], ...] = ()
    ) -> None:
        self.app, self.default, self.larger = app, max_bytes, larger

    def _most(self, scope: Scope) -> int:
        if scope.get("method") == "POST":
            path = scope.get("path", "")
            for pattern, most in self.larger:
                if pattern.fullmatch(path):
                    return most
        return self.default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        most = self._most(scope)
        declared = _content_length(scope)
        if declared is not None and declared > most:
            await self._refuse(send, declared, most)
            return
        received, started, refused = 0, False, False

        async def counted() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > most:
                    refused = True
                    if not started:
                        await self._refuse(send, None, most)
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 was the answer
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted, guarded)

    async def _refuse(self, send: Send, declared: int | None, most: int) -> None:
        size = f" ({declared:,} bytes)" if declared is not None else ""
        body = json.dumps(
            {
                "error": {
                    "code": CODE,
                    "message": f"the request body is larger than {most:,} bytes{size}",
                }
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server has refused a malformed one already
    return None
