"""When a student handed in, against their due date: on time, late by how much, the penalty.

The hand-in time is nbgrader's ``timestamp.txt`` in ``submitted/<student>/whole-transformer/`` (written
by ``nbgrader collect`` and by ``make collect-zip``; read by ``times.py``), no earlier than the evidence
of when its files were written (``handin_time.py``); a submission without one is taken as on time and
says so.
Penalties are applied to the totals by ``make grades`` and ``make feedback``; the gradebook keeps
the scores the tests gave.

    >>> from datetime import UTC
    >>> from whole_transformer.course.term.settings import parse
    >>> s = parse('[assignment]\\ndue = "2026-10-16 23:59"\\ntimezone = "UTC"\\n'
    ...           '[late]\\npolicy = "per_day"\\npenalty = 10\\n[extensions]\\nbo = "+2d"')
    >>> lateness(s, "ada", datetime(2026, 10, 18, 11, 59, tzinfo=UTC)).describe()
    'late by 1 d 12 h (-20 %)'
    >>> lateness(s, "bo", datetime(2026, 10, 18, 11, 59, tzinfo=UTC)).describe()
    'on time (extension to 2026-10-18 23:59 UTC)'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from .handin_time import HandinTime, student_handin
from .settings import Settings
from .times import span


@dataclass(frozen=True)
class Lateness:
    submitted: datetime | None  # when handed in (aware), None if no timestamp
    due: datetime | None  # the student's due date (aware), None if the course has none
    extension: bool  # the due date is the student's own
    late: timedelta  # zero when on time
    penalty: float  # percent of the score taken
    handin: HandinTime | None = None  # how ``submitted`` was decided (handin_time.py): claim, evidence, finding
    flagged: bool = False  # late by the LMS's own flag, of a length it does not say (its download gives no time)

    @property
    def is_late(self) -> bool:
        return self.late > timedelta(0) or self.flagged

    def apply(self, score: float) -> float:
        return round(score * (1 - self.penalty / 100), 6)

    def describe(self) -> str:
        if self.due is None:
            return "no due date"
        ext = f" (extension to {self.due:%Y-%m-%d %H:%M} {self.due.tzname()})" if self.extension else ""
        if self.flagged and self.late <= timedelta(0):
            pen = f" (-{self.penalty:g} %, the first step of the late policy)" if self.penalty else " (no penalty)"
            mine = ""
            if self.extension:  # the flag is the LMS's judgement, by its own due date
                mine = (
                    f"; the LMS judged it by its own due date, not the extension to {self.due:%Y-%m-%d %H:%M}: "
                    "give the time with TIMES=..."
                )
            return f"late by the LMS's flag, how late it does not say{pen}{mine}"
        if self.submitted is None and self.handin is not None and self.handin.flag_only:
            return f"on time by the LMS (no late flag; its download gives no time){ext}"
        if self.submitted is None:
            return f"no hand-in time (timestamp.txt): taken as on time{ext}"
        if not self.is_late:
            return f"on time{ext}"
        pen = f" (-{self.penalty:g} %)" if self.penalty else " (within the grace period, no penalty)"
        return f"late by {span(self.late)}{pen}{ext}"


def lateness(settings: Settings, student: str, submitted: datetime | None) -> Lateness:
    due = settings.due_for(student)
    extension = student in settings.extensions
    if due is None or submitted is None:
        return Lateness(submitted, due, extension, timedelta(0), 0.0)
    late = max(submitted - due, timedelta(0))
    return Lateness(submitted.astimezone(settings.zone), due, extension, late, settings.late.percent(late))


def student_lateness(course, settings: Settings, student: str) -> Lateness:
    """The lateness of a student's hand-in in ``submitted/``, at the time recorded when it was taken in
    (``handin_time.student_handin``); where the LMS gave no time, by its late flag: a late flag of unknown length
    costs the first step of the late policy (``LatePolicy.unknown_length``)."""
    handin = student_handin(course, student, settings.timezone)
    out = replace(lateness(settings, student, handin.used), handin=handin)
    if handin.late_flag and out.due is not None and out.late <= timedelta(0):
        out = replace(out, flagged=True, penalty=max(out.penalty, settings.late.unknown_length()))
    return out
