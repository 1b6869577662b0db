"""What the sandboxed kernel may see and do, as bubblewrap arguments (``bubblewrap.py`` launches it).

``SandboxSpec.bwrap_args`` binds ``/usr``, a few files of ``/etc``, the Python installation and
environment and the ``whole_transformer`` package read-only (its ``course`` subpackage hidden),
the scratch folder writable at ``WORKDIR``, and a cleared environment (``kernel_env``) with the
kernel's limits.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .limits import LIMIT_AS, LIMIT_FSIZE, LIMIT_NPROC

#: where the kernel's one writable folder (its working directory) appears inside the sandbox
WORKDIR = "/submission"

#: the kernel's limits unless configured: address space and largest file, bytes
MEMORY_LIMIT = 3 * 2**30
FILE_SIZE_LIMIT = 256 * 2**20

#: modules a warm kernel has imported before its first line (``warm_kernels``, ``zygote``): what the
#: notebooks' first cells import
WARM_MODULES = (
    "ipykernel.ipkernel",  # and what a kernel's start imports: its shell, the debugger, the history
    "ipykernel.debugger",
    "sqlite3",
    "numpy",
    "torch",
    "torch.nn.functional",
    "IPython.display",
    "whole_transformer.checks",
    "whole_transformer.grading",
    "whole_transformer.task",
    "whole_transformer.steps",
    "whole_transformer.weights",
    "whole_transformer.views",
    "whole_transformer.train",
    "whole_transformer.scale_study",
    "whole_transformer.labs",
)

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


def namespace_args() -> list[str]:
    args = ["--unshare-all", "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        # as root, bwrap would keep every capability: map to an unprivileged user and drop them
        args += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL"]
    return args


def _package_dir() -> Path:
    """The ``whole_transformer`` package's folder (this file is its ``course/sandbox/spec.py``)."""
    return Path(__file__).resolve().parents[2]


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
        a = [bwrap, *namespace_args(), "--hostname", "sandbox"]
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
            LIMIT_AS: str(self.memory_bytes),
            LIMIT_FSIZE: str(self.file_bytes),
            LIMIT_NPROC: "4096",
            "WT_SANDBOXED": "1",
            "JPY_PARENT_PID": "1",  # no parent poller (our parent is the sandbox's init)
        }
        env.update(self.env)
        return env

    def write_identity_files(self) -> None:
        (self.runtime / "ipc").mkdir(parents=True, exist_ok=True)
        (self.runtime / "passwd").write_text("student:x:1000:1000:student:/tmp/home:/bin/sh\n")
        (self.runtime / "group").write_text("student:x:1000:\n")
