"""The hidden cases of ``cached_attention`` (notebook 03): whole sequences read token by token.

The kernel runs the student's function through ``stepwise.token_by_token`` (``hidden_parts.DRIVERS``), so a
case's arguments are the query, key and value rows of every token, Q, K, V (L, d_k), and the token to start
at (the ones before it are handed in as a ready cache). The right result is full causal attention over the
whole sequence at once (``reference.causal_attention``), the rows from the start on; the reference's own
``cached_attention`` run token by token gives the same rows (tests/test_exercises.py checks it). The trained
model's cases use the rows of one of its heads reading a number (``stepwise.head_rows``), the model run in
float64 so that the rows are the same on any CPU.
"""

from __future__ import annotations

from . import reference as ref
from .hidden_parts import Case, json_data, kernel_names


def _env() -> dict:
    """The kernel's names (``hidden_parts.SETUP``): ``rows_60(ids, block, head)`` gives one head's rows of the 60-epoch
    model, run in float64 so that they are the same on any CPU."""
    return kernel_names("cached_attention")


def _add(cases: list, env: dict, kind: str, rows: str, start: int = 0, rel: float = 1e-6) -> None:
    Q, K, V = eval(rows, env)  # noqa: S307 - the course's own case expressions, never a student's
    want = ref.causal_attention(Q, K, V)[start:]
    cases.append(Case(kind, f"({rows}) + ({start},)", "{}", json_data(want), rel))


def cached_attention_cases() -> list[Case]:
    env = _env()
    cases: list[Case] = []

    def random(seed, L, d, scale=1.0, dtype=""):
        return f"tuple(g.random_array({seed} + i, ({L}, {d}), {scale}{dtype}) for i in range(3))"

    _add(cases, env, "one token: an empty cache", random(7100, 1, 4))
    _add(cases, env, "one token: an empty cache", random(7110, 1, 16))
    for i, (L, d) in enumerate([(2, 4), (3, 2), (5, 8), (8, 16), (12, 6), (16, 4)]):
        _add(cases, env, "random rows of several lengths and sizes", random(7200 + 10 * i, L, d))
    _add(cases, env, "a cache handed in by the caller", random(7300, 6, 4), start=2)
    _add(cases, env, "a cache handed in by the caller", random(7310, 9, 16), start=8)
    _add(cases, env, "large scores (rows × 40)", random(7400, 7, 4, 40.0))
    _add(cases, env, "float32 rows", random(7500, 6, 8, 1.0, ", dtype=np.float32"), rel=1e-5)
    for ids, block, head in [
        ("task.sequence(742)[:-1]", 2, 1),
        ("task.sequence(742)[:-1]", 1, 3),
        ("task.sequence(896)[:-1]", 2, 4),
        ("task.prompt(5)", 1, 2),
    ]:
        _add(cases, env, "one head of the trained model reading a number", f"rows_60({ids}, {block}, {head})")
    return cases
