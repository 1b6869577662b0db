"""The machine a run measures on, as results.md describes it (CPU, cores, versions, the commit), and how busy it
is: the load average, this process's CPU seconds, and the whole machine's (/proc/stat)."""

from __future__ import annotations

import contextlib
import os
import platform
import resource
import subprocess
from importlib.metadata import version
from pathlib import Path

from benchmarks.checkout import ROOT


def machine() -> list[tuple[str, str]]:
    # lazy: torch and numpy are imported by the groups that need them; --list and --readme need neither
    import numpy
    import torch

    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        ("CPU", cpu),
        ("cores", f"{os.cpu_count()} (torch set to {torch.get_num_threads()} thread(s) by the course)"),
        ("OS", f"{platform.system()} {platform.release()}"),
        ("Python", platform.python_version()),
        ("torch", torch.__version__),
        ("numpy", numpy.__version__),
        ("x-transformers", x_transformers_version()),
        ("commit", commit() or "?"),
    ]


def commit() -> str:
    """The checkout's commit, "(with uncommitted changes)" after it when its tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "?"


def x_transformers_version() -> str:
    try:
        return version("x-transformers")
    except Exception:  # noqa: BLE001 - any failure to read the version: shown as "?"
        return "?"


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of the children it has waited for."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy (all cores, /proc/stat). Differences count every
    process, the sandboxed kernels too (whose CPU getrusage misses when their sandbox is killed),
    and whatever else runs: on a quiet machine, the CPU of what is measured."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def loadavg() -> str:
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"
