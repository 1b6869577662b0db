"""The visible checks students run: ``check(name)``, right or not yet, with a hint aimed at the likely mistake.

``check`` finds what to check (a question's answer or an exercise's function) in the notebook,
notices when the cell that should have set it failed, and hands it to the question's feedback
(``questions.py``) or the exercise's check (``exercise_checks.py``). A check never prints the
right answer. The hidden tests in the notebooks decide the points; these checks only help.

    >>> check("tokens_905", 7)
    ✗ Not yet. Did you count <eos>? The sequence ends with it.
    False

Under nbgrader's Validate (the JupyterLab button, or ``nbgrader validate``) a check that is not right
writes its line to stderr, with a note that the hidden tests decide the grade. nbgrader counts a test
cell with stderr output as failed, so Validate lists that check with its hint instead of reporting
that the notebook passes; in a notebook (and under autograding) a check only prints.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import textwrap

from .envflags import nbgrader_execution
from .exercise_checks import EXERCISES, check_exercise
from .questions import QUESTIONS

_MISSING = object()


# ---------------------------------------------------------------- answer cells that failed
# A check reads the notebook's variable, so after an answer cell raised (``std1_no_factor = B``
# without quotes is a NameError) the variable still holds an earlier value, or none. Grading that
# value would answer a question the student no longer asks. In IPython the checks therefore watch
# every cell that runs: a cell that assigns a question's variable (or defines an exercise's
# function) and fails marks that name, and the next successful run of such a cell clears the mark.
_FAILED: dict[str, str] = {}  # name → what the cell that should have set it raised


def _assigned_names(source: str) -> set[str]:
    """The names of questions and exercises that a cell sets at its top level (read as text, so a
    cell with a syntax error counts too)."""
    names = set()
    for name in (*QUESTIONS, *EXERCISES):
        if re.search(rf"^(?:{re.escape(name)}\s*(?::[^=\n]*)?=(?!=)|def\s+{re.escape(name)}\s*\()", source, re.M):
            names.add(name)
    return names


def _after_cell(result) -> None:
    """IPython's post_run_cell event: note the question and exercise names whose cell failed."""
    source = getattr(getattr(result, "info", None), "raw_cell", None) or ""
    names = _assigned_names(source)
    if not names:
        return
    error = result.error_before_exec or result.error_in_exec
    for name in names:
        if error is None:
            _FAILED.pop(name, None)
        else:
            _FAILED[name] = f"{type(error).__name__}: {error}"


def _watch_cells() -> None:
    """Register _after_cell with the running IPython, once (importing this module again is harmless)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    for cb in list(shell.events.callbacks["post_run_cell"]):
        if cb is _after_cell:
            return
        if getattr(cb, "__qualname__", "") == "_after_cell" and getattr(cb, "__module__", "") == __name__:
            shell.events.unregister("post_run_cell", cb)  # left by an earlier import of this module
    shell.events.register("post_run_cell", _after_cell)


_watch_cells()


def _did_not_run(name: str, what: str) -> str:
    if _FAILED[name].startswith("NotImplementedError"):
        return (
            f"✗ The {what} still raises NotImplementedError: delete the line `raise NotImplementedError()`, "
            "run the cell, then run this check again. Nothing was graded."
        )
    return (
        f"✗ The {what} did not run: it stopped with {_FAILED[name]}. So `{name}` is not what the cell "
        f"says now (or has changed since it ran), and nothing was graded. Fix the cell, run it, then run "
        "this check again."
    )


class _Quiet:
    """What check() returns in a notebook: true or false like the bool it wraps, but IPython shows
    nothing for it, so a check cell prints ✓ or ✗ and no ``Out[n]: True`` under it."""

    __slots__ = ("ok",)

    def __init__(self, ok: bool):
        self.ok = bool(ok)

    def __bool__(self) -> bool:
        return self.ok

    def __eq__(self, other) -> bool:
        return self.ok == other

    def __hash__(self) -> int:
        return hash(self.ok)

    def __repr__(self) -> str:
        return repr(self.ok)

    def _ipython_display_(self) -> None:
        pass


def _in_ipython(caller_globals: dict) -> bool:
    return "get_ipython" in caller_globals and "_ih" in caller_globals


def check(qid: str, answer=_MISSING):
    """Print whether an answer is right, or a hint aimed at the likely mistake.

    ``check("tokens_905")`` reads the notebook variable of the same name as the question, so the
    check works (and says what to do) even before the answer cell has run. For an exercise,
    ``check("greedy_decode")`` runs the notebook's function of that name beside the reference.
    When the cell that sets the variable (or defines the function) failed the last time it ran,
    the check says so and grades nothing.

    Returns True or False. Called from a notebook cell it returns a value IPython does not
    display (it is still true or false), so the cell shows only the printed line.
    """
    _watch_cells()
    caller = sys._getframe(1).f_globals  # the cell that called check (typed, unlike currentframe().f_back)
    if _validating():
        ok = _check_for_validate(qid, answer, caller)
    else:
        ok = _check(qid, answer, caller)
    return _Quiet(ok) if _in_ipython(caller) else ok


#: What Validate adds under a check that is not right (it lists the check's cell as failed).
VALIDATE_NOTE = (
    "This is a visible check, there to help: it is not the grade. The hidden tests your instructor "
    "runs after you hand in decide the grade."
)


def _validating() -> bool:
    """True while nbgrader's Validate runs the notebook (it sets NBGRADER_EXECUTION=validate)."""
    return nbgrader_execution() == "validate"


def _check_for_validate(qid: str, answer, caller: dict) -> bool:
    """The check, with its line on stderr when it is not right, so that Validate reports it."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ok = _check(qid, answer, caller)
    if ok:
        sys.stdout.write(printed.getvalue())
    else:
        # lines of at most 80 characters: `nbgrader validate` indents them by 4 and cuts them at 87
        lines = [*printed.getvalue().rstrip("\n").splitlines(), VALIDATE_NOTE]
        sys.stderr.write("".join(textwrap.fill(line, 80) + "\n" for line in lines))
    return ok


def _check(qid: str, answer, caller: dict) -> bool:
    if qid in EXERCISES:
        cell = f"cell that defines `{qid}`"
        missing = f"No function yet: run the cell that defines `{EXERCISES[qid].signature}` first."
    elif qid in QUESTIONS:
        cell, missing = "answer cell", f"No answer yet: write `{qid} = ...` in the answer cell above and run it."
    else:
        raise ValueError(
            f"unknown question {qid!r}; the questions are {sorted(QUESTIONS)} and the exercises {sorted(EXERCISES)}"
        )
    if answer is _MISSING:  # the notebook's variable (or function) of the same name
        if qid in _FAILED:
            print(_did_not_run(qid, cell))
            return False
        if qid not in caller:
            print(missing)
            return False
        answer = caller[qid]
    if qid in EXERCISES:
        return check_exercise(qid, answer, caller)
    ok, message = QUESTIONS[qid].feedback(answer)
    print(message)
    return ok
