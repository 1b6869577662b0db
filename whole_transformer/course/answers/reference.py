"""Reference solutions of the graded exercises. Instructor-only: never in the students' handout.

They work out the expected values of the hidden tests (``hidden_tests.py``, read only by the grader)
and the hashes the visible checks compare with (``check_data.py``). Neither the student's kernel
nor the package students receive holds this module or its results.

    >>> next_token(np.array([1.0, -1.0]), np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 1.0]]), np.zeros(3))
    0
    >>> from whole_transformer.exercise_cases import STAND_IN_PROMPT, stand_in_model
    >>> greedy_decode(stand_in_model, STAND_IN_PROMPT)   # "2 0 2 =" → "two hundred two <eos>"
    [3, 2, 3, 4, 5, 6, 5, 1]
    >>> make_xy([6, 4, 9, 12, 17, 41, 33, 20, 1])      # 4 2 7 = four hundred twenty seven <eos>
    ([6, 4, 9, 12, 17, 41, 33, 20], [0, 0, 0, 17, 41, 33, 20, 1])
    >>> sample_probs([2.0, 1.0, 0.0, -1.0], top_p=0.8).round(3)   # 0.644 + 0.237 crosses 0.8: both kept
    array([0.731, 0.269, 0.   , 0.   ])
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


def _check_sampling(scores, temperature, top_k, top_p) -> None:
    """ValueError, saying what is wrong, for arguments ``sample_next`` cannot sample with."""
    if scores.ndim != 1 or len(scores) == 0:
        raise ValueError(f"scores must be one row of scores, shape (V,); got shape {scores.shape}")
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.number)) or not temperature > 0:
        raise ValueError(f"temperature must be a number above 0 (near 0 is almost greedy); got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1):
        raise ValueError(f"top_k must be None or a whole number of 1 or more; got {top_k!r}")
    if top_p is not None and (isinstance(top_p, bool) or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be None or a number above 0 and at most 1; got {top_p!r}")


def sample_probs(scores, temperature=1.0, top_k=None, top_p=None):
    """The probabilities ``sample_next`` draws from: (V,), zero outside the kept set, summing to 1.

    The scores are divided by the temperature, then softmax; top-k keeps the k highest; top-p keeps,
    of those (renormalised), the fewest highest whose probabilities add up to top_p or more: the
    token that crosses top_p is kept. What is kept is renormalised. Ties: the lowest id first.
    """
    scores = np.asarray(scores, dtype=np.float64)
    _check_sampling(scores, temperature, top_k, top_p)
    p = softmax(scores / temperature)  # (V,)
    order = np.argsort(-scores, kind="stable")  # highest score first
    n = len(p) if top_k is None else min(int(top_k), len(p))
    if top_p is not None:
        reach = np.cumsum(p[order[:n]] / p[order[:n]].sum())  # (n,) the kept mass, highest first
        n = min(n, int(np.searchsorted(reach, top_p)) + 1)  # the first that reaches top_p is kept
    kept = np.zeros_like(p)
    kept[order[:n]] = p[order[:n]]
    return kept / kept.sum()


def sample_next(scores, temperature=1.0, top_k=None, top_p=None, rng=None):
    """One id drawn from ``sample_probs``, with the NumPy Generator ``rng`` (None: a fresh one)."""
    p = sample_probs(scores, temperature, top_k, top_p)
    rng = np.random.default_rng() if rng is None else rng
    return int(rng.choice(len(p), p=p))


def make_xy(seq, eq=EQ, pad=PAD):
    """Teacher forcing: x = seq without its last token, y = seq without its first, with every
    target up to and including the one that is ``eq`` set to ``pad``."""
    seq = [int(t) for t in seq]
    x, y = seq[:-1], seq[1:]
    k = seq.index(eq)  # y[0 .. k-1] are the prompt's next digits and '='
    y[:k] = [pad] * k
    return x, y


def masked_loss(logits, targets, pad=PAD):
    """Average cross-entropy of the rows with a target other than ``pad``: logits (N, n_vocab), targets (N,)."""
    logits = np.asarray(logits, dtype=np.float64)
    targets = np.asarray(targets)
    N = len(targets)
    p = softmax(logits)  # (N, V)
    nll = -np.log(p[np.arange(N), targets])  # (N,)
    keep = targets != pad  # (N,)
    return float(nll[keep].mean())


def cached_attention(q, k, v, cache=None):
    """One head's attention for the newest token: q, k, v its rows (d_k,); cache None or [K, V], the earlier
    tokens' keys and values (t, d_k). Returns (its output row (d_k,), the new cache [K, V] with t + 1 rows).

    The new key and value are appended first: the newest token looks at the earlier ones and at itself. The
    caller's cache is not changed.
    """
    k, v = np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64)
    if cache is None:
        K, V = k[None, :], v[None, :]
    else:
        K, V = np.vstack([cache[0], k]), np.vstack([cache[1], v])  # (t + 1, d_k) new arrays
    scores = K @ np.asarray(q, dtype=np.float64) / np.sqrt(len(k))  # (t + 1,)
    weights = softmax(scores)  # (t + 1,) they sum to 1
    return weights @ V, [K, V]


def causal_attention(Q, K, V):
    """One head's attention over a whole sequence at once, with the causal mask: (L, d_k) each → (L, d_k).

    What ``cached_attention`` must give, token by token (the grader's side of its hidden test).
    """
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    L, d_k = Q.shape
    scores = Q @ K.T / np.sqrt(d_k)  # (L, L)
    scores = np.where(np.tril(np.ones((L, L), dtype=bool)), scores, -np.inf)
    return softmax(scores) @ V  # (L, d_k)


# ---------------------------------------------------------------- the forward pass (notebook 02)
LN_EPS = 1e-5  # torch.nn.LayerNorm's default


def layer_norm(x, gamma, beta, eps=LN_EPS):
    """Each row (last axis) of x to mean 0 and variance 1 (the biased variance, as torch), then × gamma + beta."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def multi_head_attention(x, w_q, w_k, w_v, w_o, b_o, n_heads, key_pad=None):
    """Causal multi-head self-attention of x (L, d) or (B, L, d); the weights as torch stores them, (out, in).

    ``key_pad`` (L,) or (B, L), True where a key is PAD: no query looks at it. Returns x's shape.
    """
    x = np.asarray(x, dtype=np.float64)
    one = x.ndim == 2
    if one:
        x = x[None]
        key_pad = None if key_pad is None else np.asarray(key_pad)[None]
    B, L, d = x.shape
    d_k = d // n_heads

    def heads(m):
        return m.reshape(B, L, n_heads, d_k).transpose(0, 2, 1, 3)  # (B, h, L, d_k)

    q, k, v = heads(x @ np.asarray(w_q).T), heads(x @ np.asarray(w_k).T), heads(x @ np.asarray(w_v).T)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k)  # (B, h, L, L)
    allowed = np.tril(np.ones((L, L), dtype=bool))[None, None]  # (1, 1, L, L) no later key
    if key_pad is not None:
        allowed = allowed & ~np.asarray(key_pad, dtype=bool)[:, None, None, :]  # (B, 1, L, L) no PAD key
    weights = softmax(np.where(allowed, scores, -np.inf))  # (B, h, L, L)
    mixed = (weights @ v).transpose(0, 2, 1, 3).reshape(B, L, d)  # (B, L, d) heads side by side
    out = mixed @ np.asarray(w_o).T + b_o
    return out[0] if one else out


