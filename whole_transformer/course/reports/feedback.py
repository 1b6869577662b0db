"""``make feedback``: nbgrader generate_feedback, then a check that nothing a student must not see got through.

The rewriting is done by ``hide_tests.HideHiddenTests`` inside nbgrader (see nbgrader_config.py).
Afterwards every feedback file is searched for everything of the assignment a student must not
see: each distinctive line of every hidden test, the EXPECTED part's JSON line among them, and
each expected value (from the gradebook, where nbgrader keeps the test cells as written in
source/), and each line of every reference solution (from source/: the gradebook keeps a solution
cell as released). A solution line the student wrote in their own submission is theirs,
and text the released notebooks hold is every student's: neither counts. A file that contains
anything else of it is deleted and reported, so a leak is never handed out, whatever the cause.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from ..answers.leak_search import EXPECTED, HIDDEN, INPUT, SOLUTION, found_in, notebook_text, test_secrets
from ..cells import cell_source, nbgrader_meta
from ..csp import protect
from ..layout import ASSIGNMENT, Course, run_nbgrader
from ..plugins.hide_tests import solution_fragments, split_hidden
from .student_page import FOLDER, write_pages
from .whole_output import replaced_whole

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
    return {text: kind for text, kind in found.items() if text not in released}


def leaks(path: Path, lines, own: str = "") -> list[str]:
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
    whatever name they handed a notebook in, what they wrote is theirs."""
    folder = course.submitted / student_of(course, feedback_file)
    return "\n".join(_notebook_text(p) for p in sorted(folder.rglob("*.ipynb")) if p.is_file() and not p.is_symlink())


class LeakError(RuntimeError):
    """Files were removed because they showed what a student must not see; the message says what each showed."""


def remove_leaks(course: Course, files: list[Path], log=print) -> list[Path]:
    """Delete each of ``files`` that shows anything of ``secrets(course)``, saying what; the deleted ones."""
    lines = secrets(course)
    bad = []
    for f in files:
        found = leaks(f, lines, own_submission(course, f))
        if found:
            bad.append(f)
            f.unlink()
            log(_removed(course, f, lines, found))
    return bad


def _removed(course: Course, f: Path, lines: dict[str, str], found: list[str]) -> str:
    return f"REMOVED {f.relative_to(course.root)}: it contained {lines[found[0]]} text ({found[0][:60]!r})" + (
        f" and {len(found) - 1} more" if len(found) > 1 else ""
    )


def _check_leaks(course: Course, files: list[Path], what: str, log=print) -> list[Path]:
    """``remove_leaks``, then a LeakError naming each removed file and what it showed, if any was removed."""
    said: list[str] = []

    def say(line: str) -> None:
        said.append(line)
        log(line)

    bad = remove_leaks(course, files, say)
    if bad:
        raise LeakError(
            f"{len(bad)} {what} contained hidden tests, expected values or solutions and were removed "
            "(nothing was handed out):\n" + "\n".join(said)
        )
    return bad


def feedback(course: Course, log=print) -> list[Path]:
    """Feedback files and pages for every graded student; all or nothing: a run that refuses (a leak) or
    fails leaves the previous run's feedback/ and feedback-pages/ as they were (``whole_output``)."""
    if not course.autograde.is_dir():
        raise ValueError("nothing is autograded yet: run make autograde first")
    try:
        with replaced_whole([course.feedback, course.root / FOLDER]):
            return _generate(course, log)
    except LeakError as e:
        raise LeakError(f"{e}\nthe previous feedback/ and {FOLDER}/ are left as they were") from None


def _generate(course: Course, log=print) -> list[Path]:
    done = run_nbgrader(["generate_feedback", ASSIGNMENT, "--force"], course.root)
    if done.returncode != 0:
        log(f"nbgrader generate_feedback reported errors:\n{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}")
    files = sorted(course.feedback.glob(f"*/{ASSIGNMENT}/*.html"))
    for f in files:  # what the student wrote is inert already (MakeInert); the policy is the second wall
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
