"""The data of the visible exercise checks: hashes of right and typical wrong results, no code.

For each exercise, the reference solution (``reference.py``) and every typical mistake
(``mistakes.py``) run on the visible check's fixed cases (``whole_transformer/exercise_checks.py``);
what each returns is hashed with a salt and written to ``whole_transformer/data/exercise_checks.json``
with the mistake's hint. That file ships to students; the code that made it does not.

    python -m whole_transformer.course check-data           # is the file up to date?
    python -m whole_transformer.course check-data --write   # write it
"""

from __future__ import annotations

import json
import math

from whole_transformer import exercise_checks as ec

from . import reference as ref
from .mistakes import MISTAKES

DATA = ec.DATA
SALT = "whole-transformer visible checks v1"
REFERENCE = {"next_token": ref.next_token, "greedy_decode": ref.greedy_decode, "make_xy": ref.make_xy,
             "masked_loss": ref.masked_loss}


def _hashes(ex: ec.Exercise, fn) -> list[str]:
    cases = ex.cases()
    return [ec.digest(ex.name, i, ec.run_case(fn, c).canonical(), SALT) for i, c in enumerate(cases)]


def _floats(value):
    if type(value) is float:
        yield value
    elif type(value) is tuple:
        for v in value:
            yield from _floats(v)


def _assert_stable(ex: ec.Exercise) -> None:
    """A right float must not lie at a rounding boundary of its hash (a right answer could miss it)."""
    for c in ex.cases():
        for x in _floats(ec.run_case(REFERENCE[ex.name], c).value):
            if not math.isfinite(x) or x == 0:
                continue
            near = {f"{y:.{ec.FLOAT_DIGITS - 1}e}" for y in (x * (1 - 1e-9), x, x * (1 + 1e-9))}
            if len(near) != 1:
                raise AssertionError(f"{ex.name}, {c.label}: {x!r} lies on a rounding boundary; change the case")


def build() -> dict:
    """The whole data file, as a dict."""
    out: dict = {"salt": SALT, "exercises": {}}
    for name, ex in ec.EXERCISES.items():
        _assert_stable(ex)
        right = _hashes(ex, REFERENCE[name])
        mistakes = []
        for m in MISTAKES[name]:
            hashes = _hashes(ex, m.code)
            if hashes == right:
                raise AssertionError(f"the mistake {m.name!r} of {name} gives the right results on every case")
            mistakes.append({"name": m.name, "hint": m.hint, "outcomes": hashes})
        out["exercises"][name] = {"right": right, "mistakes": mistakes}
    return out


def _text(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def is_current() -> bool:
    return DATA.exists() and DATA.read_text() == _text(build())


def write():
    DATA.write_text(_text(build()))
    ec._data.cache_clear()
    return DATA
