"""The grading service's kernel zygote (``kernel_zygote.py``): started once, asked for each kernel.

Without it, each nbgrader run starts its student's fork server, which imports PyTorch and the other
libraries in that student's sandbox: about 2 s of CPU per student. With it (``WT_KERNEL_ZYGOTE`` names
its socket in the environment of the service's nbgrader runs), the student's sandbox is started as
before but imports nothing (``warm_kernels.warm_modules``), and each of its kernels is forked from the
zygote, which imported them once for the whole service, and put into that sandbox (``ZygoteKernel``).
Anything the zygote cannot do for a kernel (another environment, a sandbox it cannot enter) makes the
grading run start that kernel from the student's own sandbox instead, as without a zygote.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from . import programs
from .bubblewrap import grading_env
from .kernel_process import ZygoteKernel
from .limits import LIMITS, WARM_MODULES_VAR
from .spec import WARM_MODULES, WORKDIR, SandboxSpec

READY_TIMEOUT = 120
#: what a grading run's log says when a kernel could not come from the zygote (the service reports it)
FALLBACK = "[sandbox] the kernel zygote could not start this kernel"


class ZygoteError(RuntimeError):
    """The zygote could not start this kernel."""


class KernelZygote:
    """The zygote process, with the environment ``env`` every kernel of it gets (``SandboxSpec.kernel_env``)."""

    def __init__(self, env: dict[str, str], warm: tuple[str, ...]):
        self.folder = Path(tempfile.mkdtemp(prefix="wt-zygote-"))
        os.chmod(self.folder, 0o700)  # only this user (the grader) reaches the socket
        self.socket = str(self.folder / "zygote.sock")
        self.env = env = {k: v for k, v in env.items() if not k.startswith(LIMITS)}
        cmd = [sys.executable, "-c", programs.source("kernel_zygote"), self.socket]
        self.proc = subprocess.Popen(
            cmd, env={**env, WARM_MODULES_VAR: ",".join(warm)}, cwd="/", stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], READY_TIMEOUT)[0] or b"ready" not in self.proc.stdout.readline():
            self.close()
            raise ZygoteError("the kernel zygote did not start (see the log above)")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def fork(path: str, sandbox: tuple[int, int], connection: str, env: dict[str, str], holder) -> ZygoteKernel:
    """A kernel forked by the zygote at ``path`` into the sandbox whose program has host pid and pidfd
    ``sandbox`` (``holder``: that sandbox's ``ForkServer``, which kills what the kernel started)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    answers = Lines(conn)
    try:
        conn.connect(path)
        line = json.dumps({"pid": sandbox[0], "connection": connection, "env": env, "cwd": WORKDIR})
        socket.send_fds(conn, [line.encode() + b"\n"], [sys.stderr.fileno(), sandbox[1]])
        answer = answers.next(60)
    except (OSError, ValueError) as e:
        conn.close()
        raise ZygoteError(f"the kernel zygote did not answer: {e}") from None
    if "pid" not in answer:
        conn.close()
        raise ZygoteError(answer.get("error", "the kernel zygote gave no kernel"))
    holder.request(op="adopt", pid=answer["pid"])
    return ZygoteKernel(holder, answer["pid"], answers)


class Lines:
    """The zygote's answers on one connection: a JSON object a line (the kernel's pid, then its exit code)."""

    def __init__(self, conn: socket.socket):
        self.conn, self.buffer = conn, b""

    def ready(self) -> bool:
        return b"\n" in self.buffer or bool(select.select([self.conn], [], [], 0)[0])

    def next(self, timeout: float) -> dict:
        """The next answer; {} if the zygote's side closed first."""
        self.conn.settimeout(timeout)
        while b"\n" not in self.buffer:
            chunk = self.conn.recv(4096)
            if not chunk:
                return {}
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.conn.close()


_running: dict[tuple, KernelZygote] = {}
_lock = threading.Lock()


def running(settings: dict) -> KernelZygote:
    """The zygote for kernels with these settings (what ``WT_PRESTART_SANDBOX`` holds: threads, headless
    labs; the limits are each kernel's own), started at its first use and again if it died."""
    key = (int(settings["threads"]), bool(settings["headless"]))
    with _lock:
        zygote = _running.get(key)
        if zygote is None or not zygote.alive():
            if zygote is not None:
                zygote.close()
            spec = SandboxSpec(scratch=Path("/"), runtime=Path("/"), threads=key[0], env=grading_env(key[1]))
            zygote = _running[key] = KernelZygote(spec.kernel_env(), WARM_MODULES)
        return zygote


@atexit.register
def close_all() -> None:
    with _lock:
        for zygote in _running.values():
            zygote.close()
        _running.clear()
