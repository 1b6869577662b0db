"""Which catalogued mistake a wrong answer is, and how many points its kinds of case earn.

Outside the sandbox, the grader (``plugins/verdict.py``) holds, for each exercise's hidden test,
what every mistake of ``mistakes.toml`` returns on the same hidden inputs: the *mistake table*,
worked out here once and kept in ``mistake_results.json`` beside this module (instructor-only,
like the expected values). A failed exercise is named by the mistake that returns what the
student's function returned on every case; otherwise it is "not a catalogued mistake", with the
closest one and on how many cases it agrees, for the instructor.

Walked through: a ``greedy_decode`` that drops ``<eos>`` hands out, on the case "an eos other
than 1", the ids without the final 7; the table holds exactly that list for ``eos_dropped`` (and
the same for every other case), so the grader records ``eos_dropped`` and the student reads its
hint: "The output must end with the eos id …".

Points: an exercise's points are split over its kinds of case (a kind earns its share when every
case of it passes), evenly unless ``course.toml``'s ``[partial_credit]`` gives weights::

    [partial_credit.greedy_decode]
    "the trained model reading a number" = 3   # this kind weighs three times as much
    "max_new = 0" = 0                          # this kind earns nothing (it still must pass to be "right")

    python -m whole_transformer.course mistake-table           # is mistake_results.json up to date?
    python -m whole_transformer.course mistake-table --write   # work it out again
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import warnings
from pathlib import Path

import numpy as np

from whole_transformer import grading as g

from ..core.compare import case_passes, from_rng, same_distribution
from ..core.expected import in_step, rounded
from ..term.settings import FILE, load  # the one reader of course.toml (its errors say what to fix)
from .hidden_parts import DRIVERS, SETUP, exercise_expected, kernel_names
from .mistakes import CATALOGUE, Mistake

TABLE_FILE = Path(__file__).with_name("mistake_results.json")
NOT_CATALOGUED = "not a catalogued mistake"


# ---------------------------------------------------------------- the mistake table
def cases_digest(cases: list[dict]) -> str:
    """A short digest of a hidden test's expected cases: the table is only used for these cases (their floats
    are stored rounded, ``core/expected.rounded_payload``, so the digest is the same on every CPU)."""
    text = json.dumps([[c.get("kind"), c.get("want")] for c in cases], sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _environment() -> dict:
    """The names the hidden tests' arguments use: every exercise's kernel names (``hidden_parts.SETUP``, each set of
    lines run once), for evaluating them here."""
    env: dict = {}
    for exercise in {tuple(lines): e for e, (lines, _, _) in SETUP.items()}.values():
        env.update(kernel_names(exercise))
    return env


def _called(exercise: str, fn):
    """What the hidden test calls on each case: the function, or its driver around it (``hidden_parts.DRIVERS``)."""
    from whole_transformer import stepwise, views  # lazy: slow to import, and only building the table calls a driver

    home = views if DRIVERS.get(exercise) == "viewed" else stepwise
    return getattr(home, DRIVERS[exercise])(fn) if exercise in DRIVERS else fn


def build(source: Path | None = None) -> dict:
    """exercise → {"cases": digest, "mistakes": {mistake id: [grading.outcome of every case]}}.

    The results' floats are rounded as expected values are (``core/expected.rounded``): the same text on every CPU.
    The digest is of the cases the test cells of ``source`` (default: the repository's) hold when those are in
    step with the cases worked out now: the table and the cells agree, whichever CPU wrote each.
    """
    # lazy: the hidden cases' modules are slow to import; naming a mistake needs none
    from .hidden_cells import stored_expected
    from .hidden_tests import CASES

    stored = stored_expected(source)
    env = _environment()
    out = {}
    for exercise, make in CASES.items():
        cases = make()
        table = {}
        # a sampler's draws: the same ids every time, and seconds to make
        drawn = tuple((c.args, c.kwargs, c.draws) for c in cases) if all(c.draws for c in cases) else None
        for m in CATALOGUE[exercise]:
            if drawn is None:
                table[m.id] = _results(exercise, m, cases, env)
                continue
            if (m, drawn) not in _DRAWN:
                _DRAWN[m, drawn] = _results(exercise, m, cases, env)
            table[m.id] = copy.deepcopy(_DRAWN[m, drawn])  # a copy each time: the caller may change what it gets
        payload = exercise_expected(exercise, cases)
        if exercise in stored and in_step(stored[exercise], payload):
            payload = stored[exercise]  # what the grader will read; the same test
        out[exercise] = {"cases": cases_digest(payload["cases"]), "mistakes": table}
    return out


#: A sampler mistake's rows of the table, drawn once per process, by (the mistake, its code included; the cases'
#: text): its own code on the same cases, with Generators made from the cases' seeds, draws the same ids each
#: time. make release checks the table and, when it is out of step, writes it: the draws are made for the check only.
_DRAWN: dict[tuple[Mistake, tuple], list] = {}


def _results(exercise: str, m: Mistake, cases: list, env: dict) -> list:
    """What the mistake ``m`` returns on each of ``cases`` (a sampler's draws: how often each id was drawn)."""
    model_at = SETUP[exercise][2]
    results, fn = [], _called(exercise, m.fresh())  # fresh: a stateful mistake starts empty
    for c in cases:
        args, kwargs = eval(c.args, env), eval(c.kwargs, env)  # noqa: S307 - fresh inputs each time
        if model_at is not None:
            args = args[:model_at] + (g.counted(args[model_at]),) + args[model_at + 1 :]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # the mistakes' own overflow and empty-mean warnings
            if c.draws:  # a sampler's draws, kept as how often each id was drawn
                np.random.seed(0)  # a mistake that draws from NumPy's global generator: the same table
                results.append(_counted(g.drawn(fn, args, kwargs, eval(c.draws))))  # noqa: S307
            else:
                results.append(rounded(g.outcome(fn, args, kwargs, c.watch), SAME_REL, SAME_ABS))
    return results


def _counted(result: dict) -> dict:
    """A sampler's draws as ``{"counts": {id: times drawn}, "from_rng": …}`` (an error stays as it is)."""
    if "value" not in result:
        return result
    counts: dict[str, int] = {}
    for d in result["value"]:
        counts[str(d)] = counts.get(str(d), 0) + 1
    return {"counts": dict(sorted(counts.items(), key=lambda kv: int(kv[0]))), "from_rng": from_rng(result)}


def _text(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=True, separators=(",", ":")) + "\n"


#: How far apart two floats may be and still be the same result: NumPy and OpenBLAS pick their kernels by the CPU
#: and the environment (AVX512 or AVX2; OPENBLAS_CORETYPE, which the sandbox does not pass on), and a float32
#: product rounds differently under each (4.826223850250244 on one, a few 1e-8 of it away on another).
#: The table stores results rounded for this tolerance (10 significant digits, a grid of 1e-15).
SAME_REL, SAME_ABS = 1e-6, 1e-12


def is_current(source: Path | None = None) -> bool:
    """Whether the stored table is what ``build(source)`` works out now (floats to ``SAME_REL`` of their size)."""
    if not TABLE_FILE.exists():
        return False
    stored = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    if _text(rounded(stored, SAME_REL, SAME_ABS)) != _text(stored):
        return False  # not stored rounded: its text would differ from one CPU to another
    fresh = json.loads(_text(build(source)))
    if stored.keys() != fresh.keys() or any(stored[e]["cases"] != fresh[e]["cases"] for e in stored):
        return False
    from .hidden_cells import stored_expected  # lazy: as in build

    rels = {e: [c.get("rel", SAME_REL) for c in p["cases"]] for e, p in stored_expected(source).items()}
    return all(  # each case's results to its own tolerance: a float32 case's differ by 3e-6 under another BLAS
        stored[e]["mistakes"].keys() == fresh[e]["mistakes"].keys()
        and all(
            len(a) == len(b)
            and all(_same(x, y, max(SAME_REL, r)) for x, y, r in zip(a, b, _rels(rels, e, a), strict=False))
            for a, b in ((stored[e]["mistakes"][m], fresh[e]["mistakes"][m]) for m in stored[e]["mistakes"])
        )
        for e in stored
    )


def _rels(rels: dict, exercise: str, results: list) -> list[float]:
    got = rels.get(exercise, [])
    return got if len(got) == len(results) else [SAME_REL] * len(results)


def _same(a, b, rel: float = SAME_REL) -> bool:
    """JSON values equal, floats to ``rel`` of their size (NaN equals NaN, an infinity itself)."""
    if isinstance(a, float) or isinstance(b, float):
        return (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and not isinstance(a, bool)
            and not isinstance(b, bool)
            and (math.isclose(a, b, rel_tol=rel, abs_tol=SAME_ABS) or (math.isnan(a) and math.isnan(b)))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], rel) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, rel) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def write(source: Path | None = None) -> Path:
    TABLE_FILE.write_text(_text(build(source)), encoding="utf-8")
    mistake_table.cache_clear()
    return TABLE_FILE


