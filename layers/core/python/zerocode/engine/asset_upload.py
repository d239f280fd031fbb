"""The builder's images into the app: an upload re-encoded into the assets folder, or an
image picked in the preview replaced by one, without a model turn.

Each is a builder's edit (:mod:`zerocode.engine.user_edit`): under the app's lease,
journaled, a version of kind ``edit``, told to the model (M9) with what the image is and how
a page refers to it, the preview rebuilt, the checks run again. The image is checked and
re-encoded before the lease is taken (:mod:`zerocode.apps.image_intake`), so a refused file
costs no lease, no version and no build.
"""

from __future__ import annotations

import asyncio
import posixpath
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from zerocode.apps import assets
from zerocode.apps.assets import Asset, AssetLimits
from zerocode.apps.image_intake import CleanImage, take
from zerocode.apps.records import App
from zerocode.apps.workspace import FileMissing
from zerocode.engine.parts import EngineParts
from zerocode.engine.user_edit import Edit, Edited, How, save_made
from zerocode.errors import PayloadTooLarge, ZerocodeError


class AppFull(PayloadTooLarge):
    code = "app_too_large"


class NotAnAsset(ZerocodeError):
    """The picked image is not one of the builder's uploads: nothing to replace in place."""

    status = 422
    code = "image_not_an_asset"


@dataclass(frozen=True)
class Uploaded:
    asset: Asset
    replaced: bool  # an asset of that name was there and is now this one
    edited: Edited


async def upload(
    engine: EngineParts, app: App, filename: str, data: bytes, limits: AssetLimits
) -> Uploaded:
    """``data`` (a file called ``filename``) as an asset of the app, named after the file
    with the extension its real type gives; an asset of that name is replaced."""
    image = await asyncio.to_thread(take, data, limits.image)
    path = assets.path_for(app.code_gen_type, filename, image.ext)
    return await _save(engine, app, path, image, limits)


async def replace_picked(
    engine: EngineParts, app: App, src: str, page: str | None, data: bytes, limits: AssetLimits
) -> Uploaded:
    """The asset a picked image shows (its ``src`` as written, on ``page``) replaced by
    ``data``, re-encoded into the asset's own type so every page that refers to it shows
    the new one. NotAnAsset when the image is not one of the builder's uploads."""
    path = asset_of(app, src, page)
    exists = await asyncio.to_thread(_exists, engine, app, path) if path else False
    if path is None or not exists:
        raise NotAnAsset(
            f"this image ({src[:120]}) is not one of your uploaded images, so there is nothing "
            "to replace in place: upload it as an image of the app, then ask in the chat to "
            "use it here"
        )
    ext = posixpath.splitext(path)[1].lstrip(".")
    image = await asyncio.to_thread(take, data, limits.image, as_ext=ext)
    return await _save(engine, app, path, image, limits)


def asset_of(app: App, src: str, page: str | None) -> str | None:
    """The workspace path of the asset an ``src`` (relative to ``page``, the preview's URL
    path) names, or None when it names no asset file."""
    parts = urlsplit(src.strip())
    if parts.scheme or parts.netloc:
        return None
    base = posixpath.dirname(page or "/") if not (page or "/").endswith("/") else (page or "/")
    joined = posixpath.normpath(posixpath.join("/", base, unquote(parts.path))).lstrip("/")
    if not joined.startswith("assets/"):
        return None
    path = assets.folder(app.code_gen_type) + joined.removeprefix("assets/")
    return path if assets.is_asset_file(app.code_gen_type, path) else None


async def _save(
    engine: EngineParts, app: App, path: str, image: CleanImage, limits: AssetLimits
) -> Uploaded:
    kind = app.code_gen_type
    asset = Asset(
        path=path,
        url=assets.url(kind, path),
        media_type=image.media_type,
        width=image.width,
        height=image.height,
        bytes=len(image.data),
    )
    replaced = False

    def make() -> Edit:  # under the lease: the app's bytes as they are now
        nonlocal replaced
        others, replaced = _held(engine, app, path)
        if others + len(image.data) > limits.max_app_bytes:
            raise AppFull(
                f"the app's files would come to {others + len(image.data):,} bytes with this "
                f"image; the limit is {limits.max_app_bytes:,} bytes an app (remove or shrink "
                "images first)"
            )
        verb = "replaced" if replaced else "uploaded"
        what = f"{verb} {path} ({image.media_type}, {image.width}×{image.height} px, "
        return Edit(
            path=path, data=image.data, how=How.ASSET, what=what + f"{asset.bytes:,} bytes)"
        )

    edited = await save_made(engine, app, make)
    return Uploaded(asset=asset, replaced=replaced, edited=edited)


def _held(engine: EngineParts, app: App, path: str) -> tuple[int, bool]:
    """The bytes the app's other files hold, and whether ``path`` is one of its files."""
    files = engine.workspace.list(app.id)
    return sum(f.size for f in files if f.path != path), any(f.path == path for f in files)


def _exists(engine: EngineParts, app: App, path: str) -> bool:
    try:
        engine.workspace.read(app.id, path)
    except FileMissing:
        return False
    return True
