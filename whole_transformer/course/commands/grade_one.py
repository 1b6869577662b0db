"""``python -m whole_transformer.course grade-one``: one submission graded anywhere, the result said and kept.

For a developer debugging one student, and for tests: the same grading unit ``make autograde`` and the grading
service run (``autograder/grade.py``), on one submission read from where it is (``autograder/submission.py``):

- a student's id, or their folder in ``submitted/``;
- an attempt's folder in nbgrader's exchange inbound (``<student>+whole-transformer+<time>+<random>``), its time
  decided from the folder as the service decides it (``service/watch.py``);
- a download kept in ``downloaded/whole-transformer/archive/`` (its file name) with ``--student``: that student's
  files as the download held them, each file's time as ``make collect-zip`` recorded it.

The result is printed (each notebook, each graded cell with its points and why it lost any, the findings, the
total) and written to the folder ``--out`` names, as ``make autograde`` keeps it in ``autograde/``: ``result.json``
(statuses, verdicts, points, findings, nbgrader's log) and the graded notebooks. The course's gradebook and its
``autograde/`` are not touched (the assignment is prepared apart, as source/ has it now) unless ``--merge`` asks:
then the result goes into the course through the one merge (``autograder/store.py``), as ``make autograde``'s
would.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..autograder.assignment import Assignment
from ..autograder.submission import Submission
from ..core.results import GRADED, Result
from ..layout import Course
from .declare import arg, command


@command(
    "grade-one",
    "grade one submission (submitted/, an exchange attempt or an LMS download) and write its result.json",
    arg(
        "where",
        metavar="SUBMISSION",
        help="a student's id or folder in submitted/; an attempt's folder in the exchange's inbound; or, with "
        "--student, a download kept in downloaded/whole-transformer/archive/ (its file name)",
    ),
    arg("--out", metavar="DIR", required=True, help="a new or empty folder for result.json and the graded notebooks"),
    arg("--student", help="whose files of the download to grade (with a download's name)"),
    arg("--merge", action="store_true", help="also merge the result into the course (gradebook, autograde/)"),
    arg("--no-sandbox", action="store_true", help="run student code WITHOUT the sandbox (as for autograde)"),
)
def cmd_grade_one(course: Course, args) -> int:
    # lazy: nbgrader, nbformat; jupyter_client (sandbox/bubblewrap.py)
    from ..sandbox.bubblewrap import SandboxMissing

    out = Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"{out} is not an empty folder: name a new one (nothing of it was changed)")
    try:
        result = grade_one(course, find_submission(course, args.where, args.student), out, args.merge, args.no_sandbox)
    except SandboxMissing as e:
        print(f"grade-one refused to run.\n{e}", file=sys.stderr)
        return 2
    return 0 if result.graded_any else 1


def find_submission(course: Course, where: str, student: str | None) -> Submission:
    """The submission ``where`` names (see the module doc), read from where it is."""
    from ..service.watch import read_attempt  # lazy: the service's reading of an attempt, for an attempt only

    path = Path(where)
    if student is not None:
        return Submission.from_download(course, student, path.name)
    if path.is_dir() and path.resolve().parent != course.submitted.resolve() and "+" in path.name:
        attempt = read_attempt(path.resolve())
        if attempt is None or attempt.problem:
            why = attempt.problem if attempt else "it is another assignment's"
            raise ValueError(f"{path} cannot be graded as an attempt: {why}")
        return Submission.from_exchange(attempt.student, attempt.folder, attempt.handin)
    name = path.name if path.is_dir() else where
    if not (course.submitted / name).is_dir():
        raise ValueError(
            f"{where} is neither a student's folder in {course.submitted} nor an attempt's folder in the exchange "
            "(<student>+whole-transformer+<time>+<random>); for an LMS download give its name and --student"
        )
    return Submission.from_folder(course, name)


def grade_one(course: Course, submission: Submission, out: Path, merge: bool, no_sandbox: bool, log=print) -> Result:
    """Grade ``submission`` against the assignment as source/ has it now; its result written to ``out``, said, and
    merged into the course if asked (see the module doc)."""
    # lazy: nbgrader, nbformat and the grading machinery, for this command only
    from ..autograder import store
    from ..autograder.claims import Claims
    from ..autograder.grade import grade
    from ..autograder.prepare import check_run

    sandbox, _ = check_run(course, 1, no_sandbox, log, "grade-one")
    work = Path(tempfile.mkdtemp(prefix="wt-grade-one-"))
    claims = Claims(course) if merge else None
    try:
        if claims is not None and not claims.claim(submission.student):
            raise ValueError(f"{submission.student} is being graded by make autograde or the service now: try later")
        assignment = _assignment(course, claims, work, log)
        result = grade(assignment, submission, threads=os.cpu_count() or 1, sandbox=sandbox, work=work)
        store.write_graded(out, result)
        if merge:
            store.merge(course, result, assignment, submission.handed_in_at)
    finally:
        if claims is not None:
            claims.close()
        shutil.rmtree(work, ignore_errors=True)
    for line in summary(result, assignment, submission):
        log(line)
    merged = " and merged the result into the course" if merge else ""
    log(f"grade-one: wrote {out / store.RESULT} and {len(result.graded)} graded file(s){merged}")
    return result


def _assignment(course: Course, claims, work: Path, log) -> Assignment:
    """The assignment as source/ has it now: with ``claims`` (``--merge``), prepared as a class run prepares it
    (the course gradebook brought up to date); else apart, the course gradebook only read."""
    # lazy: nbgrader, for this command only
    from ..autograder.assignment import prepare
    from ..autograder.prepare import prepare_assignment

    if claims is not None:
        return prepare_assignment(course, claims, work, log)
    return prepare(course, work, log, update_course=False)


def summary(result: Result, assignment: Assignment, submission: Submission) -> list[str]:
    """What one grading came to, line by line: each notebook, each graded cell (points, why it lost any), the
    findings, the total."""
    from ..reports.grades import verdict_reason  # lazy: nbgrader's gradebook, imported by the reports

    when = submission.handin.describe() if submission.handin else "no hand-in time known to the course"
    lines = [f"grade-one: {result.student}, {when}; graded in {result.seconds:.1f} s on {result.worker}"]
    for name, nb in result.notebooks.items():
        got = sum(c.score or 0.0 for c in nb.cells.values()) if nb.status == GRADED else 0.0
        most = sum(ms for _, ms in assignment.grade_cells.get(name, []))
        lines.append(f"  {name}: {nb.status}, {got:g} / {most:g}" + (f" ({nb.reason})" if nb.reason else ""))
        for gid, most_cell in assignment.grade_cells.get(name, []):
            cell = nb.cells.get(gid)
            if cell is None or nb.status != GRADED:
                continue
            status, why, cases = verdict_reason(cell.verdict)
            said = "; ".join(r for r in (cell.reason, why) if r)
            lines.append(
                f"    {gid:<32} {status or cell.status:<10} {cell.score or 0:g} / {most_cell:g}"
                + (f"  {cases} cases" if cases else "")
                + (f"  {said}" if said else "")
            )
    for f in result.findings:
        lines.append(f"  finding: {f.notebook} {f.cell}: {f.finding}")
    lines.append(f"  total: {result.score():g} / {assignment.max_score:g} (the tests' points; no late penalty here)")
    return lines
