"""The course machinery on its own: restoring and scanning submissions, feedback without hidden
tests, the sandbox, the execute step that survives dead or stuck kernels, parallel and resumed
autograding, refusing to run without a sandbox.

Fast parts use plain notebooks; the autograding parts use the small one-notebook course of
tests/simclass/minicourse.py with real nbgrader and the real sandbox (the full class with the real
notebooks is tests/test_course_class.py).
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import nbformat.v4 as nbf
import pytest
from simclass.loopback import loopback_listener
from simclass.minicourse import NAME, make_course, mini_notebook, require_sandbox

from whole_transformer.course.build import lecture as build
from whole_transformer.course.build.lecture import lecture_is_current
from whole_transformer.course.build.release import release as build_release
from whole_transformer.course.cells import SOLUTION, nbgrader_meta, split_region
from whole_transformer.course.cells import grade_id as gid
from whole_transformer.course.grading.autograde import autograde
from whole_transformer.course.grading.record import load_record
from whole_transformer.course.grading.restore import restore
from whole_transformer.course.grading.scan import scan
from whole_transformer.course.layout import ASSIGNMENT, Course, nbgrader_env
from whole_transformer.course.nbgrader.execute import SandboxExecute
from whole_transformer.course.nbgrader.hide_tests import HideHiddenTests, split_hidden
from whole_transformer.course.reports.grades import write_detail

REPO = Path(__file__).resolve().parents[1]


def ids(nb):
    return [gid(c) for c in nb.cells]


# ------------------------------------------------------------------------------ restoring
@pytest.fixture
def release():
    return mini_notebook()


def test_untouched_submission_restores_to_itself(release):
    nb, findings = restore(copy.deepcopy(release), release)
    assert findings == []
    assert [c.source for c in nb.cells] == [c.source for c in release.cells]


def test_deleted_test_cell_comes_back_in_place(release):
    sub = copy.deepcopy(release)
    sub.cells = [c for c in sub.cells if gid(c) != "test_double_small"]
    nb, findings = restore(sub, release)
    assert ids(nb) == ids(release)
    assert [(f.cell, "deleted" in f.finding) for f in findings] == [("test_double_small", True)]


def test_edited_retagged_and_detagged_cells_are_restored(release):
    sub = copy.deepcopy(release)
    by = {gid(c): c for c in sub.cells}
    by["test_answer_q"].source = "pass"
    by["test_double_small"].metadata["nbgrader"]["points"] = 50
    del by["test_double_neg"].metadata["nbgrader"]
    by["test_double_neg"].source = "print('fine')"
    by["imports"].metadata["nbgrader"]["locked"] = False
    nb, findings = restore(sub, release)
    rel = {gid(c): c for c in release.cells}
    got = {gid(c): c for c in nb.cells}
    for g in ("test_answer_q", "test_double_small", "test_double_neg", "imports"):
        assert got[g].source == rel[g].source
        assert got[g].metadata["nbgrader"] == rel[g].metadata["nbgrader"]
    text = {(f.cell, f.finding.split(" (")[0].split(";")[0]) for f in findings}
    assert ("test_answer_q", "test cell edited") in text
    assert any(c == "test_double_small" and "points 1.0 → 50.0" in f.finding for c, f in
               [(f.cell, f) for f in findings])
    assert any(f.cell == "test_double_neg" and "de-tagged" in f.finding for f in findings)
    assert any(f.cell == "imports" and "retagged" in f.finding for f in findings)


def test_answer_cell_turned_to_markdown_runs_as_code_again(release):
    sub = copy.deepcopy(release)
    c = next(c for c in sub.cells if gid(c) == "double")
    c.cell_type = "markdown"
    c.source = "def double(x):\n    return x * 2"
    del c["outputs"], c["execution_count"]
    nb, findings = restore(sub, release)
    got = next(c for c in nb.cells if gid(c) == "double")
    assert got.cell_type == "code" and got.source == "def double(x):\n    return x * 2"
    assert any("re-typed markdown" in f.finding or "re-typed code → markdown" in f.finding for f in findings)


def test_duplicate_grade_id_keeps_the_original(release):
    sub = copy.deepcopy(release)
    i = ids(sub).index("test_double_small")
    fake = copy.deepcopy(sub.cells[i])
    fake.source, fake.id = "pass", "fake0001"
    sub.cells.insert(i, fake)
    nb, findings = restore(sub, release)
    assert ids(nb).count("test_double_small") == 1
    kept = next(c for c in nb.cells if gid(c) == "test_double_small")
    assert kept.source == next(c for c in release.cells if gid(c) == "test_double_small").source
    assert any(c.source == "pass" and "nbgrader" not in c.metadata for c in nb.cells)
    assert any("duplicate" in f.finding for f in findings)


def test_added_cells_stay_after_the_cell_they_followed_and_moves_are_undone(release):
    sub = copy.deepcopy(release)
    i = ids(sub).index("double")
    sub.cells.insert(i + 1, nbf.new_code_cell("print(double(4))"))
    j, k = ids(sub).index("test_double_small"), ids(sub).index("test_double_neg")
    sub.cells[j], sub.cells[k] = sub.cells[k], sub.cells[j]
    nb, findings = restore(sub, release)
    order = [g for g in ids(nb) if g]
    assert order == [g for g in ids(release) if g]
    assert nb.cells[ids(nb).index("double") + 1].source == "print(double(4))"
    assert any("moved" in f.finding for f in findings)


def test_cells_with_unknown_grade_ids_lose_their_metadata(release):
    sub = copy.deepcopy(release)
    extra = nbf.new_code_cell("pass", metadata={"nbgrader": {"grade": True, "grade_id": "bonus", "points": 10,
                                                             "locked": True, "solution": False,
                                                             "schema_version": 3}})
    sub.cells.append(extra)
    nb, findings = restore(sub, release)
    assert "bonus" not in ids(nb)
    assert any("unknown grade_id 'bonus'" in f.finding for f in findings)


@pytest.mark.parametrize("code, words", [
    ("abs = lambda x: 0", "builtin 'abs'"),
    ("def len(x):\n    return 3", "builtin 'len'"),
    ("import builtins\nbuiltins.sum = max", "replaces builtins.sum"),
    ("np.isclose = lambda *a, **k: True", "np.isclose"),
    ("setattr(np, 'allclose', lambda *a: True)", "setattr() on module numpy"),
    ("import os\nif os.environ.get('NBGRADER_EXECUTION'):\n    x = 1", "NBGRADER_EXECUTION"),
    ("get_ipython().showtraceback = lambda *a, **k: None", "showtraceback"),
    ("get_ipython().input_transformers_post.append(lambda l: [])", "IPython internals"),
    ("print(open('../../source/whole-transformer/03.ipynb').read())", "outside the submission"),
    ("import sqlite3\nsqlite3.connect('/srv/course/gradebook.db')", "gradebook"),
    ("from whole_transformer.course.answers.reference import next_token", "reference"),
    ("from whole_transformer.course import reference\nnext_token = reference.next_token", "reference"),
    ("from whole_transformer.task import xy_arrays", "reference implementation"),
    ("import whole_transformer.course.grading.autograde", "grading internals"),
    ("grading.same = lambda *a: True", "grading"),
    ("class A:\n    def __eq__(self, o):\n        return True", "__eq__"),
    ("import sys\nf = sys._getframe(1)", "frame introspection"),
    ("exec('x = 1')", "dynamic code"),
    ("import os\nos._exit(0)", "os._exit"),
    ("while True:\n    try:\n        pass\n    except KeyboardInterrupt:\n        pass", "KeyboardInterrupt"),
])
def test_scan_reports_suspicious_code(code, words):
    aliases = {"np": "numpy", "grading": "whole_transformer.grading", "builtins": "builtins"}
    found = scan(code, aliases)
    assert any(words in f for f in found), found


@pytest.mark.parametrize("code", [
    "def next_token(h, W, b):\n    scores = h @ W + b\n    return int(np.argmax(scores))",
    "def f(xs):\n    max = 0\n    for x in xs:\n        max = x if x > max else max\n    return max",
    "tokens_905 = 8",
    "%time x = 1",
])
def test_scan_leaves_ordinary_answers_alone(code):
    assert scan(code, {"np": "numpy"}) == []


def test_the_exercise_implementations_scan_clean():
    from implementations import implementations

    aliases = {"np": "numpy", "torch": "torch", "grading": "whole_transformer.grading",
               "task": "whole_transformer.task"}
    flagged = {i.id: scan(i.source, aliases) for i in implementations()}
    assert not {k: v for k, v in flagged.items() if v}


# ------------------------------------------------------------------------------ feedback
def test_feedback_keeps_hidden_tests_out():
    src = mini_notebook()
    nb = copy.deepcopy(src)
    tests = [c for c in nb.cells if gid(c) and gid(c).startswith("test_")]
    tests[0].outputs = [nbf.new_output("error", ename="TestFailed", evalue="answer_q: the count is not right",
                                       traceback=["TestFailed: answer_q: the count is not right"])]
    tests[1].outputs = [nbf.new_output("error", ename="ValueError", evalue="17 is not 42 (from the test)",
                                       traceback=['grading.hand_out("double", double, [((21,), {})])'])]
    tests[2].outputs = [nbf.new_output("error", ename="AssertionError", evalue="42 expected, sneaky",
                                       traceback=["x"])]
    spy = nbf.new_code_cell("print(In)")
    spy.outputs = [nbf.new_output("stream", name="stdout",
                                  text="['grading.hand_out(\"double\", double, [((-3,), {})])']")]
    nb.cells.append(spy)
    out, _ = HideHiddenTests().preprocess(nb, {})
    text = json.dumps(out)
    for c in src.cells:
        _, hidden = split_hidden(c.source)
        for line in hidden.split("\n"):
            if line.strip():
                assert line.strip() not in text
    assert "Test failed: answer_q: the count is not right" in text
    assert "your code raised ValueError" in text and "17 is not 42" not in text
    assert "sneaky" not in text
    assert "[output not shown: it quoted the hidden tests]" in text
    assert "(hidden tests: not shown)" in text


# ------------------------------------------------------------------------------ the sandbox
PROBES = """\
import os, socket
results = {{}}
def attempt(name, fn):
    try:
        fn()
        results[name] = "allowed"
    except Exception as e:
        results[name] = type(e).__name__
