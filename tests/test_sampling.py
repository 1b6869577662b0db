"""sample_next: the reference, the bound its hidden test judges draws by, and why no catalogued mistake meets it.

The hidden test hands out thousands of draws per case (``grading.drawn``); the grader passes them when
Pearson's statistic stays under ``compare.chi_square_bound`` (Laurent and Massart's tail bound at e^-16).
Here: the bound is what it claims (a chi-square seldom crosses it, even in many trials); right samplers that
use the generator in other ways pass the hidden cases with other seeds too; every catalogued mistake fails
some case, by drawing an id it may not draw or by a statistic far above the bound (its expected value, worked
out from the mistake's own distribution, is many times the bound); and the mistake naming of the grader's
diagnosis (a two-sample test) tells a right sampler from each mistake.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import warnings

import numpy as np
import pytest
from implementations import implementations

from whole_transformer import grading as g
from whole_transformer.course.answers import reference as ref
from whole_transformer.course.answers.diagnose import _counted
from whole_transformer.course.answers.hidden_sampling import ENV, ROW_742, sample_cases
from whole_transformer.course.answers.mistakes import CATALOGUE
from whole_transformer.course.core.compare import (
    NEVER,
    case_passes,
    chi_square_bound,
    draws_fit,
    from_rng,
    pearson,
    same_distribution,
)

CASES = sample_cases()
MISTAKES = {m.id: m for m in CATALOGUE["sample_next"]}


def run(fn, cases=CASES, seed_shift=0):
    """What the kernel hands out for each case (its seed moved by seed_shift)."""
    out = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for c in cases:
            n, seed = eval(c.draws)
            out.append(g.drawn(fn, eval(c.args, ENV), eval(c.kwargs, ENV), (n, seed + seed_shift)))
    return out


def failed(results, cases=CASES):
    return [c.kind for c, r in zip(cases, results, strict=True) if not case_passes("sample", c.expected(), r)]


# ------------------------------------------------------------------------------------------ the reference
def test_reference_near_zero_temperature_and_top_k_1_are_greedy():
    rng = np.random.default_rng(0)
    s = rng.normal(size=42)
    for kw in ({"temperature": 1e-3}, {"top_k": 1}, {"top_k": 1, "temperature": 9.0}, {"top_p": 1e-6}):
        assert ref.sample_probs(s, **kw).argmax() == s.argmax()
        assert ref.sample_probs(s, **kw).max() == pytest.approx(1.0)
        assert {ref.sample_next(s, rng=rng, **kw) for _ in range(50)} == {int(s.argmax())}


def test_reference_top_p_keeps_the_token_that_crosses_p():
    p = ref.sample_probs(np.log([0.5, 0.3, 0.15, 0.05]), top_p=0.7)  # 0.5 < 0.7, 0.5 + 0.3 crosses it
    assert p == pytest.approx([0.625, 0.375, 0.0, 0.0])
    p = ref.sample_probs(np.log([0.05, 0.5, 0.15, 0.3]), top_p=0.81)  # sorted: 0.5, 0.8, 0.95: three kept
    assert (p > 0).tolist() == [False, True, True, True]
    assert ref.sample_probs(np.log([0.6, 0.4]), top_p=1.0) == pytest.approx([0.6, 0.4])


def test_reference_temperature_top_k_and_their_order():
    s = np.array([2.0, 1.0, 0.0, -1.0])
    assert ref.sample_probs(s, temperature=0.5) == pytest.approx(ref.softmax(s / 0.5))
    assert ref.sample_probs(s, top_k=2) == pytest.approx(np.r_[ref.softmax(s[:2]), 0, 0])
    assert ref.sample_probs(s, top_k=10) == pytest.approx(ref.softmax(s))
    # top-p reads the top-k probabilities rescaled: 0.73 of the top two reaches 0.7, the first alone
    assert (ref.sample_probs(s, top_k=2, top_p=0.7) > 0).tolist() == [True, False, False, False]


@pytest.mark.parametrize(
    "kwargs, says",
    [
        ({"temperature": 0}, "temperature"),
        ({"temperature": -1.0}, "temperature"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.5}, "top_p"),
    ],
)
def test_reference_bad_arguments_raise_value_error_saying_which(kwargs, says):
    with pytest.raises(ValueError, match=says):
        ref.sample_next([1.0, 2.0], **kwargs)


def test_reference_is_reproducible_with_a_seed_and_draws_without_one():
    s = [0.5, 0.2, 0.1, 0.9]
    one = [ref.sample_next(s, rng=np.random.default_rng(3)) for _ in range(5)]
    assert one == [ref.sample_next(s, rng=np.random.default_rng(3)) for _ in range(5)]
    assert {ref.sample_next(s) for _ in range(200)} == {0, 1, 2, 3}


def test_the_written_out_742_scores_are_the_models():
    from whole_transformer import task
    from whole_transformer.train import load_model

    row = g.model_rows(load_model("60"))(task.sequence(742)[:6])[-1]
    assert np.abs(row - np.array(ROW_742)).max() <= 0.005 + 1e-9


# ------------------------------------------------------------------------------------------ the bound
@pytest.mark.parametrize("df", [1, 2, 4, 9, 19, 41])
def test_the_bound_is_a_far_tail_of_the_chi_square(df):
    """A million chi-squares of df degrees of freedom: none reaches the bound (its chance is below e^-16)."""
    x = np.random.default_rng(df).chisquare(df, size=1_000_000)
    assert x.max() < chi_square_bound(df)
    assert chi_square_bound(4) == pytest.approx(4 + 16 + 32)


def test_pearson_and_draws_fit():
    p = [0.5, 0.3, 0.2, 0.0]
    assert pearson([0] * 50 + [1] * 30 + [2] * 20, p) == pytest.approx(0.0)
    assert pearson([0, 1, 3], p) == math.inf  # an id of probability 0
    assert pearson([0, 7], p) == math.inf  # an id out of range
    assert not draws_fit([], p) and not draws_fit([0.0, 1.0], p) and not draws_fit([True], p)
    rng = np.random.default_rng(1)
    assert draws_fit([int(i) for i in rng.choice(4, size=4000, p=p)], p)
    assert not draws_fit([int(i) for i in rng.choice(4, size=4000, p=[0.45, 0.35, 0.2, 0.0])], p)
    assert draws_fit([2] * 50, [0.0, 1e-300, 1.0])  # an id below NEVER counts as never drawn
    assert 1e-300 < NEVER


def test_every_id_that_can_be_drawn_is_expected_5_times_or_more():
    for c in CASES:
        if isinstance(c.want, list):
            n = eval(c.draws)[0]
            assert all(q < NEVER or n * q >= 5 for q in c.want), c.kind


# ------------------------------------------------------------------------------------------ right and wrong
@pytest.mark.package  # thousands of draws on every case
def test_the_reference_passes_every_case():
    assert failed(run(ref.sample_next)) == []


@pytest.mark.package  # thousands of draws on every case
@pytest.mark.parametrize("imp", implementations("sample_next", "correct"), ids=lambda i: i.name)
def test_right_samplers_pass_with_other_seeds_too(imp):
    fn = imp_function(imp)
    for shift in (0, 1000, 2000):
        assert failed(run(fn, seed_shift=shift)) == [], (imp.name, shift)


def imp_function(imp):
    ns = {"np": np, "softmax": ref.softmax}
    exec(compile(imp.source, imp.id, "exec"), ns)
    return ns["sample_next"]


def _expected_statistic(mistake, case) -> float:
    """Pearson's statistic the mistake would score on the case on average: n Σ (q - p)² / p + df, from its own
    distribution q (20,000 draws); infinite when it can draw an id the case never does."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = g.drawn(mistake.code, eval(case.args, ENV), eval(case.kwargs, ENV), (20_000, 1))
    p = np.array(case.want)
    if "value" not in got:
        return math.inf
    d = np.array(got["value"])
    if ((d < 0) | (d >= len(p))).any() or (p[d] < NEVER).any():
        return math.inf
    q, keep = np.bincount(d, minlength=len(p)) / len(d), p >= NEVER
    n = eval(case.draws)[0]
    return n * float(np.sum((q[keep] - p[keep]) ** 2 / p[keep])) + int(keep.sum()) - 1


