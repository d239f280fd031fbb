"""The app's assets: the builder's own images, in one folder the builder alone writes.

A Vue project keeps them in ``public/assets/`` (Vite copies ``public/`` as it is), an html or
multi-file app in ``assets/``; either way the site serves them at ``assets/{name}``, which is
how pages refer to them (relative, so a site under any base path finds them). Only uploads
land there, re-encoded by :mod:`zerocode.apps.image_intake`: the model's tools and the code
editor cannot write, change or delete a file in the folder (a builder's upload is final), so
everything a site serves from it is a clean image of a type its name says.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass, field

from zerocode.apps.image_intake import ImageLimits
from zerocode.apps.records import CodeGenType

# What an asset may be, by the extension its re-encoding gave it.
MEDIA_TYPES = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "webp": "image/webp",
    "gif": "image/gif",
    "avif": "image/avif",
    "ico": "image/x-icon",
}
MAX_NAME = 60  # characters of a file's name before its extension
_NOT_NAME = re.compile(r"[^a-z0-9_-]+")


@dataclass(frozen=True)
class AssetLimits:
    image: ImageLimits = field(default_factory=ImageLimits)
    max_app_bytes: int = 50 * 1024 * 1024  # every file of the app together


@dataclass(frozen=True)
class Asset:
    path: str  # in the workspace: public/assets/logo.png, assets/logo.png
    url: str  # how a page refers to it: assets/logo.png
    media_type: str
    width: int
    height: int
    bytes: int


def folder(kind: CodeGenType) -> str:
    """The assets folder of an app of this kind, with its trailing slash."""
    return "public/assets/" if kind is CodeGenType.VUE_PROJECT else "assets/"


def is_asset(kind: CodeGenType, path: str) -> bool:
    """Whether ``path`` (a clean workspace path) is in the app's assets folder."""
    return path.startswith(folder(kind))


def is_asset_file(kind: CodeGenType, path: str) -> bool:
    """An asset as an upload makes it: one name directly in the folder, of an image type."""
    rest = path.removeprefix(folder(kind))
    return is_asset(kind, path) and "/" not in rest and _ext(rest) in MEDIA_TYPES


def url(kind: CodeGenType, path: str) -> str:
    """How a page of the app refers to the asset at ``path``."""
    return "assets/" + path.removeprefix(folder(kind))


def how_to_use(kind: CodeGenType, path: str) -> str:
    """How a page writes the image, said for the model: in a Vue template the URL is bound as
    a string (a plain ``src`` is bundled by Vite as a module, and a file in ``public/`` is
    not one), in a page plainly."""
    if kind is CodeGenType.VUE_PROJECT:
        return f"in a Vue template <img :src=\"'{url(kind, path)}'\" ...> (bound as a string)"
    return f'<img src="{url(kind, path)}" ...>'


def path_for(kind: CodeGenType, filename: str, ext: str) -> str:
    """Where an upload called ``filename`` lands, with the extension its real type gives:
    only the last part of the name is used, folded to lower-case letters, digits, ``-`` and
    ``_`` (a name cannot leave the folder, hide a character or pose as another type)."""
    base = re.split(r"[\\/]", filename or "")[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base
    folded = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()
    name = _NOT_NAME.sub("-", folded).strip("-_")[:MAX_NAME].strip("-_") or "image"
    return folder(kind) + f"{name}.{ext}"


def write_refusal(kind: CodeGenType, path: str) -> str | None:
    """Why a tool or a hand edit may not write or delete ``path``, or None: the assets
    folder holds the builder's uploads, which are final and clean."""
    if not is_asset(kind, path):
        return None
    return (
        f"{folder(kind)} holds the builder's uploaded images, which only an upload writes: "
        f"use them as they are (a page refers to {path} as {url(kind, path)})"
    )


def _ext(name: str) -> str:
    return posixpath.splitext(name)[1].lstrip(".").lower()
