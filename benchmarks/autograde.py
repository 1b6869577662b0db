"""The ``autograde`` group: ``python -m whole_transformer.course autograde`` in a temporary course built from
``source/``: one complete submission three ways (as first built, headless labs, warm kernels), and a class of
the simulated class's ordinary students with ``--jobs 2`` and on 2 Dask workers, taking turns."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from benchmarks.checkout import NOTEBOOKS, class_generator, course_cli, released_copy
from benchmarks.figures import faster, median
from benchmarks.machine import machine_busy
from benchmarks.rows import Bench, Group, Row
from whole_transformer.course.autograder.store import load_result
from whole_transformer.course.layout import Course


def bench_autograde(b: Bench) -> None:
    """--quick: the one submission once, the default way only (warm kernels); the class once each way."""
    _, Notebooks, write_submission, roster = class_generator()
    with tempfile.TemporaryDirectory(prefix="wt-bench-course-") as tmp:
        # a copy of the course built from source/ in a temp folder; nothing of the repository is written
        base = released_copy(Path(tmp) / "base")
        _bench_one_submission(b, Path(tmp), base, Notebooks(base), write_submission)
        took_way, cpu_class, who, slowest = _grade_the_class(b, Path(tmp), base, Notebooks, roster, write_submission)
        _class_rows(b, took_way, cpu_class, who, slowest)


#: the ways one submission is graded, taking turns: mode → (its label, the lines added to nbgrader_config.py)
ONE_SUBMISSION_MODES = {
    "built": (
        "labs built, fresh kernels (first)",
        "c.SandboxExecute.headless_labs = False\nc.SandboxExecute.warm_kernels = False\n",
    ),
    "headless": ("headless labs, fresh kernels (before)", "c.SandboxExecute.warm_kernels = False\n"),
    "warm": ("headless labs, warm kernels (after)", ""),
}


def _bench_one_submission(b: Bench, tmp: Path, base: Path, nbs, write_submission) -> None:
    """The same submission three ways, taking turns: as first built (the labs build their widgets and train while
    graded; every kernel started afresh, importing torch), headless labs, and headless labs with the kernels forked
    from one warm fork server (the default); the scores must agree."""
    modes = {"warm": ONE_SUBMISSION_MODES["warm"]} if b.quick else ONE_SUBMISSION_MODES
    courses = {}
    for mode, (_, config) in modes.items():
        one = tmp / f"one-{mode}"
        shutil.copytree(base, one, symlinks=True)
        with open(one / "nbgrader_config.py", "a") as f:
            f.write(config)
        write_submission(one, "full", {n: nbs.solved(n) for n in nbs.names})
        courses[mode] = one
    took: dict[str, list[float]] = {m: [] for m in courses}
    cpu: dict[str, list[float]] = {m: [] for m in courses}
    scores = {}
    for r in range(b.runs(3, 1)):
        for mode, one in courses.items():
            c0 = machine_busy()
            dt, out = course_cli(one, "autograde", "--jobs", "1", *(["--force"] if r else []))
            took[mode].append(dt)
            cpu[mode].append(machine_busy() - c0)
            scores[mode] = _score(out, "full")
    grading = {mode: load_result(Course(one), "full").seconds for mode, one in courses.items()}
    b.facts["submission_s"] = median(took["warm"])
    b.facts["submission_grade_s"] = grading["warm"]
    for mode, (label, config) in modes.items():
        if scores[mode] == "?":
            raise RuntimeError(f"autograde printed no score for the complete submission ({label})")
        same = "" if scores[mode] == scores.get("built", scores[mode]) else " — **differs from the first way**"
        b.add(
            _one_submission_row(
                mode,
                label,
                took,
                note=f"`python -m whole_transformer.course autograde` in a temp course, sandboxed, process start "
                f"and the assignment's preparation included; {config.strip() or 'the default config'}; grading "
                f"alone {grading[mode]:.1f} s; machine CPU {median(cpu[mode]):.1f} s; "
                f"scored {scores[mode]}{same}",
            )
        )


def _score(out: str, student: str) -> str:
    """The 'score / max' the autograde summary prints for a student."""
    m = re.search(rf"^{re.escape(student)}\s+([\d.]+)\s*/\s*([\d.]+)", out, re.M)
    return f"{m.group(1)}/{m.group(2)}" if m else "?"


def _one_submission_row(mode: str, label: str, took: dict[str, list[float]], note: str) -> Row:
    """One way's row: its median, the 8 s target of the default way, how much faster than the others it is."""
    t = median(took[mode])
    first, before = (median(took[m]) if m in took else None for m in ("built", "headless"))
    target = "≤ 8 s" if mode == "warm" else ""
    if mode == "headless":
        vs = faster(first / t) + " than first"
    elif mode == "warm" and first is not None:
        vs = faster(before / t) + " than before, " + faster(first / t) + " than first"
    else:
        vs = ""
    return Row(
        group="autograde",
        item=f"one complete submission ({len(NOTEBOOKS)} notebooks), JOBS=1, {label}",
        value=t,
        unit="s",
        runs=len(took[mode]),
        target=target,
        ok=(t <= 8.0) if target else None,
        baseline=vs,
        note=note,
    )


#: the two ways a class is graded on the same 2 cores: (label, autograde's arguments; None: 2 Dask workers)
CLASS_WAYS = [("JOBS=2", ["--jobs", "2"]), ("2 Dask workers", None)]


