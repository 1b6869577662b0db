"""How fast the course is for the people who use it; writes benchmarks/results.md.

Run ``make bench`` (or ``.venv/bin/python benchmarks/bench.py``). Every item is measured several
times on this machine and its median is compared with its target; where the target is a
ratio, the baseline is measured in the same run, interleaved with the thing it is compared to.

    group        what a user waits for
    train-step   one training step, batch 64, the default model; the same model in x-transformers
    train-60     the full 60-epoch training run (as the notebooks and the CLI call it); first epoch at 100/100
    read-1000    reading all 1,000 numbers greedily: batched (read_numbers) vs one at a time (greedy_decode_slow),
                 and batched with the KV cache vs re-reading every row
    labs         one change of each lab from Python (a slider, a step, a button, a typed value)
    notebooks    each source notebook top to bottom in a fresh kernel, and with NBGRADER_EXECUTION=autograde
    autograde    one complete submission three ways; a simulated class (--class-size, default 25) with
                 --jobs 2 and on 2 Dask workers (in a temp copy)
    scale        merging one graded student (SQLite, PostgreSQL), Dask's per-task overhead, the scale study
    startup      a fresh kernel to the first lab of notebook 01 displayed, imports included
    service      grading on submission (serve): idle submit → feedback; CPU per submission vs autograde
                 --jobs 1; a burst of 30 in one minute on 2 local and 2 Dask workers

An item this machine cannot run (PostgreSQL not installed) appears as a "not available: <why>" row.
An item that crashes appears as "error: ..." (and the script exits 1 after writing the table).

Options: ``--quick`` (one run per item, the smallest workloads; only notebook 01 is run, one
submission is autograded once the default way, a class of 2 once each way, and one student is
merged into each gradebook), ``--only GROUP ...``, ``--skip GROUP ...``, ``--class-size N``,
``--out PATH`` (default benchmarks/results.md), ``--list``, ``--readme`` (only rewrite the README's
"How fast" table from results.md). A default run spends most of its time autograding (one
submission three ways, then the class twice each way); ``--quick`` takes about three minutes on a
quiet 2-core machine. The end of results.md gives each group's wall and CPU seconds and the
machine's load average, so a run on a busy machine can be told from a slow one.

A full run writes results.md whole and then the README's "How fast" table from it. With
``--only`` and ``--keep``, the rows of the groups not run are kept, each marked with the commit,
date and load average of the run that measured it; a row that cannot say so is dropped.

This file is the entry point; the groups, results.md and the README's table are the modules of the
``benchmarks`` package beside it (their map: benchmarks/__init__.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script, Python puts this folder first on sys.path, where the package's modules would stand as
# top-level modules (``labs``, ``machine``, ...): the checkout takes its place, and they are ``benchmarks.*``.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from benchmarks.cli import main  # noqa: E402 - importable only once the checkout is on sys.path

if __name__ == "__main__":
    sys.exit(main(description=__doc__.split("\n\n")[0]))
