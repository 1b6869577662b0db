"""Running a one-token-at-a-time attention over a whole sequence: what ``cached_attention`` is checked with.

``cached_attention(q, k, v, cache=None)`` (notebook 03) works on one token: its query, key and value
rows (d_k,) and the cache of the earlier tokens' keys and values, a pair ``[K, V]`` of arrays (t, d_k),
or None before the first token. It returns the token's output row (d_k,) and the grown cache, a new pair.

``token_by_token(fn)`` turns such a function into one that reads a whole sequence: given the rows of
every token, ``Q``, ``K``, ``V`` (L, d_k), it calls ``fn`` once per token, handing each call the cache
the call before returned, and gives back the output rows (L - start, d_k). With ``start`` the first
tokens' keys and values are handed in as a ready cache (a list of two arrays, as a caller would make it).
It reads the sequence twice, so a function that keeps a cache of its own between calls is found too.
A call that breaks the contract stops the reading with an error that says what was wrong
(``CacheError``): the caller's cache changed, a returned cache that is not the given one with the new
row below it, an output row of the wrong shape. The visible check and the hidden test both run
``cached_attention`` through it; it judges nothing else (the right rows are known only to the grader).

    >>> import numpy as np
    >>> def forgets(q, k, v, cache=None):   # hands back a cache of the new row alone
    ...     return v, [k[None], v[None]]
    >>> rows = np.arange(6.0).reshape(3, 2)
    >>> token_by_token(forgets)(rows, rows, rows)
    Traceback (most recent call last):
    ...
    whole_transformer.stepwise.CacheError: at token 1 the returned cache holds this token's row only, without the \
cache it was given (1 rows)
"""

from __future__ import annotations

import numpy as np

# private references, taken at import: a submission that replaces NumPy's functions later changes only
# what its own function returns, never how its calls are made or checked
_asarray, _array_equal, _vstack, _float64 = np.asarray, np.array_equal, np.vstack, np.float64
_ndarray_copy = np.ndarray.copy
_type, _len, _tuple, _list = type, len, tuple, list


class CacheError(Exception):
    """A call of the one-token function broke its contract (see the message)."""


def _rows(value, what: str, width: int):
    try:
        a = _asarray(value, dtype=_float64)
    except (TypeError, ValueError):
        raise CacheError(f"{what} is not an array of numbers: got {_type(value).__name__}") from None
    if a.ndim != 2 or a.shape[1] != width:
        raise CacheError(f"{what} should be rows of {width} numbers, shape (t, {width}); got shape {a.shape}")
    return a


def _same(a, b) -> bool:
    """The same shape and numbers, nan equal to nan (an overflow is compared as what it is)."""
    return a.shape == b.shape and _array_equal(a, b, equal_nan=True)


def _how_the_cache_differs(K, V, want_k, want_v, given: int) -> str:
    """What is wrong with a returned cache (K, V), said as the likely bug."""
    if _same(K, want_v) and _same(V, want_k) and not _same(K, want_k):
        return "the returned cache is [V, K]: the keys come first, [K, V]"
    if K.shape == want_k.shape and given and _same(K[1:], want_k[:-1]) and _same(K[:1], want_k[-1:]):
        return (
            "the returned cache has this token's row on top: np.vstack([K, k]) puts the new row below the "
            "earlier ones, in the order of the tokens"
        )
    if K.shape[0] == 1 and given:
        return f"the returned cache holds this token's row only, without the cache it was given ({given} rows)"
    return (
        f"the returned cache is not the cache it was given ({given} rows) with this token's k and v added "
        f"below: it holds {K.shape[0]} key and {V.shape[0]} value rows"
    )


def _one_step(fn, q, k, v, cache, t: int):
    """One call of ``fn`` on token ``t``, checked; returns (its output row, the cache it returned)."""
    d = k.shape[0]
    before = None if cache is None else (_ndarray_copy(cache[0]), _ndarray_copy(cache[1]))
    got = fn(q, k, v) if cache is None else fn(q, k, v, cache)
    if before is not None and not (_same(cache[0], before[0]) and _same(cache[1], before[1])):
        raise CacheError(
            f"at token {t} the cache it was given changed: build the grown cache as new arrays "
            "(np.vstack makes one) and leave the caller's as it was"
        )
    if _type(got) not in (_tuple, _list) or _len(got) != 2:
        raise CacheError(f"at token {t} it returned {_type(got).__name__}, not a pair (output row, cache)")
    out, grown = got
    out = _asarray(out, dtype=_float64)
    if out.shape != (d,):
        raise CacheError(f"at token {t} the output row has shape {out.shape}; it should be ({d},), like v")
    if _type(grown) not in (_tuple, _list) or _len(grown) != 2:
        raise CacheError(f"at token {t} the returned cache is {_type(grown).__name__}, not a pair (K, V)")
    K, V = _rows(grown[0], "the returned K", d), _rows(grown[1], "the returned V", d)
    given = 0 if before is None else before[0].shape[0]
    want_k = k[None] if before is None else _vstack([before[0], k])
    want_v = v[None] if before is None else _vstack([before[1], v])
    if not (_same(K, want_k) and _same(V, want_v)):
        raise CacheError(f"at token {t} {_how_the_cache_differs(K, V, want_k, want_v, given)}")
    return out, [K, V]  # the next call gets a list: a function that writes into it is found


def token_by_token(fn):
    """``fn`` (q, k, v, cache=None) → (out, cache), as a function of whole sequences (see the module)."""

    def read(Q, K, V, start: int = 0):
        Q, K, V = (_asarray(a) for a in (Q, K, V))
        first = None
        for _ in range(2):  # twice: a function that keeps its own cache between calls goes wrong the second time
            cache = None if start == 0 else [_ndarray_copy(K[:start]), _ndarray_copy(V[:start])]
            outs = []
            for t in range(start, _len(Q)):
                out, cache = _one_step(fn, _ndarray_copy(Q[t]), _ndarray_copy(K[t]), _ndarray_copy(V[t]), cache, t)
                outs.append(out)
            rows = _asarray(outs, dtype=_float64)
            if first is not None and not _same(rows, first):
                raise CacheError(
                    "reading the same tokens a second time gave other rows: does it keep a cache of its own?"
                )
            first = rows
        return first

    read.__name__ = getattr(fn, "__name__", "cached_attention")
    return read


def head_rows(model, ids, block: int, head: int):
    """The query, key and value rows (L, d_k) of one head of a trained torch model reading ``ids``, float64.

    Block and head count from 1, as the labs name them; the rows are those the model's own attention uses.
    """
    import torch

    x = torch.tensor([[int(i) for i in ids]])
    with torch.no_grad():
        h = model.embed(x)
        mask = model.mask(x)
        for b in model.blocks[: block - 1]:
            h, _ = b(h, mask)
        q, k, v = model.blocks[block - 1].attn.split_heads(model.blocks[block - 1].ln1(h))  # (1, h, L, d_k)
    return tuple(a[0, head - 1].double().numpy() for a in (q, k, v))
