"""Warm kernels: the sandboxed kernels of one grading forked from a process that imported the
libraries once.

A fresh kernel costs about 2.3 s here before it runs the student's first line: Python, ipykernel
and, above all, ``import torch`` (1.5 s). Grading one complete submission starts four of them. So
``SandboxExecute`` (``execute.py``) starts, once per nbgrader run, one *fork server* inside the same
bubblewrap sandbox a kernel gets (``sandbox.SandboxSpec``: same folders, environment and limits):
a Python that imports ipykernel, NumPy, PyTorch and the course's package, then waits. Each
notebook's kernel is a ``fork()`` of it that becomes an ipykernel with the connection file
jupyter_client wrote: ready in a fraction of a second, with every module already imported.

What stays as it was:

- each kernel starts clean: the fork server never runs a line of the student's code, so a kernel
  (and a kernel started again after one died) has only what a fresh kernel has imported;
- each kernel gets its own session, its own limits (address space, file size) and the same
  environment and working folder as before; an interrupt is a message, as before; killing a
  kernel (as nbgrader does at the end of each notebook) kills every process in the sandbox but
  the fork server, so nothing the student started outlives their kernel, as when the sandbox
  of a fresh kernel ended;
- the fork server is the student's own: one per nbgrader run, which grades one student, in a
  sandbox of its own, never shared between students. What a student's code could do to it
  reaches at most that student's later notebooks, which their own code could change anyway; the
  verdict stays outside (``verdict.py``). A fork server that died (a kernel may kill it: only
  that cell is lost) is started again for the next kernel.

In the grading service, the libraries are imported once for all students instead: the student's fork
server imports nothing, and each kernel is forked by the service's kernel zygote and put into this
student's sandbox (``zygote.py``, ``kernel_zygote.py``), locked in exactly as one forked here.

The fork server's control pipe is closed in every kernel, and it is not dumpable (a kernel cannot
trace it or read its memory).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner
from traitlets import default

from ..env_vars import kernel_zygote
from . import programs, zygote
from .bubblewrap import SandboxedKernelManager, SandboxSpec, grading_env, sandbox_status
from .kernel_process import ForkedKernel, ForkedKernelClient, ForkServerError
from .limits import WARM_MODULES_VAR
from .spec import WARM_MODULES

#: seconds to wait for the fork server to answer (its first answer waits for the imports)
ANSWER_TIMEOUT = 120
#: seconds a fork server is given to end by itself once its stdin is closed (it may still be importing)
STOP_TIMEOUT = 60


class ForkServer:
    """One fork server in its sandbox; ``fork`` starts a kernel, ``request`` talks to it."""

    def __init__(self, spec: SandboxSpec, bwrap: str, warm: tuple[str, ...]):
        self.runtime = spec.runtime
        spec.write_identity_files()
        self.warm, self.kernel_env = warm, spec.kernel_env()  # what each kernel of this sandbox is given
        spec.env = {**spec.env, WARM_MODULES_VAR: ",".join(warm)}
        info_r, info_w = os.pipe()  # bwrap writes the host pid of the sandbox's first process there
        cmd = spec.bwrap_args(bwrap) + ["--info-fd", str(info_w)]
        cmd += ["--", sys.executable, "-c", programs.source("fork_server")]
        try:
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(info_w,))
        finally:
            os.close(info_w)
        self._info = os.fdopen(info_r, "rb")
        self._program: tuple[int, int] | None = None
        assert self.proc.stdin is not None and self.proc.stdout is not None  # PIPE makes both
        self._to_server, self._from_server = self.proc.stdin, self.proc.stdout
        self._lock = threading.Lock()
        self._buffer = b""
        self._kernels = 0
        self._ready = False  # its first answer, once the imports are done, is read by the first request

    def alive(self) -> bool:
        return self.proc.poll() is None

    def program(self) -> tuple[int, int]:
        """The host pid of this fork server's process in the sandbox (whose namespaces a zygote enters), and
        a pidfd of it: while that process lives, the pid is its own, never another's."""
        if self._program is None:
            text = b""
            while not text.rstrip().endswith(b"}"):  # one JSON object, on lines of its own
                line = self._info.readline()
                if not line:
                    raise ForkServerError("bubblewrap did not say which process is the sandbox's")
                text += line
            init = json.loads(text)["child-pid"]
            self.request(op="poll", pid=0)  # the program runs: it answered
            children = Path(f"/proc/{init}/task/{init}/children").read_text().split()
            if len(children) != 1:
                raise ForkServerError(f"the sandbox's first process has {len(children)} children, not 1")
            pidfd = os.pidfd_open(int(children[0]))
            self.request(op="poll", pid=0)  # and still runs, so the pidfd is of it
            self._program = int(children[0]), pidfd
        return self._program

    def _answer(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        fd = self._from_server.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.close(gently=False)
                raise ForkServerError(f"the sandbox's kernel starter did not answer within {timeout:.0f} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                self.close()
                raise ForkServerError("the sandbox's kernel starter stopped (see the log above)")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, timeout: float = 30, **req) -> dict:
        with self._lock:
            if not self._ready:
                self._answer(ANSWER_TIMEOUT)
                self._ready = True
            try:
                self._to_server.write(json.dumps(req).encode() + b"\n")
                self._to_server.flush()
            except (BrokenPipeError, ValueError):
                self.close()
                raise ForkServerError("the sandbox's kernel starter stopped") from None
            return self._answer(timeout)

    def ipc_prefix(self) -> str:
        """Where the next kernel's sockets go: in the ipc folder the sandbox shares with this process."""
        self._kernels += 1
        return str(self.runtime / "ipc" / f"k{self._kernels}")

    def fork(self, connection: str) -> ForkedKernel:
        """A kernel in this sandbox: forked by the service's kernel zygote when there is one (this server
        then imported nothing), else by this server."""
        path = kernel_zygote()
        if path and not self.warm:
            try:
                return zygote.fork(path, self.program(), connection, self.kernel_env, self)
            except zygote.ZygoteError as e:
                print(
                    f"{zygote.FALLBACK} ({e}); the student's sandbox starts it instead",
                    file=sys.stderr,
                    flush=True,
                )
        return ForkedKernel(self, self.request(op="fork", connection=connection)["pid"])

    def close(self, gently: bool = True) -> None:
        """Stop the server and its sandbox. ``gently``: its stdin closed, it ends its loop and bwrap ends the sandbox
        (while it still starts, once it is up); killed only if it has not ended within STOP_TIMEOUT. Killing
        bubblewrap while it sets the sandbox up left the sandbox's first process behind."""
        if self.proc.poll() is None and gently:
            try:
                self._to_server.close()
                self.proc.wait(timeout=STOP_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self._program is not None:
            os.close(self._program[1])
            self._program = None
        for f in (self._to_server, self._from_server, self._info):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.runtime, ignore_errors=True)


def warm_modules() -> tuple[str, ...]:
    """What a student's fork server imports: nothing when the service's kernel zygote forks the kernels."""
    return () if kernel_zygote() else WARM_MODULES


_servers: dict[tuple, ForkServer] = {}
_servers_lock = threading.Lock()


def server_for(spec: SandboxSpec, bwrap: str, warm: tuple[str, ...]) -> ForkServer:
    """This process's fork server for kernels sandboxed as ``spec``; started (again) if needed."""
    key = (
        str(spec.scratch),
        spec.memory_bytes,
        spec.file_bytes,
        spec.threads,
        tuple(sorted(spec.env.items())),
        spec.hide,
        warm,
    )
    with _servers_lock:
        server = _servers.get(key)
        if server is None or not server.alive():
            if server is not None:
                server.close()
            runtime = Path(tempfile.mkdtemp(prefix="wt-forkserver-"))
            os.chmod(runtime, 0o700)
            spec = SandboxSpec(
                scratch=spec.scratch,
                runtime=runtime,
                memory_bytes=spec.memory_bytes,
                file_bytes=spec.file_bytes,
                threads=spec.threads,
                env=dict(spec.env),
                hide=spec.hide,
            )
            server = _servers[key] = ForkServer(spec, bwrap, warm)
        return server


def prestart(scratch: str, threads: int, memory: int, file_size: int, headless: bool) -> None:
    """Start the fork server the autograding of this process will ask for, without waiting for it,
    so that its imports run while nbgrader still starts (``plugins/app.py``, ``autograder/nbgrader_run.py``). The
    settings are what the course's config gives ``SandboxExecute`` (``assignment.kernel_settings``);
    with others, the first kernel starts a server of its own and this one stays unused. A failure
    here is left for that first kernel to meet and report."""
    km = ForkedKernelManager(
        kernel_name="python3",
        scratch_dir=scratch,
        threads=threads,
        memory_limit=memory,
        file_size_limit=file_size,
        extra_env=grading_env(headless),
    )
    try:
        km._server()
    except Exception:  # noqa: BLE001 - the first kernel starts it again and says why
        pass
    finally:
        shutil.rmtree(km._runtime, ignore_errors=True)  # this manager starts no kernel of its own


@atexit.register
def close_servers() -> None:
    with _servers_lock:
        for server in _servers.values():
            server.close()
        _servers.clear()


class ForkedKernelManager(SandboxedKernelManager):
    """A sandboxed kernel forked from this process's fork server (``server_for``) instead of
    started afresh; otherwise as ``SandboxedKernelManager``."""

    @default("client_factory")
    def _client_factory_default(self):
        return ForkedKernelClient

    def _server(self) -> ForkServer:
        status = sandbox_status()
        if not status.ok or status.bwrap is None:  # (ok: bwrap was found and runs)
            raise RuntimeError(status.message())
        return server_for(self._spec(), status.bwrap, warm_modules())

    async def _async_pre_start_kernel(self, **kw):
        self._fork_server = self._server()
        self.ip = self._fork_server.ipc_prefix()
        return await super()._async_pre_start_kernel(**kw)

    def format_kernel_cmd(self, extra_arguments=None):
        return ["(forked by the sandbox's fork server)"]

    async def _async_launch_kernel(self, kernel_cmd, **kw) -> None:
        kernel = self._fork_server.fork(Path(self.connection_file).read_text())
        provisioner = self.provisioner
        assert isinstance(provisioner, LocalProvisioner)  # python3's kernel spec names no other; we set its fields
        provisioner.process, provisioner.pid, provisioner.pgid = kernel, kernel.pid, None
        provisioner.cwd = kw.get("cwd")
        self._reconcile_connection_info(provisioner.connection_info)
        await self._sockets_bound(kernel)

    async def _sockets_bound(self, kernel: ForkedKernel, timeout: float = 30) -> None:
        """Return once the kernel has made its five sockets (or died, or ``timeout`` passed): the
        client then connects at once, rather than on ZeroMQ's next reconnect try, and sees the
        kernel's first messages (jupyter_client waits 0.2 s more for them when it misses them)."""
        ports = (self.shell_port, self.iopub_port, self.stdin_port, self.hb_port, self.control_port)
        paths = [Path(f"{self.ip}-{port}") for port in ports]
        deadline = time.monotonic() + timeout
        while not all(p.exists() for p in paths) and time.monotonic() < deadline:
            if kernel.poll() is not None:
                return
            await asyncio.sleep(0.005)
