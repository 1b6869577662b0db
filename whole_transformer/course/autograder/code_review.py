"""The review stage: what in a student's code an instructor should look at.

``review(source, ...)`` reads the code a student wrote (answer cells, and cells added or changed)
and lists what looks like an attempt to game the grader: replaced builtins or library functions,
the ``NBGRADER_EXECUTION`` variable, ``showtraceback`` and other IPython internals, reading files
outside the submission, the package's reference implementations or grading internals, objects
that compare equal to anything, frame introspection and dynamic code, killing the process and
swallowing KeyboardInterrupt. A finding is a report, not a penalty: the hidden tests decide.
The rules a cell's syntax tree is checked against: ``code_rules.py``.
"""

from __future__ import annotations

import ast
import re

from nbformat import NotebookNode

from ..cells import cell_name, cell_source, grade_id, is_protected, nbgrader_meta
from ..core.results import Finding
from .code_rules import RuleWalk


def student_code_cells(restored: NotebookNode, release: NotebookNode) -> list[tuple[int, NotebookNode]]:
    """(index, cell) of code the student wrote: answer cells, and code cells not in the release."""
    released = {cell_source(c) for c in release.cells if c.cell_type == "code" and not is_protected(c)}
    out = []
    for i, c in enumerate(restored.cells):
        if c.cell_type != "code":
            continue
        if nbgrader_meta(c).get("solution"):
            out.append((i, c))
        elif not is_protected(c) and cell_source(c) not in released:
            out.append((i, c))
    return out


def _python(source: str) -> str:
    """IPython syntax (magics, !shell) turned into Python, as the kernel would run it."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager  # in the try: without IPython, the raw text

        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - any failure: read the raw text
        return source


def module_aliases(sources: list[str]) -> dict[str, str]:
    """name → module it is bound to by an import anywhere in the notebook (np → numpy)."""
    aliases = {"builtins": "builtins", "__builtins__": "builtins"}
    for src in sources:
        try:
            tree = ast.parse(_python(src))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


_TEXT_RULES = (
    (re.compile(r"NBGRADER_EXECUTION"), "refers to NBGRADER_EXECUTION (may behave differently when graded)"),
    (re.compile(r"showtraceback"), "touches IPython's showtraceback (may hide errors from the grader)"),
    (
        re.compile(
            r"whole_transformer\s*\.\s*course|import\s+reference\b|from\s+whole_transformer[.\w]*\s+import[^\n]*"
            r"\b(reference|course)\b"
        ),
        "imports the course's grading side (reference implementations, hidden tests)",
    ),
    (re.compile(r"gradebook\.db"), "names the gradebook"),
)


def review(source: str, aliases: dict[str, str] | None = None) -> list[str]:
    """What in this cell's code an instructor should look at (empty if nothing)."""
    found: list[str] = []
    for pattern, msg in _TEXT_RULES:
        if pattern.search(source):
            found.append(msg)
    code = _python(source)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return found
    s = RuleWalk(aliases or module_aliases([source]), raw=source)
    s.visit(tree)
    for msg in s.found:
        if msg not in found:
            found.append(msg)
    return found


def review_notebook(restored: NotebookNode, release: NotebookNode) -> list[Finding]:
    """Findings for every cell of student code in a restored notebook."""
    aliases = module_aliases([cell_source(c) for c in restored.cells if c.cell_type == "code"])
    out = []
    for i, cell in student_code_cells(restored, release):
        label = grade_id(cell) or cell_name(restored.cells, i)
        for msg in review(cell_source(cell), aliases):
            out.append(Finding(label, msg))
    return out
