"""Build outputs on this machine's disk, for the build sweep (publishing/output_sweep.py).

``builds/{appId}/{buildId}/`` as the LocalBuilder writes them, and ``.tmp-{buildId}-{hex}``
beside them while one is being written (left behind only by a build a crash interrupted).
An app's own directory is never removed here: a build of that app may be creating its
output in it at the same moment.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

from zerocode.apps.workspace import PathRefused, check_app_id
from zerocode.publishing.builds import is_build_id
from zerocode.publishing.output_sweep import Output

_PARTIAL = re.compile(r"^\.tmp-(b\d{13}[0-9a-f]{6})-[0-9a-f]+$")


class LocalOutputs:
    def __init__(self, root: Path) -> None:
        self.root = root  # {data_dir}/builds

    def present(self) -> Iterator[Output]:
        """Every output and half-written output, app by app (names that are neither are
        left alone)."""
        if not self.root.is_dir():
            return
        for app in sorted(self.root.iterdir(), key=lambda p: p.name):
            if not _is_app_id(app.name) or app.is_symlink() or not app.is_dir():
                continue
            for entry in sorted(app.iterdir(), key=lambda p: p.name):
                if is_build_id(entry.name):
                    yield Output(app.name, entry.name, entry.name)
                elif found := _PARTIAL.match(entry.name):
                    yield Output(app.name, found.group(1), entry.name)

    def remove(self, output: Output) -> int:
        """Remove the directory (a file or link in its place too); the bytes it held."""
        target = self.root / check_app_id(output.app_id) / output.name
        if not (is_build_id(output.name) or _PARTIAL.match(output.name)):
            raise ValueError(f"not a build output: {output.name!r}")
        if not target.exists() and not target.is_symlink():
            return 0
        if target.is_symlink() or not target.is_dir():
            size = target.lstat().st_size
            target.unlink()
            return size
        size = _size(target)
        shutil.rmtree(target)  # never follows links
        return size


def _is_app_id(name: str) -> bool:
    try:
        check_app_id(name)
    except PathRefused:
        return False
    return True


def _size(directory: Path) -> int:
    total = 0
    for base, _dirs, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
    return total
