"""Each student's total as the term has it: the scores the tests gave, less the late penalty.

``totals(course)`` reads the gradebook (per notebook: score and maximum), the roster the gradebook
holds (names, email, LMS id: ``make roster``) and course.toml (due date, extensions, late policy),
and gives one ``StudentTotal`` per student. ``make grades`` (the LMS files), ``make feedback`` (the
page per student) and the autograde console line all take lateness from the same place
(``term/late.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from decimal import ROUND_HALF_UP, Decimal

from nbgrader.api import Gradebook, MissingEntry

from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.term.late import Lateness, student_lateness
from whole_transformer.course.term.settings import Settings, load


@dataclass
class StudentTotal:
    student: str
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    lms_user_id: str = ""
    notebooks: dict[str, tuple[float, float]] = field(default_factory=dict)  # name → (score, max score)
    lateness: Lateness | None = None

    @property
    def score(self) -> float:
        return round(sum(s for s, _ in self.notebooks.values()), 6)

    @property
    def max_score(self) -> float:
        return round(sum(m for _, m in self.notebooks.values()), 6)

    @property
    def penalty(self) -> float:
        """Points taken for lateness."""
        return round(self.score - self.final, 6) if self.lateness else 0.0

    @property
    def final(self) -> float:
        return self.lateness.apply(self.score) if self.lateness else self.score

    @property
    def zone(self) -> tzinfo | None:
        """The course's time zone (course.toml's ``timezone``, as the due date has it); None without a due date."""
        return self.lateness.due.tzinfo if self.lateness and self.lateness.due else None

    def handed_in(self) -> str:
        """When the course took this student's hand-in to be, in the course's time zone alone (one zone a line):
        ``handed in 2026-10-16 23:40 CEST``, and the evidence against a claim, if any; '' when none is known."""
        h = self.lateness.handin if self.lateness else None
        if h is None or h.used is None:
            return ""
        line = f"handed in {in_zone(h.used, self.zone)}"
        if h.finding and h.claimed is not None:
            line += f" (the evidence in {h.source}; the claim said {in_zone(h.claimed, self.zone)})"
        return line

    def printed(self) -> Printed:
        """The total and its parts as a page prints them, rounded once, at the end: the final score rounded, and
        every part shown so that the parts add up to what is shown (``printed_parts``)."""
        return printed_parts(self)

    @property
    def display_name(self) -> str:
        name = ", ".join(p for p in (self.last_name, self.first_name) if p)
        return name or self.student


def in_zone(when: datetime, zone: tzinfo | None) -> str:
    local = when.astimezone(zone) if zone is not None else when
    return f"{local:%Y-%m-%d %H:%M} {local.tzname() or 'UTC'}"


CENT = Decimal("0.01")


def _cents(x: float) -> Decimal:
    return Decimal(repr(x)).quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass
class Printed:
    """What a page prints of a total, in hundredths: ``final = score - penalty`` and the notebooks sum to
    ``score``, as printed."""

    final: Decimal
    score: Decimal
    penalty: Decimal
    max_score: Decimal
    notebooks: dict[str, Decimal]


def printed_parts(t: StudentTotal) -> Printed:
    """The final score rounded once (to hundredths); the tests' score rounded; the penalty shown as their
    difference; each notebook's score rounded so that they add up to the tests' score as shown (the largest
    remainders take the odd hundredth). "Total: 15.93 / 31 (22.75 from the tests, less 6.82 for lateness)"."""
    final, score = _cents(t.final), _cents(t.score)
    exact = {n: Decimal(repr(s)) for n, (s, _) in t.notebooks.items()}
    shown = {n: v.quantize(CENT, rounding="ROUND_FLOOR") for n, v in exact.items()}
    short = int((score - sum(shown.values(), Decimal(0))) / CENT)
    by_remainder = sorted(exact, key=lambda n: (-(exact[n] - shown[n]), n))
    for name in by_remainder[: max(short, 0)]:
        shown[name] += CENT
    for name in by_remainder[::-1][: max(-short, 0)]:
        shown[name] -= CENT
    return Printed(final, score, score - final, _cents(t.max_score), shown)


def totals(course: Course, settings: Settings | None = None) -> list[StudentTotal]:
    """Every student's total: the tests' score, the late penalty (course.toml) and the final score."""
    settings = settings or load(course)
    out = []
    with Gradebook(course.db_url) as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        maxima = {nb.name: float(sum(g.max_score for g in nb.grade_cells)) for nb in assignment.notebooks}
        known = {s.id: s for s in gb.students}
        for sid in sorted(set(known) | set(course.students())):
            s = known.get(sid)
            t = StudentTotal(
                sid,
                (s.first_name or "") if s else "",
                (s.last_name or "") if s else "",
                (s.email or "") if s else "",
                (s.lms_user_id or "") if s else "",
            )
            for name in sorted(maxima):
                score = 0.0
                try:
                    score = float(gb.find_submission_notebook(name, ASSIGNMENT, sid).score or 0.0)
                except MissingEntry:
                    pass
                t.notebooks[name] = (score, maxima[name])
            if (course.submitted / sid).is_dir():
                t.lateness = student_lateness(course, settings, sid)
            out.append(t)
    return out
