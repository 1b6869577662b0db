"""What the class got wrong, as data: the ``Insights`` of a graded class (``insights.py`` writes them).

Read from the gradebook and the students' grading records (``grades.detail_rows`` and
``store.load_result``), never from a graded notebook, so it works the same whether the class was
graded here on SQLite or on a Dask cluster into PostgreSQL. For the class it gives:

- per exercise, how many students got full, partial, no points, or left it unanswered (failed
  and missing too), and each catalogued mistake (``answers/diagnose.py``, named in the cell's verdict)
  with its count and students;
- per question, the answers given: right, and each wrong one with its count and the course's hint;
- late submissions (by course.toml's due date and extensions) and submissions that could not be graded;
- "what to go over in the next lecture": the mistakes and wrong answers, most students first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nbgrader.api import Gradebook

from ..autograder.store import load_result
from ..core.results import FAILED, GRADED, MISSING, UNANSWERED
from ..core.verdict import CellVerdict
from ..gradebook import gradebook_exists
from ..layout import ASSIGNMENT, NOTEBOOK_OF, Course, redact
from ..plugins.verdict_text import TIMEOUTS, what_it_did
from ..term import settings as term_settings
from ..term.late import student_lateness
from .grades import detail_rows

OUTCOMES = ["full", "partial", "none", "unanswered", "failed", "missing"]
NEXT_LECTURE = 8  # items in the "what to go over" list


@dataclass
class Exercise:
    name: str
    outcomes: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in OUTCOMES})
    mistakes: dict[str, dict] = field(default_factory=dict)  # id (or "") → {"name", "says", "students"}
    errors: dict[str, list[str]] = field(default_factory=dict)  # what the code did (a timeout…) → students


@dataclass
class Question:
    name: str
    right: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    wrong: dict[str, dict] = field(default_factory=dict)  # answer given → {"hint", "students"}


@dataclass
class Insights:
    students: list[str]
    exercises: dict[str, Exercise]
    questions: dict[str, Question]
    late: list[tuple[str, str]]  # (student, how late)
    failed: list[tuple[str, str]]  # (student, what could not be graded and why)
    next_lecture: list[dict]  # {"what", "detail", "count", "students", "hint"}


def _outcome(row: dict) -> str:
    status, score, top = row["status"], float(row["score"]), float(row["max_score"])
    if status in (MISSING, FAILED, UNANSWERED):
        return status
    return "full" if score >= top else "partial" if score > 0 else "none"


def _late(course: Course) -> list[tuple[str, str]]:
    """(student, how late) for every late submission: by course.toml's due date, extensions and late policy,
    as make grades and the feedback take them; by the gradebook's due date where course.toml sets none."""
    settings = term_settings.load(course)
    out = []
    with Gradebook(course.db_url) as gb:
        for sub in gb.find_assignment(ASSIGNMENT).submissions:
            if settings.due is not None:
                lateness = student_lateness(course, settings, sub.student.id)
                if lateness.is_late:
                    out.append((sub.student.id, lateness.describe()))
            elif float(sub.total_seconds_late or 0) > 0:
                hours, minutes = divmod(int(round(float(sub.total_seconds_late) / 60)), 60)
                out.append((sub.student.id, f"{hours} h {minutes:02d} min late"))
    return sorted(out)


def collect(course: Course) -> Insights:
    """The class's results, from the gradebook and the records."""
    if not gradebook_exists(course):
        where = course.gradebook if course.sqlite else redact(course.db_url)
        raise ValueError(f"no gradebook at {where}: run make autograde first")
    rows = detail_rows(course)
    students = sorted({r["student_id"] for r in rows})
    records = {s: load_result(course, s) for s in students}
    exercises = {ex: Exercise(ex) for ex in NOTEBOOK_OF}
    questions: dict[str, Question] = {}
    failed: dict[str, list[str]] = {}
    for r in rows:
        s, gid = r["student_id"], r["grade_id"]
        name = gid.removeprefix("test_")
        rec = records.get(s)
        nb = rec.notebooks.get(r["notebook"]) if rec else None
        info = nb.cells.get(gid) if nb else None
        verdict = info.verdict if info else None
        if r["status"] == FAILED:
            failed.setdefault(s, []).append(f"{gid}: {r['reason'] or 'could not be graded'}")
        if name in exercises:
            _count_exercise(exercises[name], r, verdict)
        else:
            _count_question(questions.setdefault(name, Question(name)), r, verdict)
    return Insights(
        students,
        exercises,
        questions,
        _late(course),
        sorted((s, "; ".join(v)) for s, v in failed.items()),
        _next_lecture(exercises, questions, _answered_nothing(rows)),
    )


