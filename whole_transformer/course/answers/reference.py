"""Reference solutions of the four graded exercises. Instructor-only: never in the students' handout.

They work out the expected values of the hidden tests (``hidden.py``, read only by the grader)
and the hashes the visible checks compare with (``checkdata.py``). Neither the student's kernel
nor the package students receive holds this module or its results.

    >>> next_token(np.array([1.0, -1.0]), np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]]), np.zeros(3))
    0
    >>> from whole_transformer.exercise_cases import STAND_IN_PROMPT, stand_in_model
    >>> greedy_decode(stand_in_model, STAND_IN_PROMPT)   # "2 0 2 =" → "two hundred two <eos>"
    [3, 2, 3, 4, 5, 6, 5, 1]
    >>> make_xy([6, 4, 9, 12, 17, 41, 33, 20, 1])      # 4 2 7 = four hundred twenty seven <eos>
    ([6, 4, 9, 12, 17, 41, 33, 20], [0, 0, 0, 17, 41, 33, 20, 1])
"""

from __future__ import annotations

import numpy as np

from ...task import EOS, EQ, PAD


def softmax(x):
    """Row-wise softmax, numerically stable: subtracting each row's maximum changes nothing."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def next_token(h, W, b):
    """One greedy step: h (d,) the last row, W (d, V), b (V,) the output layer → the id (int).

    On a tie the lowest id wins, as with np.argmax.
    """
    scores = h @ W + b  # (V,)
    return int(np.argmax(scores))


def greedy_decode(model, prompt, eos=EOS, max_new=6):
    """Greedy decoding: the prompt's ids, then each picked id, ending with eos if it was picked.

    ``model(ids)`` gives one row of scores per id; only the last row chooses the next id.
    Stops after eos (kept) or after ``max_new`` new ids. The caller's prompt is not changed.
    """
    ids = [int(i) for i in prompt]
    for _ in range(max_new):
        scores = np.asarray(model(ids))  # (len(ids), V)
        nxt = int(np.argmax(scores[-1]))
        ids.append(nxt)
        if nxt == eos:
            break
    return ids


def make_xy(seq, eq=EQ, pad=PAD):
    """Teacher forcing: x = seq without its last token, y = seq without its first, with every
    target up to and including the one that is ``eq`` set to ``pad``."""
    seq = [int(t) for t in seq]
    x, y = seq[:-1], seq[1:]
    k = seq.index(eq)  # y[0 .. k-1] are the prompt's next digits and '='
    y[:k] = [pad] * k
    return x, y


def masked_loss(logits, targets, pad=PAD):
    """Mean cross-entropy over the rows whose target is not ``pad``: logits (N, V), targets (N,)."""
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    N = len(targets)
    p = softmax(logits)  # (N, V)
    nll = -np.log(p[np.arange(N), targets])  # (N,)
    keep = targets != pad  # (N,)
    return float(nll[keep].mean())
