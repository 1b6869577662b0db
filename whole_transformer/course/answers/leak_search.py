"""The one search for what a student must not see, run on what they receive: ``make release`` and ``make
feedback``.

What is searched for (``test_secrets``, ``solution_secrets``), each fragment with its kind:

- ``HIDDEN``: each distinctive line of a test cell's hidden part (``hidden_fragments``);
- ``EXPECTED``: each expected value of its EXPECTED part, alone and as ``"want": …`` (``expected_values``);
- ``INPUT``: each input of a hidden case long enough to identify it, as ``hidden_tests.py`` and the cell
  write it (``g.random_array(6411, (6, 8), 3.0)``, ``task.sequence(17)``, ``M(5201, 10)``, a literal list),
  also without its ``g.`` (so a line in hidden_tests.py's notation, or quoting one argument, is found);
- ``SOLUTION``: each line of a reference solution, whatever its length (``solution_fragments``): a short
  one when it is a piece of the answer (``counted_427 = 5``), not when it is the frame every answer has
  (``return ids``, ``else:``).

``found_in`` (``leak_match.py``) finds each of them in a text however it is written (spaces, HTML, an expected
value rounded, cut, in e-notation or as a percentage, a list of ids in any brackets). ``release_leaks``
searches every cell of the released notebooks (source, outputs, metadata) and names the cell by where a reader
finds it: its number, its kind, the question or exercise it belongs to or the heading it stands under. Every
exercise's cells are read from the notebooks themselves, so one added later is searched the same way.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat

from ..cells import SOLUTION as SOLUTION_MARKS
from ..cells import cell_source, grade_id, is_test, nbgrader_meta, split_hidden, split_region
from ..core.compare import floats
from ..core.expected import split_expected
from .leak_match import EXPECTED, HIDDEN, INPUT, SOLUTION, Leak, Secrets, found_in, search

__all__ = ["EXPECTED", "HIDDEN", "INPUT", "SOLUTION", "Leak", "Secrets", "found_in", "search"]
_MIN_INPUT = 14  # an input shorter than this (``[2, 0, 4, 1]``, ``5``) is anyone's text
_SEED = 1000  # a call whose first argument is a seed this large identifies its case at any length


def _distinctive(line: str, min_len: int) -> bool:
    """Long, and holding a number or a string: a line no other cell or output writes by chance."""
    return len(line) >= min_len and any(ch.isdigit() or ch in "\"'" for ch in line)


def hidden_fragments(hidden: str, min_len: int = 16) -> set[str]:
    """What of a hidden test a student must not see, as text to search for.

    Every distinctive line of it: the kernel's part, and the EXPECTED part's JSON comment line
    (``# {"name": …, "cases": [{"kind": …, "want": …}]}``) with the other comments; then each
    expected value on its own (``expected_values``), should it be shown apart from that line."""
    out = {line.strip() for line in hidden.split("\n") if _distinctive(line.strip(), min_len)}
    return out | expected_values(hidden, min_len)


def _significant_digits(text: str) -> int:
    mantissa = text.lower().lstrip("-").split("e")[0].replace(".", "")
    return len(mantissa.lstrip("0"))


def expected_values(hidden: str, min_len: int = 16) -> set[str]:
    """The expected values of a hidden test's EXPECTED part, as a feedback file would quote them.

    For every case: ``"want": <value>`` as the EXPECTED part writes it; the value's JSON (a list
    of ids, a pair of lists: also how Python prints it) when it is at least ``min_len`` long; and
    each float in it with 10 or more significant digits (``repr``, as ``print`` shows it). A short
    value alone (``7``, ``"B"``) is not searched for: any page holds such text."""
    try:
        _, payload = split_expected(hidden)
    except ValueError:  # not valid JSON: its lines are searched for as they are
        return set()
    out = set()
    for case in (payload or {}).get("cases", []):
        if "want" not in case:
            continue
        want = json.dumps(case["want"], ensure_ascii=False)
        out.add(f'"want": {want}')
        if len(want) >= min_len:
            out.add(want)
        out |= {repr(x) for x in floats(case["want"]) if _significant_digits(repr(x)) >= 10}
    return out


def _statement(line: str) -> ast.stmt | None:
    """One line of code as a statement (a line opening a block, ``if nxt == eos:``, is given a body)."""
    for text in (line, line + " pass"):
        try:
            body = ast.parse(text).body
        except SyntaxError:
            continue
        return body[0] if len(body) == 1 else None
    return None


def _is_plain_name(node: ast.AST | None) -> bool:
    """A name, an attribute or a tuple of them (``x``, ``x, y``, ``self.ids``): what a question's words say."""
    if isinstance(node, ast.Tuple):
        return all(_is_plain_name(e) for e in node.elts)
    return isinstance(node, (ast.Name, ast.Attribute))