attempt("read_secret", lambda: open({secret!r}).read())
attempt("list_course", lambda: os.listdir({course!r}))
attempt("read_home", lambda: open(os.path.join({home!r}, ".bashrc")).read())
attempt("write_course", lambda: open({course!r} + "/x.txt", "w").write("x"))
attempt("write_tmp_then_host", lambda: open("/tmp/wt-sandbox-probe.txt", "w").write("x"))
attempt("write_cwd", lambda: open("mine.txt", "w").write("x"))
attempt("network", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=3))
attempt("import_course", lambda: __import__("whole_transformer.course.grading.autograde"))
results["env_secret"] = os.environ.get("WT_TEST_SECRET", "absent")
results["processes"] = len([p for p in os.listdir("/proc") if p.isdigit()])
results["uid"] = os.getuid()
results["cwd"] = os.getcwd()
print(results)
"""


@pytest.mark.parametrize("warm", [True, False], ids=["forked", "fresh"])
def test_sandboxed_kernel_sees_nothing_of_the_course(tmp_path, monkeypatch, warm):
    """Both ways of starting the kernel: forked from the fork server (the default) and afresh."""
    require_sandbox()
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    secret = course / "source" / "hidden.txt"
    secret.write_text("the hidden tests")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("WT_TEST_SECRET", "s3cr3t")
    with loopback_listener() as listener:  # reachable without the sandbox (checked), so a refusal is the sandbox's
        code = PROBES.format(secret=str(secret), course=str(course), home=os.path.expanduser("~"), port=listener.port)
        nb = nbf.new_notebook(cells=[nbf.new_code_cell(code)])
        nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
        ex = SandboxExecute(timeout=60, scratch_dir=str(scratch), warm_kernels=warm)
        ex.preprocess(nb, {"metadata": {"path": str(course)}})
        reached = listener.accepted
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    got = eval(text)  # noqa: S307 - our own dict literal
    assert got["read_secret"] == "FileNotFoundError"
    assert got["list_course"] == "FileNotFoundError"
    assert got["read_home"] == "FileNotFoundError"
    assert got["write_course"] in {"FileNotFoundError", "OSError", "PermissionError"}
    assert got["write_tmp_then_host"] == "allowed" and not Path("/tmp/wt-sandbox-probe.txt").exists()
    assert got["write_cwd"] == "allowed" and (scratch / "mine.txt").exists()
    assert got["network"] == "ConnectionRefusedError" and reached == 0  # its own loopback, where nothing listens
    assert got["import_course"] in {"ModuleNotFoundError", "ImportError"}
    assert got["env_secret"] == "absent"
    assert got["processes"] < 10
    assert got["uid"] != 0
    assert got["cwd"] == "/submission"


def _run(cells, **kw):
    nb = nbf.new_notebook(cells=[nbf.new_code_cell(c) for c in cells])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, c in enumerate(nb.cells):
        if c.source.startswith("# test"):
            c.metadata["nbgrader"] = {"grade": True, "grade_id": f"t{i}", "points": 1, "locked": True,
                                      "solution": False, "schema_version": 3}
    ex = SandboxExecute(**kw)
    ex.preprocess(nb, {"metadata": {"path": "/tmp"}, "nbgrader": {"notebook": "nb"}})
    return nb, ex


def _errors(cell):
    return [o.get("ename") for o in cell.outputs if o.get("output_type") == "error"]


def test_execute_survives_dead_and_stuck_kernels(tmp_path):
    require_sandbox()
    cells = [
        "x = 41",
        "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n    except KeyboardInterrupt:\n        pass",
        "# test\nassert x + 1 == 42",
        "import os\nos._exit(1)",
        "# test\nassert x == 41",
        "while True:\n    pass",
        "print('still here', x)",
    ]
    nb, ex = _run(cells, timeout=4, iopub_timeout=3, report_dir=str(tmp_path))
    assert _errors(nb.cells[1]) == ["CellTimeoutError"] and "killed" in nb.cells[1].outputs[-1]["evalue"]
    assert _errors(nb.cells[2]) == []  # the kernel was restarted and x restored
    assert _errors(nb.cells[3]) == ["DeadKernelError"]
    assert _errors(nb.cells[4]) == []
    assert "KeyboardInterrupt" in _errors(nb.cells[5])  # a plain loop is interrupted, the kernel lives
    assert "still here 41" in "".join(o.get("text", "") for o in nb.cells[6].outputs)
    report = json.loads((tmp_path / "nb.json").read_text())
    kinds = [e["kind"] for e in report["events"]]
    assert kinds.count("restarted") == 2 and "died" in kinds and "timeout" in kinds
    assert report["cells"]["t2"]["status"] == "ok"


def test_execute_gives_up_after_too_many_restarts_and_says_so():
    require_sandbox()
    cells = ["import os\nos._exit(1)"] * 3 + ["# test\nassert True"]
    nb, _ = _run(cells, timeout=10, max_restarts=1)
    assert _errors(nb.cells[0]) == ["DeadKernelError"]
    assert _errors(nb.cells[1]) == ["DeadKernelError"]
    assert _errors(nb.cells[3]) == ["NotRun"]


# ------------------------------------------------------------------------------ autograding a small class
def _shared_dir(tmp_path_factory, worker_id: str) -> Path:
    """A folder all pytest-xdist workers of this run share: what is built there is built once."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if worker_id != "master" else base


