"""The ``zerocode`` command."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

from zerocode import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="zerocode", description=__doc__)
    parser.add_argument("--version", action="version", version=f"zerocode {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="record a sample session and show the model's window")
    demo.add_argument("--data-dir", type=Path, default=None)
    demo.add_argument("--turns", type=int, default=12)
    serve = sub.add_parser("serve", help="run the local platform: API and sites origin")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--sites-port", type=int, default=None)
    serve.add_argument("--data-dir", type=Path, default=None)
    admin = sub.add_parser("admin", help="manage administrators")
    admin_sub = admin.add_subparsers(dest="admin_command", required=True)
    make = admin_sub.add_parser("create", help="make ACCOUNT an admin (registering it if new)")
    make.add_argument("account")
    make.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the new account's password from stdin instead of a prompt",
    )
    make.add_argument("--data-dir", type=Path, default=None)
    evaluate = sub.add_parser(
        "eval",
        help="run a fixed suite of app prompts against the configured model (or the "
        "offline model's flawed mode) and print first-try and after-repair success",
    )
    evaluate.add_argument("--json", type=Path, default=None, help="also write the figures here")
    evaluate.add_argument("--data-dir", type=Path, default=None)
    sweep = sub.add_parser(
        "sweep-builds",
        help="remove the preview build outputs no preview shows and no rollback can name, now "
        "(local mode; the server does it hourly); prints what it did as JSON",
    )
    sweep.add_argument("--data-dir", type=Path, default=None)
    sweep.add_argument(
        "--keep-seconds",
        type=float,
        default=None,
        help="keep every build asked for less than this long ago "
        "(default ZEROCODE_BUILD_SWEEP_KEEP_SECONDS, 3600)",
    )
    promote = sub.add_parser(
        "promote",
        help="put a site into the KeyValueStore's hot set (AWS mode with a pointer table), so "
        "its next rollback or deploy is seen at once; a rollback does it by itself",
    )
    promote.add_argument("key", help="the site's deploy key, or a pointer (site:KEY, preview:KEY)")
    window = sub.add_parser("window", help="print the window the model would see for an app")
    window.add_argument("app_id")
    window.add_argument("--system", default="")
    window.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    from pydantic import ValidationError

    from zerocode.bootstrap import parts
    from zerocode.bootstrap.settings import Settings, settings_errors

    overrides = {
        k: v
        for k, v in (
            ("data_dir", getattr(args, "data_dir", None)),
            ("host", getattr(args, "host", None)),
            ("port", getattr(args, "port", None)),
            ("sites_port", getattr(args, "sites_port", None)),
            ("build_sweep_keep_seconds", getattr(args, "keep_seconds", None)),
        )
        if v is not None
    }
    try:
        settings = Settings().model_copy(update=overrides)
    except ValidationError as exc:  # one line per bad setting, no traceback
        for line in settings_errors(exc):
            print(f"zerocode: {line}", file=sys.stderr)
        return 2
    if args.command == "admin":
        return _admin_create(settings, args.account, password_stdin=args.password_stdin)
    if args.command == "sweep-builds":
        return _sweep_builds(settings)
    if args.command == "promote":
        return _promote(settings, args.key)
    if args.command == "eval":
        from zerocode.entrypoints.eval import run_eval

        return run_eval(settings, args.json)
    if args.command == "serve":
        from zerocode.entrypoints.server import CannotStart
        from zerocode.entrypoints.server import serve as run_server

        try:
            run_server(settings)
        except CannotStart as exc:  # a port in use, a full data directory: one line
            print(f"zerocode: {exc}", file=sys.stderr)
            return 1
    elif args.command == "demo":
        if args.turns < 1:
            parser.error("--turns must be at least 1")
        from zerocode.entrypoints.demo import run_demo

        run_demo(settings, args.turns)
    else:
        w = parts.memory(settings).window(args.app_id, args.system)
        json.dump(
            {
                "messages": w.openai(),
                "tokens": list(w.tokens),
                "totalTokens": w.total_tokens,
                "evictedUnits": w.evicted_units,
                "elidedPayloads": w.elided_payloads,
            },
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        print()
    return 0


def _admin_create(settings: Any, account: str, *, password_stdin: bool) -> int:
    """Promote an account, or register it first (asking for its password)."""
    import getpass

    from zerocode.bootstrap import wiring
    from zerocode.errors import InvalidInput, ZerocodeError

    accounts = wiring.accounts(settings)  # local table or, with ZEROCODE_MODE=aws, Cognito
    try:
        try:
            user = accounts.make_admin(account)
        except InvalidInput:  # no such account yet: register it, then promote it
            password = (
                sys.stdin.readline().rstrip("\n")
                if password_stdin
                else getpass.getpass(f"password for {account}: ")
            )
            accounts.register(account, password)
            user = accounts.make_admin(account)
    except ZerocodeError as exc:
        print(f"zerocode admin create: {exc.message}", file=sys.stderr)
        return 1
    print(f"{user.account} is an admin")
    return 0


def _sweep_builds(settings: Any) -> int:
    """What the server's hourly build sweep does, now: also with the server stopped (a
    data directory too full for it to start)."""
    import time

    from zerocode.bootstrap.local_sweep import build_sweep

    if settings.mode != "local":
        print(
            "zerocode sweep-builds: local mode only (on AWS a lifecycle rule does it)",
            file=sys.stderr,
        )
        return 2
    if not settings.sqlite_path.exists():
        print(f"zerocode sweep-builds: no data in {settings.data_dir}", file=sys.stderr)
        return 1
    report = build_sweep(settings).run(time.time())
    print(json.dumps(report.as_dict()))
    return 1 if report.failed else 0


def _promote(settings: Any, key: str) -> int:
    """``HotSetPublisher.promote`` from the command line; prints the outcome."""
    from zerocode.bootstrap import aws_parts
    from zerocode.errors import InvalidInput
    from zerocode.publishing.hot_set import Promoter, Promotion
    from zerocode.publishing.pointers import PREVIEW_PREFIX, SITE_PREFIX, site_pointer

    if settings.mode != "aws" or not settings.pointers_table:
        print(
            "zerocode promote: AWS mode with ZEROCODE_POINTERS_TABLE only (the hot set)",
            file=sys.stderr,
        )
        return 2
    try:
        pointer = key if key.startswith((SITE_PREFIX, PREVIEW_PREFIX)) else site_pointer(key)
    except InvalidInput as exc:
        print(f"zerocode promote: {exc}", file=sys.stderr)
        return 2
    publisher = aws_parts.site_publisher(settings)
    assert isinstance(publisher, Promoter)
    outcome = publisher.promote(pointer)
    print(json.dumps({"pointer": pointer, "outcome": outcome.value}))
    return 0 if outcome is Promotion.PROMOTED else 1


if __name__ == "__main__":
    raise SystemExit(main())
