"""The verdict's words: the errors only the grader writes, and what a failed test cell says.

``failure_message`` is what the student reads (the kinds of case that failed, never an expected
value); ``answer_and_hint`` a question's wrong answer given and its hint; ``instructor_summary`` the failed
cases' inputs, returned and expected values, for the graded notebook and the Formgrader only.
"""

from __future__ import annotations

import ast
import json
import textwrap

from nbformat import NotebookNode

from ...grading import MAX_CALLS
from ...questions import QUESTIONS, NoAnswer

#: The names of the errors only the grader writes (feedback shows their messages as they are): a
#: test cell keeps no output of the kernel's, so student code cannot forge one.
FAILED, GRADER_ERROR = "TestFailed", "GraderError"


def error(ename: str, text: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=text, traceback=[f"{ename}: {text}"])


#: The error the grader writes for an answer not written yet (the stub still raising
#: NotImplementedError, or the answer cell left as released): unanswered, not wrong.
NOT_ANSWERED = "NotAnswered"
WRAP = 96  # the width the instructor's summary of failed cases is wrapped to


#: The errors a cell stopped by the grader's clock shows: interrupted (KeyboardInterrupt), or killed after it
#: ignored the interrupt (CellTimeoutError, written by plugins/execute.py).
TIMEOUTS = frozenset({"KeyboardInterrupt", "CellTimeoutError"})
IMPORTS = frozenset({"ModuleNotFoundError", "ImportError"})
DEFAULT_TIMEOUT = 30  # nbgrader_config.py's SandboxExecute.timeout, when the grader is not told another


def ran_over(seconds: float | None) -> str:
    return f"ran over {seconds or DEFAULT_TIMEOUT:g} s and was stopped"


def what_it_did(ename: str, seconds: float | None = None, short: bool = False) -> str:
    """What an error says happened, in words a student reads (``short``: as an instructor's report names it): a
    timeout, a dead kernel, a loop that never stops, a refused import, a name not defined, or an exception."""
    if ename in TIMEOUTS:
        return ran_over(seconds)
    said = {
        "DeadKernelError": ("killed the kernel", "stopped the kernel (it died: os._exit, a crash or out of memory)"),
        "NotRun": ("was not run", "was not run (the notebook ran out of time, or the kernel could not start)"),
        "TooManyCalls": (
            f"never stopped (TooManyCalls: over {MAX_CALLS} model calls)",
            f"called the model more than {MAX_CALLS} times (TooManyCalls): a loop that never stops",
        ),
        "NameError": (
            "raised NameError (a name not defined)",
            "used a name that is not defined (NameError): a variable of another cell, or a typo",
        ),
        "RecursionError": ("raised RecursionError", "called itself without end (RecursionError)"),
        "MemoryError": ("ran out of memory (MemoryError)", "ran out of memory (MemoryError)"),
    }
    if ename in IMPORTS:
        return f"a refused import ({ename})" if short else f"imported a module the grader refused or lacks ({ename})"
    if ename in said:
        return said[ename][0 if short else 1]
    return f"raised {ename}"


def failure_message(expected: dict, failed: list[str], errors: dict[str, str] | None = None) -> str:
    """What a failed test cell says to the student: the kinds of case that failed, and what the code did on those
    that raised (a loop that never stops, a name not defined…), never an expected value."""
    name = expected["name"]
    if expected.get("question"):
        return f"{name}: {expected.get('what', 'the answer')} is not right"
    text = f"{name} is not right yet for: " + "; ".join(failed)
    by_error: dict[str, list[str]] = {}
    for kind, ename in (errors or {}).items():
        by_error.setdefault(ename, []).append(kind)
    for ename, kinds in by_error.items():
        where = "every one of them" if len(kinds) == len(failed) else "; ".join(kinds)
        text += f". On {where}, your code {what_it_did(ename)}"
    return text


def answer_and_hint(expected: dict, results) -> tuple[str, str]:
    """(the wrong answer given to a question, short; the hint the course gives for it)."""
    r = results[0] if type(results) is list and results else None
    if type(r) is not dict or "value" not in r:
        return (f"(raised {r.get('error')})" if type(r) is dict else "(none)"), ""
    value = r["value"]
    q = QUESTIONS.get(expected["name"])
    hint = ""
    if q is not None:
        try:
            normal = q.normal(tuple(value) if type(value) is list else value)
            hint = q.hints.get(normal, q.fallback)
        except NoAnswer:
            hint = "Write your answer in the cell above first (replace the None)."
        except (ValueError, TypeError) as e:
            hint = f"Cannot read that answer: {e}."
    return short(value), hint


def short(value, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=True)
    return text if len(text) <= width else text[: width - 1] + "…"


def _case_inputs(source: str) -> list[str]:
    """The source of each case's arguments in the kernel's part of a hidden test (``hand_out``'s list)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "hand_out"
            and len(node.args) >= 3
            and isinstance(node.args[2], ast.List)
        ):
            return [" ".join((ast.get_source_segment(source, e) or "?").split()) for e in node.args[2].elts]
    return []


def instructor_summary(cell, expected: dict, results, passed: list[bool], message: str) -> list[str]:
    """The traceback of a failed verdict, for the graded notebook and the Formgrader (never the
    feedback, which shows the message alone): each failed case's input, returned and expected
    value, short and wrapped to ``WRAP`` columns."""
    lines = textwrap.wrap(f"{FAILED}: {message}", WRAP, subsequent_indent="    ")
    inputs = _case_inputs(cell.get("source", ""))
    shown = 0
    for i, (case, ok) in enumerate(zip(expected["cases"], passed, strict=True)):
        if ok:
            continue
        shown += 1
        if shown > 12:
            lines.append(f"… and {len(passed) - sum(passed) - 12} more failed case(s)")
            break
        r = results[i] if type(results) is list and i < len(results) else None
        got = (
            ("raised " + str(r["error"]))
            if type(r) is dict and "error" in r
            else short(r.get("value"))
            if type(r) is dict
            else "nothing readable"
        )
        if type(r) is dict and "before" in case and r.get("after") != case["before"]:
            got += " (and changed its argument)"
        lines.append("")
        lines += textwrap.wrap(f"case {i + 1}, {case.get('kind', 'the answer')}:", WRAP)
        if i < len(inputs):
            given = inputs[i] if len(inputs[i]) <= 160 else inputs[i][:159] + "…"
            lines += textwrap.wrap(f"input    {given}", WRAP, subsequent_indent="         ")
        lines += textwrap.wrap(f"returned {got}", WRAP, subsequent_indent="         ")
        lines += textwrap.wrap(f"expected {short(case.get('want'))}", WRAP, subsequent_indent="         ")
    return lines
