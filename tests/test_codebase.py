"""The codebase keeps its limits:

- size follows cohesion: a module of whole_transformer/, benchmarks/ or examples/ over 500 lines, or a function (or
  method) over 80 lines, is a warning to read it again (pytest's warnings summary names it), not a failure, so
  nothing is cut where a cap falls; only past 1,000 lines or 150 lines does the test fail (decorators not counted);
- no block of six lines stands twice in the Python files of whole_transformer/, benchmarks/, examples/ and tests/:
  the lines compared are stripped of their indentation, and blank lines, comments, decorators, imports and lines of
  brackets alone (``)``, ``],``, a lone ``\"\"\"``) are passed over, so that six lines standing twice are six lines
  of code or text written twice. Code that two places need is written once and shared;
- no circle of imports among the modules of whole_transformer/, imports inside functions and under TYPE_CHECKING
  counted, nor among its subpackages (they stack in layers, course/core/ at the bottom); an import of the
  package's own modules inside a function says why, in a comment;
- what a docstring, a comment or a page of the docs names stands: files and paths of the repository (or of one
  allow-list, for what runs make), names written as code, dotted names of the package;
- docs/code.md maps every module of the package, and names none that is gone; README.md's layout table names only
  folders that stand, and every subpackage of course/.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import re
import subprocess
import tokenize
import warnings
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "whole_transformer"
BENCHMARKS = REPO / "benchmarks"  # the benchmarks' package keeps the package's limits
EXAMPLES = REPO / "examples"  # so does make classroom, beside the package (examples/classroom)
WARN_MODULE_LINES, MAX_MODULE_LINES = 500, 1000
WARN_FUNCTION_LINES, MAX_FUNCTION_LINES = 80, 150
BLOCK = 6  # lines
#: a line of brackets, commas and colons alone, or a docstring's lone quotes
_BRACKETS = re.compile(r"""^[()\[\]{},:;]*$|^("{3}|'{3})[(),]*$""")


def python_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


def long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function longer than ``limit`` lines."""
    return [
        (node.name, node.lineno, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > limit
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


def test_modules_are_sized_by_what_they_hold():
    sizes = {
        str(p.relative_to(REPO)): len(p.read_text(encoding="utf-8").splitlines())
        for p in python_files(PACKAGE, BENCHMARKS, EXAMPLES)
    }
    if big := {name: n for name, n in sizes.items() if n > WARN_MODULE_LINES}:
        warnings.warn(f"modules over {WARN_MODULE_LINES} lines: do they hold one idea? {big}", stacklevel=1)
    huge = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not huge, f"modules over {MAX_MODULE_LINES} lines (split them where their ideas part): {huge}"


def test_functions_are_sized_by_what_they_do():
    def over(limit: int) -> list[str]:
        return [
            f"{p.relative_to(REPO)}:{line} {name} ({n} lines)"
            for p in python_files(PACKAGE, BENCHMARKS, EXAMPLES)
            for name, line, n in long_functions(p.read_text(encoding="utf-8"), limit)
        ]

    if big := over(WARN_FUNCTION_LINES):
        warnings.warn(f"functions over {WARN_FUNCTION_LINES} lines: one step each? {big}", stacklevel=1)
    huge = over(MAX_FUNCTION_LINES)
    assert not huge, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {huge}"


def test_no_block_of_six_lines_stands_twice():
    files = {
        str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
        for p in python_files(PACKAGE, BENCHMARKS, EXAMPLES, REPO / "tests")
    }
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
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES - 3))  # with def, x = 0 and return: the limit
    fits = f"@decorator\ndef f():\n    x = 0\n{body}\n    return x\n"
    assert long_functions(fits) == []
    assert long_functions(fits.replace("return x", "x += 1\n    return x")) == [("f", 2, MAX_FUNCTION_LINES + 1)]


# ------------------------------------------------------------------------------ imports
# The modules of whole_transformer/ import each other in one direction: no circle, counting every import the
# source holds (at the top, inside a function, under ``if TYPE_CHECKING:``). An import inside a function or under
# TYPE_CHECKING does not run with its module, so it hides a circle from Python but not from the reader: the
# modules still need each other both ways. An import of the package's own modules inside a function says why, on
# its line or on the line before its run of imports (only to keep a heavy library, or a slow part of the package,
# out of a path that does not need it).
_PRAGMA = re.compile(r"#\s*(noqa|type:|pragma|fmt:)")


def module_name(path: Path) -> str:
    """whole_transformer/course/layout.py → whole_transformer.course.layout (a package: its folder's name)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (the handout's templates are files it copies, not modules)."""
    return {module_name(p): p for p in python_files(PACKAGE) if "templates" not in p.relative_to(PACKAGE).parts}


@dataclass(frozen=True)
class OwnImport:
    line: int  # the import statement's first line
    target: str  # the module of the package it imports (a package's __init__ when it names no module)
    in_function: bool
    type_checking: bool  # under ``if TYPE_CHECKING:``
    said_why: bool  # a comment on its lines, or on the line before the run of import statements it stands in


def imported_modules(node: ast.Import | ast.ImportFrom, me: str, is_package: bool, modules: Iterable[str]) -> list[str]:
    """The package's own modules an import statement names (``from a import b``: a.b when b is a module, else a)."""
    if isinstance(node, ast.Import):
        named = [alias.name for alias in node.names]
    else:
        base = me.split(".")[: None if is_package else -1]
        base = base[: len(base) - node.level + 1] if node.level else []
        module = ".".join(base + ([node.module] if node.module else []))
        named = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
    own = []
    for name in named:
        while "." in name and name not in modules:
            name = name.rpartition(".")[0]
        if name in modules:
            own.append(name)
    return own


