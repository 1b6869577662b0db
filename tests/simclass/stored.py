"""Results made without a kernel: a student's grading written straight into a course, as ``make autograde`` leaves
one (``autograder/merge.merge``: the gradebook's grades, the graded notebooks in autograde/, the record), for the
tests of what comes after grading (feedback, grades, the late policy, the LMS files, insights).

``store`` is the one place in the tests where a result is built from data (the points of each test cell, a status
and a verdict where one is given, the files handed in copied as the graded notebooks); the engine's own tests
(tests/test_autograde.py, the simulated class, the service's) grade for real with nbgrader and the sandbox.
"""

from __future__ import annotations

from datetime import UTC, datetime

from whole_transformer.course.autograder.locate import submission_digest, submission_files
from whole_transformer.course.autograder.merge import merge
from whole_transformer.course.autograder.record import StudentResult
from whole_transformer.course.autograder.template import build_template
from whole_transformer.course.core.results import GRADED, MISSING, CellStatus, NotebookResult
from whole_transformer.course.core.verdict import CellVerdict
from whole_transformer.course.layout import ASSIGNMENT, Course


def store(
    course: Course,
    student: str,
    points: dict[str, float] | None = None,
    *,
    verdicts: dict[str, CellVerdict] | None = None,
    when: datetime | None = None,
) -> StudentResult:
    """``student``'s hand-in in submitted/ (or, if there is none, the release handed in untouched) graded as
    ``points`` says: grade_id → the points its test cell earned (a cell not named earns its full points; a notebook
    not handed in is missing), with the grader's verdict of ``verdicts``; merged into the course with the
    hand-in time the course trusts (``when``, naive or not, if it has none). The result, as merged."""
    points, verdicts = points or {}, verdicts or {}
    template = build_template(course, course.state / "stored", log=lambda *a: None)
    folder = course.submitted / student / ASSIGNMENT
    if folder.is_dir():
        files = {str(p.relative_to(folder)): p.read_bytes() for p in submission_files(folder)}
        submission = submission_digest(course.submitted / student)  # as make autograde tells a hand-in again
    else:
        files = {f"{n}.ipynb": (template.release / f"{n}.ipynb").read_bytes() for n in template.notebooks}
        submission = "stored"
    stamp = (when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when) if when else None
    result = StudentResult(student, submission, template.fingerprint, {}, [], log="stored: no kernel ran")
    result.scores = {"timestamp": stamp, "notebooks": {}}
    for name in template.notebooks:
        cells = template.grade_cells.get(name, [])
        handed = f"{name}.ipynb" in files
        res = result.notebooks[name] = NotebookResult(GRADED if handed else MISSING, file=f"{name}.ipynb" * handed)
        if not handed:
            res.reason = f"{name}.ipynb was not handed in"
            res.settle([gid for gid, _ in cells])
            continue
        res.cells = {gid: CellStatus(GRADED, "", verdicts.get(gid)) for gid, _ in cells}
        grades = {gid: (float(points.get(gid, full)), None) for gid, full in cells}
        result.scores["notebooks"][name] = {"late": 0.0, "grades": grades, "comments": {}}
    result.graded = files
    merge(course, result, template)
    return result
