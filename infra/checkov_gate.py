"""checkov over synthesized templates: no failed check, and every skip with its reason.

``make synth`` (and so ``.ci/run``) runs it on each profile's template. A check is either
passed or skipped in code next to its resource (``zerocode_infra.nag.skip_checkov``, a
reason of ten words or more); anything else fails the run, named with its resource.

    python infra/checkov_gate.py CHECKOV TEMPLATE [TEMPLATE ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

MIN_REASON_WORDS = 10  # as zerocode_infra.nag


def run_checkov(checkov: str, template: str) -> dict[str, Any]:
    """checkov's JSON report of one CloudFormation template, offline."""
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_NO_OUTPUT_TRUNCATION": "1"}
    done = subprocess.run(
        [
            checkov,
            "--file",
            template,
            "--framework",
            "cloudformation",
            "--compact",
            "--skip-download",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    # checkov exits 1 when a check fails, and prints its report either way.
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(
            f"checkov could not check {template} (exit {done.returncode}): {done.stderr[-2000:]}"
        )
    report = json.loads(done.stdout)
    # One framework gives one report; several give a list.
    return report[0] if isinstance(report, list) else report  # type: ignore[no-any-return]


def problems(report: dict[str, Any]) -> list[str]:
    """What is wrong with a report: failed checks, parsing errors, unexplained skips."""
    results = report.get("results", {})
    found = [
        f"failed {c['check_id']} ({c['check_name']}) on {c['resource']}"
        for c in results.get("failed_checks", [])
    ]
    found += [f"checkov could not parse {e}" for e in results.get("parsing_errors", [])]
    for c in results.get("skipped_checks", []):
        comment = str(c.get("check_result", {}).get("suppress_comment") or "")
        if len(comment.split()) < MIN_REASON_WORDS:
            found.append(
                f"skipped {c['check_id']} on {c['resource']} without a reason of "
                f"{MIN_REASON_WORDS} words or more: {comment!r}"
            )
    return found


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    checkov, templates = argv[0], argv[1:]
    failed = False
    for template in templates:
        report = run_checkov(checkov, template)
        summary = report.get("summary", {})
        found = problems(report)
        for line in found:
            print(f"checkov: {template}: {line}", file=sys.stderr)
        failed = failed or bool(found)
        print(
            f"checkov {summary.get('checkov_version', '?')}: {template}: "
            f"{summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed, "
            f"{summary.get('skipped', 0)} skipped with a reason in code"
        )
    if failed:
        print(
            "fix the findings above, or skip them next to the resource with the reason "
            "(infra/zerocode_infra/nag.py, skip_checkov)",
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
