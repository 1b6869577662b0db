"""The students' handout (``make handout``): complete on its own, and holding no answer.

Every test works on a copy of the handout in a temporary folder, run by a Python that cannot see
the instructor's repository: site-packages of the environment are on its path, but not the
editable install of the course (``-S``: no .pth file is read), so ``whole_transformer`` is the
handout's copy and ``whole_transformer.course`` does not exist there.

- the handout holds the released notebooks, the package without ``course/``, Makefile,
  pyproject.toml, environment.yml and a README with the student guide, and nothing else;
- every notebook runs top to bottom from the copy; every visible exercise check says ✓ Right to
  each correct implementation and names the mistake of each catalogued wrong one;
- no public function or method of the handout's package passes an exercise's hidden test;
- no solution cell's code appears in any handout file, even with other names and formatting.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import nbformat
import pytest
from implementations import implementations

from whole_transformer.course.answers.mistakes import FORWARD_CALLS
from whole_transformer.course.cells import HIDDEN_REGION, cell_source, grade_id
from whole_transformer.course.core import compare
from whole_transformer.course.core.expected import split_expected
from whole_transformer.course.layout import ASSIGNMENT, NOTEBOOK_OF, Course
from whole_transformer.course.publish import handout as handout_mod

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "source" / ASSIGNMENT
ARTIFACTS = REPO / "artifacts"


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    """A fresh handout, built into a temporary folder and then copied elsewhere (as a clone would be)."""
    built = handout_mod.handout(Course.here(REPO), tmp_path_factory.mktemp("built") / "handout", log=lambda *_: None)
    copy = tmp_path_factory.mktemp("student") / "course"
    shutil.copytree(built, copy)
    return copy


def isolated_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "JUPYTER", "WT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(root), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    env["PYTHONNOUSERSITE"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def run_isolated(root: Path, code: str, timeout: int = 600) -> str:
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=root,
        env=isolated_env(root),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# ------------------------------------------------------------------------------------------ contents
def test_the_handout_holds_what_a_student_needs_and_nothing_more(handout):
    top = sorted(p.name for p in handout.iterdir())
    assert top == sorted(
        [
            ".gitignore",
            handout_mod.MARK,
            "Makefile",
            "README.md",
            "environment.yml",
            "jupyter_server_config.py",
            "nbgrader_config.py",
            "pyproject.toml",
            "release",
            "whole_transformer",
        ]
    )
    notebooks = sorted(p.name for p in (handout / "release" / ASSIGNMENT).iterdir())
    assert notebooks == sorted(set(NOTEBOOK_OF.values()) | {"01-whole-machine.ipynb", "02-microscope.ipynb"})
    assert not (handout / "whole_transformer" / "course").exists()
    names = {p.name for p in handout.rglob("*")}
    assert not names & {
        "reference.py",
        "mistakes.py",
        "mistakes.toml",
        "hidden.py",
        "checkdata.py",
        "source",
        "tests",
        "notebooks",
        "gradebook.db",
        "autograde",
        "submitted",
        "sandbox.py",
        "scan.py",
        "restore.py",
        "numpy_model.py",
    }
    for path in (handout / "whole_transformer").rglob("*.py"):  # no NumPy forward pass: students write it (02)
        text = path.read_text(encoding="utf-8")
        for needle in ("def layer_norm", "def _layer_norm", "def multi_head_attention", "def decoder_block"):
            assert needle not in text, (path.name, needle)
        assert "np.sqrt(var" not in text and "np.tri(" not in text, path.name
    for nb in (handout / "release").rglob("*.ipynb"):
        text = nb.read_text()
        for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "BEGIN EXPECTED", "hand_out"):
            assert marker not in text, (nb.name, marker)
    readme = (handout / "README.md").read_text()
    assert "## Student guide" in readme and "make lab" in readme and "Instructor guide" not in readme
    pyproject = (handout / "pyproject.toml").read_text()
    assert '"torch==2.13.0"' in pyproject and "dev" not in pyproject and "pytest" not in pyproject


def test_make_lab_is_set_up_in_the_handout(handout):
    done = subprocess.run(["make", "-n", "lab"], cwd=handout, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "pip install --quiet -e ." in done.stdout and "jupyter lab" in done.stdout
    assert "release/whole-transformer/01-whole-machine.ipynb" in done.stdout
    # nbgrader's instructor tools are turned off in the handout's own .venv (Validate stays)
    shown = " ".join(done.stdout.replace("\\\n", " ").split())
    assert (
        "jupyter server extension disable --sys-prefix nbgrader.server_extensions.formgrader "
        "nbgrader.server_extensions.course_list nbgrader.server_extensions.assignment_list"
    ) in shown
    assert (
        "jupyter labextension disable --level=sys_prefix @jupyter/nbgrader:formgrader "
        "@jupyter/nbgrader:create-assignment @jupyter/nbgrader:course-list @jupyter/nbgrader:assignment-list "
        "@jupyter/nbgrader:menu"
    ) in shown
    assert "validate" not in shown.split("jupyter lab --")[0], "Validate must stay on"


def test_the_readme_is_the_student_guide_and_says_how_to_hand_in(handout):
    readme = (handout / "README.md").read_text()
    guide = (REPO / handout_mod.STUDENT_GUIDE).read_text()
    assert guide.startswith("# Student guide\n")
    # every line of docs/student.md is in the README, its headings one level down
    for line in guide.splitlines():
        assert ("#" + line if line.startswith("#") else line) in readme.splitlines(), line
    handing_in = readme.split("### Handing in\n")[1]
    for route in (
        "**JupyterHub:**",
        "press *Submit*",
        "**git:**",
        "push them",
        "**LMS upload:**",
        "four `.ipynb` files",
        "01-whole-machine.ipynb",
        "04-how-it-learned.ipynb",
    ):
        assert route in handing_in, route
    assert "press **Validate**" in readme and "hidden tests" in readme


def test_no_handout_file_points_to_a_folder_the_handout_lacks(handout):
    for path in [handout / "README.md", *sorted((handout / "release").rglob("*.ipynb"))]:
        text = path.read_text()
        assert "notebooks/html" not in text, f"{path.name} points to notebooks/html/, which the handout has not"
        assert "notebooks/" not in text.replace("release/", ""), f"{path.name} points to the lecture edition"


def test_the_handouts_nbgrader_config_sets_only_what_validate_says(handout):
    text = (handout / "nbgrader_config.py").read_text()
    settings = [line for line in text.splitlines() if line.startswith("c.")]
    # what Validate says, and that its kernel is reached by IPC (no "running over TCP without encryption")
    assert settings == ["c.Validator.failed_warning = (", 'c.KernelManager.transport = "ipc"'], settings


def test_the_handouts_makefile_gitignore_and_readme_mend_issue_40(handout):
    makefile = (handout / "Makefile").read_text()
    assert makefile.index("SETTINGS :=") < makefile.index("venv: $(STAMP) $(SETTINGS)")  # defined before it is used
    assert "--LabApp.default_url=/lab/tree/$(FIRST_NOTEBOOK)" in makefile  # printed without a browser: notebook 01
    ignored = (handout / ".gitignore").read_text().splitlines()
    assert "your-model.pt" in ignored and "your-models/" in ignored  # the runs a student keeps (issue 42)
    readme = " ".join((handout / "README.md").read_text().split())
    assert "### The labs by keyboard" in (handout / "README.md").read_text()
    assert "A selector (a dropdown) moves one choice with the arrow keys" in readme
    assert "Kernel is running over TCP without encryption" in readme and "127.0.0.1" in readme
    assert "cannot keep a secret from someone who tries" in readme


def test_a_handout_not_made_by_the_command_is_never_overwritten(tmp_path):
    mine = tmp_path / "handout"
    mine.mkdir()
    (mine / "notes.txt").write_text("my notes")
    with pytest.raises(RuntimeError, match="was not made by `make handout`"):
        handout_mod.handout(Course.here(REPO), mine, log=lambda *_: None)
    assert (mine / "notes.txt").read_text() == "my notes"


def test_rebuilding_keeps_the_git_folder(tmp_path):
    dest = handout_mod.handout(Course.here(REPO), tmp_path / "h", log=lambda *_: None)
    (dest / ".git").mkdir()
    (dest / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (dest / "stale.txt").write_text("left from an old build")
    handout_mod.handout(Course.here(REPO), dest, log=lambda *_: None)
    assert (dest / ".git" / "HEAD").exists() and not (dest / "stale.txt").exists()


# ------------------------------------------------------------------------------------------ it works alone
def test_the_copy_cannot_see_the_instructors_package(handout):
    out = run_isolated(
        handout,
        "import importlib.util, whole_transformer\n"
        "print(whole_transformer.__file__)\n"
        "print(importlib.util.find_spec('whole_transformer.course'))",
    )
    path, course = out.split()
    assert Path(path).resolve().is_relative_to(handout.resolve()) and course == "None"


@pytest.mark.slow
def test_every_notebook_runs_top_to_bottom_from_the_copy(handout, tmp_path):
    """The released notebooks, run in a kernel that sees only the copy (answers are stubs: the
    cells that raise NotImplementedError are the ones tagged raises-exception)."""
    from nbclient import NotebookClient

    kernels = tmp_path / "kernels" / "handout"
    kernels.mkdir(parents=True)
    (kernels / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-S", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "handout",
                "language": "python",
                "env": isolated_env(handout),
            }
        )
    )
    os.environ["JUPYTER_PATH"] = str(tmp_path)
    try:
        for path in sorted((handout / "release" / ASSIGNMENT).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            nb.cells.append(
                nbformat.v4.new_code_cell(
                    "import whole_transformer, importlib.util\n"
                    f"assert whole_transformer.__file__.startswith({str(handout.resolve())!r})\n"
                    "assert importlib.util.find_spec('whole_transformer.course') is None"
                )
            )
            NotebookClient(
                nb,
                kernel_name="handout",
                timeout=300,
                resources={"metadata": {"path": str(path.parent)}},
                allow_errors=False,
            ).execute()
            errors = [
                o
                for c in nb.cells
                if c.cell_type == "code"
                for o in c.get("outputs", [])
                if o.output_type == "error" and o.ename != "NotImplementedError"
            ]
            assert not errors, (path.name, errors[:1])
    finally:
        os.environ.pop("JUPYTER_PATH", None)


@pytest.mark.package  # every implementation through the copy's visible checks
def test_the_visible_checks_work_from_the_copy(handout):
    """✓ Right for every correct implementation; the catalogued words for every wrong one."""
    # a block or a forward pass calls the notebook's earlier functions: a right version of each is defined first,
    # as a student's notebook has them, so each implementation is judged as its own exercise's (mistakes.py)
    right = {}
    for i in implementations(verdict="correct"):
        right.setdefault(i.exercise, i.source)
    imps = [
        {
            "id": i.id,
            "exercise": i.exercise,
            "correct": i.correct,
            "before": list(FORWARD_CALLS.get(i.exercise, ())),
            "source": i.source,
            "says": i.check_says,
        }
        for i in implementations()
    ]
    setup = {ex: cell_source_of(ex, "constants") for ex in NOTEBOOK_OF}
    code = f"""