def _answered_nothing(rows: list[dict]) -> set[str]:
    """The students who answered nothing (every graded cell unanswered or missing): an empty hand-in says
    nothing of what the class did not understand, so it fills no line of the next lecture."""
    students = {r["student_id"] for r in rows}
    return {s for s in students if all(r["status"] in (UNANSWERED, MISSING) for r in rows if r["student_id"] == s)}


def _count_exercise(ex: Exercise, r: dict, verdict: CellVerdict | None) -> None:
    """One student's row of an exercise: its outcome, and the catalogued mistake it matches, if any."""
    s, got = r["student_id"], _outcome(r)
    ex.outcomes[got].append(s)
    if got in ("partial", "none") and verdict is not None and verdict.errors and not verdict.mistake:
        whole = verdict.why if verdict.why and "whole test cell" in verdict.errors else ""
        for ename in sorted(set(verdict.errors.values())):
            said = whole if whole and ename in TIMEOUTS else what_it_did(ename, short=True)
            ex.errors.setdefault(said, []).append(s)
    if got in ("partial", "none") and verdict is not None and verdict.mistake_name:
        key = verdict.mistake or ""
        m = ex.mistakes.setdefault(key, {"name": verdict.mistake_name, "says": verdict.says or "", "students": []})
        m["students"].append(s)


def _count_question(q: Question, r: dict, verdict: CellVerdict | None) -> None:
    """One student's row of a question: unanswered, right, or the wrong answer given (with its hint)."""
    s = r["student_id"]
    if r["status"] == UNANSWERED:
        q.unanswered.append(s)
    elif r["status"] == GRADED and float(r["score"]) >= float(r["max_score"]):
        q.right.append(s)
    elif r["status"] == GRADED:
        hint = verdict.hint if verdict is not None and verdict.hint is not None else ""
        w = q.wrong.setdefault(what_was_given(verdict), {"hint": hint, "students": []})
        w["students"].append(s)


def what_was_given(verdict: CellVerdict | None) -> str:
    """What a student gave for a question that lost its points, named as what happened: ``answered 7``, ``raised
    NameError (a name not defined)``, ``the answer cell ran over 30 s and was stopped (answered 26211070208)``."""
    if verdict is None:
        return "no verdict recorded (graded before the course kept verdicts: grade again)"
    said = f"answered {verdict.answer}" if verdict.answer is not None and not verdict.answer.startswith("(") else ""
    if verdict.why and verdict.why.startswith("the answer cell"):
        return verdict.why + (f" ({said})" if said else "")
    if said:
        return said
    errors = sorted(set((verdict.errors or {}).values()))
    if errors:
        return "; ".join(what_it_did(e, short=True) for e in errors)
    return verdict.why or (f"answered {verdict.answer}" if verdict.answer else "gave no answer the grader could read")


def _item(what: str, detail: str, students: list[str], hint: str) -> dict:
    return {"what": what, "detail": detail, "count": len(students), "students": students, "hint": hint}


def _next_lecture(
    exercises: dict[str, Exercise], questions: dict[str, Question], empty: set[str] | frozenset[str] = frozenset()
) -> list[dict]:
    """What to go over in the next lecture: the named mistakes, the exercises left unanswered and the wrong
    answers, most students first; the students of ``empty`` (who answered nothing at all) are left out."""
    items = []
    for ex in exercises.values():
        for key, m in ex.mistakes.items():
            if key:
                items.append(_item(f"{ex.name}: {m['name']}", key, m["students"], m["says"]))
        for said, students in ex.errors.items():
            hint = "What the code did, not a wrong value: go over how such code is found and stopped."
            items.append(_item(f"{ex.name}: {said}", said, students, hint))
        left = [s for s in ex.outcomes["unanswered"] if s not in empty]
        if left:
            hint = "Walk through the exercise once more: these students left it as released."
            items.append(_item(f"{ex.name}: not answered", "unanswered", left, hint))
    for q in questions.values():
        for answer, w in q.wrong.items():
            items.append(_item(f"{q.name}: {answer}", answer, w["students"], w["hint"]))
    items.sort(key=lambda it: (-it["count"], it["what"]))
    return items[:NEXT_LECTURE]
