"""The simulated class: who hands in what, and what the autograder must make of it.

Every student is built from the course's released notebooks (``simclass.Notebooks``) by a builder of
hand_ins.py and says, for every graded cell of the assignment, the points and the status expected in
``grades-detail.csv`` (expected.py); notebooks not handed in are ``missing``. Findings expected in
``integrity-report.csv`` are given as (cell, words the finding must contain) on the notebook handed in.

The cases: full solutions; the untouched release; partial work; every correct and every wrong
implementation of tests/implementations/ (several exercises per student, each exercise graded on
its own); and hostile submissions that attack the grader, one or two per student, one row each in
the tables below (the code they hand in: grader_attacks.py; the changes they make: edits.py).
"""

from __future__ import annotations

from pathlib import Path

from . import edits as edit
from . import grader_attacks as attack
from .expected import Student
from .hand_ins import (
    NB3,
    NB4,
    Materials,
    catalogued_mistakes,
    empty_folder,
    full_solutions,
    half_a_notebook,
    hostile,
    on,
    partial_work,
    renamed_copy,
    untouched_release,
)
from .notebooks import Notebooks

#: Mistakes of the course's catalogue the class leaves out: they joined the catalogue after the class
#: was fixed, and a class that stays the same gives grades that compare across versions.
NOT_IN_CLASS = {
    "make_xy__wrong__whole_sequence",
    # issue 40's (tests/test_exercises.py grades each of them through the visible check and the hidden tests)
    "greedy_decode__wrong__argmax_axis_0",
    "masked_loss__wrong__softmax_axis_0",
    "masked_loss__wrong__log2",
    "cached_attention__wrong__new_row_on_top",
    "cached_attention__wrong__exp_without_max",
    "cached_attention__wrong__returns_v_k",
    "cached_attention__wrong__module_list",
    "cached_attention__wrong__no_softmax",
    "sample_next__wrong__bare_value_error",
    "sample_next__wrong__np_random",
    "sample_next__wrong__top_p_unrescaled",
}


def _ipython_hook(exercise: str, hook: str):
    """The findings on a student who reaches into IPython's internals (``hook``) from ``exercise``'s answer."""
    return on(exercise, f"IPython internals ({hook})", "IPython internals (get_ipython)")


# Attacks on the kernel: it loops, ignores interrupts, dies, exits, runs out of memory or floods its output.
KERNEL = [
    hostile(
        "infinite-loop",
        NB3,
        edit.append("next_token", "while True:\n    pass"),
        note="an endless loop after a right next_token: interrupted, the rest graded",
        findings=on("next_token", "ran over"),
    ),
    hostile(
        "swallow-interrupt",
        NB3,
        edit.append("greedy_decode", attack.SWALLOW_INTERRUPT),
        note="ignores interrupts: the kernel is killed and restarted, later cells still graded",
        zero=("test_greedy_decode",),
        findings=on(
            "greedy_decode",
            "kernel was killed",
            "catches KeyboardInterrupt",
            "ran over 30 s; the kernel was interrupted",
        ),
    ),
    hostile(
        "os-exit",
        NB3,
        edit.answer("next_token", attack.EXIT_IN_THE_HIDDEN_TEST),
        note="kills the kernel inside the hidden test: that test failed, the rest graded",
        failed=("test_next_token",),
        findings=(("test_next_token", "kernel died"), ("next_token", "os._exit")),
    ),
    hostile(
        "sys-exit",
        NB3,
        edit.append("next_token", "import sys\nsys.exit(3)"),
        note="sys.exit after a right next_token: IPython stops it, full points",
        findings=on("next_token", "sys.exit"),
    ),
    hostile(
        "huge-allocation",
        NB3,
        edit.answer("next_token", attack.ALLOCATES_64_GIB),
        edit.append("greedy_decode", "too_big = np.ones((2**20, 2**20))"),
        note="MemoryError inside next_token and in an answer cell; greedy_decode still right",
        zero=("test_next_token",),
    ),
    hostile(
        "infinite-recursion",
        NB3,
        edit.answer("greedy_decode", attack.CALLS_ITSELF),
        note="RecursionError",
        zero=("test_greedy_decode",),
        may_find=on(None, "while grading:"),  # 35 deep tracebacks: past 30 s on a loaded machine
    ),
    hostile(
        "flood-output",
        NB3,
        edit.append("next_token", "for i in range(100_000):\n    print('line', i)"),
        note="100,000 lines of output, cut by the autograder",
    ),
]