def _once(tmp_path_factory, worker_id, name, build_it) -> Path:
    """build_it(folder) once per test run (whichever worker comes first); the folder."""
    from filelock import FileLock

    shared = _shared_dir(tmp_path_factory, worker_id) / name
    shared.mkdir(parents=True, exist_ok=True)
    with FileLock(str(shared) + ".lock"):
        if not (shared / "done").exists():
            build_it(shared)
            (shared / "done").write_text("ok")
    return shared


@pytest.fixture(scope="module")
def mini_built(tmp_path_factory, worker_id):
    """The small course, released once (release/ and gradebook.db); tests copy it."""
    def make(folder):
        shutil.rmtree(folder / "course", ignore_errors=True)
        root = make_course(folder / "course")
        build_release(Course(root), log=lambda *a: None)

    return _once(tmp_path_factory, worker_id, "mini-built", make) / "course"


def _fresh(mini_built: Path, where: Path) -> tuple[Path, nbformat.NotebookNode]:
    root = where / "course"
    shutil.copytree(mini_built, root)
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
def mini_courses(tmp_path_factory, worker_id, mini_built):
    """The same seven submissions graded with JOBS=1 and with JOBS=3, in two course folders."""
    require_sandbox()

    def grade_both(folder):
        for jobs in (1, 3):
            shutil.rmtree(folder / f"jobs{jobs}", ignore_errors=True)
            root, rel = _fresh(mini_built, folder / f"jobs{jobs}")
            _mini_class(root, rel)
            autograde(Course(root), jobs=jobs, log=lambda *a: None)

    shared = _once(tmp_path_factory, worker_id, "mini-graded", grade_both)
    out = {}
    for jobs in (1, 3):
        root = shared / f"jobs{jobs}" / "course"
        out[jobs] = {"root": root, "expected": MINI_EXPECTED}
    return out