@pytest.mark.package  # thousands of draws on every case
@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_every_catalogued_mistake_fails_and_far_from_the_bound(mistake):
    m = MISTAKES[mistake]
    results = run(m.code)
    assert failed(results), mistake
    if mistake in ("no_checks", "bare_value_error"):  # samples right; it fails the cases that must raise
        assert set(failed(results)) == {"bad arguments raise ValueError with a message"}
        return
    if mistake == "np_random":  # the right distribution, not drawn from rng: every case with a choice fails
        chosen = [isinstance(c.want, list) and sum(q >= NEVER for q in c.want) > 1 for c in CASES]
        assert set(failed(results)) == {c.kind for c, x in zip(CASES, chosen, strict=True) if x}
        assert not any(from_rng(r) for r, x in zip(results, chosen, strict=True) if x)
        return
    margin = 0.0
    for c in CASES:
        if margin >= 10:  # a case shows the margin: the rest cannot take it away (it is the best case's)
            break
        if isinstance(c.want, list):
            df = sum(q >= NEVER for q in c.want) - 1
            margin = max(margin, _expected_statistic(m, c) / chi_square_bound(df))
    assert margin >= 10, f"{mistake}: on its best case its statistic is only {margin:.1f} times the bound"


@pytest.mark.package  # thousands of draws on every case
def test_the_two_sample_test_names_a_mistake_and_not_a_right_sampler():
    draws = run(ref.sample_next)
    for mid, m in MISTAKES.items():
        theirs = [_counted(r) for r in run(m.code, seed_shift=500)]
        same = [
            "counts" in t and same_distribution(mine["value"], t["counts"])
            for c, mine, t in zip(CASES, draws, theirs, strict=True)
            if isinstance(c.want, list)
        ]
        # no_checks samples as a right sampler does (it errs only on the cases that must raise)
        # (and so do bare_value_error, whose errors say nothing, and np_random, whose draws are not rng's)
        assert all(same) if mid in ("no_checks", "bare_value_error", "np_random") else not all(same), mid
    again = [_counted(r) for r in run(ref.sample_next, seed_shift=900)]
    assert all(same_distribution(a["value"], b["counts"]) for a, b in zip(draws, again, strict=True) if "value" in a)


