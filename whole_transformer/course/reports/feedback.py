"""``make feedback``: nbgrader generate_feedback, then a check that nothing a student must not see got through.

The rewriting is done by ``hide_tests.HideHiddenTests`` inside nbgrader (see nbgrader_config.py).
Afterwards every feedback file is searched for everything of the assignment a student must not
see: each distinctive line of every hidden test, the EXPECTED part's JSON line among them, and
each expected value (from the gradebook, where nbgrader keeps the test cells as written in
source/), and each line of every reference solution (from source/: the gradebook keeps a solution
cell as released). A solution line the student wrote in their own submission is theirs,
and text the released notebooks hold is every student's: neither counts (nor does a number or list of
numbers either one prints). A file that shows anything else of it refuses the whole run: it is taken out,
reported with what it showed and, when that came from the instructor's own Formgrader comment, which comment;
the previous run's feedback is kept as it was, so a leak is never handed out, whatever the cause.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from ..answers.leak_search import (
    EXPECTED,
    HIDDEN,
    INPUT,
    SOLUTION,
    Leak,
    Secrets,
    found_in,
    notebook_text,
    said,
    solution_fragments,
    test_secrets,
)
from ..cells import cell_source, is_test, nbgrader_meta, split_hidden
from ..csp import protect
from ..layout import ASSIGNMENT, Course, run_nbgrader
from ..plugins.app import check_course_config
from ..whole_output import replaced_whole
from .student_page import FOLDER, comments, readable, write_pages

__all__ = ["EXPECTED", "HIDDEN", "INPUT", "SOLUTION", "notebook_text"]  # the kinds, as feedback's users know them


def _notebook_text(path: Path) -> str:
    return notebook_text(path.read_text(errors="replace"))


def secrets(course: Course) -> dict[str, str]:
    """Everything of the assignment a student must not see, as text to search for → what it is
    (``HIDDEN``, ``EXPECTED``, ``INPUT`` or ``SOLUTION``). Text the released notebooks hold is left out."""
    found: dict[str, str] = {}
    with Gradebook(course.db_url) as gb:
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            for cell in nb.source_cells:
                found.update(test_secrets(split_hidden(cell.source or "")[1]))  # answers/leak_search.py
    # the gradebook keeps a solution cell as released (its stub): the answers are in source/
    for path in sorted((course.root / "source" / ASSIGNMENT).glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if nbgrader_meta(cell).get("solution"):
                for text in solution_fragments(cell_source(cell)):
                    found.setdefault(text, SOLUTION)
    released = "\n".join(_notebook_text(p) for p in sorted((course.root / "release" / ASSIGNMENT).glob("*.ipynb")))
    return Secrets({text: kind for text, kind in found.items() if text not in released}, excused=released)


def leaks(path: Path, lines, own: str = "") -> list[Leak]:
    """What of ``lines`` (text to search for; a dict maps it to its kind) the file at ``path`` shows.

    The file is searched as it is, unescaped, and with its HTML tags taken out (a highlighted cell
    splits a line of code into many tags). A solution line or a hidden input found in ``own`` (the
    student's own submission) is the student's."""
    kinds = lines if isinstance(lines, dict) else dict.fromkeys(lines, HIDDEN)
    return found_in(path.read_text(errors="replace"), kinds, own)


def student_of(course: Course, feedback_file: Path) -> str:
    """Whose file this is: ``feedback/<student>/<assignment>/<notebook>.html`` (nbgrader's), or the page per
    student ``feedback-pages/<student>.html``."""
    parts = feedback_file.relative_to(course.root).parts
    return parts[1] if parts[0] == course.feedback.name else feedback_file.stem


def own_submission(course: Course, feedback_file: Path) -> str:
    """The text of every notebook the student of this feedback file handed in ('' when none): under
    whatever name they handed a notebook in, what they wrote is theirs. So is what their own code printed when
    it was graded, outside the test cells: a result right in most of its numbers (a forward pass that forgets
    only the PAD keys) prints numbers that are expected values too, and the student's kernel never holds
    an expected value (the grader compares outside it), so those numbers are the student's own."""
    student = student_of(course, feedback_file)
    folder = course.submitted / student
    texts = [_notebook_text(p) for p in sorted(folder.rglob("*.ipynb")) if p.is_file() and not p.is_symlink()]
    graded = course.autograde / student / ASSIGNMENT
    for p in sorted(graded.glob("*.ipynb")) if graded.is_dir() else []:
        for cell in nbformat.read(p, as_version=4).cells:
            if cell.get("cell_type") == "code" and not is_test(cell):
                texts += [_printed(o) for o in cell.get("outputs", [])]
    return "\n".join(texts)


#: what a page per student prints of the course's own figures: its total line and its notebooks' scores
_SCORES = re.compile(r"<p class='wt-total'>.*?</p>|<td>[\d.]+ / [\d.]+</td>", re.S)


def scores_shown(path: Path) -> str:
    """The scores a page shows (its total, its parts, each notebook's): the course's sums of the student's
    points, never a secret, though one may read like a rounded expected value (a total of 22.94)."""
    return "\n".join(_SCORES.findall(path.read_text(errors="replace")))


def _printed(output) -> str:
    """An output's text: a stream's, or each text form of a result or display (plain, HTML)."""
    if "text" in output:
        return str(output["text"])
    data = output.get("data", {})
    return "\n".join(str(v) for k, v in data.items() if k.startswith("text/"))


def make_readable(path: Path) -> None:
    path.write_text(readable(path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")


class LeakError(RuntimeError):
    """Files showed what a student must not see and the run was refused; the message says what each showed,
    where it came from and what was kept."""


def comment_of(course: Course, student: str, leak: Leak) -> tuple[str, str] | None:
    """(notebook, cell) of the instructor's own Formgrader comment that holds ``leak``, if one does."""
    for notebook, cell, text in comments(course, student):
        if leak.shown in text or str(leak) in text or found_in(text, {str(leak): EXPECTED}):
            return notebook, cell
    return None


def remove_leaks(course: Course, files: list[Path], log=print) -> list[Path]:
    """Take out each of ``files`` that shows anything of ``secrets(course)``, saying what it showed and where
    that came from; the files taken out."""
    lines = secrets(course)
    bad = []
    owns: dict[str, str] = {}  # student → own_submission: read once for their files and their page
    for f in files:
        student = student_of(course, f)
        if student not in owns:
            owns[student] = own_submission(course, f)
        found = leaks(f, lines, owns[student] + "\n" + scores_shown(f))
        if found:
            bad.append(f)
            f.unlink()
            log(_refused(course, f, lines, found))
    return bad


def _refused(course: Course, f: Path, lines: dict[str, str], found: list[Leak]) -> str:
    line = f"REFUSED {f.relative_to(course.root)}: it showed {said(found, lines)}"
    comment = next((c for leak in found if (c := comment_of(course, student_of(course, f), leak))), None)
    if comment is not None:
        line += (
            f"; it came from your own Formgrader comment on {comment[0]}, {comment[1]}: edit that comment "
            "and run make feedback again"
        )
    return line


def _check_leaks(course: Course, files: list[Path], what: str, log=print) -> list[Path]:
    """``remove_leaks``, then a LeakError naming each refused file and what it showed, if any was refused."""
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        log(line)

    bad = remove_leaks(course, files, say)
    if bad:
        raise LeakError(
            f"make feedback refused: {len(bad)} {what} of this run showed hidden tests, expected values or "
            "solutions, so nothing of this run was handed out:\n" + "\n".join(said)
        )
    return bad


def feedback(course: Course, log=print) -> list[Path]:
    """Feedback files and pages for every graded student; all or nothing: a run that refuses (a leak) or
    fails leaves the previous run's feedback/ and feedback-pages/ as they were (``whole_output``)."""
    if not course.autograde.is_dir():
        raise ValueError("nothing is autograded yet: run make autograde first")
    check_course_config(course.root, "generate_feedback", "make feedback")  # else nbgrader's: the hidden tests shown
    try:
        with replaced_whole([course.feedback, course.root / FOLDER]):
            return _generate(course, log)
    except LeakError as e:
        raise LeakError(
            f"{e}\nkept: the previous feedback/ and {FOLDER}/ are left as they were (a file named above that is "
            "there now is the previous run's, which was checked when it was made)"
        ) from None


def _generate(course: Course, log=print) -> list[Path]:
    done = run_nbgrader(["generate_feedback", ASSIGNMENT, "--force"], course.root)
    if done.returncode != 0:
        log(f"nbgrader generate_feedback reported errors:\n{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}")
    files = sorted(course.feedback.glob(f"*/{ASSIGNMENT}/*.html"))
    for f in files:  # what the student wrote is inert already (MakeInert); the policy is the second wall
        make_readable(f)
        protect(f)
    _check_leaks(course, files, "feedback file(s)", log)
    log(
        f"feedback: {len(files)} files for {len({student_of(course, f) for f in files})} students in "
        f"{course.feedback.relative_to(course.root)}/"
    )
    write_student_pages(course, log)
    return files


def write_student_pages(course: Course, log=print) -> list[Path]:
    """One page per student (``student_page.py``), checked for leaks like every feedback file."""
    pages = write_pages(course)
    _check_leaks(course, pages, "page(s) per student", log)
    log(
        f"feedback: one page per student, {len(pages)} in {FOLDER}/ (the total, late penalty, comments and "
        "every notebook's feedback), for an LMS or mail"
    )
    return pages