import contextlib, io, json
import numpy as np
from whole_transformer.checks import check
out = {{}}
for imp in json.loads({json.dumps(json.dumps(imps))}):
    ns = {{"np": np}}
    exec(json.loads({json.dumps(json.dumps(setup))})[imp["exercise"]], ns)
    for before in imp["before"]:
        exec(json.loads({json.dumps(json.dumps(right))})[before], ns)
    exec(imp["source"], ns)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        check(imp["exercise"], ns[imp["exercise"]])
    out[imp["id"]] = buf.getvalue()
print(json.dumps(out))
"""
    said = json.loads(run_isolated(handout, code).strip().splitlines()[-1])
    for imp in imps:
        text = said[imp["id"]]
        if imp["correct"]:
            assert text.startswith("✓ Right."), (imp["id"], text)
        else:
            assert text.startswith("✗") and imp["says"] in text, (imp["id"], text)


def cell_source_of(exercise: str, gid: str) -> str:
    nb = nbformat.read(SOURCE / NOTEBOOK_OF[exercise], as_version=4)
    return next(cell_source(c) for c in nb.cells if grade_id(c) == gid)


# ------------------------------------------------------------------------------------------ nothing solves
#: Run in the handout's Python: every public function and method of its package, called on each graded
#: exercise's hidden cases directly and through thin adapters (the arguments as torch tensors, a score
#: model as a torch module, a sequence as the number it reads, a batch of one); for each function and
#: exercise, how many cases its best adapter got right ("k/N") and by which adapter.
SOLVERS = r"""
import importlib, inspect, json, pkgutil, re, signal, sys
import numpy as np
import torch
import whole_transformer
from whole_transformer import grading, views

