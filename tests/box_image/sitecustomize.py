"""Imported at start-up by every Python the tests run as the AWS build's image runs it
(tests/aws_standins.py puts this directory first on its path): a module the image does not
install (zerocode/buildbox/Dockerfile) cannot be imported, so a change that makes the
in-box program need one fails here, not in a deployed build."""

from __future__ import annotations

import importlib.abc
import os
import sys
from typing import Any

_ALLOWED = {m for m in os.environ.get("BOX_IMAGE_MODULES", "").split(",") if m}


class _NotInTheImage(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top in _ALLOWED or top.startswith("_"):
            return None  # let the usual finders find it
        raise ModuleNotFoundError(
            f"{name} is not installed in the build image (zerocode/buildbox/Dockerfile)",
            name=name,
        )


if _ALLOWED:
    sys.meta_path.insert(0, _NotInTheImage())
