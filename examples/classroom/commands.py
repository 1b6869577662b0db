"""A command run for the classroom, as root or as one of its accounts; its failure a ``ClassroomError``."""

from __future__ import annotations

import pwd
import subprocess
from pathlib import Path


class ClassroomError(RuntimeError):
    """The classroom cannot be made or removed; the message says why and what to do."""


def run(cmd, *, user: str | None = None, cwd=None, env=None, log: Path | None = None, timeout=1800):
    """Run a command (as ``user`` if given); raise ClassroomError with its output if it fails."""
    uid = gid = None
    if user is not None:
        pw = pwd.getpwnam(user)
        uid, gid = pw.pw_uid, pw.pw_gid
        env = {**(env or {}), "HOME": pw.pw_dir, "USER": user, "LOGNAME": user}
    done = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        user=uid,
        group=gid,
        extra_groups=[] if user is not None else None,
    )
    if log is not None:
        with open(log, "a") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        raise ClassroomError(
            f"{' '.join(map(str, cmd))} failed ({done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return done
