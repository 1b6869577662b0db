"""The scale study under results.md's table: the expected wall time of grading 1,000 and 10,000 students on 8, 32
and 128 worker cores, from the figures this run measured only (the autograde and scale groups' ``Bench.facts``),
and the assumptions each estimate rests on."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.figures import kb


@dataclass(frozen=True)
class _Costs:
    """What one student costs, in seconds, as measured in this run."""

    grade: float  # its grading alone, wall
    cpu: float  # its CPU, all processes
    task: float  # Dask's overhead per task
    merge_sq: float  # a merge into SQLite, wall
    merge_pg: float | None  # a merge into PostgreSQL, wall (None: not measured)
    merge_cpu: float  # the CPU of a merge (PostgreSQL's if measured, else SQLite's)

    @classmethod
    def of(cls, f: dict, grade: float) -> _Costs:
        return cls(
            grade=grade,
            cpu=f.get("submission_cpu_s", grade),
            task=f.get("dask_task_s", 0.0),
            merge_sq=f.get("merge_sqlite_s", 0.0),
            merge_pg=f.get("merge_pg_s"),
            merge_cpu=f.get("merge_pg_cpu_s", f.get("merge_sqlite_cpu_s", 0.0)),
        )


def scale_study(f: dict, load: str = "?") -> list[str]:
    """Expected wall time for big classes, from the figures measured in this run."""
    grade = f.get("submission_grade_s")
    if grade is None:
        return ["## Scale study", "", "(the autograde group did not run: no per-submission time to build it on)"]
    c = _Costs.of(f, grade)
    return ["## Scale study", "", _measured(f, load, c), "", *_estimates(c), "", *_assumptions(f, c)]


def _measured(f: dict, load: str, c: _Costs) -> str:
    """The paragraph of the figures the study is built from."""
    ratio = f.get("dask_vs_jobs")
    return (
        f"Measured in this run (load average {load}): one complete submission takes "
        + (
            f"**{f['submission_s']:.1f} s** of wall time for the whole `autograde` command, "
            if "submission_s" in f
            else ""
        )
        + f"**{c.grade:.1f} s** for its grading alone (restore, scan, "
        f"nbgrader with 4 sandboxed kernels), and **{c.cpu:.1f} s of CPU** "
        + (
            f"per student in a class (all processes: the machine's CPU while the class of {f['cpu_of_class']} was "
            f"graded with JOBS=2, ÷ {f['cpu_of_class']})"
            if f.get("cpu_of_class")
            else "(the machine's, while it was graded)"
        )
        + "; Dask adds "
        f"**{1000 * c.task:.0f} ms** per task (submit to result, the files travelling with it); merging one student "
        f"takes **{1000 * c.merge_sq:.0f} ms** into SQLite"
        + (f" and **{1000 * c.merge_pg:.0f} ms** into PostgreSQL" if c.merge_pg is not None else "")
        + f" ({1000 * c.merge_cpu:.0f} ms of CPU)"
        + (f"; per core, 2 Dask workers grade at {ratio:.2f}× the rate of JOBS=2." if ratio else ".")
    )


def _estimates(c: _Costs) -> list[str]:
    """The rule, and its table: each class size estimated from CPU seconds and from wall seconds."""
    lines = [
        "Expected wall time = max(students × (grading + task overhead) ÷ worker cores, students × merge time) "
        "+ 1 min to start. Two estimates: from CPU seconds (a dedicated core per task slot: what a grading "
        "machine of its own would see) and from the wall seconds measured here (this machine was shared):",
        "",
        "| students | estimate | 8 worker cores | 32 worker cores | 128 worker cores |",
        "|---|---|---|---|---|",
    ]

    def fmt(seconds: float) -> str:
        return f"{seconds / 60:.0f} min" if seconds < 3600 else f"{seconds / 3600:.1f} h"

    for n in (1_000, 10_000):
        for label, per, merge in (
            ("from CPU s", c.cpu + c.task, c.merge_cpu),
            ("from wall s", c.grade + c.task, c.merge_pg if c.merge_pg is not None else c.merge_sq),
        ):
            cells = []
            for cores in (8, 32, 128):
                grading, merging = n * per / cores, n * merge
                cells.append(fmt(max(grading, merging) + 60) + (" (merge-bound)" if merging > grading else ""))
            lines.append(f"| {n:,} | {label} | " + " | ".join(cells) + " |")
    return lines


def _wire(f: dict, c: _Costs) -> str:
    """What a task carries and returns, and what the autograde machine writes per student."""
    rate_128 = min(128 / (c.cpu + c.task), 1 / c.merge_cpu if c.merge_cpu else float("inf"))  # students a second
    written = f.get("written_bytes")
    if "job_bytes" in f:
        wire = (
            f"a task carries the student's files ({kb(f['job_bytes'])} for the complete submission measured "
            f"here) and the assignment ({kb(f['pack_bytes'])}: its release and a SQLite gradebook that knows "
            f"it), and returns the graded notebooks with the scores ({kb(f['result_bytes'])}), all as pickled "
            f"for the wire; at 1 Gbit/s that is "
            f"{8 * (f['job_bytes'] + f['pack_bytes'] + f['result_bytes']) / 1e6:.0f} ms per task"
        )
    else:
        wire = "a task carries the student's files and the assignment, and returns the graded notebooks"
    if written is not None:
        wire += (
            f". The autograde machine writes {kb(written)} per student (the growth of the course folder over "
            f"the merges measured above: graded notebooks, record, gradebook rows): at 128 cores, "
            f"{rate_128:.1f} students a second, {rate_128 * written / 1e6:.1f} MB/s"
        )
    return wire


def _assumptions(f: dict, c: _Costs) -> list[str]:
    bound = (c.cpu + c.task) / c.merge_cpu if c.merge_cpu else float("inf")
    return [
        "Assumptions each figure rests on:",
        "",
        "- one task slot per worker core, each busy all the time (a class of thousands keeps every slot fed; the "
        "last wave of tasks is short beside the whole); worker cores as fast as this machine's;",
        "- every submission like the complete one measured here (a partial or missing notebook is cheaper; a "
        "student who waits out a 30 s cell limit costs more: those are few);",
        f"- the merge, one student at a time in the `make autograde` process, keeps up while it is faster than "
        f"the graders: up to about {bound:.0f} worker cores at {1000 * c.merge_cpu:.0f} ms of CPU per merge; beyond "
        "that the run is merge-bound, and two or more `make autograde` runs on one PostgreSQL gradebook share the "
        "class and merge in parallel;",
        f"- no shared file system: {_wire(f, c)};",
        "- the Dask scheduler handles thousands of tasks a second; here at most one task per slot is in flight.",
    ]