# Tampering with the cells: a test cell edited, deleted, de-tagged, re-pointed, an answer re-typed, a test copied.
CELLS = [
    hostile(
        "test-edited",
        NB3,
        edit.wrong_answer("next_token"),
        edit.replace_source("test_next_token", "pass"),
        note="test cell replaced by pass",
        zero=("test_next_token",),
        findings=on("test_next_token", "edited"),
    ),
    hostile(
        "test-deleted",
        NB4,
        edit.wrong_answer("make_xy"),
        edit.delete_cell("test_make_xy"),
        note="test cell deleted",
        zero=("test_make_xy",),
        findings=on("test_make_xy", "deleted"),
    ),
    hostile(
        "test-detagged",
        NB3,
        edit.wrong_answer("greedy_decode"),
        edit.replace_source("test_greedy_decode", "print('all good')"),
        edit.strip_tag("test_greedy_decode"),
        note="test cell stripped of its nbgrader metadata and emptied",
        zero=("test_greedy_decode",),
        findings=on("test_greedy_decode", "de-tagged", "test cell edited; restored from the release"),
    ),
    hostile(
        "points-changed",
        NB3,
        edit.set_points("test_greedy_decode", 100),
        edit.set_points("test_next_token", 0),
        note="points of two test cells changed: restored (max stays as set)",
        findings=(("test_greedy_decode", "points"), ("test_next_token", "points")),
    ),
    hostile(
        "answer-markdown",
        NB3,
        edit.retype_as_markdown("next_token"),
        note="the answer cell turned into markdown: run as code again",
        findings=on("next_token", "re-typed"),
    ),
    hostile(
        "duplicate-ids",
        NB3,
        edit.wrong_answer("next_token"),
        edit.passing_copy_before("test_next_token"),
        note="a passing copy of the test cell with the same grade_id",
        zero=("test_next_token",),
        findings=on("test_next_token", "duplicate"),
    ),
]

