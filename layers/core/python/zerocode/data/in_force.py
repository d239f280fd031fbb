"""Which data model is in force where (issue 39, points 2 and 4).

A preview's data API obeys the data model of the build the preview shows; a published
site's, the model of the build it serves. So the model follows the pointer exactly as the
files do: a rollback brings back the rules it was published with, and a turn that is still
running changes nothing a visitor meets until its preview is built.

The platform keeps each build's ``zerocode.data.json`` by build id when the build starts,
read from the source snapshot the platform itself took, never from the build's output
(which a Vue build's own scripts wrote). A build's source never changes, so each parsed
model is cached by build id for as long as the process lives.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Protocol

from zerocode.data.model import DATA_MODEL, DataModel, DataModelInvalid, parse

log = logging.getLogger(__name__)
CACHED_MODELS = 512


class BuildModels(Protocol):
    """Each build's data model file, as its source held it (none: the app keeps no data)."""

    def put(self, app_id: str, build_id: str, data: bytes) -> None: ...

    def get(self, app_id: str, build_id: str) -> bytes | None: ...

    def delete_app(self, app_id: str) -> int: ...


def keep_model(
    models: BuildModels | None, app_id: str, build_id: str, files: Mapping[str, bytes]
) -> None:
    """Keep the build's data model, if its source has one (before the build runs)."""
    data = files.get(DATA_MODEL)
    if models is not None and data is not None:
        models.put(app_id, build_id, data)


class ModelsInForce:
    """The parsed data model of a build, by build id, cached (builds never change)."""

    def __init__(self, models: BuildModels, size: int = CACHED_MODELS) -> None:
        self.models, self.size = models, size
        self._cache: OrderedDict[tuple[str, str], DataModel | None] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, app_id: str, build_id: str) -> DataModel | None:
        key = (app_id, build_id)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        model = self._read(app_id, build_id)
        with self._lock:
            self._cache[key] = model
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return model

    def _read(self, app_id: str, build_id: str) -> DataModel | None:
        data = self.models.get(app_id, build_id)
        if data is None:
            return None
        try:
            return parse(data)
        except DataModelInvalid as exc:  # every write is checked: a file from before that
            log.warning("build %s of app %s has an invalid data model: %s", build_id, app_id, exc)
            return None
