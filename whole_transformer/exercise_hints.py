"""The hints of the exercises' visible checks read from what a function returned, and where a wrong list differs.

``exercise_checks`` tries them after the catalogued mistakes: each ``<exercise>_diagnose(cases, got)`` reads the
outcomes (``exercise_checks.Outcome``: a value or an error) for types, shapes, nan and the course's own errors,
and each ``<exercise>_differs(case, j, n_got, n_right)`` says where a wrong list (rows of attention, ids, x and
y) starts to differ from the right one, at item ``j``.
"""

from __future__ import annotations

import math

import numpy as np

from .exercise_cases import Case
from .stepwise import CacheError


def _is_number_not_int(v) -> bool:
    return isinstance(v, float) or isinstance(v, tuple)


def nt_diagnose(cases, got) -> str | None:
    values = [o.value for o in got if o.error is None]
    if values and all(isinstance(v, float) and v.is_integer() for v in values):  # 3.0: an id, but a float
        return (
            f"It returns {values[0]!r}, a float. An id is a whole number that indexes the vocabulary: "
            "convert the id to an int before you return it."
        )
    for o in got:
        if o.error is None and (_is_number_not_int(o.value) or isinstance(o.value, bool)):
            return (
                "It returns a score (or several), not an id. The id of the next token is the position of the "
                "highest score: np.argmax(scores)."
            )
    for o in got:
        if o.error is not None and ("matmul" in str(o.error) or "shape" in str(o.error) or "align" in str(o.error)):
            return "Check the product: h is (d,) and W is (d, V), so the scores are h @ W + b, of shape (V,)."
    return None


def gd_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and isinstance(o.value, tuple) and any(not isinstance(v, int) for v in o.value):
            return (
                "It appends scores, not ids. Append the position of the highest score of the last row "
                "(np.argmax), an int."
            )
    for o in got:
        if o.error is None and o.changed:
            return (
                "It changes the caller's prompt: append to a new list that starts as a copy of it, and leave "
                "the prompt you were given as it was."
            )
    for o in got:
        if o.error is None and not isinstance(o.value, tuple):
            return f"It should return the list of ids, but returned {o.describe()}."
    return None


def xy_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and o.changed:
            return "It changes the caller's sequence: build x and y as new lists (seq[:-1] and seq[1:] are copies)."
    for o in got:
        if o.error is None and not (isinstance(o.value, tuple) and len(o.value) == 2):
            return f"It should return two lists, x and y (return x, y), but returned {o.describe()}."
    return None


def ml_diagnose(cases, got) -> str | None:
    for o in got:
        if o.error is None and isinstance(o.value, tuple):
            return (
                "It returns several numbers; the loss is one number: the mean of the rows' losses, over the "
                "rows that count."
            )
    for c, o in zip(cases, got, strict=True):
        if "large" in c.label and o.error is None and isinstance(o.value, float) and not np.isfinite(o.value):
            return (
                "With large logits it gives nan or inf: exp overflows. Use the notebook's softmax, which "
                "subtracts each row's maximum first."
            )
    return None


def _nonfinite(value) -> bool:
    if type(value) is float:
        return not math.isfinite(value)
    return type(value) is tuple and any(_nonfinite(v) for v in value)


def ca_diagnose(cases, got) -> str | None:
    if any(o.error is not None and "inhomogeneous" in str(o.error) for o in got):  # rows of two cases in one array
        return (
            "It keeps keys and values from earlier calls, in lists outside the function: rows of one sequence land "
            "beside those of the next (here of another size), and np.array cannot stack rows of different lengths. "
            "Grow the cache you are given (None: no earlier tokens) and return the grown one."
        )
    for c, o in zip(cases, got, strict=True):
        if isinstance(o.error, CacheError):  # the contract broken: its message says how
            return f"On {c.label}, {o.error}."
    for c, o in zip(cases, got, strict=True):
        if o.error is None and _nonfinite(o.value):
            return (
                f"On {c.label} the output holds nan or inf: np.exp of large scores overflows. Subtract the largest "
                "score before exp (the notebook's softmax does it for you)."
            )
    for c, o in zip(cases, got, strict=True):
        if o.error is not None:
            return f"On {c.label} it {o.describe()}."
    return None


# ---------------------------------------------------------------- where a wrong list starts to differ
def ca_differs(case: Case, j: int, n_got: int, n_right: int) -> str:
    start = case.make()[0][3]
    if j >= n_right or j >= n_got:
        return f"On {case.label} it returns {n_got} output rows; reading it should give {n_right}."
    where = "from the first token on" if j == 0 else f"from token {start + j} on (the rows before it are right)"
    return f"On {case.label} the output row differs from full causal attention {where}."


def gd_differs(case: Case, j: int, n_got: int, n_right: int) -> str:
    if j >= n_got or j >= n_right:
        return (
            f"On {case.label} the ids are right as far as they go, but it returns {n_got} ids where the reading "
            f"has {n_right}: check when the loop stops (eos, max_new)."
        )
    return f"On {case.label} the ids are right up to position {j - 1} and differ from position {j} on."


def xy_differs(case: Case, j: int, n_got: int, n_right: int) -> str:
    if n_got != n_right:
        return f"On {case.label} it returns {n_got} lists; make_xy returns two, x and y."
    return f"On {case.label} {'x' if j == 0 else 'y'} is not right" + (" (x is)." if j == 1 else ".")
