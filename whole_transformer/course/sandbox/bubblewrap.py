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
  (killing the sandbox, or the kernel when it was forked in it: ``forkserver.py``, kills
  everything the student started), a new session (an interrupt is
  delivered as a message and the kernel signals itself), and limits on address space, file size
  and processes (the last one is not enforced by Linux when grading as root), so a huge
  allocation fails with MemoryError instead of taking the machine down.

Nothing else of the machine is there: not ``source/`` or ``release/``, not the gradebook, not
other students' folders, not the instructor's home folder, and no environment variable of the
grading process (the environment is cleared and rebuilt).

``SandboxedKernelManager`` is a jupyter_client kernel manager that launches the kernel this way.
``sandbox_status()`` says whether bubblewrap works here, and if not, how to install it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Integer, List, Unicode

from ...envflags import flag
from . import programs

INSTALL_HINT = (
    "Autograding runs student code, so it runs the kernel inside bubblewrap (bwrap).\n"
    "Install it:  Debian/Ubuntu: sudo apt-get install bubblewrap  ·  Fedora: sudo dnf install bubblewrap\n"
    "             Arch: sudo pacman -S bubblewrap  ·  conda: conda install -c conda-forge bubblewrap\n"
    "If bwrap is installed but fails, unprivileged user namespaces may be disabled\n"
    "(sysctl kernel.unprivileged_userns_clone=1, or in a container allow them).\n"
    "To grade WITHOUT a sandbox (student code then runs with your rights and can read the hidden\n"
    "tests and the gradebook), opt out explicitly: make autograde NO_SANDBOX=1, or\n"
    "python -m whole_transformer.course autograde --no-sandbox, or WT_SANDBOX=off."
)

#: where the kernel's one writable folder (its working directory) appears inside the sandbox
WORKDIR = "/submission"

#: the kernel's limits unless configured: address space and largest file, bytes
MEMORY_LIMIT = 3 * 2**30
FILE_SIZE_LIMIT = 256 * 2**20

#: files of /etc a Python kernel needs (libraries, time zone, MIME types, fonts)
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "fonts",
    "nsswitch.conf",
    "host.conf",
    "hosts",
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
    forced = os.environ.get("WT_BWRAP")
    if forced:
        return forced if os.access(forced, os.X_OK) else None
    return shutil.which("bwrap") or ("/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


def sandbox_status() -> SandboxStatus:
    """Whether bubblewrap is installed and can create the namespaces the sandbox uses."""
    return _probe(bwrap_path(), os.geteuid())


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str | None, euid: int) -> SandboxStatus:
    if bwrap is None:
        where = os.environ.get("WT_BWRAP")
        return SandboxStatus(False, None, f"bwrap (bubblewrap) is not installed{f' at {where}' if where else ''}.")
    probe = [
        bwrap, *_namespace_args(), "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
        "--", "/bin/sh", "-c", "exit 0",
    ]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return SandboxStatus(False, bwrap, f"bwrap could not be run: {e}")
    if done.returncode != 0:
        return SandboxStatus(False, bwrap, f"bwrap failed: {done.stderr.strip() or done.returncode}")
    return SandboxStatus(True, bwrap)


def sandbox_opt_out() -> bool:
    """True if the instructor opted out of the sandbox with WT_SANDBOX=off (or 0, no, none)."""
    return not flag("WT_SANDBOX", default=True)


class SandboxMissing(RuntimeError):
    """No sandbox on this machine, and no explicit opt-out."""


def check_sandbox(no_sandbox: bool) -> bool:
    """True to use the sandbox; raises SandboxMissing if there is none and no explicit opt-out."""
    if no_sandbox or sandbox_opt_out():
        return False
    status = sandbox_status()
    if not status.ok:
        raise SandboxMissing(status.message())
    return True


