"""What the simulated class hands in: one builder per kind of student (tests/simclass/students.py lists the class).

The ordinary students (full solutions, the untouched release, partial work, the catalogued mistakes) and
the students whose files are wrong (half a notebook, an empty folder, a renamed copy) each have a builder
here; a hostile student is a row of the table (``Hostile``): a solved notebook changed by its edits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from implementations import implementations

from whole_transformer.course.answers.mistakes import FORWARD_CALLS
from whole_transformer.course.layout import ASSIGNMENT, NOTEBOOK_OF

from .edits import Edit
from .expected import Student
from .notebooks import Notebooks, cell, set_answer

NB1, NB2, NB3, NB4 = "01-whole-machine", "02-microscope", "03-one-word-at-a-time", "04-how-it-learned"
EXERCISE_TEST = {ex: f"test_{ex}" for ex in NOTEBOOK_OF}
Finding = tuple[str | None, str]  # (cell or None for the whole notebook, words the finding must contain)


def zero(*grade_ids: str) -> dict[str, tuple[float, str]]:
    """Test cells graded with no points."""
    return {g: (0.0, "graded") for g in grade_ids}


def failed(*grade_ids: str) -> dict[str, tuple[float, str]]:
    """Test cells that could not be graded (status ``failed``)."""
    return {g: (0.0, "failed") for g in grade_ids}


def on(grade_id: str | None, *words: str) -> tuple[Finding, ...]:
    """Findings on one cell, one for each of ``words``."""
    return tuple((grade_id, w) for w in words)


class Materials:
    """What the class is made from: the course's notebooks and folder, the port of a loopback listener the
    network must not reach, the first wrong implementation of each exercise, and the correct implementations
    the catalogued-mistake students left over, handed out one per solved notebook so that every correct
    implementation is graded somewhere too."""

    def __init__(self, nbs: Notebooks, course: Path, port: int, spare: dict[str, list]):
        self.nbs, self.course, self.port, self.spare = nbs, course, port, spare
        self.wrong = {ex: implementations(ex, "wrong")[0].source for ex in NOTEBOOK_OF}

    def solved(self, name: str):
        """Notebook ``name`` with every answer right, a spare correct implementation in it if one is left."""
        nb = self.nbs.solved(name)
        for ex, nb_file in NOTEBOOK_OF.items():
            if nb_file.removesuffix(".ipynb") == name and self.spare[ex]:
                set_answer(nb, ex, self.spare[ex].pop(0).source)
        return nb

    def left(self) -> list[str]:
        """The correct implementations not handed out yet."""
        return [i.id for v in self.spare.values() for i in v]

    def paths(self) -> dict[str, object]:
        """What a student who reaches outside their submission aims at (grader_attacks.SNOOP, VANDAL)."""
        return {
            "source": str(self.course / "source" / ASSIGNMENT / f"{NB3}.ipynb"),
            "gradebook": str(self.course / "gradebook.db"),
            "other": str(self.course / "submitted" / "full" / ASSIGNMENT / f"{NB3}.ipynb"),
            "root": str(self.course),
            "port": self.port,
        }


# ------------------------------------------------------------------ the hostile students' rows
@dataclass(frozen=True)
class Hostile:
    """A hostile student: one notebook, solved, changed by ``edits``; the cells that lose their points
    (``zero``) or cannot be graded (``failed``); the findings on that notebook the integrity check must
    report, and those it may report (``may_find``: a slow cell on a loaded machine)."""

    name: str
    notebook: str
    edits: tuple[Edit, ...]
    note: str
    zero: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    may_find: tuple[Finding, ...] = ()

    def hand_in(self, m: Materials) -> Student:
        """The student: the row's notebook solved (a spare correct implementation in it), then edited."""
        nb = m.solved(self.notebook)
        for edit in self.edits:
            edit(nb, m)
        return Student(
            self.name,
            {self.notebook: nb},
            zero(*self.zero) | failed(*self.failed),
            findings=[(self.notebook, c, words) for c, words in self.findings],
            may_find=[(self.notebook, c, words) for c, words in self.may_find],
            note=self.note,
        )


def hostile(name: str, notebook: str, *edits: Edit, note: str, **expected) -> Hostile:
    """A row of the table: ``expected`` holds zero, failed, findings, may_find (see ``Hostile``)."""
    return Hostile(name, notebook, edits, note, **expected)


# ------------------------------------------------------------------ the ordinary students
def full_solutions(nbs: Notebooks) -> Student:
    """Every notebook, every answer as in the source: full points, nothing to report."""
    return Student("full", {n: nbs.solved(n) for n in nbs.names}, {}, no_findings=True, note="every answer right")


def untouched_release(nbs: Notebooks) -> Student:
    """Every notebook as released: no points, and nothing to report."""
    return Student(
        "release",
        {n: nbs.blank(n) for n in nbs.names},
        zero(*(g for n in nbs.names for g in nbs.grade_cells(n))),
        no_findings=True,
        note="hands in the release untouched",
    )


def partial_work(nbs: Notebooks) -> Student:
    """01 done, 02 untouched, 03 half done (greedy_decode's stub left as released, a wrong rows_742)."""
    part = {NB1: nbs.solved(NB1), NB3: nbs.solved(NB3)}
    expect = zero("test_greedy_decode", "test_rows_742")
    if NB2 in nbs.names:
        part[NB2] = nbs.blank(NB2)
        expect |= zero(*nbs.grade_cells(NB2))
    set_answer(part[NB3], "greedy_decode", cell(nbs.blank(NB3), "greedy_decode").source)
    set_answer(part[NB3], "rows_742", "rows_742 = 6")
    return Student("partial", part, expect, note="01 done, 02 untouched, 03 half done, 04 not handed in")


