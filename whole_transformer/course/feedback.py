"""Feedback a student may read: grades and hints, never the hidden tests.

nbgrader's feedback HTML shows the autograded notebook as it ran, hidden tests and their
tracebacks included: the tests, their inputs and the expected values would go back to every
student. ``HideHiddenTests`` (in ``GenerateFeedback.preprocessors``) rewrites each notebook first:

- a test cell keeps only its visible part, then the line ``# (hidden tests: not shown)``;
- its outputs are replaced by one line of verdict: passed, or failed with the assertion
  message written by the test's author (which names the kind of case, never the answer), or
  which exception the student's code raised (its message and traceback are left out, since
  they can quote the test), or what the autograder did (timeout, kernel died, not run);
- in every other cell, an output that quotes a line of any hidden test (a student can print
  the kernel's input history) is replaced by a note.
"""

from __future__ import annotations

import ast
import json

from nbformat import NotebookNode
from nbgrader import utils as nbutils
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

NOT_SHOWN = "# (hidden tests: not shown)"
GRADER_ERRORS = {"CellTimeoutError", "DeadKernelError", "NotRun"}


def split_hidden(source: str, begin: str = "BEGIN HIDDEN TESTS", end: str = "END HIDDEN TESTS") -> tuple[str, str]:
    """(visible part, hidden part) of a test cell's source."""
    visible, hidden, inside = [], [], False
    for line in source.split("\n"):
        if begin in line:
            inside = True
        elif end in line:
            inside = False
        elif inside:
            hidden.append(line)
        else:
            visible.append(line)
    return "\n".join(visible).rstrip(), "\n".join(hidden)


def assertion_messages(hidden: str) -> set[str]:
    """The messages of the assert statements in the hidden tests (safe to show by convention)."""
    try:
        tree = ast.parse(hidden)
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str):
            out.add(node.msg.value)
    return out


def _verdict(cell: NotebookNode, messages: set[str]) -> NotebookNode:
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    stderr = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    if errors:
        e = errors[-1]
        ename, evalue = e.get("ename", "Error"), str(e.get("evalue", ""))
        if ename in GRADER_ERRORS:
            text = f"{ename}: {evalue}"
        elif ename == "AssertionError" and evalue in messages:
            text = f"Test failed: {evalue}"
        elif ename == "AssertionError":
            text = "Test failed."
        elif ename == "NotImplementedError":
            text = "Test failed: the answer is not written yet (NotImplementedError)."
        else:
            text = (f"Test failed: your code raised {ename} while the tests ran it. "
                    "Run the visible check above in your notebook to see the details.")
        return NotebookNode(output_type="error", ename="Failed", evalue=text, traceback=[text])
    if stderr:
        text = "Test failed: the cell wrote to stderr (a warning or error message counts as a failure)."
        return NotebookNode(output_type="error", ename="Failed", evalue=text, traceback=[text])
    return NotebookNode(output_type="stream", name="stdout", text="Tests passed.\n")


def _quotes(output: NotebookNode, fragments: set[str]) -> bool:
    if not fragments:
        return False
    text = json.dumps(output, ensure_ascii=False, default=str)
    plain = text.replace('\\"', '"').replace("\\n", "\n")
    return any(f in text or f in plain for f in fragments)


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden tests, their outputs and anything quoting them from a feedback notebook."""

    begin_test_delimeter = Unicode("BEGIN HIDDEN TESTS").tag(config=True)
    end_test_delimeter = Unicode("END HIDDEN TESTS").tag(config=True)
    min_fragment = Integer(12, help="shortest hidden-test line searched for in other outputs").tag(config=True)

    def preprocess(self, nb, resources):
        fragments: set[str] = set()
        messages: set[str] = set()
        tests = []
        for cell in nb.cells:
            if cell.cell_type != "code" or not nbutils.is_grade(cell) or nbutils.is_solution(cell):
                continue
            visible, hidden = split_hidden(cell.source, self.begin_test_delimeter, self.end_test_delimeter)
            messages |= assertion_messages(hidden) | assertion_messages(visible)
            for line in hidden.split("\n"):
                line = line.strip()
                if len(line) >= self.min_fragment and not line.startswith("#"):
                    fragments.add(line)
            tests.append((cell, visible, bool(hidden.strip())))
        for cell, visible, had_hidden in tests:
            cell.outputs = [_verdict(cell, messages)]
            cell.source = visible + ("\n" + NOT_SHOWN if had_hidden else "")
        test_cells = {id(c) for c, _, _ in tests}
        for cell in nb.cells:
            if cell.cell_type != "code" or id(cell) in test_cells:
                continue
            outs = []
            for o in cell.get("outputs", []):
                if _quotes(o, fragments):
                    o = NotebookNode(output_type="stream", name="stdout",
                                     text="[output not shown: it quoted the hidden tests]\n")
                outs.append(o)
            cell.outputs = outs
        nb.metadata.pop("widgets", None)  # saved widget views are not feedback
        return nb, resources
