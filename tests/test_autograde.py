"""Autograding a small class (``autograder/autograde.py`` and its stages) with real nbgrader and the real
sandbox, on the one-notebook course of tests/simclass/minicourse.py: parallel and resumed runs give
the same grades once each, and grading refuses to run without a sandbox unless asked. One submission graded
anywhere (``grade-one``): its result written apart, the course left alone unless asked to merge it."""

from __future__ import annotations

import copy
import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from simclass.built import copy_course, once
from simclass.minicourse import NAME, make_course

from whole_transformer.course.autograder.autograde import autograde
from whole_transformer.course.autograder.store import load_result
from whole_transformer.course.autograder.submission import Submission
from whole_transformer.course.cells import grade_id as gid
from whole_transformer.course.core.results import Result
from whole_transformer.course.layout import ASSIGNMENT, Course, nbgrader_env
from whole_transformer.course.reports.grades import write_detail
from whole_transformer.course.sandbox import zygote

REPO = Path(__file__).resolve().parents[1]


def ids(nb):
    return [gid(c) for c in nb.cells]


# ------------------------------------------------------------------------------ autograding a small class
def _fresh(released_mini: Path, where: Path) -> tuple[Path, nbformat.NotebookNode]:
    """A copy of the small course as released (built once per run), and its released notebook."""
    root = copy_course(released_mini, where / "course").root
    return root, nbformat.read(root / "release" / ASSIGNMENT / f"{NAME}.ipynb", as_version=4)


def _answered(rel, q="answer_q = 8", f="def double(x):\n    return 2 * x"):
    nb = copy.deepcopy(rel)
    for c in nb.cells:
        if gid(c) == "answer_q":
            c.source = q
        if gid(c) == "double":
            c.source = f
    return nb


def _mini_class(root: Path, rel) -> dict[str, float]:
    """Six students of the small course; returns the expected total of each."""

    def put(student, nb=None, raw=None):
        d = root / "submitted" / student / ASSIGNMENT
        d.mkdir(parents=True, exist_ok=True)
        if nb is not None:
            nbformat.write(nb, d / f"{NAME}.ipynb")
        if raw is not None:
            (d / f"{NAME}.ipynb").write_text(raw)

    put("ada", _answered(rel))
    put("bob", _answered(rel, "answer_q = 7"))
    put("cyd", _answered(rel, f="def double(x):\n    return x + x if x > 0 else x"))
    put("dee", copy.deepcopy(rel))
    put("eve", raw="{ not json")
    put("fay", _answered(rel, f="import os\ndef double(x):\n    if x < 0:\n        os._exit(1)\n    return 2 * x"))
    gus = root / "submitted" / "gus" / ASSIGNMENT  # a link to the answers instead of a notebook
    gus.mkdir(parents=True)
    (gus / f"{NAME}.ipynb").symlink_to(root / "source" / ASSIGNMENT / f"{NAME}.ipynb")
    return dict(MINI_EXPECTED)


MINI_EXPECTED = {"ada": 3, "bob": 2, "cyd": 2, "dee": 0, "eve": 0, "fay": 2, "gus": 0}


def _detail(root: Path) -> list[dict]:
    write_detail(Course(root))
    with open(root / "grades-detail.csv") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def mini_courses(tmp_path_factory, released_mini, sandbox):
    """The same seven submissions graded with JOBS=1 and with JOBS=3, in two course folders (once per run)."""

    def grade_both(folder):
        zygotes = {}  # per run: the kernel zygotes running as it stopped them, and those left after
        close_all = zygote.close_all

        def counted_close():
            zygotes.setdefault(jobs, []).append(len(zygote._running))
            close_all()

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(zygote, "close_all", counted_close)
            for jobs in (1, 3):
                root, rel = _fresh(released_mini, folder / f"jobs{jobs}")
                _mini_class(root, rel)
                autograde(Course(root), jobs=jobs, log=lambda *a: None)
                zygotes.setdefault(jobs, []).append(len(zygote._running))
        return {"zygotes": zygotes}

    shared, meta = once(tmp_path_factory, "mini-graded", grade_both)
    out = {}
    for jobs in (1, 3):
        root = shared / f"jobs{jobs}" / "course"
        out[jobs] = {"root": root, "expected": MINI_EXPECTED, "zygotes": meta["zygotes"][str(jobs)]}
    return out


def test_parallel_grading_gives_the_same_grades(mini_courses):
    one, three = _detail(mini_courses[1]["root"]), _detail(mini_courses[3]["root"])
    assert one == three
    totals: dict[str, float] = {}
    for r in one:
        totals[r["student_id"]] = totals.get(r["student_id"], 0) + float(r["score"])
    assert totals == mini_courses[1]["expected"]
    statuses = {(r["student_id"], r["grade_id"]): r["status"] for r in one}
    assert statuses[("eve", "test_answer_q")] == "failed"
    assert statuses[("fay", "test_double_neg")] == "failed"
    assert statuses[("dee", "test_answer_q")] == "unanswered"  # the release handed in: not answered yet
    assert statuses[("gus", "test_answer_q")] == "missing"
    report = (mini_courses[1]["root"] / "integrity-report.csv").read_text()
    assert "gus,submission,files," in report and "symbolic link" in report


