"""How a secret is found in a text, however it is written: ``found_in`` and the ``Search`` it runs.

A secret (a key of ``leak_search``'s secrets, text → kind) is found in a text as it is, HTML-unescaped, with
its tags taken out, and with its spaces taken out but one between two words (``counted_427=5``,
``g.random_array(6100,(8,42),2.0)``). An expected value (``"want": …``) is found however it is written: a
float with more digits than stored (worked out anew: ``6.1019764977808615`` of ``6.101976498``), or rounded
(either way at a half) or cut to at least ``MIN_DIGITS`` significant digits (``6.10198``,
``6.1019``), in e-notation from 3 digits on (``6.10e+00``), as a percentage (``61.02 %`` of 0.6102); a list of
whole numbers in any brackets and separators (``[ 2 12 13]``, ``(2, 12, 13)``) from ``MIN_SEQUENCE`` numbers on.
Fewer digits are anyone's text: 3 digits written plainly already match numbers the lesson prints by chance. A
float that is also a fact of the course (``FACTS``) is searched for only as the EXPECTED part writes it.
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from bisect import bisect_left
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import NamedTuple

from ..core.compare import floats

HIDDEN, EXPECTED, SOLUTION, INPUT = "hidden test", "expected value", "solution", "hidden input"
MIN_DIGITS = 4  # a number written with this many significant digits is no longer anyone's text (3 in e-notation)
MIN_SEQUENCE = 5  # a list of this many whole numbers in a row identifies a case, in whatever brackets
# Floats an expected value may equal that the course prints in its prose on purpose: a model that guesses
# evenly among the 42 tokens has loss ln 42; the token table's std 1/√64; √64. Searched for only in full.
FACTS = (math.log(42), 1 / math.sqrt(64), math.sqrt(64))
_WANT = '"want": '
_TAG = re.compile(r"<[^>]*>")


class Leak(str):
    """One secret found: the secret itself (a key of the secrets searched for), and ``shown``, what the text
    showed of it (the same text, or ``6.10198`` for the expected value ``6.1019764977808615``)."""

    shown: str
    of: str

    def __new__(cls, secret: str, shown: str = "", of: str = "") -> Leak:
        leak = super().__new__(cls, secret)
        leak.shown = shown or secret
        leak.of = of or secret.removeprefix(_WANT)
        return leak

    def says(self, kind: str) -> str:
        """``expected value '6.10198' (6.1019764977808615 written another way)``: the kind, what was shown, of what."""
        if self.shown == str(self):
            return f"{kind} {self.shown[:70]!r}"
        return f"{kind} {self.shown[:70]!r} ({self.of[:60]} written another way)"


_WORD = re.compile(r"\w")
_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"(?<![\w.])([-−]?)(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?(\s?%)?")
_INT_RUN = re.compile(r"(?:(?<![\w.])-?\d+(?![\w.])(?:[\s,;\[\]()]|array|tensor)*)+")
_INT = re.compile(r"(?<![\w.])-?\d+(?![\w.])")


def _digits(mantissa: str) -> int:
    """Significant digits as written: ``6.10`` has 3, ``0.0123`` has 3."""
    return len(mantissa.replace(".", "").lstrip("0"))


def _roundings(value: float) -> set[tuple[int, Decimal]]:
    """(significant digits, value) of every way to write ``value`` shorter than in full: rounded either way at a
    half, or cut, to 3 digits and more."""
    exact = Decimal(repr(value))
    out = set()
    for k in range(3, _digits(repr(abs(value)).lower().split("e")[0]) + 1):
        step = Decimal(1).scaleb(exact.adjusted() - k + 1)
        for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_DOWN):
            out.add((k, exact.quantize(step, rounding=mode).normalize()))
    return out


def _rounded(value: Decimal, digits: int) -> Decimal:
    return value.quantize(Decimal(1).scaleb(value.adjusted() - digits + 1), rounding=ROUND_HALF_EVEN).normalize()


def _ints(value) -> list[int] | None:
    if type(value) is int:
        return [value]
    if type(value) in (list, tuple):
        out: list[int] = []
        for v in value:
            part = _ints(v)
            if part is None:
                return None
            out += part
        return out
    return None


_LOOSE_SPACE = re.compile(r"(?<!\w) | (?!\w)")


def _squeezed(text: str) -> str:
    """``text`` with no space but one between two words: ``random_array(6100,(8,42),2.0)``, ``counted_427=5``,
    ``return ids``."""
    return _LOOSE_SPACE.sub("", _SPACE.sub(" ", text))


def _occurs(needle: str, hay: str) -> bool:
    """``needle`` in ``hay`` as a whole: not the end of a longer name or number (``x=5`` is not in ``max=50``)."""
    start = hay.find(needle)
    while start != -1:
        end = start + len(needle)
        before = start == 0 or not (_WORD.match(needle[0]) and _WORD.match(hay[start - 1]))
        after = end == len(hay) or not (_WORD.match(needle[-1]) and _WORD.match(hay[end]))
        if before and after:
            return True
        start = hay.find(needle, start + 1)
    return False


_WORDS = re.compile(r"\w+")
BEGINS, ENDS = 1, 2  # how a word of a secret stands in a text that shows it (``_words_of``)


class _SecretWords(NamedTuple):
    """What ``_words_of`` says must be true of a text's words for it to show a secret."""

    words: tuple[tuple[str, int], ...]  # each word with how it must stand; whole words first (a set lookup each)
    pairs: frozenset[tuple[str, str]]  # whole words that follow each other


