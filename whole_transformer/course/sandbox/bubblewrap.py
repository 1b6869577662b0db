"""The student's kernel, locked in a bubblewrap sandbox.

Autograding runs code the instructor has never read. Here the nbgrader process (which holds the
gradebook and the hidden tests) stays outside; only the kernel that runs the student's cells is
started inside `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, the sandbox
Flatpak uses; Debian package ``bubblewrap``). What the kernel sees:

- a read-only view of ``/usr`` (system libraries), a few files of ``/etc``, the Python
  installation and the virtual environment, and the ``whole_transformer`` package with its
  ``course`` subpackage (these grading internals) hidden;
- one writable folder, the student's scratch folder, mounted at ``/submission`` and used as the
  working directory (no host path of the course appears inside the sandbox);
- a private ``/tmp`` and a private ``$HOME`` in memory, gone when the kernel stops;
- no network: it gets its own network namespace; its channels to nbgrader are ZeroMQ over Unix
  sockets (``ipc`` transport) in a private runtime folder, which work without any network;
- its own user namespace with an unprivileged user and no capabilities, its own PID namespace
  (killing the sandbox, or the kernel when it was forked in it: ``warm_kernels.py``, kills
  everything the student started), a new session (an interrupt is
  delivered as a message and the kernel signals itself), and limits on address space, file size
  and processes (the last one is not enforced by Linux when grading as root), so a huge
  allocation fails with MemoryError instead of taking the machine down.

Nothing else of the machine is there: not ``source/`` or ``release/``, not the gradebook, not
other students' folders, not the instructor's home folder, and no environment variable of the
grading process (the environment is cleared and rebuilt).

``SandboxedKernelManager`` is a jupyter_client kernel manager that launches the kernel this way;
``spec.py`` builds the bwrap arguments and the environment (``SandboxSpec``).
``sandbox_status()`` says whether bubblewrap works here, and if not, how to install it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Integer, List, Unicode

from ...envflags import LABS_HEADLESS, NBGRADER_EXECUTION, nbgrader_execution
from .. import env_vars
from . import programs
from .spec import FILE_SIZE_LIMIT, MEMORY_LIMIT, SandboxSpec, namespace_args

INSTALL_HINT = (
    "Autograding runs student code, so it runs the kernel inside bubblewrap (bwrap).\n"
    "Install it:  Debian/Ubuntu: sudo apt-get install bubblewrap  ·  Fedora: sudo dnf install bubblewrap\n"
    "             Arch: sudo pacman -S bubblewrap  ·  conda: conda install -c conda-forge bubblewrap\n"
    "If bwrap is installed but fails, unprivileged user namespaces may be disabled\n"
    "(sysctl kernel.unprivileged_userns_clone=1, or in a container allow them).\n"
    "To grade WITHOUT a sandbox (student code then runs with your rights and can read the hidden\n"
    "tests and the gradebook), opt out explicitly: make autograde NO_SANDBOX=1, which runs\n"
    "python -m whole_transformer.course autograde --no-sandbox."
)


@dataclass
class SandboxStatus:
    ok: bool
    bwrap: str | None
    reason: str = ""

    def message(self) -> str:
        if self.ok:
            return f"sandbox: bubblewrap at {self.bwrap}"
        return f"No working sandbox: {self.reason}\n{INSTALL_HINT}"


def bwrap_path() -> str | None:
    """The bwrap to use: $WT_BWRAP if set (a path), else bwrap on PATH, else /usr/bin/bwrap."""
    forced = env_vars.bwrap()
    if forced:
        return forced if os.access(forced, os.X_OK) else None
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


def sandbox_status() -> SandboxStatus:
    """Whether bubblewrap is installed and can create the namespaces the sandbox uses."""
    return _probe(bwrap_path(), os.geteuid())


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str | None, euid: int) -> SandboxStatus:
    if bwrap is None:
        where = env_vars.bwrap()
        return SandboxStatus(False, None, f"bwrap (bubblewrap) is not installed{f' at {where}' if where else ''}.")
    probe = [
        bwrap,
        *namespace_args(),
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--",
        "/bin/sh",
        "-c",
        "exit 0",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return SandboxStatus(False, bwrap, f"bwrap could not be run: {e}")
    if done.returncode != 0:
        return SandboxStatus(False, bwrap, f"bwrap failed: {done.stderr.strip() or done.returncode}")
    return SandboxStatus(True, bwrap)


class SandboxMissing(RuntimeError):
    """No sandbox on this machine, and no explicit opt-out."""


def check_sandbox(no_sandbox: bool) -> bool:
    """True to use the sandbox; raises SandboxMissing if there is none and no explicit opt-out
    (``no_sandbox``: the commands' ``--no-sandbox``, the one way to turn the sandbox off)."""
    if no_sandbox:
        return False
    status = sandbox_status()
    if not status.ok:
        raise SandboxMissing(status.message())
    return True


def grading_env(headless_labs: bool = True) -> dict[str, str]:
    """What a kernel under autograding is told: that it is graded, and whether the labs stay headless."""
    return {
        NBGRADER_EXECUTION: nbgrader_execution() or "autograde",
        LABS_HEADLESS: "1" if headless_labs else "",
    }


class SandboxedKernelManager(AsyncKernelManager):
    """An ipykernel started inside bubblewrap, talking over Unix sockets (ZeroMQ ipc transport).

    Set ``scratch_dir`` (the writable working folder) before starting. The runtime folder with
    the connection file and sockets is private to this kernel and removed at cleanup.
    """

    scratch_dir = Unicode("", help="the kernel's working directory, its only writable folder").tag(config=True)
    memory_limit = Integer(MEMORY_LIMIT, help="address-space limit of the kernel, bytes").tag(config=True)
    file_size_limit = Integer(FILE_SIZE_LIMIT, help="largest file the kernel may write, bytes").tag(config=True)
    threads = Integer(1, help="threads for NumPy/PyTorch inside the kernel").tag(config=True)
    extra_env = Dict(help="extra environment variables for the kernel").tag(config=True)
    hidden_package_dirs = List(["course"], help="package subfolders hidden from the kernel").tag(config=True)

    def __init__(self, **kw):
        self._runtime = Path(tempfile.mkdtemp(prefix="wt-kernel-"))
        os.chmod(self._runtime, 0o700)
        kw.setdefault("transport", "ipc")
        kw.setdefault("ip", str(self._runtime / "ipc" / "k"))
        kw.setdefault("connection_file", str(self._runtime / "kernel.json"))
        super().__init__(**kw)
        self.transport = "ipc"

    @property
    def kernel_spec(self):
        spec = super().kernel_spec
        if spec is not None:
            spec.interrupt_mode = "message"  # a signal would stop bwrap, not reach the kernel
        return spec

    def _spec(self) -> SandboxSpec:
        scratch = Path(self.scratch_dir or self._runtime / "scratch").resolve()
        scratch.mkdir(parents=True, exist_ok=True)
        spec = SandboxSpec(
            scratch=scratch,
            runtime=self._runtime,
            memory_bytes=self.memory_limit,
            file_bytes=self.file_size_limit,
            threads=self.threads,
            env=dict(self.extra_env),
            hide=tuple(self.hidden_package_dirs),
        )
        spec.write_identity_files()
        return spec

    def format_kernel_cmd(self, extra_arguments=None):
        status = sandbox_status()
        if not status.ok:
            raise RuntimeError(status.message())
        spec = self._spec()
        if not Path(self.connection_file).exists():
            raise RuntimeError("the connection file must be written before the kernel command")
        launcher = programs.source("kernel_launcher")
        kernel = [sys.executable, "-c", launcher, "-f", str(Path(self.connection_file).resolve())]
        return spec.bwrap_args(status.bwrap) + ["--", *kernel, *(extra_arguments or [])]

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._runtime, ignore_errors=True)

    cleanup_resources = _async_cleanup_resources  # the async manager's public name