@pytest.mark.xdist_group("course-mini")
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

@pytest.mark.xdist_group("course-mini")
def test_gradebook_intact_after_parallel_grading(mini_courses):
    root = mini_courses[3]["root"]
    con = sqlite3.connect(root / "gradebook.db")
    assert con.execute("pragma integrity_check").fetchone()[0] == "ok"
    subs = dict(con.execute("select student_id, count(*) from submitted_assignment group by student_id"))
    grades = con.execute("select count(*) from grade").fetchone()[0]
    con.close()
    assert subs == {s: 1 for s in ("ada", "bob", "cyd", "dee", "eve", "fay")}  # gus handed in nothing
    assert grades == 6 * 3


@pytest.mark.xdist_group("course-mini")
def test_a_second_run_grades_nobody_again(mini_courses):
    root = mini_courses[1]["root"]
    before = _detail(root)
    run = autograde(Course(root), jobs=2, log=lambda *a: None)
    assert run.graded == [] and sorted(run.skipped) == ["ada", "bob", "cyd", "dee", "eve", "fay", "gus"]
    assert _detail(root) == before


@pytest.mark.xdist_group("course-mini")
def test_killed_half_way_then_run_again_grades_everyone_once(tmp_path, mini_built):
    require_sandbox()
    root, rel = _fresh(mini_built, tmp_path)
    expected = _mini_class(root, rel)
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde", "--jobs", "1"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=nbgrader_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    records = root / "autograde" / ".wt" / "students"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(records.glob("*.json"))) < 2:
        assert proc.poll() is None, proc.stdout.read().decode()
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_first = {p.stem for p in records.glob("*.json")}
    assert 2 <= len(done_first) < 7
    time.sleep(1)
    leftovers = subprocess.run(["pgrep", "-f", str(root)], capture_output=True, text=True).stdout.split()
    assert leftovers == [], "graders or kernels outlived the killed run"
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
        assert load_record(Course(root), s) is not None