#: the exercises whose hidden test hands out each result's view (shape, rows along a direction): views.viewed
VIEWED = {"layer_norm", "multi_head_attention", "decoder_block", "forward"}

def candidates():
    seen = set()
    for info in pkgutil.walk_packages(whole_transformer.__path__, "whole_transformer."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                continue
            if inspect.isfunction(obj) and id(obj) not in seen:
                seen.add(id(obj))
                yield f"{mod.__name__}.{name}", obj
            elif inspect.isclass(obj):
                for mname, m in vars(obj).items():
                    if mname.startswith("_"):
                        continue
                    fn = getattr(obj, mname, None)
                    if callable(fn) and id(m) not in seen:
                        seen.add(id(m))
                        yield f"{mod.__name__}.{name}.{mname}", fn

def plain(v):
    # what an adapter hands back: a trace's ids, a tensor as NumPy, a 0-d array as a number
    if hasattr(v, "ids") and not callable(getattr(v, "ids")):
        v = v.ids
    if isinstance(v, torch.Tensor):
        v = v.detach().numpy()
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    return v

def T(a):
    return torch.as_tensor(np.asarray(a)) if isinstance(a, (np.ndarray, list)) else a

class TorchModel(torch.nn.Module):
    # a score model of the hidden tests (ids -> (L, V) scores) as the package's models are called
    def __init__(self, rows):
        super().__init__()
        self.rows = rows
    def forward(self, x, return_attention=False):
        out = torch.stack([torch.as_tensor(np.asarray(self.rows([int(i) for i in r]), dtype=np.float32)) for r in x])
        return (out, []) if return_attention else out

def number_of(seq, eq):
    digits = list(seq)[: list(seq).index(eq)]
    if not digits or any(not 2 <= int(d) <= 11 for d in digits):
        raise ValueError("not the digits of a number")
    return int("".join(str(int(d) - 2) for d in digits))

def first_row(v):
    v = plain(v)
    if isinstance(v, tuple):
        v = v[:2]
    return tuple(np.asarray(plain(a))[0].tolist() if np.ndim(plain(a)) == 2 else plain(a) for a in v)

GENERIC = {
    "as it is": lambda fn: fn,
    "torch arguments": lambda fn: lambda *a, **k: plain(fn(*map(T, a), **{n: T(v) for n, v in k.items()})),
    "positional arguments only": lambda fn: lambda *a, **k: plain(fn(*a)),
}
SPECIAL = {
    "greedy_decode": {
        "score model as a torch module": lambda fn: lambda model, prompt, eos=1, max_new=6: plain(
            fn(TorchModel(model), list(prompt), max_new)),
    },
    "make_xy": {
        "the sequence as its number, a batch of one": lambda fn: lambda seq, eq=12, pad=0: first_row(
            fn([number_of(seq, eq)])),
        "the sequence as its number": lambda fn: lambda seq, eq=12, pad=0: first_row(fn(number_of(seq, eq))),
    },
    "masked_loss": {
        "torch, a batch of one": lambda fn: lambda logits, targets, pad=0: plain(fn(T(logits)[None], T(targets)[None])),
        "torch, pad left out": lambda fn: lambda logits, targets, pad=0: plain(fn(T(logits), T(targets))),
    },
    "next_token": {
        "torch arguments, a batch of one": lambda fn: lambda h, W, b: plain(fn(T(h)[None], T(W), T(b))),
    },
}

class NoTripwire:
    # the course's own code is no tripwire here: a function that calls it is judged by its results alone, which
    # only lets more through (the tripwire takes points away, never gives them), and saves walking every loaded
    # module's names at each of the thousands of calls
    called = []
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return None

grading._run = lambda exercise, fn: NoTripwire()

class Slow(Exception):
    pass

class NotADraw(Exception):
    pass

def draws_only(fn):
    # a sampler's case passes only when every draw is an id (an int, compare.draws_fit): the first result that is
    # none ends the case, which fails either way (and a function that makes a page of HTML is not called 4,000 times)
    def call(*a, **k):
        v = fn(*a, **k)
        if type(grading.plain(v)) is not int:
            raise NotADraw("not an id")
        return v
    return call

def alarm(*_):
    raise Slow()

signal.signal(signal.SIGALRM, alarm)
spec = json.loads(sys.stdin.read())
functions = list(candidates())
results = {}
for exercise, kernel_part in spec.items():
    captured = []
    real = grading.hand_out
    grading.hand_out = lambda name, fn, cases, **kw: captured.append((cases, kw))
    ns = {"np": np, "grading": grading, exercise: None}
    exec(kernel_part, ns)
    grading.hand_out = real
    (cases, kw), = captured
    adapters = {**GENERIC, **SPECIAL.get(exercise, {})}
    sampler = any(len(case) == 3 for case in cases)  # a sampler's cases: (args, kwargs, (draws, seed))
    for label, fn in functions:
        for how, adapt in adapters.items():
            handed = []
            saved, grading._publish = grading._publish, lambda name, res: handed.append(res)
            signal.alarm(20)
            try:
                called = views.viewed(adapt(fn)) if exercise in VIEWED else adapt(fn)
                if sampler:
                    called = draws_only(called)
                grading.hand_out(exercise, called, cases, **kw)
            except BaseException as e:
                handed = [[{"error": type(e).__name__}] * len(cases)]
            finally:
                signal.alarm(0)
                grading._publish = saved
            results.setdefault(exercise, {}).setdefault(label, {})[how] = handed[0]
print(json.dumps(results))
"""


def graded_exercises() -> dict[str, tuple[str, dict]]:
    """Every graded exercise of source/'s notebooks (a graded test cell whose hidden part hands out a
    function's results): name → (the kernel's part of its hidden test, the expected values)."""
    found = {}
    for path in sorted(SOURCE.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            region = HIDDEN_REGION.search(cell_source(cell)) if meta.get("grade") else None
            named = region and re.search(r"""\bhand_out\(\s*["'](\w+)["']""", region.group(1))
            if named:
                found[named.group(1)] = split_expected(region.group(1))
    return found


def _cases_right(expected: dict, handed: list) -> int:
    if type(handed) is not list or len(handed) != len(expected["cases"]):
        return 0
    return sum(compare.case_passes(expected["compare"], c, r) for c, r in zip(expected["cases"], handed, strict=True))


@pytest.mark.slow
def test_no_function_of_the_handout_passes_a_hidden_test_even_through_an_adapter(handout):
    """Every public function and method of the handout's package, called on each graded exercise's hidden
    cases as it is and through thin adapters to the exercise's signature, fails that exercise's hidden test.
    The table (function × exercise: the most cases any adapter got right) is written to
    artifacts/adapter-table.md."""
    exercises = graded_exercises()
    assert set(NOTEBOOK_OF) <= set(exercises), sorted(exercises)
    done = subprocess.run(
        [sys.executable, "-S", "-c", SOLVERS],
        input=json.dumps({ex: kernel for ex, (kernel, _) in exercises.items()}),
        cwd=handout,
        env=isolated_env(handout),
        capture_output=True,
        text=True,
        timeout=2400,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(results) == set(exercises)
    names = sorted(exercises)
    rows, passing = [], []
    for label in sorted(next(iter(results.values()))):
        cells = []
        for ex in names:
            expected = exercises[ex][1]
            by_adapter = results[ex][label]
            best = max(by_adapter, key=lambda how: _cases_right(expected, by_adapter[how]))
            right = _cases_right(expected, by_adapter[best])
            cells.append(f"{right}/{len(expected['cases'])}" + (f" ({best})" if right else ""))
            passing += [(label, ex, how) for how, res in by_adapter.items() if not compare.judge(expected, res)]
        rows.append(f"| `{label}` | " + " | ".join(cells) + " |")
    table = [f"| function | {' | '.join(names)} |", "|---" * (len(names) + 1) + "|", *rows]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "adapter-table.md").write_text(
        "Hidden cases right, best adapter (every function fails every exercise's hidden test)\n\n"
        + "\n".join(table)
        + "\n"
    )
    assert len(rows) > 50, "every public function and method was tried"
    assert passing == [], passing


# ------------------------------------------------------------------------------------------ no solution code
class _Rename(ast.NodeTransformer):
    """Names become n0, n1, … in order of first appearance; docstrings go."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def _n(self, name: str) -> str:
        return self.names.setdefault(name, f"n{len(self.names)}")

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id=self._n(node.id), ctx=node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg=self._n(node.arg)), node)


def _docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def _kinds(statements: list[ast.stmt]) -> tuple[str, ...]:
    """The kinds of the statements ``_normal`` keeps, in order: runs of other kinds never normalise alike (each
    statement's dump starts with its kind), so only a run of the solution's kinds is normalised and compared."""
    return tuple(type(s).__name__ for s in statements if not _docstring(s))


def _normal(statements: list[ast.stmt]) -> str:
    body = [s for s in statements if not _docstring(s)]
    renamer = _Rename()
    return "|".join(ast.dump(renamer.visit(ast.fix_missing_locations(ast.parse(ast.unparse(s)).body[0]))) for s in body)


def _bodies(tree: ast.AST) -> list[list[ast.stmt]]:
    out = [tree.body] if hasattr(tree, "body") and isinstance(tree.body, list) else []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt) and node is not tree:
                out.append(block)
    return out


def solution_bodies() -> dict[str, str]:
    """Each exercise's solution (the code between the markers), normalised."""
    out = {}
    for ex, name in NOTEBOOK_OF.items():
        nb = nbformat.read(SOURCE / name, as_version=4)
        src = next(cell_source(c) for c in nb.cells if grade_id(c) == ex)
        fn = ast.parse(src).body[0]
        out[ex] = (len([s for s in fn.body if not isinstance(s, ast.Expr)]), _normal(fn.body), _kinds(fn.body))
    return out


def holds_solution(text: str, solutions: dict[str, tuple[int, str, tuple[str, ...]]]) -> list[str]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found = []
    for block in _bodies(tree):
        for ex, (n, want, kinds) in solutions.items():
            for i in range(0, max(0, len(block) - n) + 1):
                if _kinds(block[i : i + n]) == kinds and _normal(block[i : i + n]) == want:
                    found.append(ex)
    return found


def test_the_solution_finder_finds_renamed_and_reformatted_solutions():
    solutions = solution_bodies()
    nb = nbformat.read(SOURCE / NOTEBOOK_OF["make_xy"], as_version=4)
    src = next(cell_source(c) for c in nb.cells if grade_id(c) == "make_xy")
    disguised = ast.unparse(_RenameAll().visit(ast.parse(src)))  # other names, other formatting
    assert disguised != src and "make_xy" in holds_solution(f"class Helper:\n    pass\n\n\n{disguised}", solutions)


class _RenameAll(ast.NodeTransformer):
    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id=node.id + "_z", ctx=node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg=node.arg + "_z"), node)


@pytest.mark.package  # every solution, renamed and reformatted, searched in every file
def test_no_solution_code_in_any_handout_file(handout):
    solutions = solution_bodies()
    for path in handout.rglob("*"):
        if path.suffix == ".py":
            assert holds_solution(path.read_text(), solutions) == [], path
        elif path.suffix == ".ipynb":
            nb = nbformat.read(path, as_version=4)
            for c in nb.cells:
                if c.cell_type == "code":
                    assert holds_solution(cell_source(c), solutions) == [], (path.name, cell_source(c)[:80])


# ------------------------------------------------------------------------------------------ no answer in prose
def _prose(path: Path) -> list[str]:
    """The docstrings and the comments of a Python file."""
    import io
    import tokenize

    text = path.read_text(encoding="utf-8")
    found = [
        ast.get_docstring(node, clean=False) or ""
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    found += [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    return [f for f in found if f]


def _number(n: int) -> str:
    """A whole number as prose writes it: 16576 or 16,576, not inside a longer number."""
    return rf"(?<![\d,.])(?:{n}|{n:,})(?![\d]|,\d)"


def answer_patterns(qid: str, kind: str, answer) -> list[re.Pattern]:
    """What would state a question's answer in prose: the shape as a tuple, a number of 10 or more (or a
    shape's dimension of 100 or more), and a small number in the same sentence as the number the
    question is about (tokens_905: 905 and 8). A choice question's letter cannot be told from prose."""
    if kind == "shape":
        dims = r"\s*,\s*".join(str(d) for d in answer)
        return [re.compile(rf"\(\s*{dims}\s*\)")] + [re.compile(_number(d)) for d in answer if d >= 100]
    if kind == "int" and answer >= 10:
        return [re.compile(_number(answer))]
    about = re.search(r"_(\d{2,})\b", qid)
    if kind == "int" and about:
        sentence = r"[^.;:!?\n]*"
        a, b = _number(int(about.group(1))), _number(answer)
        return [re.compile(rf"{a}{sentence}{b}|{b}{sentence}{a}")]
    return []


def test_no_docstring_or_comment_of_the_handout_states_a_questions_answer(handout):
    from whole_transformer.course.answers.check_data import question_keys

    keys = question_keys(SOURCE)
    assert len(keys) >= 10, keys
    patterns = {qid: answer_patterns(qid, qs_kind(qid), answer) for qid, (_, answer) in keys.items()}
    assert sum(map(len, patterns.values())) >= 8  # every number or shape answer is looked for
    said = []
    for path in sorted((handout / "whole_transformer").rglob("*.py")):
        for prose in _prose(path):
            for qid, pats in patterns.items():
                said += [(path.name, qid, m.group(0)) for p in pats for m in [p.search(prose)] if m]
    assert said == [], said


def qs_kind(qid: str) -> str:
    from whole_transformer.questions import QUESTIONS

    return QUESTIONS[qid].kind


def test_the_answer_patterns_find_what_the_package_once_said():
    """The old words of the package (before issue 31) are caught: the test can fail."""
    old = {
        "flat_shape": "For 0…63: x is (64, 5); of the 320 targets 167 count, 118 are digits or '=', 35 are PAD.",
        "counted_427": "the loss skips them. Of the 8 targets of 427, 5 count.",
        "tokens_905": "The whole sequence of n: digits, '=', words, <eos>. sequence(905) has 8 tokens.",
        "ffn_params": "At the defaults: token table 2,688 · one attention 16,448 · one FFN 16,576 · one LayerNorm 128",
    }
    from whole_transformer.course.answers.check_data import question_keys

    keys = question_keys(SOURCE)
    for qid, text in old.items():
        assert any(p.search(text) for p in answer_patterns(qid, qs_kind(qid), keys[qid][1])), qid
    assert not any(
        p.search("The number 427 becomes one sequence of 9 tokens") for p in answer_patterns("counted_427", "int", 5)
    )
