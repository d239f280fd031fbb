"""The images of users' messages on this machine: ``{root}/{appId}/{sha256}``, private
files written whole (a temporary name, then a rename), 0600 in 0700 directories."""

from __future__ import annotations

import shutil
from pathlib import Path

from zerocode.adapters.local.private import write_whole
from zerocode.apps.workspace import check_app_id
from zerocode.memory.images import ImageMissing, check_digest


class LocalMessageImages:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, app_id: str, sha256: str) -> Path:
        return self.root / check_app_id(app_id) / check_digest(sha256)

    def put(self, app_id: str, sha256: str, data: bytes) -> None:
        target = self._file(app_id, sha256)
        if target.is_file():
            return  # content-addressed: the same bytes
        write_whole(target, data)

    def get(self, app_id: str, sha256: str) -> bytes:
        try:
            return self._file(app_id, sha256).read_bytes()
        except FileNotFoundError:
            raise ImageMissing(f"image {sha256[:12]} of app {app_id} is not kept") from None

    def delete_app(self, app_id: str) -> int:
        folder = self.root / check_app_id(app_id)
        if not folder.is_dir():
            return 0
        count = sum(1 for f in folder.iterdir() if not f.name.startswith("."))
        shutil.rmtree(folder)
        return count
