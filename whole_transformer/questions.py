"""The questions of the four notebooks: the form each answer takes, a hint for each likely mistake.

The answers are not written here nor in ``data/questions.json`` (the catalogue of questions and hints) in
the clear: each is kept as a slow salted hash of its normal form (PBKDF2-SHA256, ``ROUNDS`` rounds, a salt
of its own per question), and a check compares hashes. What that protects, said plainly: an answer cannot
be read off the file at a glance, nor looked up in a table made for another question, and every value
tried costs time (about 40 ms here). What it does not protect: a question whose answer is one of a few
values (a letter, a small count) gives it to anyone who tries them all, with a script over the file in
well under a second or with the check itself, run a few times. No check that runs on the student's own
computer can do better: what tells right from wrong there can be asked until it says right. So these
checks only help; the points come from the hidden tests, whose answers are in nothing a student receives.
``checks.check`` prints a question's feedback.

    >>> QUESTIONS["tokens_905"].feedback(7)
    (False, '✗ Not yet. Did you count <eos>? The sequence ends with it.')
    >>> choice_letter(" b) "), choice_letter(2)
    ('B', None)
"""

from __future__ import annotations

import functools
import hashlib
import json
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).with_name("data") / "questions.json"


class NoAnswer(Exception):
    pass


# The forms read here are the forms the grader accepts (course/plugins/verdict.py): a check never says
# "Right." to an answer that would not earn its point, such as "8" or 8.0 for 8.
def _as_int(x) -> int:
    if isinstance(x, bool):
        raise ValueError("True/False is not a number")
    if isinstance(x, numbers.Integral):
        return int(x)
    if hasattr(x, "item") and getattr(x, "ndim", 1) == 0 and not isinstance(x, (str, float)):
        return _as_int(x.item())
    if isinstance(x, (str, float, numbers.Number)):
        raise ValueError(
            f"write a whole number, without quotes or a decimal point (like 12, not '12' or 12.0); got {x!r}"
        )
    raise ValueError(f"expected a whole number, got {x!r}")


def _as_shape(x) -> tuple[int, ...]:
    if isinstance(x, str):
        raise ValueError(f"write the shape as a tuple of whole numbers, without quotes, such as (2, 3); got {x!r}")
    try:
        return tuple(_as_int(d) for d in x)
    except TypeError:
        raise ValueError(f"expected a shape such as (2, 3), got {x!r}") from None


def choice_letter(x) -> str | None:
    """The normal form of a multiple-choice answer: ' b) ' → 'B'; None for anything but text."""
    if not isinstance(x, str):
        return None
    return x.strip().rstrip(".):").strip().upper()


def _as_choice(x) -> str:
    letter = choice_letter(x)
    if not letter or len(letter) != 1 or not letter.isalpha():
        raise ValueError(f"expected one letter such as 'A', got {x!r}")
    return letter


KINDS: dict[str, Callable] = {"int": _as_int, "shape": _as_shape, "choice": _as_choice}


ROUNDS = 40_000  # PBKDF2 rounds of one answer's hash: a check stays quick, trying every value does not


@functools.lru_cache(maxsize=4096)
def _digest(qid: str, value) -> str:
    """The hash an answer is kept as: PBKDF2-SHA256 of the question and the answer's normal form, with the
    question's own salt (made from its id, so the file can be rebuilt the same)."""
    salt = hashlib.sha256(f"whole-transformer question salt v2:{qid}".encode()).digest()[:16]
    return hashlib.pbkdf2_hmac("sha256", f"{qid}:{value!r}".encode(), salt, ROUNDS).hex()[:32]


@dataclass
class Question:
    qid: str
    kind: str
    answer_hash: str
    hints: dict[object, str] = field(default_factory=dict)  # normal form of a wrong answer → hint
    fallback: str = "Look again at the explanation above the question."

    def normal(self, answer):
        if answer is None or answer is Ellipsis:
            raise NoAnswer
        return KINDS[self.kind](answer)

    def is_right(self, answer) -> bool:
        return _digest(self.qid, self.normal(answer)) == self.answer_hash

    def feedback(self, answer) -> tuple[bool, str]:
        try:
            if self.is_right(answer):
                return True, "✓ Right."
            value = self.normal(answer)
        except NoAnswer:
            return False, "Write your answer in the cell above first (replace the None)."
        except ValueError as e:
            return False, f"✗ Cannot read that answer: {e}."
        return False, "✗ Not yet. " + self.hints.get(value, self.fallback)


def _load() -> dict[str, Question]:
    """The catalogue: each wrong answer in ``data/questions.json`` read into its normal form."""
    out = {}
    for qid, q in json.loads(DATA.read_text(encoding="utf-8")).items():
        normal = KINDS[q["kind"]]
        hints = {normal(wrong): hint for wrong, hint in q["hints"]}
        out[qid] = Question(qid, q["kind"], q["answer_hash"], hints, q.get("fallback", Question.fallback))
    return out


QUESTIONS: dict[str, Question] = _load()