def decoder_block(x, weights, i, n_heads, key_pad=None):
    """Pre-LayerNorm block ``i``: x + attention(LN1(x)), then x + FFN(LN2(x)); weights by their torch names."""
    p = f"blocks.{i}."
    W = weights
    a = layer_norm(x, W[p + "ln1.weight"], W[p + "ln1.bias"])
    x = np.asarray(x, dtype=np.float64) + multi_head_attention(
        a,
        W[p + "attn.W_Q.weight"],
        W[p + "attn.W_K.weight"],
        W[p + "attn.W_V.weight"],
        W[p + "attn.W_O.weight"],
        W[p + "attn.W_O.bias"],
        n_heads,
        key_pad,
    )
    f = layer_norm(x, W[p + "ln2.weight"], W[p + "ln2.bias"])
    hidden = np.maximum(f @ W[p + "ffn.up.weight"].T + W[p + "ffn.up.bias"], 0.0)  # (…, L, d_ff)
    return x + hidden @ W[p + "ffn.down.weight"].T + W[p + "ffn.down.bias"]


def positions(L, d):
    """(L, d) the fixed sinusoidal rows: column 2j is sin(pos / 10000^(2j/d)), column 2j + 1 its cos."""
    pos = np.arange(L, dtype=np.float64)[:, None]  # (L, 1)
    angle = pos / 10000.0 ** (np.arange(0, d, 2, dtype=np.float64) / d)  # (L, d/2)
    P = np.zeros((L, d))
    P[:, 0::2] = np.sin(angle)
    P[:, 1::2] = np.cos(angle)[:, : d // 2]
    return P


def n_blocks(weights) -> int:
    """How many blocks a weights dict holds (blocks.0. …, blocks.1. …)."""
    return len({k.split(".")[1] for k in weights if k.startswith("blocks.")})


def forward(ids, weights, n_heads=4, pad=PAD):
    """Token ids (L,) or a right-padded batch (B, L) → logits (…, L, V), the model's weights by their torch names."""
    ids = np.asarray(ids, dtype=np.int64)
    E = np.asarray(weights["tok.weight"], dtype=np.float64)  # (V, d)
    d = E.shape[1]
    x = E[ids] * np.sqrt(d) + positions(ids.shape[-1], d)  # (…, L, d)
    key_pad = ids == pad
    for i in range(n_blocks(weights)):
        x = decoder_block(x, weights, i, n_heads, key_pad)
    z = layer_norm(x, weights["ln_f.weight"], weights["ln_f.bias"])
    return z @ np.asarray(weights["head.weight"]).T + weights["head.bias"]  # (…, L, V)
