"""The ``scale`` group: what grading a large class rests on, measured on one complete submission graded in this
process: merging it into SQLite and into PostgreSQL (a throwaway server), Dask's per-task overhead, what a task
carries and returns (pickled) and what the course folder grows by per merged student; then the scale study
(scale_study.py) from those figures."""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.checkout import class_generator, released, released_copy, tests_importable
from benchmarks.figures import kb, median, ms, p90
from benchmarks.machine import loadavg, machine_busy
from benchmarks.rows import Bench, Group, Row
from benchmarks.scale_study import scale_study
from whole_transformer.course.layout import Course


def bench_scale(b: Bench) -> None:
    """--quick: one merge into each gradebook, five Dask tasks; the scale study from those."""
    with tempfile.TemporaryDirectory(prefix="wt-bench-scale-") as tmp:
        rig = _ScaleRig.graded(b, Path(tmp))
        # what travels with a Dask task, as pickled for the wire: the student's files, the assignment, the result
        b.facts["job_bytes"] = len(pickle.dumps(rig.submission))
        b.facts["pack_bytes"] = len(pickle.dumps(rig.assignment))
        b.facts["result_bytes"] = len(pickle.dumps(rig.result))
        _bench_merge_sqlite(b, rig)
        _bench_merge_postgres(b, rig)
        _bench_dask_task(b, rig)
    b.scale_study = scale_study(b.facts, loadavg())


@dataclass
class _ScaleRig:
    """A course with one complete submission graded once in this process (``result``), to merge again and again as
    other students (``merges``), and what a Dask task of it carries (``submission``, ``assignment``)."""

    tmp: Path
    base: Path
    course: Course
    work: Path
    assignment: Any
    submission: Any
    result: Any
    n: int  # merges per gradebook
    cpu_of: dict[str, float]  # the median CPU of a merge, per gradebook

    @classmethod
    def graded(cls, b: Bench, tmp: Path) -> _ScaleRig:
        """The course built and the submission graded; a row for that grading if the autograde group did not run."""
        _, Notebooks, write_submission, _ = class_generator()
        # lazy: nbgrader, sqlalchemy and the grading code, for this group only
        from whole_transformer.course.autograder.assignment import prepare
        from whole_transformer.course.autograder.grade import grade
        from whole_transformer.course.autograder.submission import Submission
        from whole_transformer.course.sandbox.bubblewrap import check_sandbox

        base = released_copy(tmp / "base")
        nbs = Notebooks(base)
        write_submission(base, "full", {n: nbs.solved(n) for n in nbs.names})
        course = Course(base)
        work = tmp / "work"
        assignment = prepare(course, work, log=lambda *a: None)
        submission = Submission.from_folder(course, "full")
        c0 = machine_busy()
        result = grade(assignment, submission, threads=1, sandbox=check_sandbox(False), work=work)
        if "submission_grade_s" not in b.facts:  # the autograde group did not run: this grading stands in
            b.facts["submission_grade_s"] = result.seconds
            b.facts["submission_cpu_s"] = machine_busy() - c0
            b.add(
                Row(
                    group="scale",
                    item="grading one complete submission (for the scale study)",
                    value=result.seconds,
                    unit="s",
                    runs=1,
                    note=f"grade() in this process (restore, scan, nbgrader with 4 sandboxed kernels; "
                    f"no process start, no preparation), headless labs; CPU {b.facts['submission_cpu_s']:.1f} s",
                )
            )
        return cls(tmp, base, course, work, assignment, submission, result, b.runs(30, 1), {})

    def merges(self, c: Course, label: str) -> list[float]:
        """The wall time of each of ``n`` merges of the graded student into ``c``'s gradebook, a new student each."""
        # lazy: nbgrader and sqlalchemy
        from whole_transformer.course.autograder.store import merge
        from whole_transformer.course.gradebook import open_gradebook

        times, cpu = [], []
        with open_gradebook(c) as gb:
            for i in range(self.n):
                self.result.student = f"student-{i:04d}"
                t, c0 = time.perf_counter(), time.process_time()
                merge(c, self.result, self.assignment, self.submission.handed_in_at, gb, self.work / "staging")
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c0)
        self.cpu_of[label] = median(cpu)
        return times


