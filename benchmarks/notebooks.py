"""The ``notebooks`` and ``startup`` groups, both a notebook run with nbclient in a fresh kernel: each ``source/``
notebook top to bottom (and again under autograding), and notebook 01 up to its first lab on screen."""

from __future__ import annotations

import datetime
import re
import tempfile
import traceback
from pathlib import Path

from benchmarks.checkout import NOTEBOOKS, SOURCE
from benchmarks.figures import median
from benchmarks.rows import Bench, Group, Row


def run_notebook(nb, workdir: Path, autograde: bool = False, timeout: int = 120):
    """Run a notebook (nbformat node) top to bottom in a fresh kernel; (seconds, cell timings, executed nb)."""
    from whole_transformer.course.publish import notebook as kernel  # lazy: nbclient

    env = kernel.kernel_env(**({"NBGRADER_EXECUTION": "autograde"} if autograde else {}))
    log = workdir / "kernel-stderr.txt"  # the kernel's own warnings stay out of the bench's output
    with open(log, "w") as err:
        try:
            total = kernel.run_notebook(nb, workdir, timeout=timeout, env=env, stderr=err)
        except Exception as e:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            if tail:
                e.add_note("kernel stderr: " + " / ".join(tail))
            raise
    cells = []
    for i, cell in enumerate(nb.cells):
        ex = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type == "code" and "shell.execute_reply" in ex and "iopub.execute_input" in ex:
            dt = (_ts(ex["shell.execute_reply"]) - _ts(ex["iopub.execute_input"])).total_seconds()
            cells.append((dt, i, cell.source.strip().splitlines()[0][:40] if cell.source.strip() else ""))
    return total, sorted(cells, reverse=True), nb


def _ts(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _slowest(cells, n=2) -> str:
    return ", ".join(f"cell {i} `{src}` {dt:.1f} s" for dt, i, src in cells[:n])


def bench_notebooks(b: Bench) -> None:
    import nbformat  # lazy: only the notebook groups read notebooks

    for k, name in enumerate(NOTEBOOKS):
        path = SOURCE / name
        for autograde in (False, True):
            label = f"{name[:2]} {'under autograding' if autograde else 'in a fresh kernel'}"
            how = "NBGRADER_EXECUTION=autograde" if autograde else "fresh kernel"
            if b.quick and (k > 0 or autograde):
                b.add(
                    Row(
                        group="notebooks", item=label, status="skipped: --quick runs only notebook 01 in a fresh kernel"
                    )
                )
                continue
            seconds, slow_cells = [], []
            try:
                for _ in range(b.runs(3, 1)):
                    with tempfile.TemporaryDirectory(prefix="wt-bench-nb-") as tmp:
                        nb = nbformat.read(path, as_version=4)
                        total, cells, _ = run_notebook(nb, Path(tmp), autograde)
                    seconds.append(total)
                    slow_cells = cells
            except Exception as e:  # noqa: BLE001 - a notebook that fails is an error row; the others go on
                traceback.print_exc()
                first = str(e).strip().splitlines()
                why = next((ln for ln in reversed(first) if ln.strip()), type(e).__name__)[:160]
                b.add(Row(group="notebooks", item=label, status=f"error: {type(e).__name__}: {why}"))
                continue
            med = median(seconds)
            b.add(
                Row(
                    group="notebooks",
                    item=label,
                    value=med,
                    unit="s",
                    runs=len(seconds),
                    target="≤ 30 s",
                    ok=med <= 30.0,
                    note=f"{how}; kernel start included; slowest: {_slowest(slow_cells)}",
                )
            )


#: the call that shows a lab in a cell of a notebook
LAB_CALL = re.compile(r"\b(\w+_lab|block_picture)\s*\(")


def bench_startup(b: Bench) -> None:
    import nbformat  # lazy: only the notebook groups read notebooks

    path = SOURCE / NOTEBOOKS[0]
    nb = nbformat.read(path, as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    first_lab = next((i for i in code if LAB_CALL.search(nb.cells[i].source)), None)
    if first_lab is None:
        raise RuntimeError(f"{NOTEBOOKS[0]} has no cell that shows a lab")
    lab_source = nb.cells[first_lab].source.strip().splitlines()[0][:40]
    seconds = []
    for _ in range(b.runs(3, 1)):
        part = nbformat.read(path, as_version=4)
        part.cells = part.cells[: first_lab + 1]
        with tempfile.TemporaryDirectory(prefix="wt-bench-start-") as tmp:
            total, cells, done = run_notebook(part, Path(tmp))
        outputs = done.cells[first_lab].get("outputs", [])
        if not any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs):
            raise RuntimeError(f"cell {first_lab} (`{lab_source}`) displayed no widget")
        seconds.append(total)
    with tempfile.TemporaryDirectory(prefix="wt-bench-start-") as tmp:  # a kernel that runs nothing, to compare
        empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")], metadata=part.metadata)
        bare = run_notebook(empty, Path(tmp))[0]
    med = median(seconds)
    b.add(
        Row(
            group="startup",
            item=f"fresh kernel to the first lab on screen ({NOTEBOOKS[0][:2]}: `{lab_source}`)",
            value=med,
            unit="s",
            runs=len(seconds),
            target="≤ 3 s",
            ok=med <= 3.0,
            note=f"kernel start + the cells before it + the lab's widget displayed (the browser's drawing is not "
            f"included); a bare kernel takes {bare:.2f} s; slowest: {_slowest(cells)}",
        )
    )


NOTEBOOKS_GROUP = Group(
    "notebooks",
    "each notebook top to bottom (fresh kernel; under autograding)",
    bench_notebooks,
    how="- **notebooks**: each `source/` notebook (solutions in) is run with nbclient top to bottom in a fresh "
    "kernel in a temporary folder, kernel start included; then again with `NBGRADER_EXECUTION=autograde` in "
    "the kernel's environment.",
)
STARTUP_GROUP = Group(
    "startup",
    "start-up: fresh kernel to the first lab on screen",
    bench_startup,
    how="- **start-up**: notebook 01 up to and including its first cell that shows a lab, run in a fresh kernel "
    "(kernel start, imports, the lab's widget displayed); the browser's drawing is not included.",
)
