"""Running the source notebooks in a fresh kernel, shared by the notebook tests."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "source" / "whole-transformer"
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)


def load(name):
    return nbformat.read(SOURCE / name, as_version=4)


def nbg(cell):
    return cell.metadata.get("nbgrader", {})


def kernel_env(**extra):
    """The kernel's environment: this checkout importable, .venv/bin on PATH, not under nbgrader unless asked."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # alembic, jupyter
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.pop("NBGRADER_EXECUTION", None)
    env.update(extra)
    return env


def execute(nb, *, timeout=180, allow_errors=False, **env):
    """Run nb in a fresh kernel (cwd: the source folder); returns the seconds it took, kernel start included."""
    from nbclient import NotebookClient

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=allow_errors,
                            resources={"metadata": {"path": str(SOURCE)}})
    start = time.perf_counter()
    client.execute(env=kernel_env(**env))
    return time.perf_counter() - start


def stream_text(cell):
    """What a cell printed, with errors as 'Name: message'."""
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append(f"{o.ename}: {o.evalue}")
    return "".join(out)


def errors(nb):
    return [(i, o.ename) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.get("outputs", []) if o.output_type == "error"]
