"""The examples in the package's docstrings run and print what they say, module by module."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import whole_transformer

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(whole_transformer.__path__, "whole_transformer.")
    if not m.name.endswith("__main__")  # running it is the command line, not an example
)


def test_every_module_is_found():
    assert {"whole_transformer.task", "whole_transformer.model", "whole_transformer.labs._html"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"
