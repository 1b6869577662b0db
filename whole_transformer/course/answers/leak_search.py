"""The one search for what a student must not see, run on what they receive: ``make release`` and ``make feedback``.

What is searched for (``test_secrets``, ``solution_secrets``), each fragment with its kind:

- ``HIDDEN``: each distinctive line of a test cell's hidden part (``hidden_fragments``);
- ``EXPECTED``: each expected value of its EXPECTED part, alone and as ``"want": …`` (``expected_values``);
- ``INPUT``: each input of a hidden case long enough to identify it, as ``hidden_tests.py`` and the cell
  write it (``g.random_array(6411, (6, 8), 3.0)``, ``task.sequence(17)``, ``M(5201, 10)``, a literal list),
  also without its ``g.`` (so a line in hidden_tests.py's notation, or quoting one argument, is found);
- ``SOLUTION``: each line of a reference solution, whatever its length (``solution_fragments``): a short
  one when it is a piece of the answer (``counted_427 = 5``), not when it is the frame every answer has
  (``return ids``, ``else:``).

``found_in`` searches a text as it is, HTML-unescaped, with its tags taken out, and with its spaces taken
out (``counted_427=5``, ``g.random_array(6100,(8,42),2.0)``). An expected value is found however it is
written (``Search``): a float rounded or cut to at least ``MIN_DIGITS`` significant digits (``6.10198``,
``6.102``), in e-notation from 3 digits on (``6.10e+00``), as a percentage (``61.02 %`` of 0.6102); a list
of whole numbers in any brackets and separators (``[ 2 12 13]``, ``(2, 12, 13)``) from ``MIN_SEQUENCE``
numbers on. A float that is also a fact of the course (``FACTS``: printed in the prose on purpose) is
searched for only as the EXPECTED part writes it. ``release_leaks`` searches every cell of the released
notebooks (source, outputs, metadata) and names the cell by where a reader finds it: its number, its kind,
the question or exercise it belongs to or the heading it stands under. Every exercise's cells are read from
the notebooks themselves, so one added later is searched the same way.
"""

from __future__ import annotations

import ast
import html
import json
import math
import re
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

import nbformat

from ..cells import cell_source, grade_id, is_test, nbgrader_meta
from ..core.compare import floats
from ..plugins.hide_tests import expected_values, hidden_fragments, solution_fragments, split_hidden

HIDDEN, EXPECTED, SOLUTION, INPUT = "hidden test", "expected value", "solution", "hidden input"
_TAG = re.compile(r"<[^>]*>")
_MIN_INPUT = 14  # an input shorter than this (``[2, 0, 4, 1]``, ``5``) is anyone's text
_SEED = 1000  # a call whose first argument is a seed this large identifies its case at any length
MIN_DIGITS = 4  # a number written with this many significant digits is no longer anyone's text (3 in e-notation)
MIN_SEQUENCE = 5  # a list of this many whole numbers in a row identifies a case, in whatever brackets
# Floats an expected value may equal that the course prints in its prose on purpose: a model that guesses
# evenly among the 42 tokens has loss ln 42; the token table's std 1/√64; √64. Searched for only in full.
FACTS = (math.log(42), 1 / math.sqrt(64), math.sqrt(64))
_WANT = '"want": '


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


# ---------------------------------------------------------------- the search
class Leak(str):
    """One secret found: the secret itself (a key of the secrets searched for), and ``shown``, what the text
    showed of it (the same text, or ``6.10198`` for the expected value ``6.1019764977808615``)."""

    shown: str
    of: str

    def __new__(cls, secret: str, shown: str = "", of: str = "") -> Leak:
        leak = super().__new__(cls, secret)
        leak.shown = shown or secret
        leak.of = of or secret.removeprefix(_WANT)
        return leak

    def says(self, kind: str) -> str:
        """``expected value '6.10198' (6.1019764977808615 written another way)``: the kind, what was shown, of what."""
        if self.shown == str(self):
            return f"{kind} {self.shown[:70]!r}"
        return f"{kind} {self.shown[:70]!r} ({self.of[:60]} written another way)"


