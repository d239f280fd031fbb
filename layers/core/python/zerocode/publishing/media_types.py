"""The media type a site serves a file with, by its extension, the same on every machine.

Python's ``mimetypes`` reads the host's own tables (``/etc/mime.types``...), so a type may
be known on a developer's machine and not in Lambda's image (``.avif``, ``.webp``,
``.webmanifest``): a site would serve the builder's image as ``application/octet-stream``
on one and as an image on the other. The web's types are named here; anything else falls
back to Python's built-in table alone (never the host's).
"""

from __future__ import annotations

import mimetypes
import posixpath

WEB_TYPES = {
    "html": "text/html",
    "htm": "text/html",
    "css": "text/css",
    "js": "text/javascript",
    "mjs": "text/javascript",
    "json": "application/json",
    "map": "application/json",
    "webmanifest": "application/manifest+json",
    "txt": "text/plain",
    "xml": "application/xml",
    "svg": "image/svg+xml",
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "avif": "image/avif",
    "ico": "image/x-icon",
    "woff": "font/woff",
    "woff2": "font/woff2",
    "ttf": "font/ttf",
    "otf": "font/otf",
    "wasm": "application/wasm",
    "pdf": "application/pdf",
    "mp3": "audio/mpeg",
    "mp4": "video/mp4",
    "webm": "video/webm",
}
_BUILT_IN = mimetypes.MimeTypes(filenames=())  # Python's own table, not the host's
DEFAULT = "application/octet-stream"


def media_type(path: str) -> str:
    """The type of the file at ``path`` (a name or a key), by its extension."""
    ext = posixpath.splitext(path)[1].lstrip(".").lower()
    return WEB_TYPES.get(ext) or _BUILT_IN.guess_type("x." + ext)[0] or DEFAULT
