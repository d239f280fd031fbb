"""Whether bubblewrap can make a build box here, and with which of its options.

Asked once per process at start (``sandbox()``), so the banner and ``/api/health`` say what
builds run in; moved out of ``sandbox.py`` to keep that module about the box itself.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from zerocode.adapters.local.box_uids import UidPool

NOBODY = 65534  # only for the probe: builds run as a uid of the pool


@functools.cache
def probe(bwrap: str) -> str | None:
    """None when bwrap can make a box here (as the box's user), else why not."""
    for tool, why in (("prlimit", "to set a build's limits"), ("tar", "to hand a build's "
                      "output over")):  # fmt: skip
        if shutil.which(tool) is None:
            return f"{tool} is needed {why}"
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            return "setpriv (util-linux) is needed to drop builds to an unprivileged uid"
        argv = [bwrap, "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--",
                "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                "--no-new-privs", "--", "true"]  # fmt: skip
    else:
        argv = [bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap is installed but cannot run: {exc}"
    if done.returncode != 0:
        return (
            "bubblewrap is installed but cannot create a sandbox here: "
            + done.stderr.decode(errors="replace").strip()[:300]
        )
    return None


# As root, bwrap makes the box (it can reach the data directory, which the box's uid cannot),
# then the command, dropped to the box's uid, enters a user namespace of its own in which it
# has no capabilities and can make no further user namespace (less kernel surface).
OWN_USERNS = ["--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent",
               "--bind", "/", "/", "--dev-bind", "/dev", "/dev"]  # fmt: skip


@functools.cache
def own_userns_works(bwrap: str, pool: UidPool | None) -> bool:
    """Whether an unprivileged uid may make a user namespace here (kernel and bwrap >= 0.8)."""
    uid = pool.first if pool is not None else NOBODY
    argv = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
            "--", bwrap, *OWN_USERNS, "--", "true"]  # fmt: skip
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def sizes_tmpfs(bwrap: str) -> bool:
    """Whether this bwrap bounds a tmpfs (``--size``, bubblewrap 0.8): the box's ``/tmp``."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return b"--size" in done.stdout + done.stderr
