"""The hidden cases of ``sample_next``: what a sampler must draw, judged by its draws in the grader.

A case's inputs are Python source, as for the other exercises (``hidden_tests.py``); its ``draws``,
``(n, seed)``, make the kernel call the student's function n times with one NumPy Generator made
from the seed (``grading.drawn``), and its ``want`` is the probability of every id, worked out with the
reference (``reference.sample_probs``). The grader's ``compare.draws_fit`` passes draws that could
come from those probabilities (Pearson's statistic under a chi-square bound); an error case's
``want`` is ``{"raises": "ValueError"}``. Every id that can be drawn is drawn 5 times or more on
average (``_probs`` checks it), so the chi-square bound holds; an id left at 1e-12 or less counts as
never drawn.
"""

from __future__ import annotations

import numpy as np

from whole_transformer import grading as g
from whole_transformer import task

from ..core.compare import NEVER
from . import reference as ref
from .hidden_parts import Case, json_data

N = 4000  # draws of a case that checks probabilities
N_GREEDY = 50  # draws of a case where one id has all the probability
ENV = {"g": g, "np": np, "task": task}
#: The 60-epoch model's 42 scores after '7 4 2 = seven hundred' (to 0.01; a test compares them with the model):
#: written out, so that a case does not hang on how a CPU rounds a float32 product.
ROW_742 = [
    -0.09, -0.66, 0.4, -0.32, -0.31, -0.4, -0.44, -0.19, 0.56, -1.35, -0.47, -0.13, -0.44, -0.32, -0.69, -1.17,
    -0.81, 2.92, -1.41, -1.43, -4.32, -2.84, -1.86, -1.71, -0.02, 0.12, -0.27, 2.53, -1.94, 0.42, -1.48, -3.02,
    -2.1, 2.83, 1.28, 10.63, 1.49, 1.99, 1.78, 1.39, 0.39, -1.76,
]  # fmt: skip
READ_742 = f"g.array({ROW_742})"


def _probs(args, kwargs, n: int) -> list[float]:
    p = ref.sample_probs(*eval(args, ENV), **eval(kwargs, ENV))  # noqa: S307 - the course's own cases
    for q in p:
        if q >= NEVER and n * q < 5:
            raise AssertionError(f"{args} {kwargs}: an id of probability {q:.2g} is drawn < 5 times in {n} draws")
    return json_data(p)


def sample_cases() -> list[Case]:
    cases: list[Case] = []
    seed = iter(range(7100, 7200))

    def add(kind, args, kwargs="{}", n=N):
        want = _probs(args, kwargs, n)
        cases.append(Case(kind, args, kwargs, want, draws=f"({n}, {next(seed)})"))

    R, A = "g.random_array", "g.array"
    # fmt: off
    add("a temperature near 0 picks the highest score", f"({R}(7001, 8),)", "{'temperature': 1e-3}", N_GREEDY)
    add("a temperature near 0 picks the highest score", f"({READ_742},)", "{'temperature': 1e-3}", N_GREEDY)
    add("a temperature near 0 picks the highest score", f"({A}([-3.0, -1.5, -2.0, -4.0]),)",
        "{'temperature': 1e-3}", N_GREEDY)
    add("top_k = 1 picks the highest score", f"({R}(7002, 6),)", "{'top_k': 1}", N_GREEDY)
    add("top_k = 1 picks the highest score", f"({A}([0.5, 2.0, 1.9, -1.0, 2.0]),)", "{'top_k': 1, 'temperature': 5.0}",
        N_GREEDY)
    add("temperature 1: the softmax of the scores", f"({A}([1.0, 0.0, 2.0, 0.5, -1.0]),)")
    add("temperature 1: the softmax of the scores", f"({R}(7003, 7, 0.8),)", "{'temperature': 1.0}")
    add("a temperature below 1 sharpens", f"({A}([1.0, 0.0, 2.0, 0.5, -1.0]),)", "{'temperature': 0.5}")
    add("a temperature below 1 sharpens", f"({R}(7004, 6, 0.5),)", "{'temperature': 0.4}")
    add("a temperature above 1 flattens", f"({A}([2.0, 0.0, 1.0, 3.0]),)", "{'temperature': 2.5}")
    add("a temperature above 1 flattens", f"({READ_742},)", "{'temperature': 4.0, 'top_k': 5}")
    add("top-k keeps the k highest", f"({A}([0.2, 1.5, -0.5, 1.0, 0.8, 0.0, 1.2]),)", "{'top_k': 3}")
    add("top-k keeps the k highest", f"({R}(7005, 9, 0.6),)", "{'top_k': 4, 'temperature': 1.5}")
    add("top_k larger than the vocabulary keeps every id", f"({A}([0.5, 0.0, 1.0]),)", "{'top_k': 10}")
    add("top-p keeps the token that crosses p", f"({A}([1.0, 2.0, 0.0, 1.5, -0.5]),)", "{'top_p': 0.7}")
    add("top-p keeps the token that crosses p", f"({A}([0.0, 0.7, 0.4, 1.0, 0.2, 0.5]),)", "{'top_p': 0.5}")
    add("top-p keeps the token that crosses p", f"({A}([3.0, 1.0, 0.0]),)", "{'top_p': 0.5}", N_GREEDY)
    add("top_p = 1 keeps every id", f"({A}([0.3, 0.0, 0.6, 0.1]),)", "{'top_p': 1.0}")
    add("top-k and top-p together", f"({A}([1.0, 0.8, 0.6, 0.4, 0.2, 0.0, -0.2]),)",
        "{'top_k': 5, 'top_p': 0.6, 'temperature': 0.8}")
    add("top-k and top-p together", f"({A}([0.3, 2.1, -0.8, 1.4, 0.9, -0.2, 0.6]),)", "{'top_k': 4, 'top_p': 0.7}")
    add("top-k and top-p together", f"({A}([0.3, 2.1, -0.8, 1.4, 0.9, -0.2, 0.6]),)",
        "{'top_k': 3, 'top_p': 0.75, 'temperature': 1.5}")
    add("the trained model's scores (742), top-p", f"({READ_742},)", "{'temperature': 3.0, 'top_p': 0.8}")
    add("scores as a Python list", "([0.5, 1.5, 1.0, 0.0],)", "{'temperature': 1.2, 'top_k': 3}")
    # fmt: on
    for kwargs in ("{'temperature': 0}", "{'temperature': -1.0}", "{'top_k': 0}", "{'top_p': 0.0}", "{'top_p': 1.5}"):
        args = f"({A}([1.0, 2.0, 0.5]),)"
        want = {"raises": "ValueError"}
        cases.append(Case("bad arguments raise ValueError with a message", args, kwargs, want, draws="(1, 7000)"))
    return cases
