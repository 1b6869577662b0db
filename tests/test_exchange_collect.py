"""``nbgrader collect`` merges (issue 30): what a student handed in through the exchange is only ever added to.

One student of the small course, with four notebooks, goes through a real local exchange with real nbgrader
commands: submits all four, is collected, then submits one changed notebook alone and is collected again with
``nbgrader collect whole-transformer`` as the guides write it. All four are still in submitted/, the changed one
replaced, and the output names both times. Collecting again changes nothing; replacing the whole hand-in is
``--MergeCollect.replace=True``, which says so and keeps the old folder.
"""

from __future__ import annotations

import re

import nbformat
from simclass.local_exchange import course_with_exchange, nbgrader
from simclass.minicourse import mini_notebook

from whole_transformer.course.cells import grade_id
from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID

FOUR = [f"0{i}-mini" for i in range(1, 5)]
TIME = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"


def _said(done) -> str:
    """nbgrader's log lines of the course's collect, one per student."""
    return "\n".join(ln for ln in done.stderr.splitlines() if "collect " in ln)


def test_a_second_submission_of_one_notebook_keeps_the_other_three(tmp_path):
    course, exchange = course_with_exchange(tmp_path, notebooks={name: mini_notebook() for name in FOUR})
    root, home = course.root, tmp_path / "ada"
    home.mkdir()
    nbgrader(["fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    first = _said(nbgrader(["collect", ASSIGNMENT], root, exchange))
    assert re.search(rf"collect ada: added {', '.join(f'{n}.ipynb' for n in FOUR)} \(handed in {TIME}\)", first), first
    submitted = root / "submitted" / "ada" / ASSIGNMENT
    before = {n: (submitted / f"{n}.ipynb").read_bytes() for n in FOUR}

    work = home / ASSIGNMENT  # the second time: 02 changed, and handed in alone
    for name in FOUR:
        if name != "02-mini":
            (work / f"{name}.ipynb").unlink()
    nb = nbformat.read(work / "02-mini.ipynb", as_version=4)
    (answer,) = [c for c in nb.cells if grade_id(c) == "answer_q"]
    answer.source = "answer_q = 8"
    nbformat.write(nb, work / "02-mini.ipynb")
    nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    second = _said(nbgrader(["collect", ASSIGNMENT], root, exchange))
    print(second)
    assert re.search(
        rf"collect ada: replaced 02-mini\.ipynb: ({TIME}) → ({TIME}); "
        r"kept 01-mini\.ipynb, 03-mini\.ipynb, 04-mini\.ipynb \(not in this submission\)",
        second,
    ), second
    assert sorted(p.stem for p in submitted.glob("*.ipynb")) == FOUR
    assert "answer_q = 8" in (submitted / "02-mini.ipynb").read_text()
    assert all((submitted / f"{n}.ipynb").read_bytes() == before[n] for n in FOUR if n != "02-mini")
    newest = max((exchange / COURSE_ID / "inbound").iterdir(), key=lambda p: p.name.rsplit("+", 3)[2])
    assert (submitted / "timestamp.txt").read_text() == (newest / "timestamp.txt").read_text()

    again = _said(nbgrader(["collect", ASSIGNMENT], root, exchange))  # nothing new: nothing changes
    assert "kept 02-mini.ipynb (the same file as handed in" in again and "replaced" not in again, again
    assert sorted(p.stem for p in submitted.glob("*.ipynb")) == FOUR

    whole = nbgrader(["collect", ASSIGNMENT, "--MergeCollect.replace=True"], root, exchange)
    assert "the whole hand-in of ada is replaced by the latest submission" in whole.stderr, whole.stderr
    assert sorted(p.stem for p in submitted.glob("*.ipynb")) == ["02-mini"]
    (kept,) = (root / "downloaded" / ASSIGNMENT / "replaced").glob("*/ada")
    assert sorted(p.stem for p in kept.glob("*.ipynb")) == FOUR
