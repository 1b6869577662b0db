"""Results made without a kernel: a student's grading written straight into a course, as ``make autograde`` leaves
one (``autograder/store.merge``: the gradebook's grades, the graded notebooks in autograde/, result.json), for the
tests of what comes after grading (feedback, grades, the late policy, the LMS files, insights).

``store`` is the one place in the tests where a result is built from data (the points of each test cell, a status
and a verdict where one is given, the files handed in copied as the graded notebooks); the engine's own tests
(tests/test_autograde.py, the simulated class, the service's) grade for real with nbgrader and the sandbox.
"""

from __future__ import annotations

from datetime import UTC, datetime

from whole_transformer.course.autograder.assignment import prepare
from whole_transformer.course.autograder.store import merge
from whole_transformer.course.autograder.submission import Submission
from whole_transformer.course.core.results import GRADED, MISSING, CellStatus, NotebookResult, Result
from whole_transformer.course.core.verdict import CellVerdict
from whole_transformer.course.layout import ASSIGNMENT, Course


def store(
    course: Course,
    student: str,
    points: dict[str, float] | None = None,
    *,
    verdicts: dict[str, CellVerdict] | None = None,
    when: datetime | None = None,
) -> Result:
    """``student``'s hand-in in submitted/ (or, if there is none, the release handed in untouched) graded as
    ``points`` says: grade_id → the points its test cell earned (a cell not named earns its full points; a notebook
    not handed in is missing), with the grader's verdict of ``verdicts``; merged into the course with the
    hand-in time the course trusts (``when``, naive or not, if it has none). The result, as merged."""
    points, verdicts = points or {}, verdicts or {}
    assignment = prepare(course, course.state / "stored", log=lambda *a: None)
    if (course.submitted / student / ASSIGNMENT).is_dir():
        submission = Submission.from_folder(course, student)  # as make autograde takes the hand-in in
        files = {
            rel.removeprefix(f"{ASSIGNMENT}/"): data
            for rel, data in submission.files.items()
            if rel.startswith(f"{ASSIGNMENT}/")
        }
        digest, handed_in_at = submission.digest, submission.handed_in_at
    else:
        files = {f"{n}.ipynb": assignment.release[n].encode() for n in assignment.notebooks}
        digest, handed_in_at = "stored", None
    stamp = (when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when) if when else None
    result = Result(student, digest, assignment.fingerprint, timestamp=stamp, log="stored: no kernel ran")
    for name in assignment.notebooks:
        cells = assignment.grade_cells.get(name, [])
        handed = f"{name}.ipynb" in files
        res = result.notebooks[name] = NotebookResult(GRADED if handed else MISSING, file=f"{name}.ipynb" * handed)
        if not handed:
            res.reason = f"{name}.ipynb was not handed in"
            res.settle([gid for gid, _ in cells])
            continue
        res.late_penalty = 0.0
        res.cells = {
            gid: CellStatus(GRADED, "", verdicts.get(gid), float(points.get(gid, full))) for gid, full in cells
        }
    result.graded = files
    merge(course, result, assignment, handed_in_at)
    return result
