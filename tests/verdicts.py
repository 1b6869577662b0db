"""The hidden tests' verdict on one value, as autograding reaches it: handed out, then judged.

The kernel side (``grading.outcome``) turns what the student's code returned into plain data; it
crosses to the grader as JSON; the grader compares it (``course/core/compare.py``) with the expected
value. ``kernel_side`` and ``grader_side`` are the two halves, for tests that tamper in between.
"""

from __future__ import annotations

import json

from whole_transformer import grading
from whole_transformer.course.core import compare


def _json(want):
    if isinstance(want, (tuple, list)):
        return [_json(w) for w in want]
    return want


def kernel_side(value) -> str:
    """What the kernel hands out for a returned value (a JSON text)."""
    return grading._encode(grading.outcome(lambda: value))


def grader_side(compare_by: str, handed: str, want, **case) -> bool:
    return compare.case_passes(compare_by, {"want": _json(want), **case}, json.loads(handed))


def passes(compare: str, value, want, **case) -> bool:
    return grader_side(compare, kernel_side(value), want, **case)


def same(value, want, rel=1e-6, abs_tol=1e-9) -> bool:
    return passes("same", value, want, rel=rel, abs=abs_tol)


def same_shape(value, want) -> bool:
    return passes("shape", value, want)


def choice(value, want) -> bool:
    return passes("choice", value, want)


def same_id(value, want) -> bool:
    return passes("id", value, want)


def same_ids(value, want) -> bool:
    return passes("ids", value, want)


def same_pair(value, x, y) -> bool:
    return passes("pair", value, [x, y])


def close(value, want, rel=1e-6) -> bool:
    return passes("close", value, float(want), rel=rel)
