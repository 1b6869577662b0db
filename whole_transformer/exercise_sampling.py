"""The visible check of ``sample_next``: its fixed cases, and how a sampler's draws become one result.

A sampler's result is random, so the check (``exercise_checks``) does not run it once: ``sampled``
calls it ``DRAWS`` times with one NumPy Generator made from the case's seed, and sums the draws up
as the ids drawn with the share of the draws each got, rounded to one decimal. Each case is chosen so
that a right sampler's shares lie at least 0.035 (4.5 standard deviations of 4,000 draws) from where
that rounding tips, whatever way it uses the generator, so the summary is the same for every right
sampler; the check compares its hash with the reference's. The hidden tests judge the draws
themselves, with other cases.

    >>> import numpy as np
    >>> def uniform(scores, temperature=1.0, top_k=None, top_p=None, rng=None):
    ...     return int(rng.integers(len(scores)))
    >>> sampled(uniform)(np.zeros(2), seed=3)   # ids 0 and 1, about half each
    ((0, 0.5), (1, 0.5))
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .exercise_cases import Case

DRAWS = 4000
AGAIN = 20  # draws made again from the same seed (as grading.AGAIN)
_default_rng = np.random.default_rng


def _is_id(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


class NotFromRng(Exception):
    """The sampler's draws do not come from the Generator it was handed (``rng``)."""


def sampled(fn: Callable) -> Callable:
    """``fn`` as the check runs it on a case: ``DRAWS`` calls sharing one Generator made from ``seed``;
    the ids drawn with their share of the draws (one decimal), or the first result that is not an id.
    The first ``AGAIN`` draws are made once more from a fresh Generator of the same seed: other ids mean
    the draws do not come from ``rng`` (``NotFromRng``), as the hidden tests find too (``grading.drawn``)."""

    def run(*args, seed: int, **kwargs):
        rng = _default_rng(seed)
        counts: dict[int, int] = {}
        first: list[int] = []
        for _ in range(DRAWS):
            got = fn(*args, **kwargs, rng=rng)
            if not _is_id(got):
                return got
            counts[int(got)] = counts.get(int(got), 0) + 1
            if len(first) < AGAIN:
                first.append(int(got))
        rng = _default_rng(seed)
        again = [fn(*args, **kwargs, rng=rng) for _ in range(AGAIN)]
        if [int(a) if _is_id(a) else a for a in again] != first:
            raise NotFromRng(
                "its draws do not come from rng: the same seed gave other ids. Draw with the Generator you are "
                "handed (rng.choice, rng.random), not np.random's own functions or a generator of your own"
            )
        return tuple((i, round(counts[i] / DRAWS, 1)) for i in sorted(counts))

    return run


def sn_cases() -> list[Case]:
    def c(label, scores, seed, **kw):
        return Case(label, lambda: ((np.array(scores, float),), {"seed": seed, **kw}))

    return [
        c("temperature 0.001 on scores [1.0, 3.0, 2.0, 0.5]", [1.0, 3.0, 2.0, 0.5], 11, temperature=1e-3),
        c("top_k=1 on scores [0.5, -1.0, 2.0, 1.8]", [0.5, -1.0, 2.0, 1.8], 12, top_k=1),
        c("temperature 1 on scores [-0.5, 1.25, -0.25, 0.75]", [-0.5, 1.25, -0.25, 0.75], 13),
        c("temperature 0.5 on scores [2.7, 1.7, 1.6, 0.4, 0.5]", [2.7, 1.7, 1.6, 0.4, 0.5], 14, temperature=0.5),
        c("temperature 2 on scores [2.5, -0.75, 0.5, 0.75]", [2.5, -0.75, 0.5, 0.75], 15, temperature=2.0),
        c("top_k=3 on scores [-0.4, 1.7, -1.0, 1.5, -0.3, 0.0]", [-0.4, 1.7, -1.0, 1.5, -0.3, 0.0], 16, top_k=3),
        c("top_p=0.75 on scores [0.5, 1.1, 1.8, 1.4, -0.4, 2.3]", [0.5, 1.1, 1.8, 1.4, -0.4, 2.3], 17, top_p=0.75),
        c(
            "top_k=3 with top_p=0.8 on scores [1.8, -0.4, -0.6, -0.9, -0.2, 0.5]",
            [1.8, -0.4, -0.6, -0.9, -0.2, 0.5],
            22,
            top_k=3,
            top_p=0.8,
        ),
        c("temperature=0 (it must raise ValueError)", [1.0, 2.0], 18, temperature=0.0),
        c("temperature=-1 (it must raise ValueError)", [1.0, 2.0], 19, temperature=-1.0),
        c("top_k=0 (it must raise ValueError)", [1.0, 2.0], 20, top_k=0),
        c("top_p=1.5 (it must raise ValueError)", [1.0, 2.0], 21, top_p=1.5),
    ]


def sn_diagnose(cases, got) -> str | None:
    """Hints read from the results' types, before any case is compared."""
    for o in got:
        if o.error is None and not isinstance(o.value, tuple):
            return (
                "It should return one id, a whole number such as int(rng.choice(len(p), p=p)); "
                f"it returned {o.describe()}."
            )
    for c, o in zip(cases, got, strict=True):
        if "must raise" in c.label and o.error is not None and not str(o.error).strip():
            return f"On {c.label}, it raised {type(o.error).__name__} without a message: say what was wrong."
    return None
