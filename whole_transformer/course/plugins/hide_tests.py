"""Feedback a student may read: grades and hints, never the hidden tests.

nbgrader's feedback HTML shows the autograded notebook as it ran, hidden tests and their
tracebacks included: the tests, their inputs and the expected values would go back to every
student. ``HideHiddenTests`` (in ``GenerateFeedback.preprocessors``) rewrites each notebook first:

- a test cell keeps only its visible part, then the line ``# (hidden tests: not shown)``;
- its outputs are replaced by one line of verdict: passed, or failed with the assertion
  message written by the test's author (which names the kind of case, never the answer), or
  which exception the student's code raised (its message and traceback are left out, since
  they can quote the test), or what the autograder did (timeout, kernel died, not run);
- in every other cell, an output that quotes a line of any hidden test or one of its expected
  values (a student can print the kernel's input history) is replaced by a note.

What to search for (``hidden_fragments``, ``solution_fragments``) is the leak search's
(``answers/leak_search.py``), which ``make feedback`` runs on every feedback file before the file is kept.
"""

from __future__ import annotations

import ast
import json

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from ..answers.leak_search import hidden_fragments
from ..cells import HIDDEN_TESTS, is_test, split_hidden
from .verdict import cell_time_limit
from .verdict_text import FAILED, GRADER_ERROR, NOT_ANSWERED, TIMEOUTS, what_it_did

NOT_SHOWN = "# (hidden tests: not shown)"
GRADER_ERRORS = {"CellTimeoutError", "DeadKernelError", "NotRun"}  # what plugins/execute.py writes itself


def assertion_messages(hidden: str) -> tuple[set[str], set[str], set[str]]:
    """What an assertion message of these tests may say, by the tests' convention (the kind of case).

    Returns (whole messages, message prefixes, string constants): a message is shown if it is
    one of the whole messages, or a prefix followed by "; "-separated string constants of the
    tests (the names of the kinds of cases), e.g. "next_token is not right yet for: ties; ...".
    """
    try:
        tree = ast.parse(hidden)
    except SyntaxError:
        return set(), set(), set()
    whole, prefixes = set(), set()
    constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert) or node.msg is None:
            continue
        msg = node.msg
        if isinstance(msg, ast.Constant) and isinstance(msg.value, str):
            whole.add(msg.value)
        elif isinstance(msg, ast.BinOp) and isinstance(msg.left, ast.Constant) and isinstance(msg.left.value, str):
            prefixes.add(msg.left.value)
    return whole, prefixes, constants


def safe_message(evalue: str, rules: tuple[set[str], set[str], set[str]]) -> bool:
    whole, prefixes, constants = rules
    if evalue in whole:
        return True
    for p in prefixes:
        if evalue.startswith(p):
            rest = evalue[len(p) :]
            if rest and all(part in constants for part in rest.split("; ")):
                return True
    return False


def _verdict(cell: NotebookNode, rules, seconds: float | None = None) -> NotebookNode:
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    stderr = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    if errors:
        e = errors[-1]
        ename, evalue = e.get("ename", "Error"), str(e.get("evalue", ""))
        if ename == "NotRun":
            text = f"Not graded: {evalue}."
        elif ename in GRADER_ERRORS or ename in TIMEOUTS:  # the grader's clock, or the kernel died
            text = f"Test failed: your code {what_it_did(ename, seconds)}, so the tests could not finish."
            if ename in TIMEOUTS:
                text += " Does a loop of it never end? Run the visible check above in your notebook."
        elif ename == NOT_ANSWERED:  # verdict.py: the stub still raises, or the cell is as released
            text = f"Not answered yet: {evalue}. Write your answer, run its check, and hand it in again."
        elif ename in (FAILED, GRADER_ERROR):  # the grader's own verdict (verdict.py)
            text = f"Test failed: {evalue}"
        elif ename == "AssertionError" and safe_message(evalue, rules):
            text = f"Test failed: {evalue}"
        elif ename == "AssertionError":
            text = "Test failed."
        elif ename == "NotImplementedError":
            text = "Not answered yet: the answer still raises NotImplementedError."
        else:
            text = (
                f"Test failed: while the tests ran it, your code {what_it_did(ename, seconds)}. "
                "Run the visible check above in your notebook to see the details."
            )
        text = _lines(text)
        return NotebookNode(output_type="error", ename="Failed", evalue=text, traceback=text.split("\n"))
    if stderr:
        text = "Test failed: the cell wrote to stderr (a warning or error message counts as a failure)."
        return NotebookNode(output_type="error", ename="Failed", evalue=text, traceback=[text])
    return NotebookNode(output_type="stream", name="stdout", text="Tests passed.\n")


def _lines(text: str) -> str:
    """The verdict, then what the course says of it, each on a line of its own: what failed, the typical mistake
    it looks like, the hint."""
    for said in (". This looks like a typical mistake", ". Hint: "):
        text = text.replace(said, ".\n" + said[2:])
    return text


def _quotes(output: NotebookNode, fragments: set[str]) -> bool:
    if not fragments:
        return False
    text = json.dumps(output, ensure_ascii=False, default=str)
    plain = text.replace('\\"', '"').replace("\\n", "\n")
    return any(f in text or f in plain for f in fragments)


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden tests, their outputs and anything quoting them from a feedback notebook."""

    begin_test_delimeter = Unicode(HIDDEN_TESTS[0]).tag(config=True)
    end_test_delimeter = Unicode(HIDDEN_TESTS[1]).tag(config=True)
    min_fragment = Integer(16, help="shortest hidden-test line searched for in other outputs").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        fragments: set[str] = set()
        whole, prefixes, constants = set(), set(), set()
        tests = []
        for cell in nb.cells:
            if not is_test(cell):
                continue
            visible, hidden = split_hidden(cell.source, (self.begin_test_delimeter, self.end_test_delimeter))
            for part in (hidden, visible):
                w, p, k = assertion_messages(part)
                whole |= w
                prefixes |= p
                constants |= k
            fragments |= hidden_fragments(hidden, self.min_fragment)
            tests.append((cell, visible, bool(hidden.strip())))
        seconds = cell_time_limit(self.config)
        for cell, visible, had_hidden in tests:
            cell.outputs = [_verdict(cell, (whole, prefixes, constants), seconds)]
            cell.source = visible + ("\n" + NOT_SHOWN if had_hidden else "")
        test_cells = {id(c) for c, _, _ in tests}
        for cell in nb.cells:
            if cell.cell_type != "code" or id(cell) in test_cells:
                continue
            outs = []
            for o in cell.get("outputs", []):
                if _quotes(o, fragments):
                    o = NotebookNode(
                        output_type="stream", name="stdout", text="[output not shown: it quoted the hidden tests]\n"
                    )
                outs.append(o)
            cell.outputs = outs
        nb.metadata.pop("widgets", None)  # saved widget views are not feedback
        return nb, resources
