"""The sandbox (``sandbox/``) and the execute step nbgrader runs in it (``plugins/execute.py``): a
sandboxed kernel sees nothing of the course, no network, no other student; execute survives dead
and stuck kernels; the sandbox runs the kernel wherever the course's Python lives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat.v4 as nbf
import pytest
from simclass.loopback import loopback_listener
from simclass.minicourse import require_sandbox

from whole_transformer.course.plugins.execute import SandboxExecute

REPO = Path(__file__).resolve().parents[1]

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
attempt("import_course", lambda: __import__("whole_transformer.course.autograder.autograde"))
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
    got = eval(text)  # our own dict literal
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
            c.metadata["nbgrader"] = {
                "grade": True,
                "grade_id": f"t{i}",
                "points": 1,
                "locked": True,
                "solution": False,
                "schema_version": 3,
            }
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
    nb, ex = _run(cells, timeout=4, iopub_timeout=3)
    assert _errors(nb.cells[1]) == ["CellTimeoutError"] and "killed" in nb.cells[1].outputs[-1]["evalue"]
    assert _errors(nb.cells[2]) == []  # the kernel was restarted and x restored
    assert _errors(nb.cells[3]) == ["DeadKernelError"]
    assert _errors(nb.cells[4]) == []
    assert "KeyboardInterrupt" in _errors(nb.cells[5])  # a plain loop is interrupted, the kernel lives
    assert "still here 41" in "".join(o.get("text", "") for o in nb.cells[6].outputs)
    report = ex.resources["wt_execution"]  # what run_result.RunResult hands back with the run's result
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


# ------------------------------------------------------------------ the sandbox wherever Python lives
SANDBOX_PROBE = """
import sys
import nbformat.v4 as nbf
from whole_transformer.course.plugins.execute import SandboxExecute
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
            done = subprocess.run(
                [*python, "-c", SANDBOX_PROBE, str(scratch)],
                capture_output=True,
                text=True,
                timeout=300,
                env={**os.environ, **env},
                cwd=tmp_path,
            )
            assert done.returncode == 0, (what, done.stderr[-2000:])
            assert "OUTPUT ['ran " in done.stdout, (what, done.stdout[-2000:], done.stderr[-2000:])
    finally:
        if opt.is_symlink():
            opt.unlink()
