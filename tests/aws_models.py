"""One botocore loader for every boto3 session of a test process.

botocore caches the service models it reads (JSON files of hundreds of KB: DynamoDB, S3,
Cognito, the endpoints) per loader, and every boto3 session makes a loader of its own. The
tests make a session per test (a fresh moto backend each), so each test parsed the same
JSON again: about a tenth of the test processes' CPU in a ``make test`` run (py-spy,
docs/benchmarks.md, "The test suite"). Sessions share one loader here. What a test sees is
unchanged: the same files, read once; moto's state stays per test. Tests only: a Lambda
makes its clients once per container.
"""

from __future__ import annotations

from typing import Any

import botocore.loaders
import botocore.session


class _Paths(list[str]):
    """Search paths that ignore a path they already hold: boto3 appends its own data
    directory to its session's loader at every session's start."""

    def append(self, path: str) -> None:
        if path not in self:
            super().append(path)


_shared: dict[str | None, Any] = {}
_create = botocore.loaders.create_loader


def _loader(search_path_string: str | None = None) -> Any:
    found = _shared.get(search_path_string)
    if found is None:
        found = _shared[search_path_string] = _create(search_path_string)
        found._search_paths = _Paths(found.search_paths)
    return found


def share_service_models() -> None:
    """Every botocore session made from now on in this process uses the shared loader."""
    botocore.session.create_loader = _loader
