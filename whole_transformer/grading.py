"""What the hidden tests run inside the student's kernel: they hand results out, they judge nothing.

During autograding each graded test cell calls ``hand_out`` (an exercise: the student's function
on every case of the hidden test) or ``hand_out_answer`` (a question: the answer's value). Both
turn what the student's code returned into plain JSON (numbers, strings, lists, null) and publish
it as one output of the cell, of MIME type ``RESULTS_MIME``. No expected value is ever in the
kernel: the grading process, outside the sandbox, reads that output and compares it with the
expected values it alone holds (``whole_transformer/course/plugins/verdict.py``). So whatever a
submission does to this kernel (replacing this module, builtins or NumPy, printing text that looks
like a verdict, returning objects that lie about equality) changes only what its own functions
return, never the verdict on them.

The inputs of the hidden tests are literals or are made here from seeds by ``array``,
``numpy_ints``, ``random_array``, ``random_ids``, ``score_model`` (a model for greedy decoding)
and ``model_rows`` (a trained torch model as ids → rows of scores).
"""

from __future__ import annotations

import builtins
import json
import sys

import numpy as np

from .stepwise import CacheError as _CacheError
from .tripwire import run as _run

_type = builtins.type
_len = builtins.len
_int = builtins.int
_str = builtins.str
_tuple = builtins.tuple
_issubclass = builtins.issubclass
_np_generic = np.generic
_np_ndarray = np.ndarray
_generic_item = np.generic.item
_ndarray_tolist = np.ndarray.tolist
_tuple_iter = tuple.__iter__
_modules = sys.modules
_int_repr = int.__repr__
_float_repr = float.__repr__
_encode_str = json.encoder.encode_basestring_ascii
_dict_items = dict.items
_default_rng = np.random.default_rng
_FLOAT_WORDS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class NotPlain(Exception):
    """The value is of a type the tests do not accept (e.g. a custom class)."""