@functools.cache
def mistake_table() -> dict:
    """The table as written (``{}`` if it was never written)."""
    try:
        return json.loads(TABLE_FILE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


# ---------------------------------------------------------------- naming a wrong answer
def _agrees(compare: str, case: dict, mine, theirs) -> bool:
    """The student's result is the mistake's result on this case (same value, or same exception)."""
    if type(mine) is not dict or type(theirs) is not dict:
        return False
    if "counts" in theirs:  # a sampler: the same distribution as the mistake's draws, from rng or not alike
        return (
            "value" in mine
            and from_rng(mine) == theirs.get("from_rng", True)
            and same_distribution(mine["value"], theirs["counts"])
        )
    if "value" not in theirs:  # the same error, saying something or not, a broken cache broken the same way
        return "value" not in mine and all(mine.get(k) == theirs.get(k) for k in ("error", "said", "why"))
    if "value" in mine and _same(mine["value"], theirs["value"]) and mine.get("after") == theirs.get("after"):
        return True  # the same value but for the rounding a CPU may change (NaN and infinities included)
    like = {**case, "want": theirs["value"]}
    if "before" in case:
        if mine.get("after") != theirs.get("after"):
            return False
        like.pop("before")
    if compare == "choice":
        compare = "same"
    try:
        return case_passes(compare, like, mine)
    except (TypeError, ValueError, KeyError):
        return False


def diagnose(expected: dict, results: list) -> dict:
    """The catalogued mistake that returns what the student's function returned on every case.

    ``{"mistake": id, "name": …, "says": …}`` when one does; otherwise ``{"mistake": None,
    "name": NOT_CATALOGUED, "closest": id or None, "agree": n, "of": cases}``.
    """
    exercise, cases = expected["name"], expected["cases"]
    entry = mistake_table().get(exercise)
    usable = type(results) is list and len(results) == len(cases)
    if entry is None or entry.get("cases") != cases_digest(cases) or not usable:
        none = {"mistake": None, "name": NOT_CATALOGUED, "closest": None, "agree": 0, "of": len(cases)}
        return {**none, "stale": entry is not None}
    best, best_n = None, -1
    for m in CATALOGUE.get(exercise, []):
        theirs = entry["mistakes"].get(m.id)
        if theirs is None or len(theirs) != len(cases):
            continue
        n = sum(_agrees(expected["compare"], c, r, t) for c, r, t in zip(cases, results, theirs, strict=True))
        if n == len(cases):
            return {"mistake": m.id, "name": m.name or m.mistake, "says": m.hint or f"It {m.mistake}."}
        if n > best_n:
            best, best_n = m, n
    return {
        "mistake": None,
        "name": NOT_CATALOGUED,
        "closest": best.id if best else None,
        "agree": max(best_n, 0),
        "of": len(cases),
    }


# ---------------------------------------------------------------- partial credit
def partial_credit_settings(root: Path) -> dict[str, dict[str, float]]:
    """``course.toml``'s ``[partial_credit]``: exercise → {kind of case: weight}; ``{}`` if none.

    Raises ValueError, saying what to fix, for a weight that is not a number of 0 or more.
    """
    path = Path(root) / FILE
    section = load(root).raw.get("partial_credit", {})
    if not isinstance(section, dict):
        raise ValueError(f"{path}: [partial_credit] must be a table of exercises, e.g. [partial_credit.make_xy]")
    out = {}
    for exercise, weights in section.items():
        if not isinstance(weights, dict):
            raise ValueError(
                f'{path}: [partial_credit.{exercise}] must map kinds of case to weights, e.g. "the copy task" = 2'
            )
        for kind, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
                raise ValueError(
                    f"{path}: [partial_credit.{exercise}] {kind!r} = {w!r}: a weight must be a number of 0 or more"
                )
        out[exercise] = {k: float(w) for k, w in weights.items()}
    return out


def kinds_of(cases: list[dict]) -> list[str]:
    """The kinds of case of a hidden test, in order, each once."""
    return list(dict.fromkeys(c.get("kind", "the answer") for c in cases))


def unknown_kinds(settings: dict[str, dict[str, float]], expected: dict) -> list[str]:
    """Kinds the settings weigh that the test does not have (a typo in course.toml)."""
    return [k for k in settings.get(expected["name"], {}) if k not in kinds_of(expected["cases"])]


def partial_score(
    expected: dict, passed: list[bool], points: float, settings: dict[str, dict[str, float]] | None = None
) -> float:
    """The points earned: each kind of case's share of ``points`` when all its cases passed.

    All cases passed: all the points, whatever the weights. Otherwise strictly less than ``points``.
    """
    cases = expected["cases"]
    if all(passed):
        return float(points)
    weights = (settings or {}).get(expected["name"], {})
    kinds = kinds_of(cases)
    w = {k: weights.get(k, 1.0) for k in kinds}
    total = sum(w.values())
    if total <= 0:
        return 0.0
    ok = {k: all(p for c, p in zip(cases, passed, strict=True) if c.get("kind", "the answer") == k) for k in kinds}
    earned = sum(w[k] for k in kinds if ok[k]) / total * points
    return min(round(earned, 2), round(points - 0.01, 2)) if earned > 0 else 0.0
