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

import html
import re
from pathlib import Path

from ..cells import cell_source, nbgrader_meta
from ..layout import ASSIGNMENT, Course, run_nbgrader
from ..nbgrader.hide_tests import hidden_fragments, solution_fragments, split_hidden

HIDDEN, EXPECTED, SOLUTION = "hidden test", "expected value", "solution"
_TAG = re.compile(r"<[^>]*>")


def notebook_text(raw: str) -> str:
    """A notebook's raw text and its cells' sources (as typed, not JSON-escaped)."""
    import nbformat

    try:
        nb = nbformat.reads(raw, as_version=4)
    except Exception:  # noqa: BLE001 - not a notebook nbformat can read: its raw text is all there is
        return raw
    return raw + "\n" + "\n".join(cell_source(c) for c in nb.cells)


def _notebook_text(path: Path) -> str:
    return notebook_text(path.read_text(errors="replace"))


def secrets(course: Course) -> dict[str, str]:
    """Everything of the assignment a student must not see, as text to search for → what it is
    (``HIDDEN``, ``EXPECTED`` or ``SOLUTION``). Text the released notebooks hold is left out."""
    import nbformat
    from nbgrader.api import Gradebook

    from ..nbgrader.hide_tests import expected_values

    found: dict[str, str] = {}
    with Gradebook(course.db_url) as gb:
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            for cell in nb.source_cells:
                _, hidden = split_hidden(cell.source or "")
                values = expected_values(hidden)
                for text in hidden_fragments(hidden):
                    found[text] = EXPECTED if text in values or text.startswith("# {") else HIDDEN
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
    splits a line of code into many tags). A solution line found in ``own`` (the student's own
    submission) is the student's."""
    text = path.read_text(errors="replace")
    plain = html.unescape(text)
    bare = html.unescape(_TAG.sub("", text))
    kinds = lines if isinstance(lines, dict) else dict.fromkeys(lines, HIDDEN)
    return [
        ln
        for ln, kind in kinds.items()
        if (ln in text or ln in plain or ln in bare or html.escape(ln) in text) and not (kind == SOLUTION and ln in own)
    ]


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
    if not course.autograde.is_dir():
        raise ValueError("nothing is autograded yet: run make autograde first")
    done = run_nbgrader(["generate_feedback", ASSIGNMENT, "--force"], course.root)
    if done.returncode != 0:
        log(f"nbgrader generate_feedback reported errors:\n{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}")
    files = sorted(course.feedback.glob(f"*/{ASSIGNMENT}/*.html"))
    _check_leaks(course, files, "feedback file(s)", log)
    log(
        f"feedback: {len(files)} files for {len({student_of(course, f) for f in files})} students in "
        f"{course.feedback.relative_to(course.root)}/"
    )
    write_student_pages(course, log)
    return files


def write_student_pages(course: Course, log=print) -> list[Path]:
    """One page per student (``student_page.py``), checked for leaks like every feedback file."""
    from .student_page import FOLDER, write_pages

    pages = write_pages(course)
    _check_leaks(course, pages, "page(s) per student", log)
    log(
        f"feedback: one page per student, {len(pages)} in {FOLDER}/ (the total, late penalty, comments and "
        "every notebook's feedback), for an LMS or mail"
    )
    return pages