def _words_of(secret: str) -> _SecretWords:
    """The words of ``secret`` (runs of ``\\w``) with what must be true of each in a text that shows the secret, in
    any form ``Search.found`` looks at (those forms change only spaces, tags and HTML escapes, never a word): a
    word with another character before it in the secret begins a word of the text (``BEGINS``), one with another
    after it ends one (``ENDS``), one with both is a whole word of the text; a word at the secret's very start or
    end may be part of a longer word of the text, so it says nothing there. Then the pairs of whole words that
    follow each other in the secret: only characters that are no word's stand between them, so they follow each
    other in the words of the form that shows it (an HTML escape puts ``lt`` between them in the file as it is,
    but not in its unescaped form, which is searched too)."""
    found = [
        (m.group(), (BEGINS if m.start() > 0 else 0) | (ENDS if m.end() < len(secret) else 0))
        for m in _WORDS.finditer(secret)
    ]
    whole = BEGINS | ENDS
    after = zip(found, found[1:], strict=False)
    pairs = frozenset((a, b) for (a, how_a), (b, how_b) in after if how_a == how_b == whole)
    return _SecretWords(tuple(sorted((w for w in found if w[1]), key=lambda w: w[1] != whole)), pairs)


class _TextWords:
    """The words of a text's forms, to tell at once that a secret cannot be in it (``may_show``): a secret is
    searched for in full only in a text that has all of its words, as ``_words_of`` says they must stand, and
    every pair of its whole words one after the other."""

    def __init__(self, *forms: str):
        words: set[str] = set()
        pairs: set[tuple[str, str]] = set()
        for form in forms:
            found = _WORDS.findall(form)
            words.update(found)
            pairs.update(zip(found, found[1:], strict=False))
        self.whole = words
        self.pairs = pairs
        self.starts = sorted(words)
        self.ends = sorted(w[::-1] for w in words)

    def may_show(self, secret: _SecretWords) -> bool:
        words, pairs = secret
        for word, how in words:
            if how == BEGINS | ENDS:
                if word not in self.whole:
                    return False
            elif not _begins_one(self.starts if how == BEGINS else self.ends, word if how == BEGINS else word[::-1]):
                return False
        return pairs <= self.pairs


def _begins_one(ordered: list[str], start: str) -> bool:
    i = bisect_left(ordered, start)
    return i < len(ordered) and ordered[i].startswith(start)


class Secrets(dict):
    """Secrets (text → kind) with the text every student has (``excused``: the released notebooks): a number or
    a list of numbers written there is no one's secret, in whatever notation a file shows it."""

    def __init__(self, kinds: dict[str, str], excused: str = ""):
        super().__init__(kinds)
        self.excused = excused


