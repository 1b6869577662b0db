"""``make feedback``: nbgrader generate_feedback, then a check that no hidden test got through.

The rewriting is done by ``hide_tests.HideHiddenTests`` inside nbgrader (see nbgrader_config.py).
Afterwards every feedback file is searched for each line of every hidden test (taken from the
gradebook, where nbgrader keeps them); a file that contains one is deleted and reported, so a
leak is never handed out, whatever the cause.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..layout import ASSIGNMENT, Course, run_nbgrader
from ..nbgrader.hide_tests import hidden_fragments, split_hidden


def hidden_lines(course: Course) -> set[str]:
    """The distinctive lines of every hidden test, from the gradebook."""
    from nbgrader.api import Gradebook

    lines = set()
    with Gradebook(course.db_url) as gb:
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            for cell in nb.source_cells:
                _, hidden = split_hidden(cell.source or "")
                lines |= hidden_fragments(hidden)
    return lines


def leaks(path: Path, lines: set[str]) -> list[str]:
    text = path.read_text(errors="replace")
    plain = html.unescape(text)
    return [ln for ln in lines if ln in text or ln in plain or html.escape(ln) in text]


def feedback(course: Course, log=print) -> list[Path]:
    if not course.autograde.is_dir():
        raise ValueError("nothing is autograded yet: run make autograde first")
    done = run_nbgrader(["generate_feedback", ASSIGNMENT, "--force"], course.root)
    if done.returncode != 0:
        log(f"nbgrader generate_feedback reported errors:\n{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}")
    lines = hidden_lines(course)
    files = sorted(course.feedback.glob(f"*/{ASSIGNMENT}/*.html"))
    bad = []
    for f in files:
        found = leaks(f, lines)
        if found:
            bad.append(f)
            f.unlink()
            log(f"REMOVED {f.relative_to(course.root)}: it contained hidden test text ({found[0][:60]!r})")
    kept = [f for f in files if f not in bad]
    students = {f.parts[-3] for f in kept}
    log(f"feedback: {len(kept)} files for {len(students)} students in {course.feedback.relative_to(course.root)}/"
        + (f"; {len(bad)} removed" if bad else ""))
    if bad:
        raise RuntimeError(f"{len(bad)} feedback file(s) contained hidden tests and were removed")
    write_student_pages(course, lines, log)
    return kept


def write_student_pages(course: Course, lines: set[str], log=print) -> list[Path]:
    """One page per student (``student_page.py``), checked for hidden tests like the rest."""
    from .student_page import FOLDER, write_pages

    pages = write_pages(course)
    for p in pages:
        found = leaks(p, lines)
        if found:
            p.unlink()
            raise RuntimeError(f"{p.relative_to(course.root)} contained hidden test text ({found[0][:60]!r}) "
                               "and was removed")
    log(f"feedback: one page per student, {len(pages)} in {FOLDER}/ (the total, late penalty, comments and "
        "every notebook's feedback), for an LMS or mail")
    return pages
