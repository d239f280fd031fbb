"""CDK entry point: ``cdk synth``/``cdk deploy`` run it (``cdk.json``), so does ``make synth``.

Run by the CDK CLI, the context (``cdk.json`` plus ``-c`` values) arrives in
``CDK_CONTEXT_JSON``; run directly (``make synth``), ``cdk.json``'s context is read here and
``-c key=value`` arguments override it, as the CLI's do (``make synth`` synthesizes the
cheap profile with ``-c profile=cheap``). The synth fails when cdk-nag reports an
unsuppressed error.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from aws_cdk import cx_api
from zerocode_infra.stack import build_app

CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"


def cdk_json_context() -> dict[str, Any]:
    context: dict[str, Any] = json.loads(CDK_JSON.read_text())["context"]
    return context


def overrides(argv: list[str]) -> dict[str, str]:
    """``-c key=value`` pairs (strings, as the CDK CLI passes them)."""
    pairs: dict[str, str] = {}
    for flag, value in zip(argv[::2], argv[1::2], strict=False):
        key, equals, text = value.partition("=")
        if flag not in ("-c", "--context") or not equals or not key:
            raise SystemExit(f"usage: app.py [-c key=value ...] (not understood: {flag} {value})")
        pairs[key] = text
    if len(argv) % 2:
        raise SystemExit(f"usage: app.py [-c key=value ...] (not understood: {argv[-1]})")
    return pairs


def main(argv: list[str]) -> int:
    context = None if "CDK_CONTEXT_JSON" in os.environ else cdk_json_context()
    if argv:
        if context is None:
            raise SystemExit("-c with CDK_CONTEXT_JSON set: pass the context one way")
        context.update(overrides(argv))
    app, _ = build_app(context)
    assembly = app.synth()
    errors = [  # every stack's: the edge and sites-WAF stacks in us-east-1 too
        m
        for artifact in assembly.stacks_recursively
        for m in artifact.messages
        if m.level == cx_api.SynthesisMessageLevel.ERROR
    ]
    for message in errors:
        print(f"[error at {message.id}] {message.entry.data}", file=sys.stderr)
    if errors:
        print(
            f"{len(errors)} unsuppressed error(s): fix them or suppress them with a reason "
            f"(infra/zerocode_infra/nag.py)",
            file=sys.stderr,
        )
        return 1
    names = ", ".join(
        f"{a.stack_name} ({a.environment.region})" for a in assembly.stacks_recursively
    )
    print(f"synthesized {names} to {assembly.directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
