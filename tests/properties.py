"""How hard the property-based tests try: CI's profile (``ci``, the default) keeps each
test's full count of examples; ``HYPOTHESIS_PROFILE=dev`` runs a tenth of them (at least
10) for a quick local run. A test names its CI count with ``examples(n)``."""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in ("ci", "dev"):
    raise RuntimeError(f"HYPOTHESIS_PROFILE must be ci or dev, not {PROFILE!r}")

settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=10)
settings.load_profile(PROFILE)


def examples(ci_count: int) -> int:
    """The number of examples a test runs under the loaded profile."""
    return ci_count if PROFILE == "ci" else max(10, ci_count // 10)
