"""``down``: a classroom's servers, hub and proxy stopped, its accounts and its folder removed, nothing else.

What to remove is what ``up`` recorded in ``DIR/classroom.json`` (``room.Classroom``), and the accounts the hub
made at a student's first launch from the LMS (``--lti``): those whose home is in ``DIR/home/``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
from pathlib import Path

from .commands import ClassroomError
from .room import DEFAULT_DIR, NEED_ROOT, RECORD, Classroom


def _stop(pids: list[int], grace: float = 10) -> None:
    """SIGTERM to ``pids``, then SIGKILL to whatever of them is still there after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while sig == signal.SIGTERM and time.monotonic() < deadline and any(map(_alive, pids)):
            time.sleep(0.2)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs: gone, or a zombie its parent has not reaped yet (the hub, when the process
    that ran ``up`` is still there, as in the tests), counts as stopped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _uid(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def down(folder: Path = DEFAULT_DIR, log=print) -> None:
    """Stop the classroom's hub and servers; remove its accounts and its folder, nothing else."""
    folder = Path(folder).resolve()
    if not (folder / RECORD).exists():
        log(f"classroom: nothing to stop in {folder} (no {RECORD})")
        return
    if os.geteuid() != 0:
        raise ClassroomError(NEED_ROOT)
    room, t0 = Classroom.load(folder), time.monotonic()
    homes = folder / "home"  # the accounts up made, and those the hub made at a first launch from the LMS (--lti)
    accounts = room.accounts + sorted(
        p.pw_name for p in pwd.getpwall() if Path(p.pw_dir).is_relative_to(homes) and p.pw_name not in room.accounts
    )
    uids = {p.pw_uid for p in pwd.getpwall() if p.pw_name in accounts}

    def accounts_processes() -> None:  # whatever the accounts run: servers, kernels, terminals
        _stop([int(p) for p in os.listdir("/proc") if p.isdigit() and _uid(f"/proc/{p}") in uids])

    accounts_processes()  # first: then the hub, which would stop each server in turn, finds none left
    if room.hub_pid and _uid(f"/proc/{room.hub_pid}") == 0:  # the hub stops the proxy it started
        _stop([room.hub_pid], grace=20)
        try:
            os.killpg(room.hub_pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        pid = int((folder / "hub" / "proxy.pid").read_text().strip())
        if "configurable-http-proxy" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
            _stop([pid])
    except (OSError, ValueError):
        pass
    accounts_processes()  # anything started meanwhile
    for name in accounts:
        if name in {p.pw_name for p in pwd.getpwall()}:
            subprocess.run(["userdel", name], capture_output=True)
    log(f"classroom: servers, hub and proxy stopped, accounts removed ({time.monotonic() - t0:.0f} s)")
    shutil.rmtree(folder)
    log(f"classroom: stopped; removed {len(accounts)} accounts and {folder} ({time.monotonic() - t0:.0f} s)")
