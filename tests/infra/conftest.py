"""The CDK app lives in infra/ (not an installed package): make it importable here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

INFRA = Path(__file__).resolve().parents[2] / "infra"
if str(INFRA) not in sys.path:
    sys.path.append(str(INFRA))
# jsii prints a banner for Node releases it no longer supports; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