_WORD = re.compile(r"\w")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"(?<![\w.])([-−]?)(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?(\s?%)?")
_INT_RUN = re.compile(r"(?:(?<![\w.])-?\d+(?![\w.])(?:[\s,;\[\]()]|array|tensor)*)+")
_INT = re.compile(r"(?<![\w.])-?\d+(?![\w.])")


def _digits(mantissa: str) -> int:
    """Significant digits as written: ``6.10`` has 3, ``0.0123`` has 3."""
    return len(mantissa.replace(".", "").lstrip("0"))


def _roundings(value: float) -> set[tuple[int, Decimal]]:
    """(significant digits, value) of every way to write ``value`` shorter than in full: rounded either way at a
    half, or cut, to 3 digits and more."""
    exact = Decimal(repr(value))
    out = set()
    for k in range(3, _digits(repr(abs(value)).lower().split("e")[0]) + 1):
        step = Decimal(1).scaleb(exact.adjusted() - k + 1)
        for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_DOWN):
            out.add((k, exact.quantize(step, rounding=mode).normalize()))
    return out


def _ints(value) -> list[int] | None:
    if type(value) is int:
        return [value]
    if type(value) in (list, tuple):
        out: list[int] = []
        for v in value:
            part = _ints(v)
            if part is None:
                return None
            out += part
        return out
    return None


_LOOSE_SPACE = re.compile(r"(?<!\w) | (?!\w)")


def _squeezed(text: str) -> str:
    """``text`` with no space but one between two words: ``random_array(6100,(8,42),2.0)``, ``counted_427=5``,
    ``return ids``."""
    return _LOOSE_SPACE.sub("", _SPACE.sub(" ", text))


def _occurs(needle: str, hay: str) -> bool:
    """``needle`` in ``hay`` as a whole: not the end of a longer name or number (``x=5`` is not in ``max=50``)."""
    start = hay.find(needle)
    while start != -1:
        end = start + len(needle)
        before = start == 0 or not (_WORD.match(needle[0]) and _WORD.match(hay[start - 1]))
        after = end == len(hay) or not (_WORD.match(needle[-1]) and _WORD.match(hay[end]))
        if before and after:
            return True
        start = hay.find(needle, start + 1)
    return False


class Secrets(dict):
    """Secrets (text → kind) with the text every student has (``excused``: the released notebooks): a number or
    a list of numbers written there is no one's secret, in whatever notation a file shows it."""

    def __init__(self, kinds: dict[str, str], excused: str = ""):
        super().__init__(kinds)
        self.excused = excused