def _grade_the_class(b: Bench, tmp: Path, base: Path, Notebooks, roster, write_submission):
    """JOBS=2 and 2 Dask workers: the same class on the same 2 cores (JOBS=1 is the one-submission row × N),
    taking turns, so that a machine whose speed drifts weighs on both alike. Returns each way's times, the CPU
    one student costs with JOBS=2, who the class is, and each way's slowest students (last run)."""
    from whole_transformer.course.autograder.cluster import local_cluster  # lazy: dask

    took_way: dict[str, list[float]] = {label: [] for label, _ in CLASS_WAYS}
    cpu_class, who, slowest = [], "", {}
    for r in range(b.runs(2, 1)):
        for label, args in CLASS_WAYS:
            run_dir = tmp / f"class-{label.split()[0]}-{r}"
            shutil.copytree(base, run_dir, symlinks=True)
            who = _typical_class(run_dir, b.class_size, Notebooks, roster, write_submission)
            busy = machine_busy()
            if args is None:
                with local_cluster(2) as cluster:
                    dt, out = course_cli(run_dir, "autograde", "--scheduler", cluster.scheduler_address)
            else:
                dt, out = course_cli(run_dir, "autograde", *args)
                cpu_class.append((machine_busy() - busy) / b.class_size)
            took_way[label].append(dt)
            c = Course(run_dir)
            graded = sum(1 for s in c.students() if load_result(c, s) is not None)
            if graded != b.class_size:
                raise RuntimeError(f"{label}: {graded} of the class of {b.class_size} were graded")
            slowest[label] = _slowest_students(run_dir)
            shutil.rmtree(run_dir, ignore_errors=True)
    return took_way, cpu_class, who, slowest


def _typical_class(run_dir: Path, size: int, Notebooks, roster, write_submission) -> str:
    students = roster(Notebooks(run_dir), run_dir)
    # A typical class: the roster's ordinary students (complete, untouched, partial, and every
    # correct and wrong implementation of each exercise), repeated under new ids up to the class
    # size. The hostile students (endless loops waiting out the 30 s cell limit, crashes) are the
    # test suite's business.
    typical = [s for s in students if s.name.startswith(("full", "release", "partial", "impl-"))]
    chosen = [
        (f"{s.name}-{i}" if i >= len(typical) else s.name, s)
        for i, s in ((i, typical[i % len(typical)]) for i in range(size))
    ]
    for name, s in chosen:
        write_submission(run_dir, name, s.notebooks, raw=s.raw, folder=s.folder)
    return (
        f"{len(chosen)} ordinary submissions ({len(typical)} distinct, from tests/simclass/students.py: "
        "complete, untouched, partial, each correct and wrong implementation)"
    )


def _slowest_students(course: Path, n: int = 4) -> str:
    """The students whose grading took longest, from the results autograde keeps (each one's result.json)."""
    c = Course(course)
    took = [(rec.seconds, s) for s in c.students() if (rec := load_result(c, s)) is not None]
    return ", ".join(f"{name} {sec:.0f} s" for sec, name in sorted(took, reverse=True)[:n]) or "?"


def _class_rows(b: Bench, took_way: dict[str, list[float]], cpu_class: list[float], who: str, slowest: dict) -> None:
    """A row for each way of grading the class (medians of the rounds), and one for their rates per core."""
    # the CPU one student costs in a class (process start and preparation shared by all)
    b.facts["submission_cpu_s"] = median(cpu_class)
    b.facts["cpu_of_class"] = b.class_size
    for label, _ in CLASS_WAYS:
        dt = median(took_way[label])
        rate = 60 * b.class_size / dt / 2
        speed = "" if label == "JOBS=2" else f"{faster(median(took_way['JOBS=2']) / dt)} than JOBS=2"
        b.add(
            Row(
                group="autograde",
                item=f"a class of {b.class_size}, {label}",
                value=dt,
                unit="s",
                runs=len(took_way[label]),
                baseline=speed,
                note=f"{who}; {dt / b.class_size:.1f} s per student; {rate:.2f} students/min per worker "
                f"core; each run {', '.join(f'{t:.0f} s' for t in took_way[label])}; slowest (last run): "
                f"{slowest[label]}",
            )
        )
        b.facts[f"rate {label}"] = rate
    ratio = b.facts["rate 2 Dask workers"] / b.facts["rate JOBS=2"]
    b.facts["dask_vs_jobs"] = ratio
    b.add(
        Row(
            group="autograde",
            item="students/min per worker core: 2 Dask workers ÷ JOBS=2",
            value=ratio,
            unit="×",
            runs=len(took_way["JOBS=2"]),
            target="≥ 0.9",
            ok=ratio >= 0.9,
            note=f"{b.facts['rate 2 Dask workers']:.2f} vs {b.facts['rate JOBS=2']:.2f} students/min per core "
            "(the same class, the two ways taking turns, medians; `make workers`' cluster: 2 worker "
            "processes, one task slot each)",
        )
    )


GROUP = Group(
    "autograde",
    "autograde: one submission (first, before, after); a class: JOBS=2 vs 2 Dask workers",
    bench_autograde,
    how="- **autograde**: `python -m whole_transformer.course autograde --jobs N` in a temporary copy of the "
    "course, on one complete submission and on the simulated class of the test suite; see the notes.",
)
