"""Local builds: ``npm ci`` (or ``npm install`` without a lock file) and ``npm run build``.

A shared npm cache directory means a second build of the same dependencies does
not download them again. Each step has a time limit; the log tail is kept for
the user, and ``dist/index.html`` must exist for a build to count as succeeded.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

LOG_LINES = 40


class BuildStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class BuildResult:
    """One npm install + build run in a directory (``LocalBuilder`` makes a build of it)."""

    status: BuildStatus
    log_tail: str
    output: Path | None  # the built site (dist/) when succeeded
    seconds: float


class NpmBuilder:
    def __init__(self, cache_dir: Path, install_timeout: float = 300, build_timeout: float = 180,
                 npm: str | None = None) -> None:
        self.cache_dir, self.npm = cache_dir, npm or shutil.which("npm") or "npm"
        self.install_timeout, self.build_timeout = install_timeout, build_timeout

    async def build(self, source: Path, install: bool = True) -> BuildResult:
        """Install (unless ``node_modules`` is known to match already) and build."""
        start = time.monotonic()
        log: deque[str] = deque(maxlen=LOG_LINES)
        command = ["ci"] if (source / "package-lock.json").exists() else ["install"]
        steps = [
            ([*command, "--no-audit", "--no-fund", "--prefer-offline",
              "--cache", str(self.cache_dir)], self.install_timeout),
            (["run", "build"], self.build_timeout),
        ][0 if install else 1:]
        for args, limit in steps:
            ok = await self._run(source, args, limit, log)
            if not ok:
                return BuildResult(BuildStatus.FAILED, "\n".join(log), None,
                                   time.monotonic() - start)
        dist = source / "dist"
        if not (dist / "index.html").is_file():
            log.append("build finished but dist/index.html is missing")
            return BuildResult(BuildStatus.FAILED, "\n".join(log), None, time.monotonic() - start)
        return BuildResult(BuildStatus.SUCCEEDED, "\n".join(log), dist, time.monotonic() - start)

    async def _run(self, cwd: Path, args: list[str], limit: float, log: deque[str]) -> bool:
        log.append(f"$ npm {' '.join(args[:2])}")
        env = {**os.environ, "CI": "1", "NO_COLOR": "1", "npm_config_update_notifier": "false"}
        try:
            proc = await asyncio.create_subprocess_exec(
                self.npm, *args, cwd=cwd, env=env, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT)
        except OSError as exc:
            log.append(f"cannot run npm: {exc}")
            return False
        assert proc.stdout is not None
        try:
            async with asyncio.timeout(limit):
                async for line in proc.stdout:
                    log.append(line.decode(errors="replace").rstrip())
                await proc.wait()
        except TimeoutError:
            log.append(f"npm {args[0]} took longer than {limit:.0f} s and was stopped")
            return False
        finally:
            if proc.returncode is None:  # timed out, or the turn was cancelled
                proc.kill()
                await asyncio.shield(proc.wait())
        if proc.returncode != 0:
            log.append(f"npm {args[0]} exited with code {proc.returncode}")
        return proc.returncode == 0