def test_each_run_forks_its_kernels_from_one_zygote_and_stops_it(mini_courses):
    """A sandboxed make autograde takes every kernel from one kernel zygote of its own (sandbox/zygote.py: PyTorch
    imported once for the run, not once per student) and stops it when the run ends: one running as it stopped,
    none left after."""
    for jobs in (1, 3):
        assert mini_courses[jobs]["zygotes"] == [1, 0], (jobs, mini_courses[jobs]["zygotes"])


@pytest.mark.slow
def test_gradebook_intact_after_parallel_grading(mini_courses):
    root = mini_courses[3]["root"]
    con = sqlite3.connect(root / "gradebook.db")
    assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
    subs = dict(con.execute("select student_id, count(*) from submitted_assignment group by student_id"))
    grades = con.execute("select count(*) from grade").fetchone()[0]
    con.close()
    assert subs == {s: 1 for s in ("ada", "bob", "cyd", "dee", "eve", "fay")}  # gus handed in nothing
    assert grades == 6 * 3


def test_a_second_run_grades_nobody_again(mini_courses):
    root = mini_courses[1]["root"]
    before = _detail(root)
    run = autograde(Course(root), jobs=2, log=lambda *a: None)
    assert run.graded == [] and sorted(run.skipped) == ["ada", "bob", "cyd", "dee", "eve", "fay", "gus"]
    assert _detail(root) == before


def test_killed_half_way_then_run_again_grades_everyone_once(tmp_path, released_mini, sandbox):
    root, rel = _fresh(released_mini, tmp_path)
    expected = _mini_class(root, rel)
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde", "--jobs", "1"]
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=nbgrader_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    results = root / "autograde"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(results.glob(f"*/{ASSIGNMENT}/result.json"))) < 2:
        assert proc.poll() is None, proc.stdout.read().decode()
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_first = {p.parts[-3] for p in results.glob(f"*/{ASSIGNMENT}/result.json")}
    assert 2 <= len(done_first) < 7
    # the sandboxes die with their parents (bubblewrap's --die-with-parent): soon, not at once on a busy machine
    for _ in range(60):
        leftovers = subprocess.run(["pgrep", "-f", str(root)], capture_output=True, text=True).stdout.split()
        if not leftovers:
            break
        time.sleep(0.25)
    alive = (
        subprocess.run(
            ["ps", "-o", "pid,ppid,etime,args", "-p", ",".join(leftovers)], capture_output=True, text=True
        ).stdout
        if leftovers
        else ""
    )
    assert leftovers == [], f"graders or kernels outlived the killed run by 15 s:\n{alive}"
    run = autograde(Course(root), jobs=2, log=lambda *a: None)
    assert set(run.skipped) == done_first
    assert set(run.graded) == set(expected) - done_first
    rows = _detail(root)
    totals: dict[str, float] = {}
    for r in rows:
        totals[r["student_id"]] = totals.get(r["student_id"], 0) + float(r["score"])
    assert totals == expected
    con = sqlite3.connect(root / "gradebook.db")
    subs = dict(con.execute("select student_id, count(*) from submitted_assignment group by student_id"))
    con.close()
    assert subs == {s: 1 for s in expected if s != "gus"}
    for s in expected:
        assert load_result(Course(root), s) is not None


def test_autograde_refuses_without_a_sandbox(tmp_path):
    root = make_course(tmp_path / "course")
    (root / "submitted" / "ada" / ASSIGNMENT).mkdir(parents=True)
    env = nbgrader_env()
    env["WT_BWRAP"] = str(tmp_path / "no-such-bwrap")
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde"]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "apt-get install bubblewrap" in done.stderr and "--no-sandbox" in done.stderr
    assert not (root / "gradebook.db").exists()


def test_autograde_without_sandbox_only_when_asked(tmp_path, released_mini):
    root, rel = _fresh(released_mini, tmp_path)
    d = root / "submitted" / "ada" / ASSIGNMENT
    d.mkdir(parents=True)
    nbformat.write(_answered(rel), d / f"{NAME}.ipynb")
    env = nbgrader_env()
    env["WT_BWRAP"] = str(tmp_path / "no-such-bwrap")
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde", "--no-sandbox"]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WITHOUT a sandbox" in done.stdout
    assert load_result(Course(root), "ada").notebooks[NAME].status == "graded"


