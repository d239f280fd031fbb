"""The API function's start, measured here as a proxy for its Lambda init (issue 27, point 6).

No Lambda is reachable from this machine, so the init of ``functions/api`` is measured by
its parts that run the same here: a fresh interpreter importing
``zerocode.entrypoints.lambda_api`` (FastAPI, the routers, the wiring, boto3, uvicorn),
loading the o200k tokenizer (``memory.tokens.o200k``, done before the server listens) and
creating the AWS clients the AWS wiring creates. Not measured: Lambda's own start, the
layers' unpacking, the Secrets Manager read of the model key and the first requests to
DynamoDB (network), and uvicorn's bind (milliseconds). Each run is a new process (a cold
start has no bytecode in memory, but the ``.pyc`` files are on disk here as in the layer).

    .venv/bin/python bench/api_start.py          # 7 runs; JSON to stdout and bench/results/

Prints the median and the slowest run of each part, and the whole, in seconds.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 7
RESULTS = Path(__file__).parent / "results" / "api_start.json"
# The services zerocode.bootstrap.wiring builds clients for in AWS mode (API function).
SERVICES = (
    "dynamodb",
    "s3",
    "codebuild",
    "sts",
    "cognito-idp",
    "secretsmanager",
    "cloudfront-keyvaluestore",
)
CHILD = f"""
import json, time
t0 = time.perf_counter()
import zerocode.entrypoints.lambda_api
t1 = time.perf_counter()
from zerocode.memory.tokens import o200k
o200k()
t2 = time.perf_counter()
import boto3
session = boto3.session.Session(region_name="us-east-1")
for name in {SERVICES!r}:
    session.client(name)
t3 = time.perf_counter()
print(json.dumps({{"imports": t1 - t0, "tokenizer": t2 - t1, "clients": t3 - t2}}))
"""


def one() -> dict[str, float]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", CHILD], check=True, capture_output=True, text=True
    ).stdout
    total = time.perf_counter() - started
    return {**json.loads(out.strip().splitlines()[-1]), "process": total}


def main() -> None:
    one()  # bytecode written, files in the page cache: as in a layer after its first start
    runs = [one() for _ in range(RUNS)]
    parts = {
        name: {
            "median_s": round(statistics.median(r[name] for r in runs), 3),
            "max_s": round(max(r[name] for r in runs), 3),
        }
        for name in runs[0]
    }
    result = {"runs": RUNS, "python": sys.version.split()[0], "parts": parts}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
