"""The programs that run inside the sandbox, as the text ``python -c`` is given.

No file of the grading package is visible in the sandbox, so a program cannot import ``limits``
there: its import (marked ``# sandbox: inlined`` on its first line; in brackets it may go on over
several lines) is replaced by ``limits.py``'s own text. The
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
    first = last = marked[0]
    if lines[first].rstrip().removesuffix(INLINED).rstrip().endswith("("):  # the import goes on to its closing bracket
        last = next(i for i in range(first, len(lines)) if lines[i].strip().startswith(")"))
    lines[first : last + 1] = [limits]
    return "\n".join(lines) + "\n"