class Search:
    """``kinds`` (secret → its kind) made ready to search many texts: each secret as text, with and without
    spaces; each expected float by its roundings; each expected list of whole numbers by its numbers."""

    def __init__(self, kinds: dict[str, str]):
        self.kinds = kinds
        self.excused = getattr(kinds, "excused", "")
        self._owns: tuple[str, _Own] | None = None  # the last ``own`` searched with, made ready (files come by student)
        self.squeezed = {k: _squeezed(k) for k in kinds}
        self.words = {k: _words_of(k) for k in kinds}
        self.numbers: dict[tuple[int, Decimal], tuple[str, str]] = {}
        self.stored: set[int] = set()  # the significant digits the EXPECTED parts store floats with
        self.sequences: dict[str, str] = {}
        for key, kind in kinds.items():
            if kind != EXPECTED or not key.startswith(_WANT):
                continue
            try:
                want = json.loads(key.removeprefix(_WANT))
            except ValueError:
                continue
            ints = _ints(want)
            if ints is not None and len(ints) >= MIN_SEQUENCE:
                self.sequences.setdefault(_run(ints), key)
            for x in floats(want):
                if math.isfinite(x) and _digits(repr(abs(x)).lower().split("e")[0]) > 3 and not _fact(x):
                    for r in _roundings(x):
                        self.numbers.setdefault(r, (key, repr(x)))
                    self.stored.add(_digits(repr(abs(x)).lower().split("e")[0]))
        self._excused = _Own(self.excused)  # the released text: made ready once for every file

    def _own(self, own: str) -> tuple[_Own, ...]:
        """``own`` and the released text (``excused``), each made ready; the student's part kept for the next file."""
        held = self._owns  # read once: another thread may search with another ``own`` meanwhile
        if held is None or held[0] != own:
            held = self._owns = (own, _Own(own))
        return (held[1], self._excused) if self.excused else (held[1],)

    def _numbers_in(self, text: str, own: tuple[_Own, ...]) -> list[Leak]:
        out = []
        for m in _NUMBER.finditer(text):
            sign, mantissa, exponent, percent = m.groups()
            k = _digits(mantissa)
            if not ("." in mantissa or exponent) or k < (3 if exponent else MIN_DIGITS):
                continue
            try:
                value = Decimal(("-" if sign else "") + mantissa + (exponent or ""))
            except InvalidOperation:
                continue
            key = self.numbers.get((k, value.normalize()))
            if key is None and percent:
                key = self.numbers.get((k, (value / 100).normalize()))
            for d in sorted(d for d in self.stored if d < k) if key is None else ():
                key = self.numbers.get((d, _rounded(value, d)))  # more digits than stored: the value worked out anew
                if key is not None:
                    break
            if key is not None and not any(m.group(0).strip() in o.text for o in own):
                out.append(Leak(key[0], m.group(0).strip(), of=key[1]))
        return out

    def _sequences_in(self, text: str, own: tuple[_Own, ...]) -> list[Leak]:
        if not self.sequences:
            return []
        out = []
        for m in _INT_RUN.finditer(text):
            ints = _INT.findall(m.group(0))
            if len(ints) < MIN_SEQUENCE:
                continue
            run = _run(ints)
            for seq, key in self.sequences.items():
                if seq in run and not any(seq in o.runs for o in own):
                    out.append(Leak(key, m.group(0).strip(" \n,;[]()")))
        return out

    def found(self, text: str, own: str = "") -> list[Leak]:
        """What of the secrets ``text`` shows. A solution line or an input found in ``own`` (the student's own
        submission) is the student's, and so is a number or a list of numbers their own notebook prints."""
        owns = self._own(own)
        plain = html.unescape(text)
        bare = html.unescape(_TAG.sub("", text))
        flat = _squeezed(bare)
        out: list[Leak] = []
        seen: set[str] = set()
        words = _TextWords(text, plain, bare)  # flat's words and pairs are bare's: squeezing keeps every word
        for ln, kind in self.kinds.items():
            if not words.may_show(self.words[ln]):  # a word of it missing: not there in any form (most secrets)
                continue
            sq = self.squeezed[ln]
            if not (ln in text or ln in plain or ln in bare or html.escape(ln) in text or (sq and _occurs(sq, flat))):
                continue
            if kind in (SOLUTION, INPUT) and any(ln in o.text or (sq and _occurs(sq, o.flat)) for o in owns):
                continue
            out.append(Leak(ln))
            seen.add(ln)
        for leak in self._numbers_in(bare, owns) + self._sequences_in(bare, owns):
            if str(leak) not in seen:
                out.append(leak)
                seen.add(str(leak))
        return out


def _run(ints: list[int] | list[str]) -> str:
    """Whole numbers as ``,2,12,13,``: a list searched for in it is found whatever brackets and spaces it had."""
    return "," + ",".join(str(int(i)) for i in ints) + ","


class _Own:
    """A text whose solution lines, inputs and numbers are the student's own (their submission, or the released
    notebooks every student has), made ready to search: as it is, without its loose spaces, its runs of whole
    numbers (worked out when first asked for). The submission and the released text are searched apart: nothing
    is theirs that only the two put side by side make up."""

    def __init__(self, text: str):
        self.text = text
        self.flat = _squeezed(text)

    @functools.cached_property
    def runs(self) -> str:
        return " ".join(_run(_INT.findall(m.group(0))) for m in _INT_RUN.finditer(self.text))


def _fact(x: float) -> bool:
    return any(math.isclose(x, f, rel_tol=1e-9) for f in FACTS)


_searches: dict[int, tuple[dict[str, str], int, Search]] = {}


def search(kinds: dict[str, str] | Search) -> Search:
    """``kinds`` made ready to search (once per dict of secrets: the feedback check searches many files)."""
    if isinstance(kinds, Search):
        return kinds
    held = _searches.get(id(kinds))
    if held is not None and held[0] is kinds and held[1] == len(kinds):
        return held[2]
    ready = Search(kinds)
    _searches.clear()
    _searches[id(kinds)] = (kinds, len(kinds), ready)
    return ready


def found_in(text: str, kinds: dict[str, str] | Search, own: str = "") -> list[Leak]:
    """What of ``kinds`` ``text`` shows (``Search.found``): searched as it is, unescaped, with its HTML tags
    taken out (a highlighted cell splits a line of code into many tags) and with its spaces taken out; each
    expected value however it is written. A solution line or an input found in ``own`` (the student's own
    submission) is the student's."""
    return search(kinds).found(text, own)