def answer_line(line: str) -> bool:
    """Whether a short line of a solution is a piece of the answer, by what it does, not by its length.

    It is when it binds or returns a value worked out or written down (``counted_427 = 5``, ``x = "B"``,
    ``h = x @ W``, ``return h.sum()``) or holds a literal the answer needs (``ids[-1]``). It is not when it
    only names what the question or the stub already names (``return ids``, ``return x, y``, ``y[i] = pad``),
    or is the frame every answer has (``else:``, ``break``, ``ids.append(nxt)``, ``if nxt == eos:``): such a
    line is ordinary text a student must see, in the stub, the prose and every classmate's answer."""
    stmt = _statement(line)
    if stmt is None:
        return False
    if any(
        isinstance(n, ast.Constant) and n.value is not None and not isinstance(n.value, bool) for n in ast.walk(stmt)
    ):
        return True  # a literal: the answer written down, or a number it needs
    if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)):
        return stmt.value is not None and not _is_plain_name(stmt.value)
    return False


def solution_fragments(source: str, min_len: int = 16) -> set[str]:
    """The lines of a solution cell's answer (between BEGIN and END SOLUTION) to search for, comments left
    out (a stub's comment may say the same): every line at least ``min_len`` long, and every shorter line
    that is a piece of the answer (``answer_line``: ``counted_427 = 5`` is, ``return ids`` is not)."""
    _, answer = split_region(source, SOLUTION_MARKS)
    lines = (line.strip() for line in answer.split("\n"))
    return {ln for ln in lines if ln and not ln.startswith("#") and (len(ln) >= min_len or answer_line(ln))}


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
    segment = _segments(hidden)
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "hand_out" and len(call.args) > 2):
            continue
        for node in ast.walk(call.args[2]):
            if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.Constant)) and not _long_literal(node):
                continue
            if isinstance(node, (ast.Name, ast.Attribute)):
                continue
            for text in {segment(node) or "", ast.unparse(node)}:  # as written, as Python
                if len(text) >= _MIN_INPUT or (_seeded(node) and text):
                    out |= {text, text.removeprefix("g.")}
    return {t for t in out if any(ch.isdigit() for ch in t)}


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")  # a line with its end, as ast splits a source


def _segments(source: str):
    """``ast.get_source_segment(source, node)`` as a function of the node, the source split into lines once (ast
    splits it again for each node, one character at a time: 3.4 s of a class's ``make feedback``)."""
    lines = _LINE.findall(source)

    def segment(node: ast.AST) -> str | None:
        first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if first is None or last is None or start is None or end is None:
            return None
        if first == last:  # offsets count UTF-8 bytes, as ast's do
            return lines[first - 1].encode()[start:end].decode()
        head, tail = lines[first - 1].encode()[start:].decode(), lines[last - 1].encode()[:end].decode()
        return "".join([head, *lines[first : last - 1], tail])

    return segment


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


def identifying_input(text: str) -> bool:
    """Whether a hidden input names its case: a seeded call (``g.random_array(6100, (8, 42), 2.0)``,
    ``M(3401, 10)``) or a long literal list. ``task.sequence(742)`` does not: the lesson's own numbers are read
    aloud in the prose, and a student who sees one learns nothing of what the tests expect."""
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return False
    return any(_seeded(n) or _long_literal(n) for n in ast.walk(tree))