class Search:
    """``kinds`` (secret → its kind) made ready to search many texts: each secret as text, with and without
    spaces; each expected float by its roundings; each expected list of whole numbers by its numbers."""

    def __init__(self, kinds: dict[str, str]):
        self.kinds = kinds
        self.excused = getattr(kinds, "excused", "")
        self.squeezed = {k: _squeezed(k) for k in kinds}
        self.numbers: dict[tuple[int, Decimal], tuple[str, str]] = {}
        self.sequences: dict[str, str] = {}
        for key, kind in kinds.items():
            if kind != EXPECTED or not key.startswith(_WANT):
                continue
            try:
                want = json.loads(key.removeprefix(_WANT))
            except ValueError:
                continue
            ints = _ints(want)
            if ints is not None and len(ints) >= MIN_SEQUENCE:
                self.sequences.setdefault("," + ",".join(map(str, ints)) + ",", key)
            for x in floats(want):
                if math.isfinite(x) and _digits(repr(abs(x)).lower().split("e")[0]) > 3 and not _fact(x):
                    for r in _roundings(x):
                        self.numbers.setdefault(r, (key, repr(x)))

    def _numbers_in(self, text: str, own: str) -> list[Leak]:
        out = []
        for m in _NUMBER.finditer(text):
            sign, mantissa, exponent, percent = m.groups()
            k = _digits(mantissa)
            if not ("." in mantissa or exponent) or k < (3 if exponent else MIN_DIGITS):
                continue
            try:
                value = Decimal(("-" if sign else "") + mantissa + (exponent or ""))
            except InvalidOperation:
                continue
            key = self.numbers.get((k, value.normalize()))
            if key is None and percent:
                key = self.numbers.get((k, (value / 100).normalize()))
            if key is not None and m.group(0).strip() not in own:
                out.append(Leak(key[0], m.group(0).strip(), of=key[1]))
        return out

    def _sequences_in(self, text: str, own_runs: str) -> list[Leak]:
        if not self.sequences:
            return []
        out = []
        for m in _INT_RUN.finditer(text):
            ints = _INT.findall(m.group(0))
            if len(ints) < MIN_SEQUENCE:
                continue
            run = "," + ",".join(str(int(i)) for i in ints) + ","
            for seq, key in self.sequences.items():
                if seq in run and seq not in own_runs:
                    out.append(Leak(key, m.group(0).strip(" \n,;[]()")))
        return out

    def found(self, text: str, own: str = "") -> list[Leak]:
        """What of the secrets ``text`` shows. A solution line or an input found in ``own`` (the student's own
        submission) is the student's, and so is a number or a list of numbers their own notebook prints."""
        own = f"{own}\n{self.excused}" if self.excused else own
        plain = html.unescape(text)
        bare = html.unescape(_TAG.sub("", text))
        flat = _squeezed(bare)
        own_flat = _squeezed(own)
        out: list[Leak] = []
        seen: set[str] = set()
        for ln, kind in self.kinds.items():
            sq = self.squeezed[ln]
            if not (ln in text or ln in plain or ln in bare or html.escape(ln) in text or (sq and _occurs(sq, flat))):
                continue
            if kind in (SOLUTION, INPUT) and (ln in own or (sq and _occurs(sq, own_flat))):
                continue
            out.append(Leak(ln))
            seen.add(ln)
        own_runs = ""
        if own and self.sequences:
            own_runs = " ".join(
                "," + ",".join(str(int(i)) for i in _INT.findall(m.group(0))) + "," for m in _INT_RUN.finditer(own)
            )
        for leak in self._numbers_in(bare, own) + self._sequences_in(bare, own_runs):
            if str(leak) not in seen:
                out.append(leak)
                seen.add(str(leak))
        return out


def _fact(x: float) -> bool:
    return any(math.isclose(x, f, rel_tol=1e-9) for f in FACTS)


_searches: dict[int, tuple[dict[str, str], int, Search]] = {}


def search(kinds: dict[str, str] | Search) -> Search:
    """``kinds`` made ready to search (once per dict of secrets: the feedback check searches many files)."""
    if isinstance(kinds, Search):
        return kinds
    held = _searches.get(id(kinds))
    if held is not None and held[0] is kinds and held[1] == len(kinds):
        return held[2]
    ready = Search(kinds)
    _searches.clear()
    _searches[id(kinds)] = (kinds, len(kinds), ready)
    return ready


def found_in(text: str, kinds: dict[str, str] | Search, own: str = "") -> list[Leak]:
    """What of ``kinds`` ``text`` shows (``Search.found``): searched as it is, unescaped, with its HTML tags
    taken out (a highlighted cell splits a line of code into many tags) and with its spaces taken out; each
    expected value however it is written. A solution line or an input found in ``own`` (the student's own
    submission) is the student's."""
    return search(kinds).found(text, own)


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
                more = f" and {len(found) - 1} more" if len(found) > 1 else ""
                lines.append(f"{path.name}, {label}: {found[0].says(secrets[found[0]])}{more}")
    return lines