@pytest.mark.xdist_group("course-mini")
def test_autograde_refuses_without_a_sandbox(tmp_path):
    root = make_course(tmp_path / "course")
    (root / "submitted" / "ada" / ASSIGNMENT).mkdir(parents=True)
    env = nbgrader_env()
    env["WT_BWRAP"] = str(tmp_path / "no-such-bwrap")
    env.pop("WT_SANDBOX", None)
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde"]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "apt-get install bubblewrap" in done.stderr and "--no-sandbox" in done.stderr
    assert not (root / "gradebook.db").exists()


@pytest.mark.xdist_group("course-mini")
def test_autograde_without_sandbox_only_when_asked(tmp_path, mini_built):
    root, rel = _fresh(mini_built, tmp_path)
    d = root / "submitted" / "ada" / ASSIGNMENT
    d.mkdir(parents=True)
    nbformat.write(_answered(rel), d / f"{NAME}.ipynb")
    env = nbgrader_env()
    env["WT_BWRAP"] = str(tmp_path / "no-such-bwrap")
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(root), "autograde", "--no-sandbox"]
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WITHOUT a sandbox" in done.stdout
    assert load_record(Course(root), "ada").notebooks[NAME].status == "graded"


# ------------------------------------------------------------------------------ release/ and notebooks/
def _solution_lines(source: str) -> list[str]:
    return [line.strip() for line in split_region(source, SOLUTION)[1].split("\n") if line.strip()]