def own_imports(path: Path, modules: Iterable[str]) -> list[OwnImport]:
    """Every import of the package's own modules in one file, and where it stands."""
    return imports_in(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py", modules)


def imports_in(text: str, me: str, is_package: bool, modules: Iterable[str]) -> list[OwnImport]:
    """Every import of the package's own modules in the source of module ``me``, and where it stands."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    comments = {t.start[0] for t in tokens if t.type == tokenize.COMMENT and not _PRAGMA.match(t.string)}
    found: list[OwnImport] = []

    def visit(body: list, in_function: bool, type_checking: bool) -> None:
        run: set[int] = set()  # the lines of the run of import statements the one at hand stands in
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if run:  # the blank lines between two imports of a run belong to it
                    run |= set(range(max(run) + 1, node.lineno)) - comments
                above = node.lineno - 1
                while above in run:  # a comment heading a run of imports speaks for each of them
                    above -= 1
                lines = set(range(node.lineno, node.end_lineno + 1))
                run |= lines
                said = above in comments or bool(lines & comments)
                for target in imported_modules(node, me, is_package, modules):
                    found.append(OwnImport(node.lineno, target, in_function, type_checking, said))
                continue
            run = set()
            inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for field, value in ast.iter_fields(node):
                if isinstance(value, list) and value and isinstance(value[0], (ast.stmt, ast.excepthandler)):
                    checking = (
                        isinstance(node, ast.If) and field == "body" and "TYPE_CHECKING" in ast.unparse(node.test)
                    )
                    for part in [value] if isinstance(value[0], ast.stmt) else [h.body for h in value]:
                        visit(part, inner, type_checking or checking)

    visit(ast.parse(text).body, False, False)
    return found


def import_graph() -> dict[str, set[str]]:
    """module → the package's modules it imports, wherever the import stands."""
    modules = package_modules()
    return {name: {i.target for i in own_imports(path, modules)} - {name} for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's algorithm), each sorted: every circle's
    modules stand in one of them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_no_circle_of_imports_among_the_modules_of_the_package():
    found = circles(import_graph())
    said = [" ⇄ ".join(m.removeprefix("whole_transformer.") for m in part) for part in found]
    assert not found, f"{len(found)} circles of imports (imports inside functions counted): " + " | ".join(said)


def subpackage_of(module: str) -> str:
    """The part of the package a module stands in: its subpackage (``course.autograder``, ``labs``), or the
    module itself when it stands alone (``course.layout``, ``task``)."""
    parts = module.removeprefix("whole_transformer").strip(".").split(".")
    if parts[0] == "course" and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0] or "whole_transformer"


def subpackage_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """subpackage → the subpackages its modules import (``subpackage_of``), wherever the import stands."""
    out: dict[str, set[str]] = defaultdict(set)
    for module, imported in graph.items():
        mine = subpackage_of(module)
        out[mine] |= {subpackage_of(m) for m in imported} - {mine}
    return dict(out)


def test_the_subpackages_stack_with_no_circle():
    """The subpackages of course/ (and the modules standing alone beside them) stack in layers, core/ at the
    bottom: none imports one that imports it back, directly or round a longer circle."""
    graph = subpackage_graph(import_graph())
    found = circles(graph)
    said = []
    for part in found:
        edges = sorted(f"{a} → {b}" for a in part for b in graph[a] if b in part)
        said.append(" ⇄ ".join(part) + f" ({'; '.join(edges)})")
    assert not found, f"{len(found)} circles among the subpackages (imports inside functions counted): " + " | ".join(
        said
    )
    above = sorted(s for s in graph.get("course.core", ()) if s.startswith("course"))
    assert not above, f"course/core/ imports other parts of course/ (it is the bottom layer): {above}"


def test_the_subpackage_graph_names_each_part_once():
    graph = subpackage_graph(
        {
            "whole_transformer.course.core.results": {"whole_transformer.course.core.verdict"},
            "whole_transformer.course.autograder.grade": {"whole_transformer.course.core.results"},
            "whole_transformer.course.layout": set(),
            "whole_transformer.course.term.late": {"whole_transformer.course.layout"},
            "whole_transformer.labs._widgets": {"whole_transformer.task"},
        }
    )
    assert graph == {
        "course.core": set(),
        "course.autograder": {"course.core"},
        "course.layout": set(),
        "course.term": {"course.layout"},
        "labs": {"task"},
    }
    assert circles({"course.term": {"course.autograder"}, "course.autograder": {"course.term"}}) == [
        ["course.autograder", "course.term"]
    ]


def test_an_own_import_inside_a_function_says_why():
    modules = package_modules()
    silent = sorted(
        {(p, i.line) for p in modules.values() for i in own_imports(p, modules) if i.in_function and not i.said_why}
    )
    silent = [f"{path.relative_to(REPO)}:{line}" for path, line in silent]
    assert not silent, (
        f"{len(silent)} imports of the package inside a function with no comment saying why (lift them to the top, "
        "or say on the line what heavy import they keep out of which path): " + " ".join(silent)
    )


def test_the_import_checks_see_every_import_and_its_comment():
    text = (
        "from typing import TYPE_CHECKING\nfrom . import b\nif TYPE_CHECKING:\n    from .c import X\n"
        "def f():\n    import os\n    # lazy: d and e import torch\n    from .d import y\n\n    from . import e\n"
        "    from .b import z  # lazy: b is slow\n    if os:\n        from whole_transformer.pkg import c\n"
    )
    modules = {f"whole_transformer.pkg{m}" for m in ("", ".a", ".b", ".c", ".d", ".e")}
    found = [
        (i.line, i.target.rpartition(".")[2], i.in_function, i.type_checking, i.said_why)
        for i in imports_in(text, "whole_transformer.pkg.a", False, modules)
    ]
    assert found == [
        (2, "b", False, False, False),
        (4, "c", False, True, False),
        (8, "d", True, False, True),
        (10, "e", True, False, True),
        (11, "b", True, False, True),
        (13, "c", True, False, False),
    ]
    assert circles({"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set(), "e": {"e", "a"}}) == [["a", "b", "c"]]


# ------------------------------------------------------------------------------ names of files
# What a docstring, a comment or a page of docs/ names stands: a file named in them is a file of the repository
# (``course.toml``, a path such as ``answers/diagnose.py``), and a name written as code with an underscore in it
# (``run_notebook``) is a name the code has. A bare file name matches any file of that name; a path must stand
# relative to the repository, to the folder of the file that names it or one above it, to whole_transformer/ or
# to whole_transformer/course/ (how the docstrings name modules). A pattern (``<name>.ipynb``, ``*.py``) and a path
# leaving the repository (``../shared/...``) name no file of it.
EXTENSIONS = "py|toml|json|csv|txt|ipynb|md|yml|yaml|html|cfg|ini|sh|js|css|log|zip|pt|pkl|npz"
#: a file name or a path of them, not a piece of a longer path, a pattern's tail or a URL's
FILE_NAME = re.compile(rf"(?<![\w./~$*>}}-])((?:[\w.-]+/)*[\w-][\w.-]*\.(?:{EXTENSIONS}))(?![\w/])")
#: a dotted name of the package: a module, or a name in one (``whole_transformer.course.layout.Course``)
DOTTED = re.compile(r"(?<![\w.])whole_transformer(?:\.\w+)+")
#: a name written as code (between backticks) with an underscore in it
CODE_NAME = re.compile(r"(?<![\w`])``?([A-Za-z_]\w*_\w*)``?(?![\w`])")
#: Files that are not in the repository but are fine to name: what the course, its commands and its tests make
#: at run time, and files of other projects. A name here stands for the file in any folder (``DIR/classroom.json``).
NOT_IN_THE_REPOSITORY = {
    # a course folder, as the instructor's commands and nbgrader fill it
    "timestamp.txt", "submission_secret.txt", "handin-times.json", "course_config.py", "gradebook.db",
    "grades.csv", "grades-detail.csv", "insights.csv", "insights.html", "integrity-report.csv",
    "canvas-grades.csv", "moodle-grades.csv", "students.csv", "submissions.zip", "your-model.pt", "your-models",
    "serve.log", "status.json", "roster.json", "moodle-participants.json", "taken-in.json", "times.csv",
    "result.json", "run-result.json",  # a grading's result beside its graded notebooks; what nbgrader hands back
    "lti-tool-jwks.json", "lti-passback.json", "lti-launches.json", "lti-nonces.json",  # lti/: the course in an LMS
    # the classroom on JupyterHub (make classroom): its folder DIR and the hub's own files
    "classroom.json", "jupyterhub_config.py", "jupyterhub.log", "course.log", "env.log",
    "jupyter_server_config.json", "page_config.json", "nbgrader_config.py",
    # what the tests make: their courses, notebooks and payloads, and what they leave in artifacts/
    "01-mini.ipynb", "pwned.txt", "release/01-whole-machine.ipynb", "times.json", "axe-counts.json",
    "handout-terminal.txt", "adapter-table.md", "course-class-timing.txt", "forward-class.md",
    # other projects' files: nbgrader's exchange and formgrader, axe-core, the npm packages of publish/vendor/;
    # the course's design notes, beside the repository
    "fetch_feedback.py", "formgrade.js", "axe.min.js", "dist/embed-amd.js", "es5/tex-svg.js", "DESIGN.md",
}  # fmt: skip
#: Where the rule reads: the Python files' comments and docstrings, and the documentation whole (docs/ and every
#: README.md; benchmarks/results.md is a record of runs, each naming the tree it ran on).
READ = ("whole_transformer", "examples", "tests", "benchmarks", "nbgrader_config.py", "docs", "README.md")


def repository_files() -> list[Path]:
    """The repository's files as they stand (tracked, or new and not ignored), relative to it."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    return [Path(name) for name in listed if (REPO / name).is_file()]


def names_a_file(name: str, where: Path, files: set[str], file_names: set[str]) -> bool:
    """True when the file named in ``where`` stands in the repository (or is one the allow-list names)."""
    if name in NOT_IN_THE_REPOSITORY or name.rpartition("/")[2] in NOT_IN_THE_REPOSITORY:
        return True
    if "/" not in name:
        return name in file_names
    for base in (*(p.as_posix() for p in where.parents), "whole_transformer", "whole_transformer/course"):
        resolved = os.path.normpath(os.path.join(base, name))
        if resolved.startswith("..") or resolved in files:
            return True
    return False


def read_python(text: str) -> tuple[list[tuple[int, str]], set[str]]:
    """What a Python file says in words, (line, text) of its comments and docstrings, and the names its code has:
    names, attributes, arguments, modules, and the words of its strings other than docstrings."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    said = [(t.start[0], t.string) for t in tokens if t.type == tokenize.COMMENT]
    names: set[str] = set()
    docs: set[int] = set()
    for node in ast.walk(ast.parse(text)):  # breadth first: a docstring's owner is met before the docstring
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
        for field in ("id", "attr", "name", "arg", "module", "asname"):
            if isinstance(value := getattr(node, field, None), str):
                names.update(value.split("."))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docs:
                said.append((node.lineno, node.value))
            else:
                names.update(re.findall(r"\w+", node.value))
    return said, names


def names_a_module(dotted: str, modules: dict[str, Path]) -> bool:
    """True when a dotted name is a module of the package, or a module and a name it defines."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        module = ".".join(parts[:n])
        if module in modules:
            return n == len(parts) or parts[n] in top_names(modules[module])
    return False


@functools.cache
def top_names(path: Path) -> set[str]:
    """The names a module defines or imports, anywhere in it (a package's: its modules and subpackages too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {p.stem for p in path.parent.glob("*.py")} | {p.parent.name for p in path.parent.glob("*/__init__.py")}
    names = names if path.name == "__init__.py" else set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).partition(".")[0])
    return names


def stale_names() -> list[str]:
    """``file:line name`` of each name of a file, or name as code, that a docstring, comment or page says and the
    repository does not have."""
    files = repository_files()
    paths, file_names = {p.as_posix() for p in files}, {p.name for p in files}
    known = {p.stem for p in files}  # the code's names: its own, and the Makefile's and the settings files' words
    said: dict[Path, list[tuple[int, str]]] = {}
    modules = package_modules()
    for path in files:
        page = path.name == "README.md" or (path.parts[0] == "docs" and path.suffix == ".md")
        if path.suffix == ".py":
            said[path], names = read_python((REPO / path).read_text(encoding="utf-8"))
            known |= names
        elif path.name == "Makefile" or path.suffix in (".toml", ".yml"):
            known.update(re.findall(r"\w+", (REPO / path).read_text(encoding="utf-8")))
        elif page:
            said[path] = list(enumerate((REPO / path).read_text(encoding="utf-8").splitlines(), 1))
    found = []
    for path, words in said.items():
        for line, text in words if path.parts[0] in READ else ():
            for m in FILE_NAME.finditer(text):
                found += [] if names_a_file(m[1], path, paths, file_names) else [f"{path}:{line} {m[1]}"]
            found += [f"{path}:{line} {m[1]}" for m in CODE_NAME.finditer(text) if m[1] not in known]
            found += [f"{path}:{line} {m[0]}" for m in DOTTED.finditer(text) if not names_a_module(m[0], modules)]
    return found


def test_what_the_docs_and_comments_name_stands():
    stale = stale_names()
    said = " | ".join(stale)
    assert not stale, f"{len(stale)} names of files or of code that do not stand (say what stands now): {said}"


# ------------------------------------------------------------------------------ the map
# docs/code.md maps every module of the package: under a heading that names a folder (`course/answers/`, written
# from whole_transformer/; `whole_transformer/` itself), a table whose rows start with the modules they are about.
MAP = REPO / "docs" / "code.md"
_TICKED = re.compile(r"`([^`]+)`")


def mapped_modules(text: str) -> tuple[set[str], set[str]]:
    """(the modules the map's tables name, the folders its headings name), as paths from whole_transformer/."""
    modules: set[str] = set()
    folders: set[str] = set()
    folder = None
    for line in text.splitlines():
        if line.startswith("#"):
            named = [t for t in _TICKED.findall(line) if t.endswith("/")]
            folder = None if not named else "" if named[0] == "whole_transformer/" else named[0]
            if folder is not None:
                folders.add(folder)
        elif folder is not None and line.startswith("|"):
            first = line.split("|")[1]
            modules |= {folder + name for name in _TICKED.findall(first) if name.endswith(".py")}
    return modules, folders


def test_the_map_names_every_module_and_no_other():
    modules, folders = mapped_modules(MAP.read_text(encoding="utf-8"))
    present = {p.relative_to(PACKAGE).as_posix() for p in python_files(PACKAGE) if p.name != "__init__.py"}
    packages = {p.parent.relative_to(PACKAGE).as_posix() + "/" for p in PACKAGE.rglob("__init__.py")} - {"./"}
    assert not present - modules, f"modules of whole_transformer/ not in docs/code.md: {sorted(present - modules)}"
    assert not modules - present, f"docs/code.md names modules that are not there: {sorted(modules - present)}"
    assert not packages - folders, f"subpackages without their section in docs/code.md: {sorted(packages - folders)}"


def test_the_course_package_lists_its_subpackages():
    doc = ast.get_docstring(ast.parse((PACKAGE / "course" / "__init__.py").read_text(encoding="utf-8"))) or ""
    listed = set(re.findall(r"``(\w+)/``", doc))
    packages = {p.parent.name for p in (PACKAGE / "course").glob("*/__init__.py")}
    gone = listed - {p.name for p in (PACKAGE / "course").rglob("*") if p.is_dir()}
    assert not packages - listed, f"course/__init__.py's map leaves out {sorted(packages - listed)}"
    assert not gone, f"course/__init__.py's map names folders that are not there: {sorted(gone)}"


README = REPO / "README.md"


def layout_rows(text: str) -> list[tuple[list[str], list[str]]]:
    """README's table "How the code is laid out": each row's folders named as code in its first cell (where), and
    those named in its second (what), each as written (``labs/``)."""
    section = text.split("## How the code is laid out", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] not in ("where", "---"):
            rows.append((re.findall(r"`([\w./-]+/)`", cells[0]), re.findall(r"`([\w./-]+/)`", cells[1])))
    return rows


def test_the_readme_layout_table_names_folders_that_stand_and_every_subpackage():
    """Each folder README's layout table names stands: a row's own (relative to the repository), and each one its
    text names (relative to the row's first folder); the course's row names every subpackage of course/."""
    rows = layout_rows(README.read_text(encoding="utf-8"))
    assert rows, "README.md has no table under 'How the code is laid out'"
    missing = [where for row, _ in rows for where in row if not (REPO / where).is_dir()]
    missing += [f"{row[0]}{f}" for row, named in rows for f in named if not (REPO / row[0] / f).is_dir()]
    assert not missing, f"README.md's layout table names folders that are not there: {missing}"
    course = next((named for row, named in rows if row == ["whole_transformer/course/"]), [])
    packages = {f"{p.parent.name}/" for p in (PACKAGE / "course").glob("*/__init__.py")}
    assert not packages - set(course), f"README.md's layout table leaves out {sorted(packages - set(course))}"


def test_the_layout_table_is_read_row_by_row():
    text = (
        "## How the code is laid out\n\n| where | what |\n|---|---|\n| `a/` | `b/` and `c/`; `d` |\n"
        "| `e/` → `f/` | none |\n\nMore: `g/`.\n## Next\n| `h/` | `i/` |\n"
    )
    assert layout_rows(text) == [(["a/"], ["b/", "c/"]), (["e/", "f/"], [])]


def test_the_map_reads_modules_under_the_folder_its_heading_names():
    text = (
        "# Map\n| `x.py` | no folder yet |\n## The side: `whole_transformer/`\n| module | job |\n|---|---|\n"
        "| `a.py`, `b.py` | two |\n| `labs/` | below |\n### `course/core/`: the core\n| `c.py` | see `d.py` |\n"
        "## Environment variables\n| `e.py` | none |\n"
    )
    assert mapped_modules(text) == ({"a.py", "b.py", "course/core/c.py"}, {"", "course/core/"})


def test_the_name_check_reads_files_paths_and_names_and_passes_over_patterns():
    text = (
        "see ``run.py``, answers/diagnose.py, <name>-worked.html, *.py, ../shared/DESIGN.md, https://x.org/a.py, "
        "``nbgrader_app``, `WT_LABS_HEADLESS`, ``plain`` and ``x = a_b``"
    )
    assert [m[1] for m in FILE_NAME.finditer(text)] == ["run.py", "answers/diagnose.py", "../shared/DESIGN.md"]
    assert [m[1] for m in CODE_NAME.finditer(text)] == ["nbgrader_app", "WT_LABS_HEADLESS"]
    modules = package_modules()
    assert names_a_module("whole_transformer.course.layout.Course", modules)
    assert names_a_module("whole_transformer.course.plugins", modules)
    assert not names_a_module("whole_transformer.course.nbgrader.app", modules)
    assert not names_a_module("whole_transformer.course.layout.Nowhere", modules)
    files, names = {"whole_transformer/course/answers/diagnose.py"}, {"diagnose.py"}
    layout, page = Path("whole_transformer/course/layout.py"), Path("docs/code.md")
    assert names_a_file("answers/diagnose.py", layout, files, names)
    assert names_a_file("diagnose.py", page, files, names) and not names_a_file("run.py", page, files, names)
    assert not names_a_file("grading/record.py", page, files, names)
    assert names_a_file("../shared/DESIGN.md", page, files, names)  # beside the repository: not its file
    assert names_a_file("DIR/classroom.json", page, files, names)  # made at run time, in any folder