def _bench_merge_sqlite(b: Bench, rig: _ScaleRig) -> None:
    before = _folder_bytes(rig.base)
    sq = rig.merges(rig.course, "sqlite")
    b.facts["written_bytes"] = (_folder_bytes(rig.base) - before) / rig.n  # graded notebooks, result, gradebook rows
    b.facts["merge_sqlite_s"] = median(sq)
    b.facts["merge_sqlite_cpu_s"] = rig.cpu_of["sqlite"]
    b.add(
        Row(
            group="scale",
            item="merge one graded student into SQLite (gradebook.db)",
            value=ms(median(sq)),
            unit="ms",
            runs=len(sq),
            note="grades and comments of 4 notebooks, the graded notebooks and result.json renamed into "
            f"autograde/; one open gradebook, a new student each time; p90 {ms(p90(sq)):.0f} ms; "
            f"CPU {ms(rig.cpu_of['sqlite']):.0f} ms",
        )
    )


def _bench_merge_postgres(b: Bench, rig: _ScaleRig) -> None:
    tests_importable()
    # lazy: tests/ is importable only now; nbgrader and sqlalchemy
    from simclass.pgcluster import PostgresCluster, server_bin

    from whole_transformer.course.autograder.assignment import prepare

    item = "merge one graded student into PostgreSQL"
    if server_bin() is None:
        b.add(
            Row(
                group="scale",
                item=item,
                status="not available: PostgreSQL is not installed (apt-get install postgresql)",
            )
        )
        return
    with PostgresCluster.start(server_bin()) as pg:
        pgc = rig.tmp / "pg"
        shutil.copytree(rig.base, pgc, symlinks=True)
        (pgc / "gradebook.db").unlink()
        os.environ["DB_URL"] = pg.create_database("bench")
        try:
            c = Course(pgc)
            released(pgc)
            prepare(c, rig.tmp / "work-pg", log=lambda *a: None)
            times = rig.merges(c, "pg")
        finally:
            os.environ.pop("DB_URL", None)
    b.facts["merge_pg_s"] = median(times)
    b.facts["merge_pg_cpu_s"] = rig.cpu_of["pg"]
    b.add(
        Row(
            group="scale",
            item=item,
            value=ms(median(times)),
            unit="ms",
            runs=len(times),
            note="the same, into a local PostgreSQL server over its Unix socket (fsync off: a "
            f"throwaway cluster); p90 {ms(p90(times)):.0f} ms; "
            f"CPU of this process {ms(rig.cpu_of['pg']):.0f} ms",
        )
    )


def _bench_dask_task(b: Bench, rig: _ScaleRig) -> None:
    # lazy: dask
    from distributed import Client

    from whole_transformer.course.autograder.cluster import local_cluster

    def noop(submission, assignment):  # local, as it always was: it travels to the workers by value
        return len(submission.files) + len(assignment.gradebook)

    with local_cluster(2) as cluster, Client(cluster.scheduler_address) as client:
        client.submit(noop, rig.submission, rig.assignment, pure=False).result()  # warm up
        lat = []
        for _ in range(b.runs(100, 5)):
            t = time.perf_counter()
            client.submit(noop, rig.submission, rig.assignment, pure=False).result()
            lat.append(time.perf_counter() - t)
    b.facts["dask_task_s"] = median(lat)
    payload = b.facts["job_bytes"] + b.facts["pack_bytes"]
    b.add(
        Row(
            group="scale",
            item="Dask per-task overhead (submit → result, one task at a time)",
            value=ms(median(lat)),
            unit="ms",
            runs=len(lat),
            note=f"a task that does nothing with a real student's Submission and the Assignment "
            f"({kb(payload)} pickled) on `make workers`' local cluster; p90 {ms(p90(lat)):.0f} ms",
        )
    )


def _folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (what a merge writes shows as their growth)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


GROUP = Group(
    "scale",
    "scale: merging one student (SQLite, PostgreSQL); Dask's per-task overhead; the scale study",
    bench_scale,
)
