"""The one search for what a student must not see, run on what they receive: ``make release`` and ``make feedback``.

What is searched for (``test_secrets``, ``solution_secrets``), each fragment with its kind:

- ``HIDDEN``: each distinctive line of a test cell's hidden part (``hidden_fragments``);
- ``EXPECTED``: each expected value of its EXPECTED part, alone and as ``"want": …`` (``expected_values``);
- ``INPUT``: each input of a hidden case long enough to identify it, as ``hidden_tests.py`` and the cell
  write it (``g.random_array(6411, (6, 8), 3.0)``, ``task.sequence(17)``, ``M(5201, 10)``, a literal list),
  also without its ``g.`` (so a line in hidden_tests.py's notation, or quoting one argument, is found);
- ``SOLUTION``: each line of a reference solution (``solution_fragments``).

``found_in`` searches a text as it is, HTML-unescaped and with its tags taken out; ``release_leaks``
searches every cell of the released notebooks (source, outputs, metadata) and names the cell. Every
exercise's cells are read from the notebooks themselves, so one added later is searched the same way.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

import nbformat

from ..cells import cell_source, grade_id, is_test, nbgrader_meta
from ..plugins.hide_tests import expected_values, hidden_fragments, solution_fragments, split_hidden

HIDDEN, EXPECTED, SOLUTION, INPUT = "hidden test", "expected value", "solution", "hidden input"
_TAG = re.compile(r"<[^>]*>")
_MIN_INPUT = 14  # an input shorter than this (``[2, 0, 4, 1]``, ``5``) is anyone's text
_SEED = 1000  # a call whose first argument is a seed this large identifies its case at any length


def notebook_text(raw: str) -> str:
    """A notebook's raw text and its cells' sources (as typed, not JSON-escaped)."""
    try:
        nb = nbformat.reads(raw, as_version=4)
    except Exception:  # noqa: BLE001 - not a notebook nbformat can read: its raw text is all there is
        return raw
    return raw + "\n" + "\n".join(cell_source(c) for c in nb.cells)


def _seeded(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, int)
        and node.args[0].value >= _SEED
    )


def input_fragments(hidden: str) -> set[str]:
    """Each identifying input of the cases a hidden part hands out (``g.hand_out(name, f, [((args), {kw}), …])``)."""
    try:
        tree = ast.parse(hidden)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "hand_out" and len(call.args) > 2):
            continue
        for node in ast.walk(call.args[2]):
            if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Constant)) and not _long_literal(node):
                continue
            if isinstance(node, (ast.Name, ast.Attribute)):
                continue
            for text in {ast.get_source_segment(hidden, node) or "", ast.unparse(node)}:  # as written, as Python
                if len(text) >= _MIN_INPUT or (_seeded(node) and text):
                    out |= {text, text.removeprefix("g.")}
    return {t for t in out if any(ch.isdigit() for ch in t)}


def _long_literal(node: ast.AST) -> bool:
    """A literal list of numbers long enough to identify a case (its text, not the tuple of a whole case)."""
    return (
        isinstance(node, ast.List)
        and all(isinstance(e, (ast.Constant, ast.UnaryOp)) for e in node.elts)
        and len(ast.unparse(node)) >= _MIN_INPUT
    )


def test_secrets(hidden: str) -> dict[str, str]:
    """What of one test cell's hidden part a student must not see → its kind."""
    values = expected_values(hidden)
    found = {
        text: EXPECTED if text in values or text.startswith("# {") else HIDDEN for text in hidden_fragments(hidden)
    }
    for text in input_fragments(hidden):  # after the whole lines: a file showing a line is said to show that line
        found.setdefault(text, INPUT)
    return found


def solution_secrets(source: str) -> dict[str, str]:
    return dict.fromkeys(solution_fragments(source), SOLUTION)


def source_secrets(source_dir: Path) -> dict[str, str]:
    """Everything of ``source_dir``'s notebooks a student must not see (hidden tests, expected values,
    reference solutions) → its kind."""
    found: dict[str, str] = {}
    for path in sorted(Path(source_dir).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if is_test(cell):
                found.update(test_secrets(split_hidden(cell_source(cell))[1]))
            elif nbgrader_meta(cell).get("solution"):
                for text, kind in solution_secrets(cell_source(cell)).items():
                    found.setdefault(text, kind)
    return found


def found_in(text: str, kinds: dict[str, str], own: str = "") -> list[str]:
    """What of ``kinds`` ``text`` shows: searched as it is, unescaped, and with its HTML tags taken out (a
    highlighted cell splits a line of code into many tags). A solution line or an input found in ``own``
    (the student's own submission) is the student's."""
    plain = html.unescape(text)
    bare = html.unescape(_TAG.sub("", text))
    return [
        ln
        for ln, kind in kinds.items()
        if (ln in text or ln in plain or ln in bare or html.escape(ln) in text)
        and not (kind in (SOLUTION, INPUT) and ln in own)
    ]


def _cell_texts(cell) -> str:
    """A cell as a student receives it: its source, its outputs and its metadata."""
    parts = [cell_source(cell), json.dumps(dict(cell.get("metadata", {})), ensure_ascii=False)]
    for out in cell.get("outputs", []):
        parts.append(json.dumps(out, ensure_ascii=False))
        for value in (out.get("data") or {}).values():
            parts.append(value if isinstance(value, str) else "".join(value) if isinstance(value, list) else "")
        parts.append(str(out.get("text", "")))
    return "\n".join(parts)


def _what(cell) -> str:
    gid = grade_id(cell)
    return f"{cell.cell_type}, {gid}" if gid else cell.cell_type


def release_leaks(release_dir: Path, secrets: dict[str, str]) -> list[str]:
    """One line per released cell (or notebook metadata) that shows any of ``secrets``, naming the cell."""
    lines = []
    for path in sorted(Path(release_dir).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        where = [("the notebook's metadata", json.dumps(dict(nb.metadata), ensure_ascii=False))]
        where += [(f"cell {i} ({_what(c)})", _cell_texts(c)) for i, c in enumerate(nb.cells, start=1)]
        stubs = [""] + [cell_source(c) if nbgrader_meta(c).get("solution") else "" for c in nb.cells]
        for (label, text), stub in zip(where, stubs, strict=True):
            # a question's stub lists the choices ('# x = "A", "B" or "C"'): a solution line it holds is the stub's
            found = [ln for ln in found_in(text, secrets) if not (secrets[ln] == SOLUTION and ln in stub)]
            if found:
                more = f" and {len(found) - 1} more" if len(found) > 1 else ""
                lines.append(f"{path.name}, {label}: {secrets[found[0]]} {found[0][:70]!r}{more}")
    return lines
