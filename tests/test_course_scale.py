"""Autograding at scale: a Dask cluster, a PostgreSQL gradebook, and the same grades.

- One small simulated class of the real notebooks (complete, partial, a crash in a hidden test, an invalid
  notebook, a renamed one, an edited test cell, an empty folder), graded by local graders into SQLite (these
  students of the simulated class, graded once per run) and again by a local Dask cluster of 2 worker processes
  into a PostgreSQL gradebook. ``grades-detail.csv`` is the same row for row, and the points are the roster's;
  grades, feedback and the class report work against PostgreSQL as against SQLite (the local results merged into
  a SQLite copy).
- A worker process is killed (SIGKILL) while it grades: every student still ends graded, once.
- Two ``autograde`` runs started at once against the same PostgreSQL gradebook share the class:
  each student graded by exactly one of them, no grade lost.

PostgreSQL: a throwaway cluster of the test's own (tests/simclass/pgcluster.py), skipped with a
message when the server is not installed, except under WT_REQUIRE_POSTGRES=1 (CI).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest
from simclass.built import copy_course, release_course
from simclass.expected import expected_now
from simclass.notebooks import Notebooks, write_submission
from simclass.pgcluster import PostgresCluster, require_postgres
from simclass.students import roster

from whole_transformer.course.autograder.autograde import autograde
from whole_transformer.course.autograder.cluster import local_cluster
from whole_transformer.course.autograder.store import load_result
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.reports.feedback import feedback
from whole_transformer.course.reports.grades import grades, write_detail
from whole_transformer.course.reports.insights import insights

REPO = Path(__file__).resolve().parents[1]

SMALL_CLASS = ["full", "partial", "os-exit", "invalid-json", "renamed", "test-edited", "empty-folder"]


@pytest.fixture(scope="module")
def postgres():
    require_postgres()
    pg = PostgresCluster.start()
    yield pg
    pg.stop()


@pytest.fixture
def db_url_env(monkeypatch):
    """Set DB_URL for this test (the course's nbgrader_config.py reads it)."""

    def use(url):
        monkeypatch.setenv("DB_URL", url)

    yield use
    monkeypatch.delenv("DB_URL", raising=False)


def _small_class(released_course: Path, root: Path):
    course = copy_course(released_course, root)
    nbs = Notebooks(root)
    chosen = {s.name: s for s in roster(nbs, root) if s.name in SMALL_CLASS}
    assert sorted(chosen) == sorted(SMALL_CLASS)
    for s in chosen.values():
        write_submission(root, s.name, s.notebooks, raw=s.raw, folder=s.folder)
    return course, nbs, chosen


def _rows(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.xdist_group("graded-class")  # it reads the class: on the worker that grades it, once it is graded
def test_dask_and_postgresql_grade_as_the_local_graders_do(
    tmp_path, released_course, graded_class, postgres, db_url_env
):
    """Seven students of the simulated class (graded once per run by local graders into SQLite) graded again on a local
    Dask cluster of 2 worker processes into a PostgreSQL gradebook: the same grades-detail.csv, row for row, and the
    roster's points; the Formgrader lists them. The class's own results of the seven, merged into a SQLite copy of
    the same course (``store.merge``, as ``make autograde`` merges a grader's result), give the same detail and the
    same class report as PostgreSQL. (That Dask with SQLite gives the right points, a worker killed or not, is
    ``test_a_killed_worker_loses_no_student``'s; that JOBS=1 and JOBS=3 grade alike, tests/test_autograde.py's.)"""
    from whole_transformer.course.autograder.assignment import prepare
    from whole_transformer.course.autograder.store import RESULT, merge, result_path
    from whole_transformer.course.autograder.submission import Submission

    local = _by_cell(
        [r for r in _rows(graded_class.course.root / "grades-detail.csv") if r["student_id"] in SMALL_CLASS]
    )
    base = tmp_path / "base"
    course, nbs, chosen = _small_class(released_course, base)

    # the class's results of the seven, merged into a SQLite copy: what the local route wrote, gradebook and all
    merged = Course(tmp_path / "sqlite")
    copy_course(base, merged.root)
    assignment = prepare(merged, merged.state / "merged", log=lambda *a: None)
    for name in SMALL_CLASS:
        result = load_result(graded_class.course, name)
        if result is None:  # nothing graded (the empty folder): nothing to merge, as make autograde leaves it
            continue
        graded = result_path(graded_class.course, name).parent
        result.graded = {p.name: p.read_bytes() for p in graded.iterdir() if p.name != RESULT}
        merge(merged, result, assignment, Submission.from_folder(merged, name).handed_in_at)

    pg = Course(tmp_path / "dask-postgres")
    copy_course(base, pg.root)
    (pg.root / "gradebook.db").unlink()
    db_url_env(postgres.create_database("dask_postgres"))
    release_course(pg)  # the assignment into PostgreSQL
    assert not pg.sqlite, pg.db_url
    with local_cluster(2) as cluster:
        t = time.monotonic()
        run = autograde(pg, jobs=1, scheduler=cluster.scheduler_address, log=lambda *a: None)
        print(f"seven students on 2 Dask workers into PostgreSQL: {time.monotonic() - t:.0f} s")
    assert sorted(run.graded) == sorted(SMALL_CLASS), run
    details, reports = {}, {}
    for c in (merged, pg):
        grades(c, log=lambda *a: None)
        feedback(c, log=lambda *a: None)
        insights(c, log=lambda *a: None)
        details[c.root.name] = _by_cell(_rows(c.root / "grades-detail.csv"))
        reports[c.root.name] = _rows(c.root / "insights.csv")
    totals = {r["student_id"]: float(r["score"]) for r in _rows(pg.root / "grades.csv")}
    for name, s in chosen.items():
        want = sum(p for p, _ in expected_now(nbs, s, details["dask-postgres"]).values())
        assert totals[name] == pytest.approx(want), name
    assert not (pg.root / "gradebook.db").exists(), "the PostgreSQL run wrote a SQLite gradebook"
    from nbgrader.api import Gradebook

    with Gradebook(pg.db_url) as gb:
        subs = {s.student.id for s in gb.find_assignment(ASSIGNMENT).submissions}
    assert subs == set(SMALL_CLASS) - {"empty-folder"}
    assert list((pg.root / "feedback" / "full" / ASSIGNMENT).glob("*.html"))
    assert _formgrader_sees(pg.root) == {s: totals[s] for s in subs}

    assert len(local) == sum(len(nbs.grade_cells(n)) for n in nbs.names) * len(SMALL_CLASS)
    for s in chosen.values():
        for g, (points, status) in expected_now(nbs, s, local).items():
            row = local[(s.name, g)]
            assert (float(row["score"]), row["status"]) == (points, status), (s.name, g, row)
    assert details["dask-postgres"] == local
    assert details["sqlite"] == local
    # the class report reads the gradebook and the records: the same on PostgreSQL as on SQLite
    assert reports["sqlite"] and any(
        r["section"] == "question" and r["detail"] == "answered 6" for r in reports["sqlite"]
    )
    assert reports["dask-postgres"] == reports["sqlite"]


def _by_cell(rows: list[dict]) -> dict[tuple[str, str], dict]:
    """grades-detail.csv's rows by (student, grade_id)."""
    return {(r["student_id"], r["grade_id"]): r for r in rows}


def _formgrader_sees(root: Path) -> dict[str, float]:
    """What the Formgrader lists (nbgrader's NbGraderAPI, which its pages call), with the course's
    config: {student: score} of the submissions of the assignment."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    cfg.CourseDirectory.root = str(root)
    api = NbGraderAPI(CourseDirectory(config=cfg), config=cfg)
    assert api.coursedir.db_url.startswith("postgresql"), api.coursedir.db_url
    subs = api.get_submissions(ASSIGNMENT)
    return {s["student"]: float(s["score"]) for s in subs if s["autograded"]}


# ------------------------------------------------------------------------------ the small course
def _mini_course(released_mini: Path, root: Path, extra: int = 0) -> dict[str, float]:
    """A copy of the small course as released, the mini class and ``extra`` more students like ada handed in; under
    DB_URL, released again into that database (the copy's SQLite gradebook removed)."""
    from test_autograde import MINI_EXPECTED, _mini_class

    course = copy_course(released_mini, root)
    if not course.sqlite:
        (root / "gradebook.db").unlink()
        release_course(course)  # the assignment into the database DB_URL names
    rel = nbformat.read(root / "release" / ASSIGNMENT / "01-mini.ipynb", as_version=4)
    expected = _mini_class(root, rel)
    for i in range(extra):  # more students like ada (full marks)
        src = root / "submitted" / "ada"
        shutil.copytree(src, root / "submitted" / f"ada{i}")
        expected[f"ada{i}"] = MINI_EXPECTED["ada"]
    return expected


def _totals(root: Path) -> dict[str, float]:
    c = Course(root)
    write_detail(c)
    out: dict[str, float] = {}
    for r in _rows(root / "grades-detail.csv"):
        out[r["student_id"]] = out.get(r["student_id"], 0.0) + float(r["score"])
    return out


def test_a_killed_worker_loses_no_student(tmp_path, released_mini, sandbox):
    """SIGKILL to a Dask worker process while it grades: its student is graded again elsewhere,
    every student ends graded exactly once, with the right points."""
    from distributed import Client

    root = tmp_path / "course"
    expected = _mini_course(released_mini, root, extra=1)
    killed = {}
    with local_cluster(2) as cluster, Client(cluster.scheduler_address) as client:
        pids = client.run(os.getpid)  # worker address → process id
        out: dict = {}

        def run():
            try:
                out["run"] = autograde(Course(root), scheduler=cluster.scheduler_address, log=lambda *a: None)
            except BaseException as e:  # noqa: BLE001 - reported by the assertion below
                out["error"] = e

        t = threading.Thread(target=run)
        t.start()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            busy = {w: keys for w, keys in client.processing().items() if keys}
            if busy:
                time.sleep(1.0)  # well inside the task: nbgrader and the kernel are running
                worker, keys = next(iter(busy.items()))
                if keys:
                    os.kill(pids[worker], signal.SIGKILL)
                    killed[worker] = list(keys)
            time.sleep(0.1)
        t.join(timeout=600)
    assert killed, "no worker was seen grading"
    assert "error" not in out, out.get("error")
    run = out["run"]
    assert sorted(run.graded) == sorted(expected), run  # each student once, none lost
    assert len(run.graded) == len(set(run.graded))
    assert not run.left
    assert _totals(root) == {k: float(v) for k, v in expected.items()}
    con = sqlite3.connect(root / "gradebook.db")
    counts = dict(con.execute("select student_id, count(*) from submitted_assignment group by student_id"))
    con.close()
    assert all(counts.get(s, 0) <= 1 for s in expected), counts
    for s in expected:
        assert load_result(Course(root), s) is not None, s


def test_two_runs_at_once_share_a_postgres_gradebook(tmp_path, released_mini, postgres, db_url_env, sandbox):
    """Two `autograde` processes started together on one PostgreSQL gradebook: every student is
    graded by exactly one of them, and no grade is lost."""
    root = tmp_path / "course"
    url = postgres.create_database("two_runs")
    db_url_env(url)
    expected = _mini_course(released_mini, root, extra=3)
    assert not (root / "gradebook.db").exists()
    env = dict(os.environ, DB_URL=url, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde", "--jobs", "1"]
    procs = [
        subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outs = ["".join(p.communicate(timeout=600)) for p in procs]  # stdout (summary lines first), stderr
    assert [p.returncode for p in procs] == [0, 0], outs
    graded = [set(re.findall(r"^(\S+)\s+[\d.]+ / ", out, re.M)) for out in outs]
    assert graded[0] | graded[1] == set(expected), outs
    assert not graded[0] & graded[1], f"graded twice: {graded[0] & graded[1]}"
    assert graded[0] and graded[1], f"one run did all the work: {outs}"
    assert _totals(root) == {k: float(v) for k, v in expected.items()}
    from nbgrader.api import Gradebook

    with Gradebook(url) as gb:
        subs = [s.student.id for s in gb.find_assignment(ASSIGNMENT).submissions]
    assert sorted(subs) == sorted(set(subs)), subs
