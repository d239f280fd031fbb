"""Chromium's box: the headless browser runs where nothing is reachable, by structure.

Routing in the browser (:mod:`.chromium`) decides what the page may load, but Chromium makes
connections routing never sees (speculation rules' prefetch and prerender, preconnects), so
routing cannot be the boundary. The box is: Chromium runs in bubblewrap with its own network
namespace (only ``lo``, where nothing listens), its own PID, IPC and UTS namespaces, a clean
environment, read-only ``/usr`` and ``/etc`` (fonts), a private tmpfs ``/tmp`` holding its
profile (nothing of it is written to the host), and nothing else of the host: not the
platform's data directory, its environment, other apps. As root, ``setpriv`` then drops it to
the unprivileged :data:`BROWSER_UID` with no capabilities and no_new_privs; otherwise bwrap
runs it in a user namespace. Either way Chromium keeps its own sandbox (never
``--no-sandbox``). The app's own origin reaches the page through Playwright's routing, fetched
on the platform's side.

Playwright launches the browser through ``executable_path``: :func:`wrapper` writes a small
script that puts Playwright's arguments into the box (its ``--user-data-dir`` is replaced by
one on the box's tmpfs) and records bwrap's pid, so a kept browser that hangs can be killed
whole (:class:`BoxProcess`). Without bwrap there is no box, and browser work (runtime check,
covers) is off rather than unconfined: :func:`browser_box` says why.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BROWSER_UID = 300100  # not nobody (65534, the build box's user): another uid, no files
PROFILE = "/tmp/profile"  # the user data dir, inside the box
MISSING = (
    "the runtime check and covers need bubblewrap, the box the headless browser runs in, "
    "and `bwrap` is not installed (apt-get install bubblewrap)"
)
# Belt and braces (the network namespace is the guarantee): no prerendering. Merged into
# Playwright's own --disable-features (the last one wins). Chromium 156 has no switch left
# for prefetch or preconnect (--dns-prefetch-disable is gone); the box makes them moot.
# And no omnibox popup: headless, each context (a window of its own) still loaded it, as a
# WebUI renderer of its own burning ~0.5 CPU-s per check beside the page (issue 40).
QUIET_FEATURES = "Prerender2,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"


@dataclass(frozen=True)
class BrowserBox:
    """bwrap (and setpriv, as root) around one Chromium executable."""

    bwrap: str
    setpriv: str | None  # None: not root, bwrap's user namespace is the unprivileged user

    @property
    def description(self) -> str:
        who = f"uid {BROWSER_UID}" if self.setpriv else "user namespace"
        return f"confined (bubblewrap, no network, {who}, Chromium's sandbox)"

    def argv(self, chromium: str) -> list[str]:
        """The command that runs ``chromium`` (its arguments follow) in the box."""
        binds = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("lib", "lib64", "lib32", "bin", "sbin"):
            path = Path("/") / name
            if path.is_symlink():
                binds += ["--symlink", os.readlink(path), str(path)]
            elif path.is_dir():
                binds += ["--ro-bind", str(path), str(path)]
        if Path("/var/cache/fontconfig").is_dir():  # else fontconfig rebuilds it each launch
            binds += ["--ro-bind", "/var/cache/fontconfig", "/var/cache/fontconfig"]
        home = Path(chromium).resolve().parent  # a Chrome in /opt, say
        if not home.is_relative_to("/usr"):
            binds += ["--ro-bind", str(home), str(home)]
        if self.setpriv:
            unshare = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
            unshare.append("--unshare-cgroup-try")
            drop = [self.setpriv, f"--reuid={BROWSER_UID}", f"--regid={BROWSER_UID}"]
            drop += ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
            drop += ["--no-new-privs", "--"]
        else:
            unshare, drop = ["--unshare-all", "--cap-drop", "ALL"], []
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
        env |= {"XDG_CONFIG_HOME": "/tmp/.config", "XDG_CACHE_HOME": "/tmp/.cache"}
        setenv = [word for name, value in env.items() for word in ("--setenv", name, value)]
        return [
            self.bwrap,
            *unshare,
            "--die-with-parent",
            "--new-session",
            "--hostname",
            "browser",
            "--clearenv",
            *setenv,
            *binds,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--perms",
            "01777",
            "--tmpfs",
            "/tmp",
            "--chdir",
            "/tmp",
            "--",
            *drop,
            chromium,
        ]

    def script(self, chromium: str, pid_file: str | None = None) -> str:
        """The wrapper Playwright runs as the browser: its arguments, into the box (and its
        pid, which becomes bwrap's, into ``pid_file``)."""
        record = f"echo $$ > {shlex.quote(pid_file)}\n" if pid_file else ""
        return f"""#!/bin/sh
# zerocode: Chromium in its box (zerocode/adapters/local/browser_box.py). Generated.
{record}quiet=
for arg; do
  shift
  case "$arg" in
    --user-data-dir=*) arg=--user-data-dir={PROFILE} ;;
    --disable-features=*) arg="$arg,{QUIET_FEATURES}" quiet=1 ;;
    --no-sandbox) continue ;;
  esac
  set -- "$@" "$arg"
done
[ -n "$quiet" ] || set -- "$@" --disable-features={QUIET_FEATURES}
exec {shlex.join(self.argv(chromium))} "$@"
"""


@contextlib.contextmanager
def wrapper(box: BrowserBox, chromium: str) -> Iterator[str]:
    """An executable for Playwright's ``executable_path`` that runs ``chromium`` in ``box``,
    in a private directory removed afterwards (the shell has it open by then)."""
    directory = tempfile.mkdtemp(prefix="zerocode-browser-")
    try:
        path = Path(directory) / "chromium"
        path.write_text(box.script(chromium, f"{path}.pid"))
        path.chmod(0o700)
        yield str(path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class BoxProcess:
    """The bwrap of a running box, held by a pidfd (never confused with a later process of
    the same pid): :meth:`kill` ends the box and everything in it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = os.pidfd_open(pid)

    @classmethod
    def of(cls, wrapper_path: str) -> BoxProcess | None:
        """The box a :func:`wrapper` started (its script wrote bwrap's pid), if still there."""
        with contextlib.suppress(OSError, ValueError):
            return cls(int(Path(f"{wrapper_path}.pid").read_text()))
        return None

    def kill(self) -> None:
        """SIGKILL to the first process of the box's pid namespace (the kernel then kills
        every other one in there) and to bwrap itself. bwrap has not been reaped while it is
        signalled through the pidfd, so its children are its own."""
        if self.fd is None:
            return
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.fd, 0)  # still there (else nothing is its child)
            children = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
            for child in children:
                with contextlib.suppress(OSError):
                    os.kill(int(child), signal.SIGKILL)
        with contextlib.suppress(OSError):
            signal.pidfd_send_signal(self.fd, signal.SIGKILL)
        os.close(self.fd)
        self.fd = None


def browser_box() -> tuple[BrowserBox | None, str]:
    """The box, or None, and what the platform says about it (the banner, /api/health)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, f"off: {MISSING}"
    setpriv = shutil.which("setpriv") if os.geteuid() == 0 else None
    if os.geteuid() == 0 and setpriv is None:
        return None, "off: as root the browser's box needs setpriv (util-linux)"
    box = BrowserBox(bwrap, setpriv)
    broken = _probe(box)
    if broken is not None:
        return None, f"off: bubblewrap cannot make the browser's box here ({broken})"
    return box, box.description


@functools.cache
def _probe(box: BrowserBox) -> str | None:
    """None when ``box`` runs a command here, else why not (once per process)."""
    true = shutil.which("true") or "/usr/bin/true"
    try:
        done = subprocess.run(
            box.argv(true), capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return type(exc).__name__
    if done.returncode == 0:
        return None
    lines = (done.stderr or "").strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"