@pytest.mark.package  # builds the mistake table (its model and cases), on two short sampler cases
def test_the_tables_sampler_rows_are_drawn_once_per_process_for_the_same_code_and_cases(monkeypatch):
    """make release checks the mistake table and, out of step, writes it: a sampler mistake's draws on the same
    cases are made once and given again as they were; a case changed in its text is drawn anew."""
    from whole_transformer.course.answers import diagnose, hidden_tests

    two = [dataclasses.replace(c, draws=c.draws.replace("(4000,", "(60,")) for c in sample_cases()[5:7]]
    monkeypatch.setattr(hidden_tests, "CASES", {"sample_next": lambda: [dataclasses.replace(c) for c in two]})
    monkeypatch.setattr(diagnose, "_DRAWN", {})
    calls = []
    drawn = g.drawn
    monkeypatch.setattr(g, "drawn", lambda *a: calls.append(a[3]) or drawn(*a))
    mistakes = [m.id for m in CATALOGUE["sample_next"]]

    first = diagnose.build()["sample_next"]["mistakes"]
    assert list(first) == mistakes and len(calls) == 2 * len(mistakes)
    kept = copy.deepcopy(first)
    first["k_plus_one"].clear()  # what a caller does to its table is not kept
    assert diagnose.build()["sample_next"]["mistakes"] == kept
    assert len(calls) == 2 * len(mistakes)  # nothing drawn again

    two[1] = dataclasses.replace(two[1], kwargs="{'temperature': 1.1}")
    changed = diagnose.build()["sample_next"]["mistakes"]
    assert len(calls) == 4 * len(mistakes)  # both cases of every mistake drawn anew: the cases are one key
    assert [r[0] for r in changed.values()] == [r[0] for r in kept.values()]  # the first case draws as before
    assert [r[1] for r in changed.values()] != [r[1] for r in kept.values()]