def test_release_is_up_to_date_with_source(tmp_path):
    course = Course(make_course(tmp_path / "course", real_source=True))
    fresh = build_release(course, log=lambda *a: None)
    committed = REPO / "release" / ASSIGNMENT
    names = sorted(p.name for p in (REPO / "source" / ASSIGNMENT).glob("*.ipynb"))
    assert sorted(p.name for p in committed.glob("*.ipynb")) == names, "run make release"
    for name in names:
        want = json.loads((fresh / name).read_text())
        have = json.loads((committed / name).read_text())
        assert have == want, f"release/{ASSIGNMENT}/{name} is stale: run make release"


def test_release_holds_no_solution_and_no_hidden_test():
    for src in sorted((REPO / "source" / ASSIGNMENT).glob("*.ipynb")):
        released = REPO / "release" / ASSIGNMENT / src.name
        text = released.read_text()
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text and "END HIDDEN" not in text
        rel = nbformat.read(released, as_version=4)
        code_lines = {ln.strip() for c in rel.cells for ln in c.source.split("\n")}
        all_text = "\n".join(c.source for c in rel.cells)
        source = nbformat.read(src, as_version=4)
        visible = "\n".join(split_hidden(c.source)[0] for c in source.cells)
        for c in source.cells:
            for line in _solution_lines(c.source):
                assert line not in code_lines, f"{src.name}: solution line in the release: {line!r}"
            _, hidden = split_hidden(c.source)
            for line in hidden.split("\n"):
                line = line.strip()
                if len(line) >= 12 and line not in visible:  # a line also in a visible cell is no secret
                    assert line not in all_text, f"{src.name}: hidden test line in the release: {line!r}"
        for c in rel.cells:
            meta = nbgrader_meta(c)
            if meta.get("solution") and c.cell_type == "code":
                assert "raise NotImplementedError()" in c.source, (src.name, meta.get("grade_id"))


def test_lecture_edition_is_up_to_date_with_source():
    problems = lecture_is_current(Course(REPO))
    assert not problems, "run make lecture:\n" + "\n".join(problems)


