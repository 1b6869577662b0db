"""Each student's total as the term has it: the scores the tests gave, less the late penalty.

``totals(course)`` reads the gradebook (per notebook: score and maximum), the roster the gradebook
holds (names, email, LMS id: ``make roster``) and course.toml (due date, extensions, late policy),
and gives one ``StudentTotal`` per student. ``make grades`` (the LMS files), ``make feedback`` (the
page per student) and the autograde console line all take lateness from the same place
(``term/late.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    def display_name(self) -> str:
        name = ", ".join(p for p in (self.last_name, self.first_name) if p)
        return name or self.student


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
