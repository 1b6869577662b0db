"""The suite's own promises: each test's tier is derived from what it needs (tests/tiers.py), README says the
tiers as conftest declares them, make quick runs the unit tier, what is built once per run is built once however
many workers ask for it (tests/simclass/built.py), and no test asserts how long something took (that is make
bench's, on a quiet machine: a test checks that a time is measured and recorded, not its size)."""

from __future__ import annotations

import ast
import multiprocessing
import os
import re
import subprocess
from pathlib import Path

import pytest
from tiers import TIERS, tier_of

REPO = Path(__file__).resolve().parents[1]


class _Item:
    """What tier_of reads of a collected test: its fixtures, its marks and its code."""

    def __init__(self, function, fixtures=(), marks=()):
        self.function, self.fixturenames = function, list(fixtures)
        self._marks = [getattr(pytest.mark, m).mark for m in marks]

    def iter_markers(self):
        return iter(self._marks)


def _pure():
    return 1 + 1


def _grades_for_real():
    from simclass.minicourse import require_sandbox

    require_sandbox()


def _runs_a_command():
    import subprocess

    subprocess.run(["true"], check=True)


def test_a_tier_is_what_a_test_needs_the_most():
    assert tier_of(_Item(_pure)) == "unit"
    assert tier_of(_Item(_pure, marks=["package"])) == "package"
    assert tier_of(_Item(_runs_a_command)) == "package"  # a command in a fresh process
    assert tier_of(_Item(_pure, fixtures=["tmp_path", "released_mini"])) == "course"
    assert tier_of(_Item(_grades_for_real, fixtures=["released_mini"])) == "grading"  # the check it calls
    assert tier_of(_Item(_pure, fixtures=["released_course", "sandbox", "graded_class"])) == "class"
    assert tier_of(_Item(_pure, fixtures=["graded_class", "pw_driver"])) == "browser"
    assert tier_of(_Item(_pure, fixtures=["pw_driver"], marks=["classroom", "e2e"])) == "hub"
    assert [t.name for t in TIERS] == ["unit", "package", "course", "grading", "class", "browser", "hub"]


def test_the_readme_names_the_tiers_as_conftest_declares_them():
    row = next(ln for ln in (REPO / "README.md").read_text().splitlines() if ln.startswith("| `tests/`"))
    said = row.split("as `tests/tiers.py` derives it:")[1].split(". `make test`")[0]
    assert re.findall(r"(\w+) \(", said) == [t.name for t in TIERS], said
    assert "`make quick` (ruff check, mypy, ruff format --check and the unit tier)" in row
    assert "how many tests of each tier ran and their seconds" in row  # the run's own summary (conftest)
    assert not re.search(r"\d+ (tests|minutes|s)\b", row), row  # no count or time it cannot keep true


def test_make_quick_runs_the_unit_tier_and_make_test_keeps_the_tiers_order():
    make = (REPO / "Makefile").read_text()
    quick = make.split("\nquick:")[1].split("\n\n")[0]
    assert "--tier unit" in quick and "$(MAKE) --no-print-directory lint" in quick  # lint beside the unit tier
    test = make.split("\ntest:")[1].split("\n\n")[0]
    assert "-n 2 --dist loadgroup --no-loadscope-reorder" in test


def test_make_test_runs_the_tiers_named_in_tiers_and_every_tier_without():
    # the run's own TIERS (environment, or make's command line through MAKEFLAGS) must not reach these makes
    env = {k: v for k, v in os.environ.items() if k not in ("TIERS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}

    def command(*args):
        done = subprocess.run(
            ["make", "-n", "test", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        return next(ln for ln in done.stdout.splitlines() if " -m pytest " in ln).split()

    every = command()
    assert every[-1] == "--no-loadscope-reorder" and "--tier" not in every
    assert command("TIERS=browser hub")[len(every) :] == ["--tier", "browser", "--tier", "hub"]


# ------------------------------------------------------------------------------ built once, whoever asks
class _Factory:
    """What ``once`` reads of pytest's tmp_path_factory: the run's temporary folder."""

    def __init__(self, base: Path):
        self.base = base

    def getbasetemp(self) -> Path:
        return self.base


def _build_here(base: str, name: str, fail: bool, asking, said) -> None:
    """In a worker process: ``once`` of a build that counts how often it ran (and fails, if ``fail``); what it saw
    goes to the queue ``said``. The build waits until every worker has asked for it."""
    from simclass.built import once

    def build(folder: Path) -> dict:
        with open(Path(base) / f"{name}.count", "a") as f:
            f.write("built\n")
        for e in asking:
            e.wait(timeout=30)
        if fail:
            raise RuntimeError("the build broke")
        (folder / "made.txt").write_text("made")
        return {"answer": 42}

    me = asking[int(multiprocessing.current_process().name[-1])]
    me.set()
    try:
        folder, meta = once(_Factory(Path(base)), name, build)
        said.put(f"{(folder / 'made.txt').read_text()} {meta['answer']}")
    except BaseException as e:  # noqa: BLE001 - what the worker saw is the test's answer
        said.put(f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("fail", [False, True], ids=["built", "failed"])
def test_a_build_is_made_once_however_many_workers_ask(tmp_path, fail, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # the build's folder: under tmp_path itself
    ctx = multiprocessing.get_context("fork")
    asking, said = [ctx.Event(), ctx.Event()], ctx.Queue()
    workers = [
        ctx.Process(target=_build_here, args=(str(tmp_path), "thing", fail, asking, said), name=f"worker{i}")
        for i in range(2)
    ]
    for w in workers:
        w.start()
    answers = sorted(said.get(timeout=60) for _ in workers)
    for w in workers:
        w.join(timeout=30)
    assert (tmp_path / "thing.count").read_text() == "built\n"  # once, by whichever asked first
    if not fail:
        assert answers == ["made 42", "made 42"]
    else:  # the one that built it fails with its error; the other with the same error, without trying again
        assert all("the build broke" in a for a in answers), answers


# ------------------------------------------------------------------------------ no time bound in a test
_TIMED = re.compile(r"(^|_)(ms|seconds|secs|took|wall|elapsed|duration)($|_)")


def _time_bounds(path: Path, root: Path = REPO) -> list[str]:
    """Each assert of ``path`` that compares a timed figure (a name like median_ms, seconds, wall) with < or >."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Assert):
            continue
        for cmp in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            if not any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in cmp.ops):
                continue
            sides = [cmp.left, *cmp.comparators]
            names = {n.id for s in sides for n in ast.walk(s) if isinstance(n, ast.Name)}
            names |= {n.attr for s in sides for n in ast.walk(s) if isinstance(n, ast.Attribute)}
            bound = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, (int, float))]
            if any(_TIMED.search(n) for n in names) and any(b.value > 0 for b in bound):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node.test)}")
    return found


def test_no_test_asserts_how_long_something_took():
    found = [f for p in sorted((REPO / "tests").rglob("*.py")) for f in _time_bounds(p)]
    assert not found, "a time bound belongs to make bench, not a test:\n" + "\n".join(found)


def test_the_time_bound_check_finds_one_and_passes_over_a_time_measured(tmp_path):
    planted = tmp_path / "test_planted.py"
    planted.write_text("def test_x():\n    median_ms = 3.0\n    assert median_ms < 50\n    assert median_ms > 0\n")
    assert _time_bounds(planted, tmp_path) == ["test_planted.py:3: median_ms < 50"]
