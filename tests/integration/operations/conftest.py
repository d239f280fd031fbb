"""The operator's tools live in infra/ (not an installed package): make them importable."""

from __future__ import annotations

import sys
from pathlib import Path

INFRA = Path(__file__).resolve().parents[3] / "infra"
if str(INFRA) not in sys.path:
    sys.path.append(str(INFRA))
