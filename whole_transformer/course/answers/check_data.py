"""The data of the visible exercise checks: hashes of right and typical wrong results, no code.

For each exercise, the reference solution (``reference.py``) and every typical mistake
(``mistakes.py``) run on the visible check's fixed cases (``whole_transformer/exercise_checks.py``);
what each returns is hashed with a salt and written to ``whole_transformer/data/exercise_checks.json``
with the mistake's hint. That file ships to students; the code that made it does not.

    python -m whole_transformer.course check-data           # is the file up to date?
    python -m whole_transformer.course check-data --write   # write it

The questions' visible checks (``whole_transformer/data/questions.json``) hold each answer as a
hash; the answer itself lives in the question's solution cell of the source notebook, so
``question_keys`` reads it there and ``write_questions`` brings the hashes in step (``make release``
does both). The hints of that file stay hand-written; a new key that the file hints at as a wrong
answer is refused, naming the file to edit.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import nbformat

from whole_transformer import exercise_checks as ec
from whole_transformer import questions as qs
from whole_transformer.exercise_sampling import DRAWS, sampled

from ..cells import cell_source, grade_id, is_test
from ..core.compare import floats
from . import reference as ref
from .hidden_parts import solution_value
from .mistakes import MISTAKES

DATA = ec.DATA
SALT = "whole-transformer visible checks v1"
REFERENCE = {
    "next_token": ref.next_token,
    "greedy_decode": ref.greedy_decode,
    "make_xy": ref.make_xy,
    "masked_loss": ref.masked_loss,
    "cached_attention": ref.cached_attention,
    "sample_next": ref.sample_next,
    "layer_norm": ref.layer_norm,
    "multi_head_attention": ref.multi_head_attention,
    "decoder_block": ref.decoder_block,
    "forward": ref.forward,
}


def _hashes(ex: ec.Exercise, outcomes: list[ec.Outcome]) -> list[str]:
    return [ec.digest(ex.name, i, o.canonical(), SALT) for i, o in enumerate(outcomes)]


def _items(ex: ec.Exercise, right: list[ec.Outcome]) -> list[list[str] | None]:
    """For each case, a digest of each item of the right result when it is a list (``ec.item_digests``)."""
    return [ec.item_digests(ex.name, i, o.value, SALT) for i, o in enumerate(right)]


#: How far (relative) a right float lies at least from where its hash's rounding tips: a right answer worked out
#: another way (another order of a sum) still hashes right.
RIGHT_MARGIN = 1e-9
#: The same for a mistake's float: another CPU or BLAS changes a float by up to about 2.5e-14 of it (16th-17th
#: digit), so the data file, and the mistake a student's result is named by, are the same on every machine.
MISTAKE_MARGIN = 1e-11


def _tips(x: float, margin: float) -> bool:
    """``x`` moved by ``margin`` of itself could hash as another value (its digits, or 0 below ``ZERO``)."""
    if not math.isfinite(x):
        return False
    near = {x * (1 - margin), x, x * (1 + margin)}
    return len({ec._canon(y) for y in near}) != 1


def _assert_stable(ex: ec.Exercise, label: str, outcomes: list[ec.Outcome], margin: float) -> None:
    """No float of the outcomes (the right ones, ``RIGHT_MARGIN``, or a mistake's, ``MISTAKE_MARGIN``) lies at a
    rounding boundary of its hash: a right answer could miss it, another CPU could write another hash."""
    for i, o in enumerate(outcomes):
        for x in floats(o.value):
            if _tips(x, margin):
                case = ex.cases()[i].label  # the cases again only to name the one at fault
                raise AssertionError(
                    f"{ex.name}, {case}: {label} {x!r} lies on a rounding boundary of its hash; change the case"
                )


def _assert_margins(ex: ec.Exercise) -> None:
    """A sampler's case: every right share of the draws lies 0.035 or more from where its rounding to one
    decimal tips, and every id that can be drawn is drawn 30 times or more on average (``exercise_sampling``)."""
    for c in ex.cases():
        args, kwargs = c.make()
        kwargs.pop("seed")
        try:
            p = ref.sample_probs(*args, **kwargs)
        except ValueError:
            continue  # a case that must raise
        for q in p[p > 0]:
            if q * DRAWS < 30 or abs(q * 10 % 1 - 0.5) < 0.35:
                raise AssertionError(f"{ex.name}, {c.label}: a share of {q:.4f} is not safely rounded; change the case")


def build() -> dict:
    """The whole data file, as a dict: the reference and each mistake run once on every case (with the tripwire,
    as a student's function is), their outcomes checked for floats at a rounding boundary, then hashed."""
    out: dict = {"salt": SALT, "exercises": {}}
    for name, ex in ec.EXERCISES.items():
        if ex.driver is sampled:
            _assert_margins(ex)
        got = ec.run_cases(ex, REFERENCE[name])
        _assert_stable(ex, "the right result", got, RIGHT_MARGIN)
        right = _hashes(ex, got)
        mistakes: list[dict] = []
        for m in MISTAKES[name]:
            outcomes = ec.run_cases(ex, m.fresh())  # fresh: a stateful mistake starts empty
            _assert_stable(ex, f"the mistake {m.name!r}", outcomes, MISTAKE_MARGIN)
            hashes = _hashes(ex, outcomes)
            if hashes == right:
                raise AssertionError(f"the mistake {m.name!r} of {name} gives the right results on every case")
            twin = next((t["name"] for t in mistakes if t["outcomes"] == hashes), None)
            if twin is not None:  # the check could not tell the two apart: a case is missing
                raise AssertionError(f"the mistakes {twin!r} and {m.name!r} of {name} give the same results")
            mistakes.append({"name": m.name, "hint": m.hint, "outcomes": hashes})
        out["exercises"][name] = {"right": right, "items": _items(ex, got), "mistakes": mistakes}
    return out


def _text(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def is_current() -> bool:
    return DATA.exists() and DATA.read_text() == _text(build())


def write():
    DATA.write_text(_text(build()))
    ec._data.cache_clear()
    return DATA


# ---------------------------------------------------------------- the questions' answer keys
QUESTIONS_DATA = qs.DATA


def question_keys(source: Path) -> dict[str, tuple[str, object]]:
    """qid → (notebook file, the answer in its normal form), read from the source's solution cells."""
    out = {}
    for path in sorted(Path(source).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for c in nb.cells:
            gid = grade_id(c)
            if gid in qs.QUESTIONS and not is_test(c):
                out[gid] = (path.name, qs.KINDS[qs.QUESTIONS[gid].kind](solution_value(cell_source(c), gid)))
    return out


def _hash_at(qid: str) -> re.Pattern:
    return re.compile(r'("' + re.escape(qid) + r'": \{[^{}]*?"answer_hash": ")([0-9a-f]+)(")')


def questions_planned(source: Path, data: Path = QUESTIONS_DATA) -> tuple[str, list[str]]:
    """(the questions file's text with every answer hash from the source, the qids that change)."""
    text = Path(data).read_text(encoding="utf-8")
    catalogue = json.loads(text)
    changed = []
    for qid, (nb, answer) in question_keys(source).items():
        hints = {qs.KINDS[catalogue[qid]["kind"]](w) for w, _ in catalogue[qid]["hints"]}
        if answer in hints:
            raise ValueError(
                f"the answer of {qid} in source/whole-transformer/{nb} is now {answer!r}, which "
                f"{Path(data).name} hints at as a wrong answer: edit the hints of {qid} in {data} "
                "(or the answer), then make release"
            )
        new = qs._digest(qid, answer)
        m = _hash_at(qid).search(text)
        if m is None:
            raise ValueError(f"{data}: no answer_hash for {qid}; add the question to the file first")
        if m.group(2) != new:
            text = text[: m.start(2)] + new + text[m.end(2) :]
            changed.append(qid)
    return text, changed


def questions_out_of_step(source: Path, data: Path = QUESTIONS_DATA) -> list[str]:
    return questions_planned(source, data)[1]


def write_questions(source: Path, data: Path = QUESTIONS_DATA) -> list[str]:
    """Bring the questions' answer hashes in step with the source; returns the qids changed."""
    text, changed = questions_planned(source, data)
    if changed:
        Path(data).write_text(text, encoding="utf-8")
        if Path(data) == QUESTIONS_DATA:
            qs.QUESTIONS.clear()
            qs.QUESTIONS.update(qs._load())
    return changed
