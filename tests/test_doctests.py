"""The examples in the package's docstrings run and print what they say, module by module.

Only the modules whose docstrings hold examples are tests here (a module without one would pass
without running anything). Which modules those are is read from their source without importing
them; each is then run with doctest, which must run exactly that many examples, none failing.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import whole_transformer

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(whole_transformer.__path__, "whole_transformer.")
    if not m.name.endswith("__main__")  # running it is the command line, not an example
)


def examples_in_source(name: str) -> int:
    """How many doctest examples the docstrings of module ``name`` hold, read from its file."""
    spec = importlib.util.find_spec(name)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    parser = doctest.DocTestParser()
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                count += len(parser.get_examples(doc))
    return count


WITH_EXAMPLES = {name: n for name in MODULES if (n := examples_in_source(name))}


def test_every_module_is_found():
    assert {"whole_transformer.task", "whole_transformer.model", "whole_transformer.labs._html"} <= set(MODULES)


def test_the_modules_with_examples_keep_them():
    """The modules that teach by example still do (an example deleted, or a module moved, fails here)."""
    assert {
        "whole_transformer.task",
        "whole_transformer.steps",
        "whole_transformer.weights",
        "whole_transformer.views",
        "whole_transformer.labs._html",
        "whole_transformer.questions",
        "whole_transformer.checks",
    } <= set(WITH_EXAMPLES), WITH_EXAMPLES


@pytest.mark.parametrize("name", sorted(WITH_EXAMPLES))
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted == WITH_EXAMPLES[name], (
        f"{name}: doctest ran {result.attempted} examples, its docstrings hold {WITH_EXAMPLES[name]}"
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"