def _calling_rows(exercises: list[str], wrong: dict[str, list], spare: dict[str, list]) -> list[dict]:
    """02's implementations, one row (exercise → implementation) per student, so that every function a row
    hands in calls only right ones (``FORWARD_CALLS``): a block or a forward pass calls the student's own
    earlier functions, and its results are a catalogued mistake's (or right) only when those are right.
    A caller gets correct spares for its callees while there are some (the notebook's solution otherwise);
    the wrong callees go to rows of their own, several exercises a row when none calls another."""
    callers = sorted((ex for ex in exercises if ex in FORWARD_CALLS), key=lambda ex: -len(FORWARD_CALLS[ex]))
    rows: list[dict] = []
    for ex in callers:
        for impl in wrong[ex] + [spare[ex].pop(0) for _ in list(spare[ex])]:
            row = {ex: impl}
            for callee in FORWARD_CALLS[ex]:
                row[callee] = spare[callee].pop(0) if spare[callee] else None  # None: the solution, right
            rows.append(row)
    plain = [ex for ex in exercises if ex not in FORWARD_CALLS]
    start = len(rows)
    for ex in plain:
        for k, impl in enumerate(wrong[ex]):
            while start + k >= len(rows):
                rows.append({})
            rows[start + k][ex] = impl
    for ex in plain:  # correct leftovers: right wherever they go
        for row in rows:
            if spare[ex] and row.get(ex) is None:
                row[ex] = spare[ex].pop(0)
    return rows


def catalogued_mistakes(nbs: Notebooks, leave_out: set[str]) -> tuple[list[Student], dict[str, list]]:
    """Every wrong implementation of every exercise (but ``leave_out``), one per exercise per student (02, 03
    and 04 handed in); an exercise with fewer wrong ones gets correct ones in the remaining students. 02's
    exercises are laid out by ``_calling_rows``: in a student whose earlier function is wrong, a function
    that calls it is left as released (unanswered), for its results could be no catalogued mistake's.
    Returns the students and, per exercise, the correct implementations not used yet."""
    wrong = {ex: [i for i in implementations(ex, "wrong") if i.id not in leave_out] for ex in NOTEBOOK_OF}
    spare = {ex: implementations(ex, "correct") for ex in NOTEBOOK_OF}
    in_nb2 = [ex for ex in NOTEBOOK_OF if NOTEBOOK_OF[ex].removesuffix(".ipynb") == NB2]
    rows = _calling_rows(in_nb2, wrong, spare) if NB2 in nbs.names else []
    students = []
    for k in range(max([len(v) for ex, v in wrong.items() if ex not in in_nb2] + [len(rows)])):
        notebooks = {NB2: nbs.solved(NB2), NB3: nbs.solved(NB3), NB4: nbs.solved(NB4)}  # 02: the forward pass
        expect, used = {}, []
        row = rows[k] if k < len(rows) else {}
        for ex in NOTEBOOK_OF:
            if ex in in_nb2:
                impl = row.get(ex)
            else:
                impl = wrong[ex][k] if k < len(wrong[ex]) else (spare[ex].pop(0) if spare[ex] else None)
            if impl is None:
                continue
            nb_name = NOTEBOOK_OF[ex].removesuffix(".ipynb")
            set_answer(notebooks[nb_name], ex, impl.source)
            pts = nbs.grade_cells(nb_name)[EXERCISE_TEST[ex]]
            expect[EXERCISE_TEST[ex]] = (pts if impl.correct else 0.0, "graded")
            used.append(impl.id)
        wrong_here = {i.split("__")[0] for i in used if "__wrong__" in i}
        for ex, calls in FORWARD_CALLS.items():  # 02: a function that calls a wrong one is left as released
            if wrong_here & set(calls):
                if ex in row:
                    raise AssertionError(f"impl-{k:02d}: {row[ex].id} calls a wrong {sorted(wrong_here & set(calls))}")
                set_answer(notebooks[NB2], ex, cell(nbs.blank(NB2), ex).source)
                expect[EXERCISE_TEST[ex]] = (0.0, "graded")  # expected_now: unanswered
        students.append(Student(f"impl-{k:02d}", notebooks, expect, note=", ".join(used)))
    return students, spare


# ------------------------------------------------------------------ the students whose files are wrong
def half_a_notebook(m: Materials) -> Student:
    """04 cut in half (not valid JSON) beside a solved 03."""
    text = json.dumps(m.nbs.solved(NB4), indent=1)
    return Student(
        "invalid-json",
        {NB3: m.solved(NB3)},
        failed(*m.nbs.grade_cells(NB4)),
        raw={f"{NB4}.ipynb": text[: len(text) // 2]},
        handed_in=(NB3, NB4),
        findings=[(NB4, "notebook", "not valid JSON")],
        note="04 cut in half (invalid JSON): failed with the reason, 03 graded",
    )


def empty_folder() -> Student:
    """A hand-in folder with nothing in it: every notebook missing."""
    return Student("empty-folder", {}, {}, note="an empty folder: everything missing")


def renamed_copy(m: Materials) -> Student:
    """03 handed in under the name a second download gets, ``<name> (1).ipynb``."""
    return Student(
        "renamed",
        {f"{NB3} (1).ipynb": m.solved(NB3), NB4: m.solved(NB4)},
        {},
        handed_in=(NB3, NB4),
        findings=[(NB3, "notebook", "handed in as")],
        note="03 saved as a copy with another name",
    )
