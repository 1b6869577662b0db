"""A warm nbgrader: each submission's ``nbgrader autograde`` forked from a process that imported nbgrader
once, instead of a Python started afresh per submission.

A fresh ``python -m whole_transformer.course.plugins.app autograde`` starts Python and imports nbgrader,
nbconvert, jupyter_client and the course's preprocessors before it grades anything; a run forked from
the warm nbgrader costs about 1.3 s of CPU less (six complete submissions, ``JOBS=2``: 42–43 s against
49–51 s; docs/code.md). The grading service (``service/serve.py``) grades one submission after
another, and ``make autograde`` a class (``autograde.py``, with the kernel zygote: two students or
more), so each keeps one *warm nbgrader*: a process (multiprocessing's ``forkserver``, started once,
single-threaded) that has imported those modules and nothing else, and forks each nbgrader run from
it (``WarmRuns``). ``make autograde`` stops it when its run ends (``close``).

What stays as it was, per submission:

- each nbgrader run is a process of its own, forked from the warm nbgrader, which never grades, never
  opens a notebook or a gradebook and never runs a line of a student's code: a run starts with
  what a fresh nbgrader has imported, and nothing of an earlier student's run (its process is gone);
- it runs in the submission's private course folder, with the same command line, environment and
  log as before, in a session of its own (a stop kills its process group), and dies with the
  warm nbgrader, which dies with the process that grades (the service, or ``make autograde``);
- its kernels are sandboxed as before: the run starts the submission's own bubblewrap sandbox
  (``sandbox/warm_kernels.py``), never shared between students. Each kernel is forked from the
  grading process's *kernel zygote*, which imported PyTorch and the rest once for every student, and put into
  that sandbox (``sandbox/zygote.py``): the 2 s of imports per student are gone, the sandbox is not.
"""

from __future__ import annotations

import atexit
import ctypes
import io
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from multiprocessing import forkserver

from ..env_vars import take_prestart_sandbox
from ..plugins.app import nbgrader_main
from ..sandbox import zygote
from .nbgrader_run import ZygoteRuns, with_kernel_zygote

#: what the warm nbgrader imports: what ``nbgrader autograde`` with the course's config imports (no torch)
PRELOAD = [
    "nbgrader.apps.nbgraderapp",
    "nbgrader.apps.autogradeapp",
    "nbgrader.converters.autograde",
    "nbgrader.api",
    "nbgrader.nbgraderformat.common",
    "jsonschema",
    "nbconvert.exporters",
    "nbconvert.preprocessors",
    "jupyter_client.manager",
    "nbclient",
    "whole_transformer.course.plugins.execute",
    "whole_transformer.course.plugins.verdict",
    "whole_transformer.course.plugins.hide_tests",
    "whole_transformer.course.sandbox.warm_kernels",
    "whole_transformer.course.plugins.exchange",
    "whole_transformer.course.term.settings",
    "IPython.core.interactiveshell",  # what the kernel manager and the exporters import as they start
    "ipykernel.kernelspec",
    "ipykernel.connect",
    "sqlalchemy.dialects.sqlite",
    "sqlite3",
    "tomllib",
    "codeop",
]

APP = "whole_transformer.course.plugins.app"

_context = None
_lock = threading.Lock()


def context():
    """The forkserver context, its warm nbgrader importing ``PRELOAD`` (started at the first run)."""
    global _context
    with _lock:
        if _context is None:
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
            _context = ctx
        return _context


def close() -> None:
    """Stop the warm nbgrader, if it runs, once its runs are over; a later run starts it afresh."""
    forkserver._forkserver._stop()  # type: ignore[attr-defined]


def prestart(kernels: dict | None) -> str:
    """Start the warm nbgrader now (its imports take seconds), rather than at the first submission, and the kernel
    zygote for these kernel settings (``threads`` and ``Assignment.kernels``), if any; say how the kernels start."""
    context()
    forkserver.ensure_running()
    if kernels is None:
        return "kernels: each grading starts its own (no sandbox, or warm kernels off in this course's config)"
    t0 = time.monotonic()
    try:
        pid = zygote.running(kernels).proc.pid
    except zygote.ZygoteError as e:
        return f"kernels: WARNING: each student's sandbox imports the libraries itself (slower): {e}"
    return (
        f"kernels: forked by one kernel zygote for every student, each into its student's sandbox "
        f"(pid {pid}, ready in {time.monotonic() - t0:.1f} s)"
    )


def _nbgrader_child(args: list[str], cwd: str, env: dict, log: str) -> None:
    """In the forked run: become what ``subprocess.Popen(cmd, cwd, env, stdout=log)`` of the app started."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # dies with the warm nbgrader
    except OSError:
        pass
    os.setsid()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    for src, dst in ((null, 0), (fd, 1), (fd, 2)):
        os.dup2(src, dst)
    os.close(fd)
    os.close(null)
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):  # what a forked Python's stdout and stderr are
            stream.reconfigure(line_buffering=True)
    code = 1
    try:
        prestart = take_prestart_sandbox()
        if prestart:
            # lazy: in the forked nbgrader run only (the warm nbgrader preloaded it), not in the grading process
            from ..sandbox.warm_kernels import prestart as start_fork_server

            start_fork_server(**prestart)
        code = nbgrader_main(args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported in the log, as a crashed nbgrader would
        traceback.print_exc()
    finally:
        atexit._run_exitfuncs()  # the run's own fork server and kernels end with it, as at a normal exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class WarmProcess:
    """A forked nbgrader run as ``nbgrader_autograde`` uses a ``subprocess.Popen``: pid, wait, returncode."""

    def __init__(self, process):
        self.process, self.pid = process, process.pid
        self.returncode: int | None = None

    def wait(self, timeout: float | None = None) -> int:
        self.process.join(timeout)
        if self.process.exitcode is None:
            raise subprocess.TimeoutExpired("nbgrader", timeout or 0.0)
        self.returncode = self.process.exitcode
        self.process.close()
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self.returncode is not None or self.process.is_alive() else self.wait(0)


class WarmRuns(ZygoteRuns):
    """``ZygoteRuns`` whose nbgrader runs of the app are forked from the warm nbgrader (others: started as before)."""

    def start(self, cmd: list[str], cwd, env: dict, out):
        if cmd[:3] != [sys.executable, "-m", APP] or not hasattr(out, "name"):
            return super().start(cmd, cwd, env, out)
        out.flush()
        env = with_kernel_zygote(env)
        proc = context().Process(
            target=_nbgrader_child, args=(cmd[3:], str(cwd), dict(env), str(out.name)), daemon=False
        )
        proc.start()
        return WarmProcess(proc)