def _namespace_args() -> list[str]:
    args = ["--unshare-all", "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        # as root, bwrap would keep every capability: map to an unprivileged user and drop them
        args += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL"]
    return args


def _package_dir() -> Path:
    import whole_transformer

    return Path(whole_transformer.__file__).resolve().parent


def _python_roots() -> list[Path]:
    """Folders the interpreter and its libraries live in: the environment (venv, conda, system),
    its base installation, and every site-packages folder on the path (e.g. from PYTHONPATH).

    Each is given as it is really found (symbolic links resolved); ``_python_binds`` also binds it
    at the path Python knows it by, so a venv reached through a link still starts.
    """
    roots: list[Path] = []
    for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        roots.append(Path(p).resolve())
    exe = Path(sys.executable)
    roots.append(exe.parent.resolve())
    roots.append(exe.resolve().parent.parent)
    roots += [Path(e).resolve() for e in _site_folders()]  # library folders only: never the course
    # drop nested duplicates: keep the shortest roots, skip system folders bound anyway
    out: list[Path] = []
    for r in sorted(set(roots), key=lambda p: len(p.parts)):
        if r == Path("/") or any(r == o or o in r.parents for o in out):
            continue
        if _under_usr(r):
            continue
        out.append(r)
    return out


def _site_folders() -> list[str]:
    """The library folders on this interpreter's path (its own, and any from PYTHONPATH)."""
    return [e for e in sys.path if e and Path(e).name in {"site-packages", "dist-packages"} and Path(e).is_dir()]


def _under_usr(p: Path) -> bool:
    return p.parts[:2] == ("/", "usr") and not str(p).startswith("/usr/local")


def _python_binds() -> list[tuple[Path, Path]]:
    """(real folder, path inside the sandbox) pairs for the interpreter: each root at its real path,
    and the environment and interpreter folders also at the (unresolved) paths Python uses."""
    pairs = [(r, r) for r in _python_roots()]
    seen_as = {Path(sys.prefix).absolute(), Path(sys.exec_prefix).absolute(), Path(sys.executable).absolute().parent}
    for apparent in seen_as:
        real = apparent.resolve()
        if apparent != real and not _under_usr(apparent) and real.is_dir():
            pairs.append((real, apparent))
    return pairs


@dataclass
class SandboxSpec:
    """Everything that decides what the sandboxed kernel may see and do."""

    scratch: Path  # the one writable folder, also the working directory
    runtime: Path  # connection file and ipc sockets
    memory_bytes: int = MEMORY_LIMIT
    file_bytes: int = FILE_SIZE_LIMIT
    threads: int = 1
    env: dict[str, str] = field(default_factory=dict)
    hide: tuple[str, ...] = ("course",)  # subfolders of the package hidden from the student

    def bwrap_args(self, bwrap: str) -> list[str]:
        a = [bwrap, *_namespace_args(), "--hostname", "sandbox"]
        for top in ("usr",):
            a += ["--ro-bind", f"/{top}", f"/{top}"]
        for link in ("bin", "lib", "lib64", "sbin", "lib32", "libx32"):
            p = Path("/") / link
            if p.is_symlink():
                a += ["--symlink", os.readlink(p), str(p)]
            elif p.is_dir():
                a += ["--ro-bind", str(p), str(p)]
        for name in ETC_FILES:
            a += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        a += ["--ro-bind", str(self.runtime / "passwd"), "/etc/passwd"]
        a += ["--ro-bind", str(self.runtime / "group"), "/etc/group"]
        a += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/tmp/home"]
        a += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
        for real, inside in _python_binds():
            a += ["--ro-bind", str(real), str(inside)]
        pkg = _package_dir()
        a += ["--ro-bind", str(pkg), str(pkg)]
        for sub in self.hide:
            if (pkg / sub).is_dir():
                a += ["--tmpfs", str(pkg / sub)]
        a += ["--bind", str(self.runtime / "ipc"), str(self.runtime / "ipc")]
        if (self.runtime / "kernel.json").exists():  # a fork server's kernels get theirs through its pipe
            a += ["--ro-bind", str(self.runtime / "kernel.json"), str(self.runtime / "kernel.json")]
        # the scratch folder appears at a neutral path: no host path of the course shows inside
        a += ["--bind", str(self.scratch), WORKDIR, "--chdir", WORKDIR]
        a += ["--remount-ro", "/"]
        a += ["--clearenv"]
        for k, v in self.kernel_env().items():
            a += ["--setenv", k, v]
        return a

    def kernel_env(self) -> dict[str, str]:
        venv_bin = str(Path(sys.executable).parent)
        threads = str(max(1, self.threads))
        env = {
            "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": "/tmp/home",
            "USER": "student",
            "LOGNAME": "student",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join([str(_package_dir().parent), *_site_folders()]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONNOUSERSITE": "1",
            "MPLCONFIGDIR": "/tmp/home/.matplotlib",
            "MPLBACKEND": "module://matplotlib_inline.backend_inline",
            "IPYTHONDIR": "/tmp/home/.ipython",
            "JUPYTER_CONFIG_DIR": "/tmp/home/.jupyter",
            "JUPYTER_DATA_DIR": "/tmp/home/.local/share/jupyter",
            "JUPYTER_RUNTIME_DIR": "/tmp/home/.local/share/jupyter/runtime",
            "JUPYTER_PLATFORM_DIRS": "1",
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "OMP_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "TORCH_NUM_THREADS": threads,
            "WT_LIMIT_AS": str(self.memory_bytes),
            "WT_LIMIT_FSIZE": str(self.file_bytes),
            "WT_LIMIT_NPROC": "4096",
            "WT_SANDBOXED": "1",
            "JPY_PARENT_PID": "1",  # no parent poller (our parent is the sandbox's init)
        }
        env.update(self.env)
        return env

    def write_identity_files(self) -> None:
        (self.runtime / "ipc").mkdir(parents=True, exist_ok=True)
        (self.runtime / "passwd").write_text("student:x:1000:1000:student:/tmp/home:/bin/sh\n")
        (self.runtime / "group").write_text("student:x:1000:\n")


def grading_env(headless_labs: bool = True) -> dict[str, str]:
    """What a kernel under autograding is told: that it is graded, and whether the labs stay headless."""
    return {"NBGRADER_EXECUTION": os.environ.get("NBGRADER_EXECUTION", "autograde"),
            "WT_LABS_HEADLESS": "1" if headless_labs else ""}


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