def test_a_course_config_without_the_courses_grading_is_refused_and_runs_no_student_code(tmp_path, released_mini):
    """nbgrader skips a load_subconfig whose file is gone without a word, and then grades with its own defaults:
    the student's code unsandboxed, the expected values in its kernel, the hidden tests in the feedback. Each
    command refuses instead, before any student code runs, and so does nbgrader itself as the course runs it."""
    root, rel = _fresh(released_mini, tmp_path)
    proof = tmp_path / "the student's code ran here"
    d = root / "submitted" / "ada" / ASSIGNMENT
    d.mkdir(parents=True)
    nbformat.write(
        _answered(rel, f=f"open({str(proof)!r}, 'w').write('x')\ndef double(x):\n    return 2 * x"), d / f"{NAME}.ipynb"
    )
    moved = tmp_path / "moved" / "nbgrader_config.py"  # the course's config was here once
    (root / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nload_subconfig({str(moved)!r})  # noqa: F821\n"
    )
    with open(root / "course.toml", "a", encoding="utf-8") as f:
        f.write("\n[service]\nenabled = true\n")  # make serve grades only when it is on
    (root / "autograde").mkdir(exist_ok=True)  # make feedback wants something autograded
    before = sorted((root / "autograde").iterdir())
    env = nbgrader_env()

    def run(*args: str, module: str = "whole_transformer.course") -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", module, *args]
        return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)

    for args, lacks in (
        (["autograde"], "HoldExpected, SandboxExecute, Verdict in c.Autograde.autograde_preprocessors"),
        (["grade-one", "ada", "--out", str(tmp_path / "apart")], "HoldExpected, SandboxExecute, Verdict"),
        (["serve", "--once", "--exchange", str(tmp_path / "exchange")], "SandboxExecute, Verdict"),
        (["feedback"], "HideHiddenTests in c.GenerateFeedback.preprocessors"),
    ):
        done = run(*args)
        assert done.returncode != 0 and "refused" in done.stderr and lacks in done.stderr, done.stdout + done.stderr
        assert f"reads from {root / 'nbgrader_config.py'}" in done.stderr and "load_subconfig" in done.stderr
    for args, lacks in (
        (["autograde", ASSIGNMENT, "--student", "ada", "--force"], "SandboxExecute"),
        (["generate_feedback", ASSIGNMENT, "--force"], "HideHiddenTests"),
    ):
        done = run(*args, module="whole_transformer.course.plugins.app")
        said = done.stdout + done.stderr
        assert done.returncode != 0 and f"nbgrader {args[0]} refused" in said and lacks in said, said
    assert not proof.exists(), "the student's code ran"
    assert sorted((root / "autograde").iterdir()) == before and not (tmp_path / "apart").exists()


# ------------------------------------------------------------------------------ one submission, anywhere
def test_the_same_files_have_the_same_digest_from_submitted_and_from_the_exchange(tmp_path):
    """An attempt the service takes from the exchange is recognised when make autograde finds its files in
    submitted/ (and the other way round): one digest, whichever the source; a symbolic link is a finding."""
    files = {f"{NAME}.ipynb": '{"cells": []}', "timestamp.txt": "2026-10-16 21:40:00 UTC", "notes/a.txt": "x"}
    folder = tmp_path / "course" / "submitted" / "ada" / ASSIGNMENT
    attempt = tmp_path / "inbound" / f"ada+{ASSIGNMENT}+2026-10-16 21:40:00 UTC+abc"
    for where in (folder, attempt):
        for name, text in files.items():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            (where / name).write_text(text)
        (where / "answers.ipynb").symlink_to(tmp_path / "nowhere")
    handed = Submission.from_folder(Course(tmp_path / "course"), "ada")
    taken = Submission.from_exchange("ada", attempt, None)
    assert handed.digest == taken.digest and handed.files == taken.files
    assert sorted(handed.files) == sorted(f"{ASSIGNMENT}/{name}" for name in files)
    assert [f.finding for f in taken.findings] == ["'answers.ipynb' is a symbolic link: ignored"]
    (folder / "notes" / "a.txt").write_text("y")
    assert Submission.from_folder(Course(tmp_path / "course"), "ada").digest != taken.digest


def test_grade_one_writes_the_result_apart_and_merges_it_only_when_asked(tmp_path, released_mini, sandbox):
    root, rel = _fresh(released_mini, tmp_path)
    d = root / "submitted" / "cyd" / ASSIGNMENT
    d.mkdir(parents=True)
    nbformat.write(_answered(rel, f="def double(x):\n    return x + x if x > 0 else x"), d / f"{NAME}.ipynb")
    gradebook = (root / "gradebook.db").read_bytes()
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "grade-one", "cyd", "--out"]

    def grade_one(*more: str) -> subprocess.CompletedProcess:
        return subprocess.run([*cmd, *more], cwd=REPO, env=nbgrader_env(), capture_output=True, text=True, timeout=300)

    done = grade_one(str(tmp_path / "apart"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "test_double_neg" in done.stdout and "wrong on: a negative number" in done.stdout
    assert "total: 2 / 3" in done.stdout
    result = Result.from_json(json.loads((tmp_path / "apart" / "result.json").read_text()))
    assert result.score() == 2.0 and result.notebooks[NAME].cells["test_double_neg"].score == 0.0
    assert (tmp_path / "apart" / f"{NAME}.ipynb").is_file()
    assert (root / "gradebook.db").read_bytes() == gradebook and not (root / "autograde" / "cyd").exists()
    refused = grade_one(str(tmp_path / "apart"))
    assert refused.returncode == 1 and "not an empty folder" in refused.stderr
    merged = grade_one(str(tmp_path / "merged"), "--merge")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert load_result(Course(root), "cyd").score() == 2.0
    assert autograde(Course(root), log=lambda *a: None, progress=False).skipped == ["cyd"]