def plain(value):
    """value as plain Python (None, bool, int, float, str, nested tuples), by exact type.

    NumPy scalars and arrays, torch tensors and shapes are converted through their base-class
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
    torch = _modules.get("torch")
    if torch is not None and _issubclass(t, torch.Tensor):
        return plain(torch.Tensor.tolist(value))
    if torch is not None and t is torch.Size:
        return _tuple(plain(v) for v in _tuple_iter(value))
    raise NotPlain(f"a value of type {t.__name__}")


# ---------------------------------------------------------------- handing results to the grader
#: The MIME type of the one output in which a hidden test hands its results to the grader.
RESULTS_MIME = "application/vnd.whole-transformer.results+json"
MAX_CALLS = 200  # a greedy loop that calls a model more often than this is stopped


class TooManyCalls(Exception):
    """The function called the model more than MAX_CALLS times in one case: its loop never stops."""


def counted(model):
    """The model, refusing to run more than MAX_CALLS times (TooManyCalls): a loop that never stops."""
    calls = [0]

    def counted(ids):
        calls[0] += 1
        if calls[0] > MAX_CALLS:
            raise TooManyCalls(f"the model was called more than {MAX_CALLS} times: does your loop stop?")
        return model(ids)

    return counted


def outcome(fn, args: tuple = (), kwargs: dict | None = None, watch: int | None = None) -> dict:
    """What ``fn(*args, **kwargs)`` did, as plain JSON-ready data.

    ``{"value": …}`` or ``{"error": "<exception name>"}`` (a ``stepwise.CacheError`` also ``"why"``); with
    ``watch``, also ``"after"``: the argument at that position (a list the function must not change) after it.
    A value that is not plain (a custom object, a float subclass…) is the error "NotPlain".
    """
    try:
        got = fn(*args, **(kwargs or {}))
        out = {"value": _listify(plain(got))}
    except NotPlain:
        out = {"error": "NotPlain"}
    except Exception as e:  # noqa: BLE001 - the student's code may raise anything
        out = {"error": _type(e).__name__}
        if _type(e) is _CacheError:  # the driver's words on how the cache was wrong: they name the mistake
            out["why"] = _str(e)[:300]
    if watch is not None:
        try:
            arg = args[watch]
            out["after"] = _listify(plain(arg)) if _type(arg) is list else None
        except NotPlain:
            out["after"] = None
    return out


def hand_out(exercise: str, fn, cases, watch: int | None = None, models: int | None = None) -> None:
    """Run ``fn`` on every case ``(args, kwargs)`` and hand the outcomes to the grader.

    ``models``: the position of a model argument, wrapped so that a loop that never stops fails its case
    only. A case ``(args, kwargs, (n, seed))`` is a sampler's: see ``drawn``. While the cases run, the course's
    own code for the step is a tripwire (``tripwire.FORBIDDEN``): a case whose function called it says
    ``"called": "<module>.<name>"``, and the grader gives the exercise nothing."""
    results = []
    with _run(exercise, fn) as trip:
        for case in cases:
            args, kwargs = _tuple(case[0]), case[1]
            if _len(case) == 3:
                out = drawn(fn, args, kwargs, case[2])
            else:
                if models is not None:
                    args = args[:models] + (counted(args[models]),) + args[models + 1 :]
                out = outcome(fn, args, kwargs, watch)
            if trip.called:
                out["called"] = trip.called[0]
                del trip.called[:]
            results.append(out)
    _publish(exercise, results)


#: A sampler's first draws made again from a fresh Generator of the same seed: other ids mean not from ``rng``.
AGAIN = 20


def drawn(fn, args: tuple, kwargs: dict, draws) -> dict:
    """What a sampler did in ``n`` calls sharing one NumPy Generator made from ``seed`` (passed as ``rng``):
    ``{"value": [every result], "again": [the first AGAIN results once more, from a fresh Generator of the same
    seed]}``; or its first error, with ``"said"``: whether the error has a message."""
    n, seed = draws
    values: list = []
    again: list = []
    try:
        for into, count in ((values, n), (again, min(n, AGAIN))):
            rng = _default_rng(seed)
            for _ in range(count):
                into.append(plain(fn(*args, **{**kwargs, "rng": rng})))
    except NotPlain:
        return {"error": "NotPlain"}
    except Exception as e:  # noqa: BLE001 - the student's code may raise anything
        return {"error": _type(e).__name__, "said": _len(_str(e).strip()) > 0}
    return {"value": _listify(_tuple(values)), "again": _listify(_tuple(again))}


def hand_out_answer(question: str, value) -> None:
    """Hand a question's answer to the grader, as plain data (see ``outcome``)."""
    _publish(question, [outcome(lambda: value)])


def _listify(value):
    if _type(value) is tuple:
        return [_listify(v) for v in value]
    return value


def _encode(value) -> str:
    """JSON text of plain data, with references taken at import (a replaced ``isinstance``, ``repr``
    or ``json`` changes nothing here)."""
    t = _type(value)
    if value is None:
        return "null"
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return _int_repr(value)
    if t is float:
        return _FLOAT_WORDS.get(_float_repr(value), None) or _float_repr(value)
    if t is str:
        return _encode_str(value)
    if t is list:
        return "[" + ", ".join([_encode(v) for v in value]) + "]"
    if t is dict:
        return "{" + ", ".join([_encode_str(k) + ": " + _encode(v) for k, v in _dict_items(value)]) + "}"
    raise NotPlain(f"a value of type {t.__name__}")


def _publish(name: str, results: list) -> None:
    data = _encode({"name": name, "results": results})
    text = f"{name}: {_len(results)} result(s) handed to the grader"
    try:
        from IPython.display import publish_display_data
    except ImportError:  # not in a kernel: nothing would read it
        print(text)
        return
    publish_display_data({RESULTS_MIME: data, "text/plain": text})


# ---------------------------------------------------------------- data for hidden tests
# Made from seeds with private references to NumPy taken at import, so the inputs of a hidden
# test are the same whatever a submission did to numpy afterwards.
_asarray = np.asarray
_int64 = np.int64
_float64 = np.float64
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


def score_model(
    seed: int,
    n_tokens: int,
    *,
    eos: int | None = None,
    never_eos: bool = False,
    ties: bool = False,
    scale: float = 1.0,
    length: int = 24,
):
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
