"""What a hidden test of an array-valued exercise hands out: the array's shape and its numbers seen along one
fixed direction, a few numbers where the whole array would be thousands.

The forward-pass exercises of notebook 02 return arrays of up to (B, L, 42) numbers. ``view`` turns such a
result into ``[shape, numbers]``: the shape as a list, and every row of the last axis multiplied by one fixed
vector of normal numbers (seeded by the row's length), so (B, L, n) gives B × L numbers. Two arrays whose views
agree are the same array but for a difference that this one direction misses, which a wrong formula never
does by chance. A result that is not an array of numbers is handed out as it is, and judged wrong.

>>> import numpy as np
>>> view(np.ones((2, 3)))[0]
[2, 3]
>>> len(view(np.ones((2, 3)))[1])
2
"""

from __future__ import annotations

import numpy as np

_asarray = np.asarray
_float64 = np.float64
_default_rng = np.random.default_rng
SEED = 4_2_2_0  # the direction's seed, plus the row's length


def direction(n: int) -> np.ndarray:
    """The fixed vector (n,) the rows of an array are seen along."""
    return _default_rng(SEED + n).normal(size=n)


def view(value):
    """[shape, each row of the last axis @ direction]: the result of an exercise that returns an array."""
    try:
        arr = _asarray(value, dtype=_float64)
    except (TypeError, ValueError):
        return value
    if arr.ndim == 0:
        return value
    return [list(arr.shape), (arr @ direction(arr.shape[-1])).tolist()]


def viewed(fn):
    """``fn``, its result handed out as its ``view`` (what the hidden tests and the visible checks compare)."""

    def seen(*args, **kwargs):
        return view(fn(*args, **kwargs))

    return seen
