"""Comparisons for the hidden tests that a submission cannot fool.

The notebooks import this module in their first cell, before any student code runs. It keeps
its own references to every builtin and NumPy function it uses, so a student cell that later
replaces ``abs``, ``len``, ``isinstance`` or ``np.isclose`` changes nothing here, and a
returned object whose ``==`` always says True is never asked: values are first turned into
plain Python numbers, strings and tuples by their exact type, then compared.

Questions use ``same``, ``same_shape`` and ``choice``. Exercises use ``same_id`` (a token id),
``same_ids`` (a list of ids), ``same_pair`` (x and y), ``close`` (a float loss), ``same_array``
and ``unchanged`` (the caller's list was not modified). Their inputs are literals or are made
from seeds by ``array``, ``numpy_ints``, ``random_array``, ``random_ids``, ``score_model`` (a
model for greedy decoding) and ``model_rows`` (a trained torch model as ids → rows of scores).
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


# ---------------------------------------------------------------- exercises: ids, floats, arrays
def same_id(value, expected: int) -> bool:
    """True if value is the token id ``expected``: a Python or NumPy int (or a 0-d integer array
    or tensor), never a float, a bool or a one-element list."""
    return _type(expected) is int and same(value, expected)


def same_ids(value, expected) -> bool:
    """True if value is the list of ids ``expected``: a list, tuple or 1-D integer array whose
    items are Python or NumPy ints, equal one by one. Floats (e.g. scores) do not count as ids."""
    return same(value, _tuple(expected))


def same_pair(value, first, second) -> bool:
    """True if value is a pair (tuple or list of two) whose parts are the id lists first, second."""
    t = _type(value)
    if t is not tuple and t is not list:
        return False
    if _len(value) != 2:
        return False
    return same_ids(value[0], first) and same_ids(value[1], second)


def close(value, expected: float, rel: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """True if value is one real number (Python or NumPy float or int, 0-d array or tensor) within
    ``abs_tol + rel·|expected|`` of ``expected``. NaN and infinities are never close."""
    if not _isfinite(expected):
        return False
    return same(value, _float(expected), rel, abs_tol)


def same_array(value, expected, rel: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """True if value is an array (or nested lists) of the shape and numbers of ``expected``.

    ``expected`` is a literal or an array made before any student code ran. Ints must match
    exactly; floats within the tolerance.
    """
    try:
        want = plain(expected)
    except NotPlain:
        return False
    return same(value, want, rel, abs_tol)


def unchanged(value, expected) -> bool:
    """True if a list the test passed in still holds exactly ``expected`` (a copy taken before the
    call, of Python or NumPy ints): it was not changed."""
    try:
        want = plain(expected)
    except NotPlain:
        return False
    return _type(value) is list and same(value, want)


# ---------------------------------------------------------------- data for hidden tests
# Made from seeds with private references to NumPy taken at import, so the inputs of a hidden
# test are the same whatever a submission did to numpy afterwards.
_default_rng = np.random.default_rng
_asarray = np.asarray
_int64 = np.int64
_float64 = np.float64
_arange = np.arange
_ndarray_copy = np.ndarray.copy
_ndarray_reshape = np.ndarray.reshape
_ndarray_astype = np.ndarray.astype


def array(values, dtype=float):
    """A NumPy array of ``values`` (float64 by default; pass ``int`` for ids)."""
    return _asarray(values, dtype=_int64 if dtype is int else (_float64 if dtype is float else dtype))


def numpy_ints(values) -> list:
    """A Python list whose items are NumPy ints (np.int64), e.g. a prompt built from an array."""
    return [_int64(v) for v in values]


def random_array(seed: int, shape, scale: float = 1.0, offset: float = 0.0, dtype=None):
    """Normal numbers times ``scale`` plus ``offset``, float64 (or ``dtype``), from ``seed``."""
    out = _default_rng(seed).normal(size=shape) * scale + offset
    return out if dtype is None else _ndarray_astype(out, dtype)


def random_ids(seed: int, shape, low: int, high: int):
    """Integers in ``low … high - 1`` (int64), from ``seed``."""
    return _default_rng(seed).integers(low, high, size=shape)


def score_model(seed: int, n_tokens: int, *, eos: int | None = None, never_eos: bool = False,
                ties: bool = False, scale: float = 1.0, length: int = 24):
    """A model for greedy decoding: ids → one row of ``n_tokens`` scores per id (float64).

    Row p depends on the token at p, the token before it and the position p, so running the
    model on the prompt only, on the last token only, or reading the first row all go wrong.
    ``never_eos`` makes the ``eos`` column the lowest in every row; ``ties`` uses small whole
    numbers so that rows often have several highest scores; ``scale`` multiplies every score.
    """
    rng = _default_rng(seed)
    if ties:
        token = rng.integers(0, 3, size=(n_tokens, n_tokens)) * 1.0
        before = rng.integers(0, 2, size=(n_tokens, n_tokens)) * 1.0
        position = rng.integers(0, 2, size=(length, n_tokens)) * 1.0
    else:
        token = rng.normal(size=(n_tokens, n_tokens))
        before = rng.normal(size=(n_tokens, n_tokens)) * 0.7
        position = rng.normal(size=(length, n_tokens)) * 0.7
    if never_eos:
        if eos is None:
            raise ValueError("never_eos needs the eos id")
        token[:, eos] = -50.0
    token, before, position = token * scale, before * scale, position * scale

    def model(ids):
        ids = _ndarray_reshape(_ndarray_astype(_asarray(ids), _int64), -1)
        n = ids.shape[0]
        if n < 1 or n > length:
            raise ValueError(f"this model reads 1 to {length} ids, got {n}")
        rows = token[ids] + position[:n]  # (n, n_tokens)
        rows[1:] += before[ids[:-1]]
        return rows

    return model


def model_rows(torch_model):
    """A trained torch model as a function: a list of ids → a (len(ids), V) float array of scores."""
    import torch

    no_grad, tensor, long = torch.no_grad, torch.tensor, torch.long

    def model(ids):
        ids = [_int(i) for i in ids]
        with no_grad():
            return torch_model(tensor([ids], dtype=long))[0].numpy()  # (len(ids), V)

    return model
