"""The ``notebooks`` and ``startup`` groups, both a notebook run with nbclient in a fresh kernel: each ``source/``
notebook top to bottom (and again under autograding, its graded test cells judged by the grader's verdict), and
notebook 01 up to its first lab on screen."""

from __future__ import annotations

import datetime
import re
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path

from benchmarks.checkout import NOTEBOOKS, ROOT, SOURCE
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


@dataclass(frozen=True)
class Graded:
    """The graded test cells of one run under autograding, judged as the grader judges them."""

    cells: dict[str, bool]  # grade_id → passed
    exercises: list[str]  # the exercises graded (functions a student writes), in the notebook's order
    failed: dict[str, str]  # grade_id → what the grader said

    def note(self) -> str:
        if not self.cells:
            return "no graded test cell"
        passed = sum(self.cells.values())
        said = f"{len(self.cells)} graded test cells judged as the grader judges them, {passed} passed"
        return said + (f" (exercises graded: {', '.join(self.exercises)})" if self.exercises else "")


def judge(nb, held: dict[str, dict]) -> Graded:
    """Each graded test cell of a notebook run under autograding (``nb`` with its outputs), judged by the grader's
    own verdict (``plugins/verdict.judge_notebook``) on the results its hidden test handed out, with its points and
    the course's partial credit; a solution that calls what it should build is refused there too."""
    from whole_transformer.course.answers.diagnose import partial_credit_settings  # lazy: the grader's side
    from whole_transformer.course.cells import grade_id  # lazy: as above
    from whole_transformer.course.core.verdict import Outcome  # lazy: as above
    from whole_transformer.course.plugins.verdict import judge_notebook  # lazy: as above

    verdicts = judge_notebook(nb, held, partial_credit_settings(ROOT))
    by_id = {grade_id(c): c for c in nb.cells if grade_id(c)}
    cells, failed, exercises = {}, {}, []
    for gid, expected in held.items():
        verdict = verdicts.get(gid)
        cells[gid] = verdict is not None and verdict.outcome == Outcome.RIGHT
        if not cells[gid]:
            outputs = by_id[gid].outputs
            failed[gid] = next((str(o.get("evalue", "")) for o in outputs if o.get("output_type") == "error"), "")
        if not expected.get("question"):
            exercises.append(expected["name"])
    return Graded(cells, exercises, failed)


def notebook_row(b: Bench, name: str, autograde: bool) -> Row:
    """One notebook of source/ run top to bottom in a fresh kernel (``b.runs(3, 1)`` times; the median), or under
    autograding: NBGRADER_EXECUTION=autograde, the expected values held out, and every graded test cell then
    judged by the grader's verdict. A cell that fails, or a graded cell not passed, makes an error row."""
    import nbformat  # lazy: only the notebook groups read notebooks

    from whole_transformer.course.plugins.verdict import hold_expected  # lazy: the grader's side (nbgrader)

    label = f"{name[:2]} {'under autograding' if autograde else 'in a fresh kernel'}"
    how = "NBGRADER_EXECUTION=autograde" if autograde else "fresh kernel"
    seconds, slow_cells, graded = [], [], None
    try:
        for _ in range(b.runs(3, 1)):
            with tempfile.TemporaryDirectory(prefix="wt-bench-nb-") as tmp:
                nb = nbformat.read(SOURCE / name, as_version=4)
                held = hold_expected(nb) if autograde else {}  # as the grader holds them
                total, cells, done = run_notebook(nb, Path(tmp), autograde)
            if autograde:
                graded = judge(done, held)
                if graded.failed:
                    gid, said = next(iter(graded.failed.items()))
                    raise RuntimeError(f"{len(graded.failed)} graded test cell(s) not passed; {gid}: {said[:100]}")
            seconds.append(total)
            slow_cells = cells
    except Exception as e:  # noqa: BLE001 - a notebook that fails is an error row; the others go on
        traceback.print_exc()
        first = str(e).strip().splitlines()
        why = next((ln for ln in reversed(first) if ln.strip()), type(e).__name__)[:160]
        return b.add(Row(group="notebooks", item=label, status=f"error: {type(e).__name__}: {why}"))
    med = median(seconds)
    grading = f"; {graded.note()}" if graded is not None else ""
    return b.add(
        Row(
            group="notebooks",
            item=label,
            value=med,
            unit="s",
            runs=len(seconds),
            target="≤ 30 s",
            ok=med <= 30.0,
            note=f"{how}; kernel start included{grading}; slowest: {_slowest(slow_cells)}",
        )
    )


def bench_notebooks(b: Bench) -> None:
    for k, name in enumerate(NOTEBOOKS):
        for autograde in (False, True):
            if b.quick and (k > 0 or autograde):
                label = f"{name[:2]} {'under autograding' if autograde else 'in a fresh kernel'}"
                b.add(
                    Row(
                        group="notebooks", item=label, status="skipped: --quick runs only notebook 01 in a fresh kernel"
                    )
                )
                continue
            notebook_row(b, name, autograde)


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
    "the kernel's environment, the expected values held out of the kernel as the grader holds them, and every "
    "graded test cell then judged by the grader's verdict (its points, the course's partial credit); the row "
    "names the exercises graded, and a graded cell not passed makes it an error row.",
)
STARTUP_GROUP = Group(
    "startup",
    "start-up: fresh kernel to the first lab on screen",
    bench_startup,
    how="- **start-up**: notebook 01 up to and including its first cell that shows a lab, run in a fresh kernel "
    "(kernel start, imports, the lab's widget displayed); the browser's drawing is not included.",
)
