"""The codebase keeps its limits:

- no module of whole_transformer/ over 300 lines, no function (or method) over 60 lines, decorators not counted;
- no block of six lines stands twice in the Python files of whole_transformer/ and tests/: the lines compared are
  stripped of their indentation, and blank lines, comments, decorators, imports and lines of brackets alone
  (``)``, ``],``, a lone ``\"\"\"``) are passed over, so that six lines standing twice are six lines of code or
  text written twice. Code that two places need is written once and shared.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "whole_transformer"
MAX_MODULE_LINES = 300
MAX_FUNCTION_LINES = 60
BLOCK = 6  # lines
#: a line of brackets, commas and colons alone, or a docstring's lone quotes
_BRACKETS = re.compile(r"""^[()\[\]{},:;]*$|^("{3}|'{3})[(),]*$""")


def python_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


def long_functions(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function longer than MAX_FUNCTION_LINES."""
    return [
        (node.name, node.lineno, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def _passed_over(text: str) -> set[int]:
    """The lines of imports and decorators, all of each (an import or a decorator may take several lines)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    spans = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            spans += node.decorator_list
    return {line for n in spans for line in range(n.lineno, n.end_lineno + 1)}


def compared_lines(text: str) -> list[tuple[int, str]]:
    """(line number, the line stripped, its spaces folded) of the lines the duplicate check compares."""
    skip = _passed_over(text)
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = " ".join(raw.split())
        if number in skip or not line or line.startswith(("#", "@")) or _BRACKETS.match(line):
            continue
        out.append((number, line))
    return out


def repeated_blocks(files: dict[str, str], n: int = BLOCK) -> list[list[tuple[str, int]]]:
    """Each run of n or more compared lines that stands in more than one place: the places (file, first line)."""
    places: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)  # block → (file, index in its lines)
    lines = {name: compared_lines(text) for name, text in files.items()}
    for name, kept in lines.items():
        for i in range(len(kept) - n + 1):
            places[tuple(text for _, text in kept[i : i + n])].append((name, i))
    runs, seen = [], set()
    for where in sorted(w for w in places.values() if len(w) > 1):
        if tuple((name, i - 1) for name, i in where) not in seen:  # a run's first block, not its continuation
            runs.append([(name, lines[name][i][0]) for name, i in where])
        seen.add(tuple(where))
    return runs


def test_no_module_of_the_package_is_over_300_lines():
    long = {
        str(p.relative_to(REPO)): n
        for p in python_files(PACKAGE)
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by what their parts do): {long}"


def test_no_function_of_the_package_is_over_60_lines():
    long = [
        f"{p.relative_to(REPO)}:{line} {name} ({n} lines)"
        for p in python_files(PACKAGE)
        for name, line, n in long_functions(p.read_text(encoding="utf-8"))
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {long}"


def test_no_block_of_six_lines_stands_twice():
    files = {str(p.relative_to(REPO)): p.read_text(encoding="utf-8") for p in python_files(PACKAGE, REPO / "tests")}
    runs = repeated_blocks(files)
    said = ["; ".join(f"{name}:{line}" for name, line in where) for where in runs]
    assert not runs, f"{len(runs)} blocks of {BLOCK} or more lines stand twice (share them): " + " | ".join(said)


# ------------------------------------------------------------------------------ the checks themselves
BODY = "\n".join(f"    total = total + {i} * weight  # step {i}" for i in range(BLOCK))


def test_the_duplicate_check_finds_six_lines_written_twice_and_no_fewer():
    twice = {
        "a.py": f"import os\n\n\ndef one(weight):\n    total = 0\n{BODY}\n    return total\n",
        "b.py": f"@cache\ndef two(weight):\n    total = 1\n\n{BODY.replace('    total', '        total')}\n",
    }
    assert repeated_blocks(twice) == [[("a.py", 6), ("b.py", 5)]]
    five = {name: text.replace("+ 5 *", "- 5 *") for name, text in twice.items()}
    five["b.py"] = five["b.py"].replace("- 5 *", "+ 5 *")
    assert repeated_blocks(five) == []
    assert repeated_blocks({"c.py": f"def f(weight):\n{BODY}\n\n\ndef g(weight):\n{BODY}\n"}) == [
        [("c.py", 2), ("c.py", 11)]
    ]


def test_brackets_imports_comments_and_decorators_are_passed_over():
    text = (
        "from x import (\n    a,\n    b,\n)\nimport y\n# a comment\n@mark.parametrize(\n    'n', [1]\n)\n"
        'def f(n):\n    """Its docstring.\n    """\n    return [\n        n,\n    ]\n'
    )
    assert [line for _, line in compared_lines(text)] == ["def f(n):", '"""Its docstring.', "return [", "n,"]


def test_the_size_checks_count_a_function_from_its_def_to_its_last_line():
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES - 3))  # with def, x = 0 and return: 60
    fits = f"@decorator\ndef f():\n    x = 0\n{body}\n    return x\n"
    assert long_functions(fits) == []
    assert long_functions(fits.replace("return x", "x += 1\n    return x")) == [("f", 2, MAX_FUNCTION_LINES + 1)]
