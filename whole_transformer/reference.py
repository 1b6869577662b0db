"""Reference solutions of the four graded exercises, and the stand-in model of notebook 03.

The visible checks (``checks.py``) run a student's function beside these on the same inputs.
The hidden tests never call this module: they compare with literals written when the
notebooks were made, so a submission that changes this module changes no grade. A notebook
that imports this module is reported by the autograder's integrity check.

    >>> next_token(np.array([1.0, -1.0]), np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]]), np.zeros(3))
    0
    >>> greedy_decode(stand_in_model, STAND_IN_PROMPT)   # "2 0 2 =" → "two hundred two <eos>"
    [3, 2, 3, 4, 5, 6, 5, 1]
    >>> make_xy([6, 4, 9, 12, 17, 41, 33, 20, 1])      # 4 2 7 = four hundred twenty seven <eos>
    ([6, 4, 9, 12, 17, 41, 33, 20], [0, 0, 0, 17, 41, 33, 20, 1])
"""

from __future__ import annotations

import numpy as np

PAD, EOS, EQ = 0, 1, 12


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


# ---------------------------------------------------------------- the stand-in model of notebook 03
#: Seven tokens, enough to read 202 aloud.
STAND_IN_VOCAB = ["<pad>", "<eos>", "0", "2", "=", "two", "hundred"]
#: "2 0 2 =" as ids.
STAND_IN_PROMPT = [3, 2, 3, 4]
#: Row t: the scores a token t gives to each possible next token.
STAND_IN_TOKEN = np.array(
    [
        # <pad> <eos>  0    2    =   two hundred
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # <pad>
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # <eos>
        [0.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0],  # 0: then 2
        [0.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0],  # 2: then 0
        [0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0],  # =: then two
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 3.0],  # two: then hundred
        [0.0, 1.0, 0.0, 0.0, 0.0, 3.0, 0.0],  # hundred: then two
    ]
)
#: Row p: what being at position p adds (the '=' after three digits, the end after the last word).
STAND_IN_POSITION = np.zeros((10, 7))
STAND_IN_POSITION[2, 4] = 3.0  # position 2: '=' comes next
STAND_IN_POSITION[6, 1] = 3.0  # position 6: <eos> comes next


def stand_in_model(ids):
    """Row p of the output = STAND_IN_TOKEN[ids[p]] + STAND_IN_POSITION[p]: (len(ids), 7)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if not 1 <= len(ids) <= len(STAND_IN_POSITION):
        raise ValueError(f"the stand-in model reads 1 to {len(STAND_IN_POSITION)} ids, got {len(ids)}")
    return STAND_IN_TOKEN[ids] + STAND_IN_POSITION[: len(ids)]