# Fooling the tests, and talking the kernel into points: each hands in a wrong answer and tampers with its
# own kernel; the verdict is reached outside the kernel, so each loses that exercise's points.
FOOLING = [
    hostile(
        "shadowed-builtins",
        NB4,
        edit.tamper("masked_loss", attack.SHADOWS_BUILTINS),
        note="a wrong masked_loss behind replaced builtins",
        zero=("test_masked_loss",),
        findings=on("masked_loss", *(f"builtin '{name}'" for name in ("abs", "isinstance", "float", "round"))),
    ),
    hostile(
        "always-equal",
        NB3,
        edit.answer("next_token", attack.ALWAYS_EQUAL),
        note="returns an object equal to anything",
        zero=("test_next_token",),
        findings=on("next_token", "__eq__", "__ne__", "class Anything subclasses int"),
    ),
    hostile(
        "isclose-replaced",
        NB3,
        edit.tamper("next_token", attack.REPLACES_NUMPY_COMPARISONS),
        note="NumPy comparisons replaced",
        zero=("test_next_token",),
        findings=on("next_token", *(f"replaces np.{name}" for name in ("isclose", "allclose", "array_equal"))),
    ),
    hostile(
        "nbgrader-branch",
        NB4,
        edit.tamper("make_xy", attack.ONLY_WHEN_GRADED),
        note="tampers with builtins and NumPy only when graded",
        zero=("test_make_xy",),
        findings=on(
            "make_xy", "NBGRADER_EXECUTION", "replaces builtins.abs", "replaces np.array_equal", "replaces np.isclose"
        ),
    ),
    hostile(
        "patches-grading",
        NB4,
        edit.tamper("masked_loss", attack.PATCH_GRADING),
        note="replaces every function of whole_transformer.grading by one that returns True: the test cells "
        "after it hand nothing out, so they fail too",
        zero=("test_masked_loss", "test_no_causal_mask", "test_learns_nothing"),
        findings=on("masked_loss", "setattr() on module whole_transformer.grading"),
    ),
    hostile(
        "swaps-modules",
        NB3,
        edit.tamper("next_token", attack.SWAP_MODULES),
        note="puts a module whose every attribute returns True in sys.modules (grading, numpy): the hidden "
        "tests after it hand nothing out, so they fail too",
        zero=("test_next_token", "test_greedy_decode", "test_cached_attention", "test_sample_next"),
        findings=on(
            "next_token",
            "class Yes defines __getattr__",
            "replaces sys.modules",
            "replaces whole_transformer.grading",
            "uses sys.modules",
        ),
    ),
    hostile(
        "custom-exc",
        NB3,
        edit.tamper("greedy_decode", attack.SWALLOW_EVERY_ERROR),
        note="an IPython exception handler that swallows every error",
        zero=("test_greedy_decode",),
        findings=_ipython_hook("greedy_decode", "set_custom_exc"),
    ),
    hostile(
        "lying-float",
        NB4,
        edit.answer("masked_loss", attack.LYING_FLOAT),
        note="returns a float subclass whose ==, - and abs lie",
        zero=("test_masked_loss",),
        findings=on(
            "masked_loss", "class Liar subclasses float", "class Liar defines __eq__", "class Liar defines __abs__"
        ),
    ),
    hostile(
        "ast-no-assert",
        NB4,
        edit.tamper("make_xy", attack.NO_ASSERT),
        note="an AST transformer that rewrites every assert away",
        zero=("test_make_xy",),
        findings=_ipython_hook("make_xy", "ast_transformers"),
    ),
    hostile(
        "fake-verdict",
        NB3,
        edit.tamper("next_token", attack.FAKE_VERDICT),
        note="prints 'Tests passed.' and hands out a second, made-up set of results after every cell",
        zero=("test_next_token",),
        findings=_ipython_hook("next_token", "events"),
    ),
]

# Reaching outside the submission: the course's files, the gradebook, other students, home, the network.
OUTSIDE = [
    hostile(
        "reads-source",
        NB3,
        edit.insert_with_paths("next_token", attack.SNOOP),
        edit.insert_after("test_next_token", "print('HISTORY', In, _ih)"),
        note="tries to read ../../source, the gradebook, another student's notebook, the home folder; "
        "prints the input history after a test cell",
        findings=on(None, "outside the submission", "names the gradebook"),
    ),
    hostile(
        "writes-outside",
        NB3,
        edit.insert_with_paths("next_token", attack.VANDAL),
        note="tries to write into the course, the gradebook, home and other students; and the network",
        findings=on(None, "outside the submission", "names the gradebook"),
    ),
]


def roster(nbs: Notebooks, course: Path, port: int = 9) -> list[Student]:
    """The whole class (course: the course folder, for the hostile students' absolute paths; port: a
    loopback listener's outside the sandbox, which the student who tries the network must not reach)."""
    impl_students, spare = catalogued_mistakes(nbs, leave_out=NOT_IN_CLASS)
    m = Materials(nbs, course, port, spare)
    # the order is the class's: the spare correct implementations go to the solved notebooks in this order
    students = [full_solutions(nbs), untouched_release(nbs), partial_work(nbs), *impl_students]
    students += [row.hand_in(m) for row in KERNEL]
    students += [half_a_notebook(m), empty_folder(), renamed_copy(m)]
    students += [row.hand_in(m) for row in CELLS + FOOLING + OUTSIDE]
    if m.left():
        raise AssertionError(f"correct implementations graded nowhere: {m.left()}")
    return students
