"""Feedback reaches a student through nbgrader's exchange after the course's own autograde.

One student of the small course (tests/simclass/minicourse.py) goes the exchange's whole way with
real nbgrader commands: release_assignment, fetch_assignment, submit, collect, then the course's
sandboxed autograde and feedback, then release_feedback and fetch_feedback. Stock nbgrader keeps a
submission's non-notebook files (timestamp.txt, submission_secret.txt) through autograde and
feedback; release_feedback needs the secret to name the file the student's fetch looks for.
"""

from __future__ import annotations

import nbformat
from simclass.local_exchange import course_with_exchange, nbgrader
from simclass.minicourse import NAME, require_sandbox

from whole_transformer.course.autograder.autograde import autograde
from whole_transformer.course.cells import grade_id
from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID
from whole_transformer.course.reports.feedback import feedback


def test_feedback_goes_through_the_exchange_after_autograde(tmp_path, released_mini):
    require_sandbox()
    course, exchange = course_with_exchange(tmp_path, released=released_mini)
    root = course.root

    home = tmp_path / "ada"
    home.mkdir()
    nbgrader(["fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    path = home / ASSIGNMENT / f"{NAME}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        gid = grade_id(c)
        if gid == "answer_q":
            c.source = "answer_q = 8"
        elif gid == "double":
            c.source = "def double(x):\n    return 2 * x"
    nbformat.write(nb, path)
    nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")

    nbgrader(["collect", ASSIGNMENT], root, exchange)
    submitted = root / "submitted" / "ada" / ASSIGNMENT
    assert (submitted / "submission_secret.txt").is_file() and (submitted / "timestamp.txt").is_file()
    autograde(course, log=lambda *a: None)
    graded = root / "autograde" / "ada" / ASSIGNMENT
    for name in ("submission_secret.txt", "timestamp.txt"):
        assert (graded / name).read_text() == (submitted / name).read_text()
    feedback(course, log=lambda *a: None)
    nbgrader(["release_feedback", ASSIGNMENT], root, exchange)

    nbgrader(["fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    got = list((home / ASSIGNMENT / "feedback").glob(f"*/{NAME}.html"))
    assert len(got) == 1, sorted(p.relative_to(home) for p in (home / ASSIGNMENT).rglob("*"))
    html = got[0].read_text()
    assert "3.0 / 3.0" in html or "Score: 3" in html
