"""The simulated class: who hands in what, and what the autograder must make of it.

Every student is built from the course's released notebooks (``simclass.Notebooks``) and says,
for every graded cell of the assignment, the points and the status expected in
``grades-detail.csv``; notebooks not handed in are ``missing``. Findings expected in
``integrity-report.csv`` are given as (notebook, cell, words the finding must contain).

The cases: full solutions; the untouched release; partial work; every correct and every wrong
implementation of tests/implementations/ (several exercises per student, each exercise graded on
its own); and hostile submissions that attack the grader, one or two per student.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

from implementations import implementations

from whole_transformer.course.cells import grade_id as gid
from whole_transformer.course.layout import ASSIGNMENT, NOTEBOOK_OF

from .notebooks import Notebooks, cell, set_answer

NB1, NB2, NB3, NB4 = "01-whole-machine", "02-microscope", "03-one-word-at-a-time", "04-how-it-learned"
EXERCISE_TEST = {ex: f"test_{ex}" for ex in NOTEBOOK_OF}
#: Mistakes of the course's catalogue the class leaves out: they joined the catalogue after the class
#: was fixed, and a class that stays the same gives grades that compare across versions.
NOT_IN_CLASS = {"make_xy__wrong__whole_sequence"}


@dataclass
class Student:
    name: str
    notebooks: dict  # file name (relative to submitted/<name>/<folder>/) → notebook
    expect: dict  # grade_id → (points, status); unlisted cells of handed-in notebooks: full, graded
    raw: dict = field(default_factory=dict)  # file name → text (invalid files)
    folder: str = ASSIGNMENT
    findings: list = field(default_factory=list)  # (notebook, cell or None, words)
    # findings the machine's load may add but need not (a slow student's cell timed out): allowed, not required
    may_find: list = field(default_factory=list)  # (notebook, cell or None, words)
    no_findings: bool = False  # nothing at all may be reported
    handed_in: tuple = ()  # notebook names counted as handed in (default: keys of notebooks)
    note: str = ""


def expected_table(nbs: Notebooks, s: Student) -> dict[str, tuple[float, str]]:
    """grade_id → (points, status) for every graded cell of the assignment."""
    handed = set(s.handed_in or [Path(k).stem for k in s.notebooks])
    out = {}
    for name in nbs.names:
        for g, pts in nbs.grade_cells(name).items():
            out[g] = (pts, "graded") if name in handed else (0.0, "missing")
    for g, v in s.expect.items():
        if g not in out:
            raise KeyError(f"{s.name}: no graded cell {g}")
        out[g] = v
    return out


def _impl_students(nbs: Notebooks) -> tuple[list[Student], dict[str, list]]:
    """Every wrong implementation of every exercise, one per exercise per student (03 and 04
    handed in); an exercise with fewer wrong ones gets correct ones in the remaining students.
    Returns the students and, per exercise, the correct implementations not used yet."""
    wrong = {ex: [i for i in implementations(ex, "wrong") if i.id not in NOT_IN_CLASS] for ex in NOTEBOOK_OF}
    spare = {ex: implementations(ex, "correct") for ex in NOTEBOOK_OF}
    count = max(len(v) for v in wrong.values())
    students = []
    for k in range(count):
        notebooks = {NB3: nbs.solved(NB3), NB4: nbs.solved(NB4)}
        expect, used = {}, []
        for ex in NOTEBOOK_OF:
            impl = wrong[ex][k] if k < len(wrong[ex]) else (spare[ex].pop(0) if spare[ex] else None)
            if impl is None:
                continue
            nb_name = NOTEBOOK_OF[ex].removesuffix(".ipynb")
            set_answer(notebooks[nb_name], ex, impl.source)
            pts = nbs.grade_cells(nb_name)[EXERCISE_TEST[ex]]
            expect[EXERCISE_TEST[ex]] = (pts if impl.correct else 0.0, "graded")
            used.append(impl.id)
        students.append(Student(f"impl-{k:02d}", notebooks, expect, note=", ".join(used)))
    return students, spare


class _Alternates:
    """Hands out the correct implementations not used by the impl students, one per solved notebook,
    so that every correct implementation is graded somewhere too."""

    def __init__(self, nbs: Notebooks, spare: dict[str, list]):
        self.nbs, self.spare = nbs, spare

    def solved(self, name: str):
        nb = self.nbs.solved(name)
        for ex, nb_file in NOTEBOOK_OF.items():
            if nb_file.removesuffix(".ipynb") == name and self.spare[ex]:
                set_answer(nb, ex, self.spare[ex].pop(0).source)
        return nb

    def left(self) -> list[str]:
        return [i.id for v in self.spare.values() for i in v]


def _solved(nbs, *names):
    return {n: nbs.solved(n) for n in names}


def _append_to_answer(nb, grade_id, code):
    c = cell(nb, grade_id)
    c.source = c.source + "\n" + code
    return nb


def _insert_after(nb, grade_id, source, cell_type="code"):
    import nbformat.v4 as nbf

    idx = next(i for i, c in enumerate(nb.cells) if gid(c) == grade_id)
    new = nbf.new_code_cell(source) if cell_type == "code" else nbf.new_markdown_cell(source)
    nb.cells.insert(idx + 1, new)
    return nb


def roster(nbs: Notebooks, course: Path, port: int = 9) -> list[Student]:
    """The whole class (course: the course folder, for the hostile students' absolute paths; port: a
    loopback listener's outside the sandbox, which the student who tries the network must not reach)."""
    zero = lambda *gids: {g: (0.0, "graded") for g in gids}  # noqa: E731
    failed = lambda *gids: {g: (0.0, "failed") for g in gids}  # noqa: E731
    all_names = nbs.names
    wrong = {ex: implementations(ex, "wrong")[0].source for ex in NOTEBOOK_OF}
    S = []

    S.append(Student("full", _solved(nbs, *all_names), {}, no_findings=True, note="every answer right"))
    S.append(
        Student(
            "release",
            {n: nbs.blank(n) for n in all_names},
            {g: (0.0, "graded") for n in all_names for g in nbs.grade_cells(n)},
            no_findings=True,
            note="hands in the release untouched",
        )
    )

    part = {NB1: nbs.solved(NB1), NB3: nbs.solved(NB3)}
    if NB2 in all_names:
        part[NB2] = nbs.blank(NB2)
    part3 = part[NB3]
    set_answer(part3, "greedy_decode", cell(nbs.blank(NB3), "greedy_decode").source)  # stub left as released
    set_answer(part3, "rows_742", "rows_742 = 6")
    exp = {"test_greedy_decode": (0.0, "graded"), "test_rows_742": (0.0, "graded")}
    if NB2 in all_names:
        exp.update({g: (0.0, "graded") for g in nbs.grade_cells(NB2)})
    S.append(Student("partial", part, exp, note="01 done, 02 untouched, 03 half done, 04 not handed in"))

    impl_students, spare = _impl_students(nbs)
    S.extend(impl_students)
    alt = _Alternates(nbs, spare)

    # ------------------------------------------------------------------ hostile: the kernel
    nb = alt.solved(NB3)
    _append_to_answer(nb, "next_token", "while True:\n    pass")
    S.append(
        Student(
            "infinite-loop",
            {NB3: nb},
            {},
            findings=[(NB3, "next_token", "ran over")],
            note="an endless loop after a right next_token: interrupted, the rest graded",
        )
    )

    nb = alt.solved(NB3)
    _append_to_answer(
        nb,
        "greedy_decode",
        "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n    except KeyboardInterrupt:\n        pass",
    )
    S.append(
        Student(
            "swallow-interrupt",
            {NB3: nb},
            zero("test_greedy_decode"),
            findings=[
                (NB3, "greedy_decode", "kernel was killed"),
                (NB3, "greedy_decode", "catches KeyboardInterrupt"),
                (NB3, "greedy_decode", "ran over 30 s; the kernel was interrupted"),
            ],
            note="ignores interrupts: the kernel is killed and restarted, later cells still graded",
        )
    )

    nb = alt.solved(NB3)
    set_answer(
        nb,
        "next_token",
        "import os\n\n\ndef next_token(h, W, b):\n    if len(h) == 1:\n"
        "        os._exit(1)\n    return int(np.argmax(h @ W + b))",
    )
    S.append(
        Student(
            "os-exit",
            {NB3: nb},
            failed("test_next_token"),
            findings=[(NB3, "test_next_token", "kernel died"), (NB3, "next_token", "os._exit")],
            note="kills the kernel inside the hidden test: that test failed, the rest graded",
        )
    )

    nb = alt.solved(NB3)
    _append_to_answer(nb, "next_token", "import sys\nsys.exit(3)")
    S.append(
        Student(
            "sys-exit",
            {NB3: nb},
            {},
            findings=[(NB3, "next_token", "sys.exit")],
            note="sys.exit after a right next_token: IPython stops it, full points",
        )
    )

    nb = alt.solved(NB3)
    set_answer(
        nb,
        "next_token",
        "def next_token(h, W, b):\n    hog = bytearray(64 * 2**30)  # 64 GiB\n    return int(np.argmax(h @ W + b))",
    )
    _append_to_answer(nb, "greedy_decode", "too_big = np.ones((2**20, 2**20))")
    S.append(
        Student(
            "huge-allocation",
            {NB3: nb},
            zero("test_next_token"),
            note="MemoryError inside next_token and in an answer cell; greedy_decode still right",
        )
    )

    nb = alt.solved(NB3)
    set_answer(
        nb,
        "greedy_decode",
        "def greedy_decode(model, prompt, eos=1, max_new=6):\n    return greedy_decode(model, prompt, eos, max_new)",
    )
    S.append(
        Student(
            "infinite-recursion",
            {NB3: nb},
            zero("test_greedy_decode"),
            note="RecursionError",
            may_find=[(NB3, None, "while grading:")],
        )
    )  # 35 deep tracebacks: past 30 s on a loaded machine

    nb = alt.solved(NB3)
    _append_to_answer(nb, "next_token", "for i in range(100_000):\n    print('line', i)")
    S.append(Student("flood-output", {NB3: nb}, {}, note="100,000 lines of output, cut by the autograder"))

    # ------------------------------------------------------------------ hostile: the files
    text = json.dumps(nbs.solved(NB4), indent=1)
    S.append(
        Student(
            "invalid-json",
            {NB3: alt.solved(NB3)},
            failed(*nbs.grade_cells(NB4)),
            raw={f"{NB4}.ipynb": text[: len(text) // 2]},
            handed_in=(NB3, NB4),
            findings=[(NB4, "notebook", "not valid JSON")],
            note="04 cut in half (invalid JSON): failed with the reason, 03 graded",
        )
    )

    S.append(Student("empty-folder", {}, {}, note="an empty folder: everything missing"))

    S.append(
        Student(
            "renamed",
            {f"{NB3} (1).ipynb": alt.solved(NB3), NB4: alt.solved(NB4)},
            {},
            handed_in=(NB3, NB4),
            findings=[(NB3, "notebook", "handed in as")],
            note="03 saved as a copy with another name",
        )
    )

    # ------------------------------------------------------------------ hostile: the cells
    nb = alt.solved(NB3)
    set_answer(nb, "next_token", wrong["next_token"])
    cell(nb, "test_next_token").source = "pass"
    S.append(
        Student(
            "test-edited",
            {NB3: nb},
            zero("test_next_token"),
            findings=[(NB3, "test_next_token", "edited")],
            note="test cell replaced by pass",
        )
    )

    nb = alt.solved(NB4)
    set_answer(nb, "make_xy", wrong["make_xy"])
    nb.cells = [c for c in nb.cells if gid(c) != "test_make_xy"]
    S.append(
        Student(
            "test-deleted",
            {NB4: nb},
            zero("test_make_xy"),
            findings=[(NB4, "test_make_xy", "deleted")],
            note="test cell deleted",
        )
    )

    nb = alt.solved(NB3)
    set_answer(nb, "greedy_decode", wrong["greedy_decode"])
    c = cell(nb, "test_greedy_decode")
    del c.metadata["nbgrader"]
    c.source = "print('all good')"
    S.append(
        Student(
            "test-detagged",
            {NB3: nb},
            zero("test_greedy_decode"),
            findings=[
                (NB3, "test_greedy_decode", "de-tagged"),
                (NB3, "test_greedy_decode", "test cell edited; restored from the release"),
            ],
            note="test cell stripped of its nbgrader metadata and emptied",
        )
    )

    nb = alt.solved(NB3)
    cell(nb, "test_greedy_decode").metadata["nbgrader"]["points"] = 100
    cell(nb, "test_next_token").metadata["nbgrader"]["points"] = 0
    S.append(
        Student(
            "points-changed",
            {NB3: nb},
            {},
            findings=[(NB3, "test_greedy_decode", "points"), (NB3, "test_next_token", "points")],
            note="points of two test cells changed: restored (max stays as set)",
        )
    )

    nb = alt.solved(NB3)
    c = cell(nb, "next_token")
    c.cell_type = "markdown"
    c.pop("outputs", None)
    c.pop("execution_count", None)
    S.append(
        Student(
            "answer-markdown",
            {NB3: nb},
            {},
            findings=[(NB3, "next_token", "re-typed")],
            note="the answer cell turned into markdown: run as code again",
        )
    )

    nb = alt.solved(NB3)
    set_answer(nb, "next_token", wrong["next_token"])
    fake = copy.deepcopy(cell(nb, "test_next_token"))
    fake.source = "pass"
    fake.id = "fake0001"
    idx = next(i for i, c in enumerate(nb.cells) if gid(c) == "test_next_token")
    nb.cells.insert(idx, fake)
    S.append(
        Student(
            "duplicate-ids",
            {NB3: nb},
            zero("test_next_token"),
            findings=[(NB3, "test_next_token", "duplicate")],
            note="a passing copy of the test cell with the same grade_id",
        )
    )

    # ------------------------------------------------------------------ hostile: fooling the tests
    def tampering(name, notebook, exercise, code, findings, note, zeroed=()):
        """A wrong `exercise` handed in after `code`, which tampers with the kernel: zero points on its test (and on
        `zeroed`), and a finding on that answer saying each of `findings`."""
        nb = alt.solved(notebook)
        set_answer(nb, exercise, code + "\n\n" + wrong[exercise])
        S.append(
            Student(
                name,
                {notebook: nb},
                zero(f"test_{exercise}", *zeroed),
                findings=[(notebook, exercise, words) for words in findings],
                note=note,
            )
        )

    tampering(
        "shadowed-builtins",
        NB4,
        "masked_loss",
        "abs = lambda x: 0.0\nisinstance = lambda *a: True\nfloat = lambda x=0: 0.0\nround = lambda *a, **k: 0\n",
        [f"builtin '{name}'" for name in ("abs", "isinstance", "float", "round")],
        "a wrong masked_loss behind replaced builtins",
    )

    nb = alt.solved(NB3)
    set_answer(nb, "next_token", ALWAYS_EQUAL)
    S.append(
        Student(
            "always-equal",
            {NB3: nb},
            zero("test_next_token"),
            findings=[
                (NB3, "next_token", "__eq__"),
                (NB3, "next_token", "__ne__"),
                (NB3, "next_token", "class Anything subclasses int"),
            ],
            note="returns an object equal to anything",
        )
    )

    tampering(
        "isclose-replaced",
        NB3,
        "next_token",
        "np.isclose = lambda *a, **k: True\n"
        "np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n",
        [f"replaces np.{name}" for name in ("isclose", "allclose", "array_equal")],
        "NumPy comparisons replaced",
    )
    tampering(
        "nbgrader-branch",
        NB4,
        "make_xy",
        "import os\n\nif os.environ.get('NBGRADER_EXECUTION'):\n"
        "    import builtins\n    builtins.abs = lambda x: 0\n"
        "    np.array_equal = lambda *a, **k: True\n    np.isclose = lambda *a, **k: True\n",
        ["NBGRADER_EXECUTION", "replaces builtins.abs", "replaces np.array_equal", "replaces np.isclose"],
        "tampers with builtins and NumPy only when graded",
    )

    # ------------------------------------------------------------------ hostile: talking the kernel into points
    # Each hands in a wrong answer and tampers with its own kernel; the verdict is reached outside the
    # kernel, so each loses that exercise's points.
    tampering(
        "patches-grading",
        NB4,
        "masked_loss",
        PATCH_GRADING,
        ["setattr() on module whole_transformer.grading"],
        "replaces every function of whole_transformer.grading by one that returns True: the test cells after "
        "it hand nothing out, so they fail too",
        zeroed=("test_no_causal_mask", "test_learns_nothing"),
    )
    tampering(
        "swaps-modules",
        NB3,
        "next_token",
        SWAP_MODULES,
        [
            "class Yes defines __getattr__",
            "replaces sys.modules",
            "replaces whole_transformer.grading",
            "uses sys.modules",
        ],
        "puts a module whose every attribute returns True in sys.modules (grading, numpy): the hidden tests "
        "after it hand nothing out, so they fail too",
        zeroed=("test_greedy_decode", "test_cached_attention", "test_sample_next"),
    )

    def hooks_ipython(name, notebook, exercise, code, hook, note):
        tampering(
            name, notebook, exercise, code, [f"IPython internals ({hook})", "IPython internals (get_ipython)"], note
        )

    hooks_ipython(
        "custom-exc",
        NB3,
        "greedy_decode",
        "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
        "set_custom_exc",
        "an IPython exception handler that swallows every error",
    )

    nb = alt.solved(NB4)
    set_answer(nb, "masked_loss", LYING_FLOAT)
    S.append(
        Student(
            "lying-float",
            {NB4: nb},
            zero("test_masked_loss"),
            findings=[
                (NB4, "masked_loss", words)
                for words in ("class Liar subclasses float", "class Liar defines __eq__", "class Liar defines __abs__")
            ],
            note="returns a float subclass whose ==, - and abs lie",
        )
    )

    hooks_ipython(
        "ast-no-assert",
        NB4,
        "make_xy",
        NO_ASSERT,
        "ast_transformers",
        "an AST transformer that rewrites every assert away",
    )
    hooks_ipython(
        "fake-verdict",
        NB3,
        "next_token",
        FAKE_VERDICT,
        "events",
        "prints 'Tests passed.' and hands out a second, made-up set of results after every cell",
    )

    nb = alt.solved(NB3)
    src, gb = course / "source" / ASSIGNMENT / f"{NB3}.ipynb", course / "gradebook.db"
    other = course / "submitted" / "full" / ASSIGNMENT / f"{NB3}.ipynb"
    _insert_after(nb, "next_token", SNOOP.format(source=str(src), gradebook=str(gb), other=str(other)))
    _insert_after(nb, "test_next_token", "print('HISTORY', In, _ih)")
    S.append(
        Student(
            "reads-source",
            {NB3: nb},
            {},
            findings=[(NB3, None, "outside the submission"), (NB3, None, "names the gradebook")],
            note="tries to read ../../source, the gradebook, another student's notebook, the home folder; "
            "prints the input history after a test cell",
        )
    )

    nb = alt.solved(NB3)
    _insert_after(nb, "next_token", VANDAL.format(root=str(course), port=port))
    S.append(
        Student(
            "writes-outside",
            {NB3: nb},
            {},
            findings=[(NB3, None, "outside the submission"), (NB3, None, "names the gradebook")],
            note="tries to write into the course, the gradebook, home and other students; and the network",
        )
    )
    if alt.left():
        raise AssertionError(f"correct implementations graded nowhere: {alt.left()}")
    return S


ALWAYS_EQUAL = """\
class Anything(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def next_token(h, W, b):
    return Anything(0)
"""

PATCH_GRADING = """\
from whole_transformer import grading
for name in dir(grading):
    if callable(getattr(grading, name)) and not name.startswith("__"):
        setattr(grading, name, lambda *a, **k: True)"""

SWAP_MODULES = """\
import sys, types


class Yes(types.ModuleType):
    def __getattr__(self, name):
        return lambda *a, **k: True


import whole_transformer
sys.modules["whole_transformer.grading"] = whole_transformer.grading = Yes("whole_transformer.grading")
sys.modules["numpy.testing"] = Yes("numpy.testing")"""

LYING_FLOAT = """\
class Liar(float):
    def __eq__(self, other):
        return True

    def __sub__(self, other):
        return Liar(0.0)

    def __rsub__(self, other):
        return Liar(0.0)

    def __abs__(self):
        return 0.0

    __hash__ = float.__hash__


def masked_loss(logits, targets, pad=0):
    return Liar(123.0)
"""

NO_ASSERT = """\
import ast


class NoAssert(ast.NodeTransformer):
    def visit_Assert(self, node):
        return ast.Pass()


get_ipython().ast_transformers.append(NoAssert())"""

FAKE_VERDICT = """\
from IPython.display import publish_display_data


def _after(result):
    print("Tests passed.")
    publish_display_data({"application/vnd.whole-transformer.results+json":
                          '{"name": "next_token", "results": [{"value": 0}]}', "text/plain": "ok"})


get_ipython().events.register("post_run_cell", _after)"""

SNOOP = """\
import os, pathlib
for path in ["../../source/whole-transformer/03-one-word-at-a-time.ipynb", "../../../gradebook.db",
             {source!r}, {gradebook!r}, {other!r}, os.path.expanduser("~/.bashrc"), "/root/.bashrc"]:
    try:
        print("READ", path, len(open(path, "rb").read()))
    except Exception as e:
        print("DENIED", path, type(e).__name__)
print("LISTING", sorted(os.listdir("..")))
"""

VANDAL = """\
import os, socket
for path in [{root!r} + "/pwned.txt", {root!r} + "/gradebook.db", {root!r} + "/submitted/full/x.txt",
             "../../pwned.txt", "/root/pwned.txt"]:
    try:
        with open(path, "a") as f:
            f.write("pwned")
        print("WROTE", path)
    except Exception as e:
        print("DENIED", path, type(e).__name__)
try:  # a listener outside the sandbox, on the machine's loopback address (tests/simclass/loopback.py)
    socket.create_connection(("127.0.0.1", {port}), timeout=3)
    print("NETWORK open")
except Exception as e:
    print("NETWORK closed", type(e).__name__)
"""


def _left_unanswered(nbs, s, g: str) -> bool:
    """The student's answer cell of test ``g`` is as released, or still raises NotImplementedError."""
    answer = g.removeprefix("test_")
    for fname, nb in s.notebooks.items():
        mine = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer]
        if mine:
            blank = [
                c
                for c in nbs.blank(Path(fname).stem).cells
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == answer
            ]
            return (blank and mine[0].source == blank[0].source) or "raise NotImplementedError" in mine[0].source
    return False


def expected_now(nbs, s, detail) -> dict[str, tuple[float, str]]:
    """The roster's expectations with issue 20's grading: a zero for an answer not written yet is
    ``unanswered``; a zero for a wrong answer is partial credit by kind of case, strictly below full
    (the class tests assert that: here it takes the row's score; ``detail``: grades-detail.csv's
    rows by (student, grade_id))."""
    out = {}
    for g, (points, status) in expected_table(nbs, s).items():
        row = detail.get((s.name, g))
        if status == "graded" and points == 0.0 and row is not None:
            if row["status"] == "unanswered" and _left_unanswered(nbs, s, g):
                status = "unanswered"
            elif row["status"] == "graded" and float(row["score"]) < float(row["max_score"]) and row["reason"]:
                points = float(row["score"])
        out[g] = (points, status)
    return out
