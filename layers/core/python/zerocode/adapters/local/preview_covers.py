"""Preview covers on this machine: ``{root}/{appId}/{buildId}.png``, private files.

The root (``{data_dir}/preview-covers``) is not the deploy covers' (``{data_dir}/covers``,
which the sites server serves): nothing but ``GET /api/apps/{appId}/cover`` reads here
(zerocode.publishing.preview_covers). Files are written whole (a temporary name, then a
rename), 0600 in 0700 directories.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path

from zerocode.adapters.local.private import write_whole
from zerocode.apps.workspace import check_app_id


class LocalPreviewCovers:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _file(self, app_id: str, build_id: str) -> Path:
        return self.root / check_app_id(app_id) / f"{check_app_id(build_id)}.png"

    def put(self, app_id: str, build_id: str, png: bytes) -> None:
        write_whole(self._file(app_id, build_id), png)

    def get(self, app_id: str, build_id: str) -> bytes | None:
        try:
            return self._file(app_id, build_id).read_bytes()
        except FileNotFoundError:
            return None

    def exists(self, app_id: str, build_id: str) -> bool:
        return self._file(app_id, build_id).is_file()

    def prune(self, app_id: str, keep: Collection[str]) -> int:
        folder = self.root / check_app_id(app_id)
        kept = {f"{check_app_id(b)}.png" for b in keep}
        removed = 0
        for file in folder.glob("*.png") if folder.is_dir() else ():
            if file.name not in kept:
                file.unlink(missing_ok=True)
                removed += 1
        return removed

    def delete_app(self, app_id: str) -> int:
        folder = self.root / check_app_id(app_id)
        if not folder.exists():
            return 0
        shutil.rmtree(folder)
        return 1
