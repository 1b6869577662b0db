"""The programs that run inside the sandbox, as the text ``python -c`` is given.

No file of the grading package is visible in the sandbox, so a program cannot import ``limits``
there: its import line (marked ``# sandbox: inlined``) is replaced by ``limits.py``'s own text. The
programs are ordinary modules otherwise, read by the linters and the type checker.
"""

from __future__ import annotations

import functools
from pathlib import Path

HERE = Path(__file__).resolve().parent
INLINED = "# sandbox: inlined"


@functools.cache
def source(name: str) -> str:
    """The text of program ``name`` (``kernel_launcher`` or ``fork_server``), ``limits`` inlined."""
    limits = (HERE / "limits.py").read_text()
    lines = (HERE / f"{name}.py").read_text().splitlines()
    marked = [i for i, line in enumerate(lines) if line.rstrip().endswith(INLINED)]
    if len(marked) != 1:
        raise RuntimeError(f"{name}.py must import limits on exactly one line marked {INLINED!r}")
    lines[marked[0]] = limits
    return "\n".join(lines) + "\n"
