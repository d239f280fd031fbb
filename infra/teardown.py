"""Empty the stack's versioned buckets so ``cdk destroy`` can delete them
(zerocode_infra/teardown.py; docs/operations.md, "Tearing down")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import boto3
from zerocode_infra.teardown import empty_stack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("stack", help="the stack's name, e.g. ZerocodeStack")
    parser.add_argument("--region", help="the stack's region (default: the CLI's)")
    args = parser.parse_args(argv)
    session = boto3.session.Session(region_name=args.region)
    removed = empty_stack(session.client("cloudformation"), session.client("s3"), args.stack)
    for bucket, count in removed.items():
        print(f"emptied s3://{bucket}: {count} object version(s) and delete marker(s)")
    print(f"now: npx aws-cdk@2 destroy --all (the stack {args.stack} and its edge stack)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