def test_lecture_edition_keeps_solutions_and_drops_tests_and_metadata():
    for nb_path in sorted((REPO / "notebooks").glob("*.ipynb")):
        text = nb_path.read_text()
        nb = nbformat.read(nb_path, as_version=4)
        assert "HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text and "_hidden_" not in text
        assert all("nbgrader" not in c.metadata for c in nb.cells)
        state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
        views = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
                 if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert views and all(o["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] in state
                             for o in views), nb_path.name
    src = nbformat.read(REPO / "source" / ASSIGNMENT / "03-one-word-at-a-time.ipynb", as_version=4)
    lec = nbformat.read(REPO / "notebooks" / "03-one-word-at-a-time.ipynb", as_version=4)
    sol = [ln for c in src.cells for ln in _solution_lines(c.source)]
    lec_text = "\n".join(c.source for c in lec.cells)
    assert sol and all(line in lec_text for line in sol)


def test_lecture_html_is_standalone_and_offline():
    import hashlib
    import re

    html_dir = REPO / "notebooks" / "html"
    static = html_dir / build.STATIC
    for f in (build.VENDOR / "html-manager").iterdir():
        assert hashlib.sha256((static / f.name).read_bytes()).digest() == hashlib.sha256(f.read_bytes()).digest()
    for page in sorted(html_dir.glob("*.html")):
        text = page.read_text()
        urls = re.findall(r'''(?:src|href)=["']([^"'#]+)["']''', text)
        remote = [u for u in urls if re.match(r"(?:https?:)?//", u)]
        assert not remote, f"{page.name} loads {remote[:3]} from the network"
        assert f"'{build.WIDGET_JS}'" in text and build.REQUIRE_JS in text
        assert 'application/vnd.jupyter.widget-state+json' in text
        for u in urls:
            if not u.startswith(("data:", "mailto:")):
                assert (page.parent / u).exists(), f"{page.name}: {u} is missing"


# ------------------------------------------------------------------ the sandbox wherever Python lives
SANDBOX_PROBE = """
import sys
import nbformat.v4 as nbf
from whole_transformer.course.nbgrader.execute import SandboxExecute
nb = nbf.new_notebook(cells=[nbf.new_code_cell(
    "import sys, numpy, torch\\nfrom whole_transformer import grading\\n"
    "print('ran', sys.executable, numpy.__version__)")])
nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
ex = SandboxExecute(timeout=120, startup_timeout=120, scratch_dir=sys.argv[1])
ex.preprocess(nb, {"metadata": {"path": sys.argv[1]}})
print("OUTPUT", [o.get("text", o.get("ename")) for o in nb.cells[0].outputs])
"""


def _python_homes(tmp_path):
    """Interpreters of the course's environment reached in the ways instructors have them."""
    import sysconfig

    venv = Path(sys.prefix)
    link = tmp_path / "linked-venv"
    link.symlink_to(venv, target_is_directory=True)
    homes = {"a venv that is a symbolic link": ([str(link / "bin" / "python")], {})}
    opt = Path("/opt") / f"wt-sandbox-test-{os.getpid()}"
    if os.access("/opt", os.W_OK):
        opt.symlink_to(venv, target_is_directory=True)
        homes["an environment under /opt"] = ([str(opt / "bin" / "python")], {})
    base = Path(sys._base_executable).resolve()
    site = os.pathsep.join([str(REPO), sysconfig.get_paths()["purelib"]])
    homes["a system Python with the packages on PYTHONPATH"] = ([str(base)], {"PYTHONPATH": site})
    return homes, opt


def test_the_sandbox_runs_the_kernel_wherever_python_lives(tmp_path):
    require_sandbox()
    homes, opt = _python_homes(tmp_path)
    try:
        for what, (python, env) in homes.items():
            scratch = tmp_path / f"scratch-{len(env)}-{abs(hash(what))}"
            scratch.mkdir()
            done = subprocess.run([*python, "-c", SANDBOX_PROBE, str(scratch)], capture_output=True, text=True,
                                  timeout=300, env={**os.environ, **env}, cwd=tmp_path)
            assert done.returncode == 0, (what, done.stderr[-2000:])
            assert "OUTPUT ['ran " in done.stdout, (what, done.stdout[-2000:], done.stderr[-2000:])
    finally:
        if opt.is_symlink():
            opt.unlink()
