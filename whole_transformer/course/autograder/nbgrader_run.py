"""Step 4 of grading one submission (``grade.py``): one real ``nbgrader autograde`` process on the student's
private course, stopped at its deadline or when the run stops; ``NbgraderRuns`` keeps track of them all
(``warm_nbgrader.WarmRuns`` forks each from a warm process instead of starting it); ``ZygoteRuns``
gives their kernels the service's kernel zygote."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..env_vars import KERNEL_ZYGOTE, prestart_sandbox, with_prestart_sandbox
from ..layout import ASSIGNMENT, nbgrader_env
from ..sandbox import zygote


class Stopped(Exception):
    """The run was stopped (Ctrl-C) while this student was being graded."""


class NbgraderRuns:
    """The nbgrader processes started by the graders of one autograde run, so that stopping the
    run can kill them all (and with each, its sandboxed kernels) and start no new one."""

    def __init__(self):
        self._procs: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self.stopping = threading.Event()

    def add(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.add(proc)

    def start(self, cmd: list[str], cwd: Path, env: dict, out) -> subprocess.Popen:
        """Start one nbgrader process (``warm_nbgrader.WarmRuns`` forks it from a warm one instead)."""
        return subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent
        )

    def discard(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop_all(self) -> None:
        self.stopping.set()
        with self._lock:
            for proc in list(self._procs):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


def _die_with_parent():
    """In the child: die if the autograde process dies (a killed run leaves no graders behind)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    os.setsid()


def nbgrader_autograde(
    private: Path,
    student: str,
    extra: list[str],
    log: Path,
    timeout: float,
    stop,
    runs: NbgraderRuns,
    prestart: dict | None = None,
) -> tuple[int, str]:
    """``nbgrader autograde`` of one student in the private course ``private``: (exit code, why it
    failed). ``prestart``: the sandbox's scratch folder, threads and the kernels' settings
    (``Assignment.kernels``), for the kernels' fork server to start at once (``plugins/app.py``)."""
    cmd = [
        sys.executable,
        "-m",
        "whole_transformer.course.plugins.app",
        "autograde",
        ASSIGNMENT,
        "--student",
        student,
        "--force",
        *extra,
    ]
    env = nbgrader_env()
    if prestart:
        env = with_prestart_sandbox(env, prestart)
    if stop():
        raise Stopped()
    deadline = time.monotonic() + timeout
    with open(log, "a") as out:
        proc = runs.start(cmd, private, env, out)
        runs.add(proc)
        try:
            while True:
                try:
                    rc = proc.wait(timeout=min(1.0, max(0.05, deadline - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    if stop():
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        raise Stopped() from None
                    if time.monotonic() >= deadline:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        return -9, f"grading took longer than {int(timeout)} s and was stopped"
        finally:
            runs.discard(proc)
    if rc != 0:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if "ERROR" in ln or "Error" in ln]
        why = lines[-1].split("]", 1)[-1].strip() if lines else f"nbgrader exited with code {rc}"
        return rc, why[:300]
    return 0, ""


def with_kernel_zygote(env: dict) -> dict:
    """``env`` naming the service's kernel zygote for the run's kernels (``sandbox/zygote.py``), for the
    kernel settings the run will use; unchanged if the zygote does not start (the run's log says why)."""
    settings = prestart_sandbox(env)
    if not settings:
        return env
    try:
        return {**env, KERNEL_ZYGOTE: zygote.running(settings).socket}
    except zygote.ZygoteError as e:
        print(f"[service] kernels start in each student's sandbox instead: {e}", file=sys.stderr, flush=True)
        return env


class ZygoteRuns(NbgraderRuns):
    """``NbgraderRuns`` whose runs' kernels are forked by a kernel zygote of this process (the grading
    service's, on this machine and on each Dask worker that grades for it; a ``make autograde`` run's, for two
    students or more)."""

    def start(self, cmd: list[str], cwd: Path, env: dict, out) -> subprocess.Popen:
        return super().start(cmd, cwd, with_kernel_zygote(env), out)