def solution_secrets(source: str) -> dict[str, str]:
    return dict.fromkeys(solution_fragments(source), SOLUTION)


def source_secrets(source_dir: Path) -> dict[str, str]:
    """Everything of ``source_dir``'s notebooks a student must not see (hidden tests, expected values,
    reference solutions, the hidden inputs that name a case) → its kind."""
    found: dict[str, str] = {}
    for path in sorted(Path(source_dir).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if is_test(cell):
                secrets = test_secrets(split_hidden(cell_source(cell))[1])
                found.update({t: k for t, k in secrets.items() if k != INPUT or identifying_input(t)})
            elif nbgrader_meta(cell).get("solution"):
                for text, kind in solution_secrets(cell_source(cell)).items():
                    found.setdefault(text, kind)
    return found


def _cell_texts(cell) -> str:
    """A cell as a student receives it: its source, its outputs and its metadata."""
    parts = [cell_source(cell), json.dumps(dict(cell.get("metadata", {})), ensure_ascii=False)]
    for out in cell.get("outputs", []):
        parts.append(json.dumps(out, ensure_ascii=False))
        for value in (out.get("data") or {}).values():
            parts.append(value if isinstance(value, str) else "".join(value) if isinstance(value, list) else "")
        parts.append(str(out.get("text", "")))
    return "\n".join(parts)


_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def cell_names(cells) -> list[str]:
    """Each cell named as a reader of the notebook finds it: ``cell 4 (markdown, before the question
    counted_427)``, ``cell 12 (code, the exercise make_xy)``, ``cell 3 (markdown, under "Teacher forcing")``.
    A question's or exercise's name is its solution cell's grade_id; a test cell is named by what it tests."""
    gids = [grade_id(c) or "" for c in cells]
    solutions = [gid if nbgrader_meta(c).get("solution") else "" for c, gid in zip(cells, gids, strict=True)]
    names = []
    heading = ""
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            found = _HEADING.findall(cell_source(cell))
            if found:
                heading = found[-1].strip()
        where = ""
        if solutions[i]:
            what = "exercise" if "def " in cell_source(cell) else "question"
            where = f"the {what} {solutions[i]}"
        elif is_test(cell):
            where = f"the test {gids[i]}"
        else:
            after = next((s for s in solutions[i + 1 :] if s), "")
            if after:
                where = f"before {after}"
            elif heading:
                where = f'under "{heading[:50]}"'
        names.append(f"cell {i + 1} ({cell.cell_type}, {where})" if where else f"cell {i + 1} ({cell.cell_type})")
    return names


def said(found: list[Leak], kinds: dict[str, str]) -> str:
    """What a text showed, the first of each kind (an expected value first), then how many more."""
    order = [EXPECTED, SOLUTION, HIDDEN, INPUT]
    first: dict[str, Leak] = {}
    for leak in found:
        first.setdefault(kinds[leak], leak)
    shown = sorted(first.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    more = len(found) - len(shown)
    return "; ".join(leak.says(kind) for kind, leak in shown) + (f" and {more} more" if more else "")


def release_leaks(release_dir: Path, secrets: dict[str, str]) -> list[str]:
    """One line per released cell (or notebook metadata) that shows any of ``secrets``, naming the cell and
    what it showed."""
    ready = search(secrets)
    lines = []
    for path in sorted(Path(release_dir).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        where = [("the notebook's metadata", json.dumps(dict(nb.metadata), ensure_ascii=False))]
        where += [(name, _cell_texts(c)) for name, c in zip(cell_names(nb.cells), nb.cells, strict=True)]
        stubs = [""] + [cell_source(c) if nbgrader_meta(c).get("solution") else "" for c in nb.cells]
        for (label, text), stub in zip(where, stubs, strict=True):
            # a question's stub lists the choices ('# x = "A", "B" or "C"'): a solution line it holds is the stub's
            found = [ln for ln in ready.found(text) if not (secrets[ln] == SOLUTION and ln in stub)]
            if found:
                lines.append(f"{path.name}, {label}: {said(found, secrets)}")
    return lines
