"""README.md's "How fast" table: the headline figures of results.md, each with its target and pass or miss,
written between the README's two marker comments (``--readme``, and after every full run)."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.checkout import ROOT
from benchmarks.results_md import KEPT, RESULTS, read_machine, read_rows
from benchmarks.rows import Row

README = ROOT / "README.md"
README_BEGIN = "<!-- the table below is written by benchmarks/bench.py from benchmarks/results.md: do not edit it -->"
README_END = "<!-- end of the table from benchmarks/results.md -->"


def _row(rows: list[Row], prefix: str) -> Row | None:
    return next((r for r in rows if r.item.startswith(prefix)), None)


def _span(rows: list[Row]) -> str:
    """'0.1–1.4 ms' over measured rows of one unit (their medians as results.md writes them)."""
    vals = []
    for r in rows:
        m = re.fullmatch(r"([\d.]+) (\S+)", r.median_text())
        if m:
            vals.append((float(m.group(1)), m.group(2), m.group(1)))
    if not vals:
        return "—"
    lo, hi = min(vals), max(vals)
    return lo[2] + " " + lo[1] if lo[2] == hi[2] else f"{lo[2]}–{hi[2]} {hi[1]}"


def _result(rows: list[Row]) -> str:
    measured = [r for r in rows if r is not None and not r.status and r.ok is not None]
    if not measured:
        return "—"
    return "pass" if all(r.ok for r in measured) else "**MISS**"


def _baseline(r: Row) -> str:
    return f", {r.baseline}" if r.baseline else ""


class _Table:
    """The table as it is written: its lines, and the rows of results.md it shows (the line under it names
    their runs)."""

    def __init__(self, rows: list[Row]):
        self.rows = rows
        self.out = ["| what | measured | target | result |", "|---|---|---|---|"]
        self.used: list[Row] = []

    def line(self, what: str, measured: str, target: str, result: str) -> None:
        self.out.append(f"| {what} | {measured} | {target or '—'} | {result} |")

    def one(self, what: str, prefix: str, extra=lambda r: "") -> None:
        """A line showing the row whose item starts with ``prefix``, ``extra(row)`` after its median."""
        r = _row(self.rows, prefix)
        self.used.extend([r] if r is not None else [])
        if r is None:
            self.line(what, "not measured (no such row in results.md)", "", "—")
        elif r.status:
            self.line(what, r.status, r.target, "—")
        else:
            self.line(what, r.median_text() + extra(r), r.target, r.result_text())


def readme_table(rows: list[Row], info: dict[str, str]) -> list[str]:
    """The README's "How fast" table: the headline figures of results.md, each with its target and pass/miss."""
    t = _Table(rows)
    _training(t)
    _labs_and_notebooks(t)
    t.one("fresh kernel to the first lab", "fresh kernel to the first lab")
    _grading(t)
    return t.out + _runs(t.used, info)


def _training(t: _Table) -> None:
    epochs = _row(t.rows, "epochs to 100/100")
    t.one(
        "full training, 60 epochs",
        "full training, 60 epochs",
        lambda r: (
            f" (100/100 held out from epoch {epochs.median_text().split()[0]})"
            if epochs is not None and not epochs.status and epochs.median_text() != "—"
            else ""
        ),
    )
    t.one("one training step, batch 64", "training step, batch 64, default model (ours)", _baseline)
    t.one("reading all 1,000 numbers", "read all 1,000 numbers, batched", _baseline)
    t.one(
        "reading all 1,000 numbers, re-reading every row (no KV cache)",
        "read all 1,000 numbers, batched, re-",
        _baseline,
    )


def _labs_and_notebooks(t: _Table) -> None:
    """One line for all the labs (the span of their medians), one for all the notebooks."""
    rows = t.rows
    labs = [r for r in rows if r.group == "labs" and not r.status and r.median_text().endswith(" ms")]
    step = _row(rows, "decode_lab: Next step")
    if labs:
        t.line(
            "a lab's response to one change",
            _span(labs) + (f" (decode step {step.median_text()})" if step is not None and not step.status else ""),
            "≤ 50 ms (decode step ≤ 30 ms)",
            _result(labs),
        )
    else:
        t.line("a lab's response to one change", "not measured in this run", "≤ 50 ms", "—")
    fresh = [r for r in rows if r.group == "notebooks" and r.item.endswith("in a fresh kernel") and not r.status]
    graded = [r for r in rows if r.group == "notebooks" and r.item.endswith("under autograding") and not r.status]
    if fresh:
        t.line(
            "each notebook top to bottom",
            _span(fresh) + (f" (under autograding {_span(graded)})" if graded else ""),
            "≤ 30 s",
            _result(fresh + graded),
        )
    else:
        t.line("each notebook top to bottom", "not measured in this run", "≤ 30 s", "—")
    t.used += labs + fresh + graded


def _grading(t: _Table) -> None:
    """Autograding one submission (and the classes), Dask against JOBS=2, the grading service."""
    classes = "; ".join(
        f"{r.item}: {r.median_text()}"
        for r in t.rows
        if r.group == "autograde" and r.item.startswith("a class of ") and not r.status
    )
    t.one(
        "autograding one complete submission",
        "one complete submission (4 notebooks), JOBS=1, headless labs, warm",
        lambda r: (
            (
                f", {r.baseline}".replace(" than before", " than with fresh kernels").replace(
                    " than first", " than with fresh kernels and the labs built"
                )
                if r.baseline
                else ""
            )
            + (f"; {classes}" if classes else "")
        ),
    )
    t.one("Dask ÷ JOBS=2, students/min per worker core", "students/min per worker core")
    t.one("feedback after Submit, the grading service idle", "idle: one complete submission")
    t.one(
        "CPU per complete submission, the grading service",
        "CPU per complete submission, graded by the running",
        _baseline,
    )


def _runs(used: list[Row], info: dict[str, str]) -> list[str]:
    """The line under the table naming the run (or runs, rows kept by --keep) its figures come from."""
    this_run = (
        f"{info.get('date', '?')} (commit {info.get('commit', '?')}; load average "
        f"{info.get('load average (1/5/15 min)', '?')})"
    )
    runs = sorted(
        {f"{m[1]} (commit {m[2]}; load average {m[3]})" if (m := KEPT.search(r.note)) else this_run for r in used}
    )
    return [
        "",
        f"From the `make bench` run{'s' if len(runs) > 1 else ''} of {' and of '.join(runs)} (each row's run "
        "is named in `benchmarks/results.md`, which has every figure, how it was measured and on what machine).",
    ]


def update_readme(readme: Path = README, results: Path = RESULTS) -> bool:
    """Rewrite the README's table between its two markers from ``results``; True if it changed."""
    text = readme.read_text(encoding="utf-8")
    if README_BEGIN not in text or README_END not in text:
        raise ValueError(f"{readme} has no bench table markers ({README_BEGIN!r} … {README_END!r})")
    head, rest = text.split(README_BEGIN, 1)
    _, tail = rest.split(README_END, 1)
    table = "\n".join(readme_table(read_rows(results), read_machine(results)))
    new = f"{head}{README_BEGIN}\n{table}\n{README_END}{tail}"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text
