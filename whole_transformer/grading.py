"""Comparisons for the hidden tests that a submission cannot fool.

The notebooks import this module in their first cell, before any student code runs. It keeps
its own references to every builtin and NumPy function it uses, so a student cell that later
replaces ``abs``, ``len``, ``isinstance`` or ``np.isclose`` changes nothing here, and a
returned object whose ``==`` always says True is never asked: values are first turned into
plain Python numbers, strings and tuples by their exact type, then compared.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

_type = builtins.type
_len = builtins.len
_abs = builtins.abs
_int = builtins.int
_float = builtins.float
_tuple = builtins.tuple
_range = builtins.range
_zip = builtins.zip
_issubclass = builtins.issubclass
_isfinite = math.isfinite
_np_generic = np.generic
_np_ndarray = np.ndarray
_generic_item = np.generic.item
_ndarray_tolist = np.ndarray.tolist


class NotPlain(Exception):
    """The value is of a type the tests do not accept (e.g. a custom class)."""


def plain(value):
    """value as plain Python (None, bool, int, float, str, nested tuples), by exact type.

    NumPy scalars and arrays and 0-d or n-d torch tensors are converted through their base-class
    methods, so a subclass cannot lie about its contents. Anything else raises NotPlain.
    """
    t = _type(value)
    if value is None or t is bool or t is int or t is float or t is str:
        return value
    if _issubclass(t, _np_generic):
        return plain(_generic_item(value))
    if _issubclass(t, _np_ndarray):
        return plain(_ndarray_tolist(value))
    if t is list or t is tuple:
        return _tuple(plain(v) for v in value)
    torch = __import__("sys").modules.get("torch")
    if torch is not None and _issubclass(t, torch.Tensor):
        return plain(torch.Tensor.tolist(value))
    raise NotPlain(f"a value of type {t.__name__}")


def same(value, expected, rel: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """True if value equals the literal ``expected``: ints exactly, floats within tolerance.

    An int where a float is expected is accepted; a float where an int is expected is not
    (a count must be a whole number), nor a bool for a number.
    """
    try:
        got = plain(value)
    except NotPlain:
        return False
    return _same(got, expected, rel, abs_tol)


def _same(got, expected, rel, abs_tol) -> bool:
    te, tg = _type(expected), _type(got)
    if te is tuple or te is list:
        if tg is not tuple or _len(got) != _len(expected):
            return False
        for g, e in _zip(got, expected):
            if not _same(g, e, rel, abs_tol):
                return False
        return True
    if te is bool or tg is bool:
        return tg is te and got is expected
    if te is int:
        return tg is int and got == expected
    if te is float:
        if tg is not float and tg is not int:
            return False
        got = _float(got)
        if not _isfinite(got):
            return got == expected
        return _abs(got - expected) <= abs_tol + rel * _abs(expected)
    if te is str:
        return tg is str and got == expected
    return False


def same_shape(value, expected: tuple[int, ...]) -> bool:
    """True if value is the shape ``expected``, written as a tuple, list or torch.Size of ints."""
    try:
        got = plain(_tuple(value)) if _type(value).__name__ == "Size" else plain(value)
    except (NotPlain, TypeError):
        return False
    return _same(got, _tuple(expected), 0.0, 0.0)


def choice(value, expected: str) -> bool:
    """True if value is the letter ``expected`` (any case, with or without a trailing '.' or ')')."""
    if _type(value) is not str:
        return False
    letter = value.strip().rstrip(".):").strip().upper()
    return letter == expected
