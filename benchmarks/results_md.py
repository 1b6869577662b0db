"""results.md, the table every run writes: its rows (group, item, median, runs, target, result, vs baseline,
notes), the scale study, the machine and how each item is measured; and reading it back, for ``--keep`` (the rows
of the groups not run, each naming the run that measured it) and for the README's table."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.checkout import ROOT
from benchmarks.rows import Bench, Row

RESULTS = ROOT / "benchmarks" / "results.md"
#: How a row kept by --keep names the run that measured it (a kept row that cannot is dropped).
KEPT = re.compile(r"kept from the run of (\d{4}-\d\d-\d\d \d\d:\d\d) \(commit ([^;]+?), load average ([^)]+)\)$")


@dataclass
class RunInfo:
    """What results.md says of a run beside its rows: the machine (``machine.machine()``), when it started, how
    long it took, the load average before and after, each group's (wall, CPU, load as it started), a note on the
    run (``--note``), and the paragraphs of "How each item is measured" (the groups' ``how``)."""

    machine: list[tuple[str, str]]
    started: datetime.datetime
    load_before: str
    load_after: str
    wall: float
    group_seconds: dict[str, tuple[float, float, str]] = field(default_factory=dict)
    note: str = ""
    how: list[str] = field(default_factory=list)


def write_results(path: Path, b: Bench, run: RunInfo) -> None:
    lines = _head(b, run) + _table(b.rows)
    if b.scale_study:
        lines += [""] + b.scale_study
    lines += _machine(run) + ["", "## How each item is measured", ""] + run.how
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _head(b: Bench, run: RunInfo) -> list[str]:
    """The title and the paragraph on the run: when, how long, whether every row was measured in it."""
    kept = [r for r in b.rows if KEPT.search(r.note)]
    lines = [
        "# Benchmark results",
        "",
        f"Written by `benchmarks/bench.py`{' --quick' if b.quick else ''} on {run.started:%Y-%m-%d %H:%M} "
        f"(local time); the whole run took {run.wall:.0f} s. Medians over the runs shown; a ratio compares with a "
        "baseline measured in the same run. **MISS** marks a median beyond its target. "
        + (
            f"{len(kept)} of the {len(b.rows)} rows are kept from earlier runs (`--keep`); each names the commit, "
            "date and load average of the run that measured it."
            if kept
            else f"Every row was measured in this run, on commit {dict(run.machine).get('commit', '?')}."
        ),
        "",
    ]
    if run.note:
        lines += [f"Note on this run: {run.note}", ""]
    return lines


def _table(rows: list[Row]) -> list[str]:
    lines = [
        "| group | item | median | runs | target | result | vs baseline | notes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [
            r.group,
            r.item,
            r.median_text(),
            str(r.runs) if not r.status else "—",
            r.target or "—",
            r.result_text(),
            r.baseline or "—",
            r.note or "",
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return lines


def _machine(run: RunInfo) -> list[str]:
    """The Machine table (what ``read_machine`` reads back) and each group's time."""
    lines = ["", "## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in run.machine]
    return lines + [
        f"| date | {run.started:%Y-%m-%d %H:%M} |",
        f"| load average (1/5/15 min) | before {run.load_before}; after {run.load_after} |",
        "",
        "Time per group, wall (CPU of this process and the processes it waited for; the load average "
        "(1/5/15 min) as the group started): "
        + ", ".join(f"{g} {w:.0f} s ({c:.0f} s; load {ld})" for g, (w, c, ld) in run.group_seconds.items())
        + ".",
    ]


def read_rows(path: Path) -> list[Row]:
    """The rows of an existing results.md (as write_results writes them), medians kept as text."""
    rows = []
    for line in path.read_text(encoding="utf-8").split("\n## ")[0].splitlines():
        if not line.startswith("| ") or line.startswith(("| group", "|---")):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 8:
            continue
        group, item, med, runs, target, result, baseline, note = cells
        rows.append(
            Row(
                group=group,
                item=item,
                runs=int(runs) if runs.isdigit() else 0,
                target="" if target == "—" else target,
                ok=None if result == "—" else result == "pass",
                baseline="" if baseline == "—" else baseline,
                note=note,
                status=med if runs == "—" else "",
                text=med,
            )
        )
    return rows


def read_machine(path: Path) -> dict[str, str]:
    """The Machine table of an existing results.md: {"commit": …, "date": …, "load average (1/5/15 min)": …}."""
    text = path.read_text(encoding="utf-8")
    if "\n## Machine" not in text:
        return {}
    out = {}
    for line in text.split("\n## Machine", 1)[1].split("\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip().split("|")[1:-1]]
        if len(cells) == 2 and cells[0] and not cells[0].startswith("---"):
            out[cells[0]] = cells[1]
    return out


def keep_rows(path: Path, ran: set[str]) -> list[Row]:
    """The rows of the groups not run now, from the results at ``path``, each naming the run that measured it.

    A row measured in that run is marked with its commit, date and load; a row that was already kept
    keeps its mark; a row kept without one (an older results.md) is dropped, and so is every row when
    the run that wrote ``path`` cannot be told (no commit or date)."""
    prev = read_machine(path)
    commit, date, load = prev.get("commit"), prev.get("date"), prev.get("load average (1/5/15 min)", "?")
    out = []
    for r in read_rows(path):
        if r.group in ran:
            continue
        if KEPT.search(r.note):
            out.append(r)
        elif "kept from" in r.note or not commit or not date or commit == "?":
            print(f"  not kept (no commit and date of its run): {r.item}", flush=True)
        else:
            r.note = (
                r.note + "; " if r.note else ""
            ) + f"kept from the run of {date} (commit {commit}, load average {load})"
            out.append(r)
    return out
