"""The instructor's whole term (issue 19): course.toml, lateness, changes mid-term, feedback and grades
back where they belong.

Fast parts: course.toml read and refused, late penalties, restore against the release a student
started from, hand edits of generated test cells refused, answer keys followed by the visible checks,
the roster, the Canvas and Moodle downloads sorted into submitted/ (small course of
tests/simclass/minicourse.py, real nbgrader). Graded parts: release_feedback with students who handed in
by different routes (small course, results stored without a kernel: tests/simclass/stored.py), and the term of a
class of six with the real notebooks (``test_a_term_of_six``): a due date, 10 % per day, one student late by a day
and a half, one with an extension; after the first grading (stored) the instructor changes one exercise's points,
fixes one hidden case and one answer key; the regrade (real nbgrader, in the sandbox) touches exactly the affected
students, finds no tampering, and the totals, the page per student, the Canvas and the Moodle CSV carry the right
numbers.
"""

from __future__ import annotations

import copy
import csv
import json
import re
import shutil
import subprocess
import sys
import zipfile
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from simclass.built import copy_course
from simclass.lms_import import LmsUser, canvas_import, moodle_import
from simclass.minicourse import NAME, make_course, mini_notebook
from simclass.notebooks import Notebooks, set_answer, write_submission
from simclass.stored import store

from whole_transformer.course.answers import check_data, hidden_cells, hidden_tests
from whole_transformer.course.answers import reference as ref
from whole_transformer.course.autograder.assignment import changed_notebooks
from whole_transformer.course.autograder.autograde import autograde
from whole_transformer.course.autograder.collect_zip import collect_zip
from whole_transformer.course.autograder.restore import restore, started_from
from whole_transformer.course.cells import grade_id as gid
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.publish.release import out_of_step, release
from whole_transformer.course.reports.feedback import feedback
from whole_transformer.course.reports.grades import grades
from whole_transformer.course.term.late import lateness
from whole_transformer.course.term.roster import import_roster, read_roster
from whole_transformer.course.term.settings import SettingsError, load, parse
from whole_transformer.course.term.times import read_timestamp
from whole_transformer.questions import Question, _load

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ course.toml
TERM = """
[assignment]
due = "2026-10-16 23:59"
timezone = "Europe/Berlin"
[late]
policy = "per_day"
penalty = 10
grace_minutes = 15
cap = 30
[extensions]
dee = "+2d"
eve = "2026-10-20 12:00"
[points]
test_next_token = 4
"""


def test_course_toml_is_read_as_data():
    s = parse(TERM)
    assert s.due == datetime(2026, 10, 16, 21, 59, tzinfo=UTC)  # CEST is UTC+2 in October
    assert s.due_for("dee") == s.due + timedelta(days=2)
    assert s.due_for("eve").isoformat() == "2026-10-20T12:00:00+02:00"
    assert s.due_for("ada") == s.due
    assert s.points == {"test_next_token": 4.0}
    assert s.late.percent(timedelta(minutes=15)) == 0  # grace
    assert s.late.percent(timedelta(minutes=16)) == 10  # a started day
    assert s.late.percent(timedelta(days=1, hours=12)) == 20
    assert s.late.percent(timedelta(days=9)) == 30  # the cap
    hourly = parse('[assignment]\ndue = "2026-10-16 23:59"\n[late]\npolicy = "per_hour"\npenalty = 5\n')
    assert hourly.late.percent(timedelta(hours=2, minutes=1)) == 15 and hourly.late.cap is None
    assert hourly.late.percent(timedelta(days=3)) == 100
    assert parse("").due is None and parse("").late.percent(timedelta(days=30)) == 0


def test_the_repository_course_toml_is_valid_and_documents_its_sections():
    s = load(Course(REPO))
    assert s.path == REPO / "course.toml"
    head = (REPO / "course.toml").read_text()
    for section in ("[assignment]", "[late]", "[extensions]", "[points]", "grace_minutes", "cap", "timezone"):
        assert f"# {section}" in head or f"#   {section}" in head or section in head
    # [partial_credit] is documented with the module that reads it (answers/diagnose.py, not the reports)
    assert "# [partial_credit." in head and "answers/diagnose.py" in head


@pytest.mark.parametrize(
    "text, words",
    [
        ('[assignment]\ntimezone = "Mars/Olympus"', "unknown time zone 'Mars/Olympus'"),
        ('[assignment]\ndue = "next friday"', "cannot read 'next friday' as a date"),
        ('[late]\npolicy = "per_week"', "'per_week' is not a policy; use one of none, per_day, per_hour"),
        ('[late]\npolicy = "per_day"\npenalty = 10', "a late policy needs a due date"),
        ('[assignment]\ndue = "2026-10-16 23:59"\n[late]\npolicy = "per_day"', "needs a penalty"),
        ('[assignment]\ndue = "2026-10-16 23:59"\n[late]\npolicy = "per_day"\npenalty = 120', "out of range"),
        ('[extensions]\nada = "+2d"', "has no due date"),
        ("[deadline]\ndue = 1", "unknown section(s) deadline"),
        ('[assignment]\ndue_date = "2026-10-16"', "unknown key(s) due_date"),
        ('[points]\ntest_next_token = "four"', "expected a number"),
        ("[assignment\n", "is not valid TOML"),
    ],
)
def test_a_bad_course_toml_says_what_is_wrong(text, words):
    with pytest.raises(SettingsError) as e:
        parse(text)
    assert words in str(e.value) and "course.toml" in str(e.value)


def test_lateness_says_on_time_late_by_how_much_or_extension(tmp_path):
    s = parse(TERM)
    due = s.due
    assert lateness(s, "ada", due - timedelta(hours=1)).describe() == "on time"
    late = lateness(s, "fay", due + timedelta(days=1, hours=12))
    assert late.describe() == "late by 1 d 12 h (-20 %)" and late.apply(20) == 16
    assert (
        lateness(s, "fay", due + timedelta(minutes=10)).describe()
        == "late by 10 min (within the grace period, no penalty)"
    )
    assert lateness(s, "dee", due + timedelta(days=1)).describe() == "on time (extension to 2026-10-18 23:59 CEST)"
    assert "late by 1 d" in lateness(s, "dee", due + timedelta(days=3, hours=1)).describe()
    assert lateness(s, "gus", None).describe().startswith("no hand-in time")
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "timestamp.txt").write_text("2026-10-18 09:59:00.000000 UTC")
    assert read_timestamp(folder) == datetime(2026, 10, 18, 9, 59, tzinfo=UTC)
    (folder / "timestamp.txt").write_text("yesterday-ish")
    with pytest.raises(ValueError, match="cannot read the hand-in time"):
        read_timestamp(folder)


# ------------------------------------------------------------------------------ changes mid-term are not tampering
def _set_points(nb, grade_id, points):
    for c in nb.cells:
        if gid(c) == grade_id:
            c.metadata["nbgrader"]["points"] = points
    return nb


def _cell(nb, grade_id):
    return next(c for c in nb.cells if gid(c) == grade_id)


def test_an_instructor_change_after_release_is_no_finding():
    first = mini_notebook()
    second = _set_points(copy.deepcopy(first), "test_double_small", 2)
    _cell(second, "test_double_neg").source = _cell(second, "test_double_neg").source.replace("-3", "-4")
    submitted = copy.deepcopy(first)
    _cell(submitted, "double").source = "def double(x):\n    return 2 * x"
    # without the history, both changes look like the student's doing (the bug of the issue)
    _, findings = restore(copy.deepcopy(submitted), second)
    assert {f.cell for f in findings} == {"test_double_small", "test_double_neg"}
    started = started_from(submitted, [first, second])
    assert started is first
    nb, findings = restore(copy.deepcopy(submitted), second, started)
    assert findings == []
    assert _cell(nb, "test_double_small").metadata["nbgrader"]["points"] == 2  # graded as it is now
    assert "-4" in _cell(nb, "test_double_neg").source
    assert _cell(nb, "double").source == "def double(x):\n    return 2 * x"
    # what the student did is still found, judged against their own release
    tampered = copy.deepcopy(submitted)
    _set_points(tampered, "test_double_small", 9)
    _, findings = restore(tampered, second, started_from(tampered, [first, second]))
    assert [(f.cell, f.finding) for f in findings] == [
        ("test_double_small", "test cell retagged (points 1.0 → 9.0); restored")
    ]


def test_a_cell_added_to_the_release_later_is_not_a_deletion():
    first = mini_notebook()
    second = copy.deepcopy(first)
    extra = copy.deepcopy(_cell(second, "test_double_neg"))
    extra.metadata["nbgrader"]["grade_id"] = "test_double_zero"
    extra.source = extra.source.replace("-3", "0")
    second.cells.insert(-1, extra)
    nb, findings = restore(copy.deepcopy(first), second, started_from(first, [first, second]))
    assert findings == [] and "test_double_zero" in [gid(c) for c in nb.cells]


def test_a_change_regrades_only_those_who_handed_that_notebook_in():
    old = "cfg|01-a=x;02-b=y"
    assert changed_notebooks(old, "cfg|01-a=x;02-b=z") == {"02-b"}
    assert changed_notebooks(old, old) == set()
    assert changed_notebooks(old, "other|01-a=x;02-b=y") is None  # nbgrader_config.py changed: everyone
    assert changed_notebooks("an-old-digest", old) is None


# ------------------------------------------------------------------------------ one home for every test and key
@pytest.mark.package  # works the visible checks' data and the mistake table out
@pytest.mark.xdist_group("mistake-table")  # builds the mistake table: on one worker, the samplers draw once
def test_the_repository_is_in_step():
    """make release has nothing to bring in step: points, hidden tests, the visible checks' data (make test
    fails while anything is out of step)."""
    assert out_of_step(Course(REPO)) == []


@pytest.mark.package  # works the mistake table out (once: make release's check, the writing and the check after)
@pytest.mark.xdist_group("mistake-table")  # builds the mistake table: on one worker, the samplers draw once
def test_a_fixed_hidden_case_brings_the_mistake_table_out_of_step(table_built_once, monkeypatch, tmp_path, request):
    """A hidden case the instructor fixes changes what each catalogued mistake returns on the cases: make release
    reports the mistake table out of step and works it out again, so grading still names the mistakes (once written,
    the table is current: what make release's list says of it, ``diagnose.is_current``). The visible checks' data,
    which the fixed case does not touch, is taken as current here (test_the_repository_is_in_step works it out)."""
    from whole_transformer.course.answers import diagnose

    monkeypatch.setattr(check_data, "is_current", lambda: True)

    table = tmp_path / diagnose.TABLE_FILE.name
    shutil.copy(diagnose.TABLE_FILE, table)
    monkeypatch.setattr(diagnose, "TABLE_FILE", table)
    diagnose.mistake_table.cache_clear()
    request.addfinalizer(diagnose.mistake_table.cache_clear)  # the package's table again after the test
    _fix_one_make_xy_case(monkeypatch)
    assert f"the mistake table {table.name} is out of date" in out_of_step(Course(REPO))
    diagnose.write()
    assert diagnose.is_current()


def _edit_cell(path: Path, grade_id: str, change) -> None:
    nb = nbformat.read(path, as_version=4)
    c = _cell(nb, grade_id)
    c.source = change(c.source)
    nbformat.write(nb, path)


def test_a_hand_edited_hidden_test_is_refused_naming_its_home(released_course, tmp_path):
    course = copy_course(released_course, tmp_path / "course")
    path = course.source / "04-how-it-learned.ipynb"
    before = path.read_text()
    _edit_cell(path, "test_make_xy", lambda s: s.replace("task.sequence(999)", "task.sequence(998)"))
    assert hidden_cells.hand_edited(course.source) == [
        ("04-how-it-learned.ipynb", "test_make_xy", "whole_transformer/course/answers/hidden_tests.py (make_xy_cases)")
    ]
    with pytest.raises(hidden_cells.HandEdited) as e:
        hidden_cells.write(course.source)
    assert (
        "test_make_xy in 04-how-it-learned.ipynb: edit whole_transformer/course/answers/hidden_tests.py "
        "(make_xy_cases) instead" in str(e.value)
    )
    assert path.read_text() != before  # refused: nothing was overwritten
    assert (
        "hidden test test_make_xy edited by hand in 04-how-it-learned.ipynb: edit whole_transformer/course/"
        "answers/hidden_tests.py (make_xy_cases) instead" in out_of_step(course, questions_data=_keys(course))
    )
    done = subprocess.run(
        [sys.executable, "-m", "whole_transformer.course", "--root", str(course.root), "hidden-tests"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1
    assert (
        "edited by hand: test_make_xy in 04-how-it-learned.ipynb; edit whole_transformer/course/answers/"
        "hidden_tests.py (make_xy_cases) instead" in done.stdout
    )
    assert hidden_cells.write(course.source, discard=True) == ["test_make_xy"]
    assert path.read_text() == before and hidden_cells.hand_edited(course.source) == []


def test_a_changed_answer_key_moves_the_visible_check(released_course, tmp_path):
    data = tmp_path / "questions.json"
    shutil.copy(check_data.QUESTIONS_DATA, data)
    source = tmp_path / "source"
    shutil.copytree(Course(released_course).source, source)
    assert check_data.questions_out_of_step(source, data) == []
    _edit_cell(source / "01-whole-machine.ipynb", "tokens_905", lambda s: s.replace("tokens_905 = 8", "tokens_905 = 7"))
    with pytest.raises(ValueError) as e:  # 7 is a hinted wrong answer: the hints must change first
        check_data.questions_planned(source, data)
    assert "hints at as a wrong answer: edit the hints of tokens_905 in" in str(e.value) and str(data) in str(e.value)
    catalogue = json.loads(data.read_text())
    catalogue["tokens_905"]["hints"] = [h for h in catalogue["tokens_905"]["hints"] if h[0] != 7]
    data.write_text(json.dumps(catalogue, indent=1))
    assert check_data.questions_out_of_step(source, data) == ["tokens_905"]
    assert check_data.write_questions(source, data) == ["tokens_905"]
    q = _questions(data)["tokens_905"]
    assert q.feedback(7) == (True, "✓ Right.") and q.feedback(8)[0] is False
    assert check_data.questions_out_of_step(source, data) == []


def _keys(course: Course) -> Path:
    """The answer keys of a test's course (``built.copy_course`` copies them beside it)."""
    return course.root.parent / f"{course.root.name}-questions.json"


def _questions(path: Path) -> dict[str, Question]:
    import whole_transformer.questions as qs

    old = qs.DATA
    qs.DATA = path
    try:
        return _load()
    finally:
        qs.DATA = old


# ------------------------------------------------------------------------------ roster and LMS downloads
ROSTER = """id,first_name,last_name,email,lms_user_id
ada,Ada,Lovelace,ada@example.org,1001
bo,Bo,Diddley,bo@example.org,1002
cy,Cy,Twombly,cy@example.org,1003
"""


def test_a_bad_roster_is_refused_whole(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("name,email\nAda,ada@example.org\n")
    with pytest.raises(ValueError, match="no id column; the header must name one of id, student_id, username"):
        read_roster(p)
    p.write_text("Student ID,First Name\nada,Ada\nbo b,Bo\nada,Ada again\n")
    with pytest.raises(ValueError) as e:
        read_roster(p)
    assert "line 3: id 'bo b'" in str(e.value) and "line 4: id 'ada' again (first on line 2)" in str(e.value)
    with pytest.raises(ValueError, match="no file"):
        read_roster(tmp_path / "missing.csv")


def _zip(path: Path, files: dict[str, str], when=(2026, 10, 16, 23, 30, 0)) -> Path:
    """A download whose entries carry their own times, a minute apart from ``when`` on (entries that all share
    one time are a download without times: collect-zip takes no time from it)."""
    with zipfile.ZipFile(path, "w") as z:
        for minute, (name, text) in enumerate(files.items()):
            z.writestr(zipfile.ZipInfo(name, date_time=(*when[:4], when[4] + minute, when[5])), text)
    return path


def test_roster_then_canvas_and_moodle_downloads_are_sorted_into_submitted(released_mini, tmp_path):
    course = copy_course(released_mini, tmp_path / "course")
    root = course.root
    roster = tmp_path / "students.csv"
    roster.write_text(ROSTER)
    assert import_roster(course, roster, log=lambda *a: None) == (3, 0)
    assert import_roster(course, roster, log=lambda *a: None) == (0, 3)
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        ada = gb.find_student("ada")
        assert (ada.first_name, ada.last_name, ada.email, ada.lms_user_id) == (
            "Ada",
            "Lovelace",
            "ada@example.org",
            "1001",
        )
    nb = (root / "release" / ASSIGNMENT / f"{NAME}.ipynb").read_text()
    canvas = _zip(
        tmp_path / "canvas.zip",
        {
            f"lovelaceada_1001_5551_{NAME}.ipynb": nb,
            f"diddleybo_late_1002_5552_{NAME}-1.ipynb": nb,  # a resubmission, handed in late
            "twomblycy_1003_5553_notes.txt": "my notes",  # a stray file
        },
    )
    got = collect_zip(course, canvas, log=lambda *a: None)
    placed, unplaced = got.placed, got.unplaced
    assert placed == {"ada": [f"{NAME}.ipynb"], "bo": [f"{NAME}.ipynb"]}
    assert [n for n, _ in unplaced] == ["twomblycy_1003_5553_notes.txt"]
    assert "'notes.txt' is not one of the notebooks" in unplaced[0][1]
    assert (root / "submitted" / "bo" / ASSIGNMENT / f"{NAME}.ipynb").read_text() == nb
    stamp = read_timestamp(root / "submitted" / "ada" / ASSIGNMENT)
    assert stamp == datetime(2026, 10, 16, 23, 30, tzinfo=UTC)  # the zip's time, in course.toml's zone (UTC)

    moodle = _zip(
        tmp_path / "moodle.zip",
        {
            f"Cy Twombly_88123_assignsubmission_file_/{NAME}.ipynb": nb,
            f"Ada Lovelace_88124_assignsubmission_file_{NAME}.ipynb": nb,  # the older, flat form
            "Zed Unknown_88125_assignsubmission_file_/01-mini.ipynb": nb,  # not in the roster
        },
    )
    lines = []
    got = collect_zip(course, moodle, log=lines.append)
    placed, unplaced = got.placed, got.unplaced
    assert placed == {"ada": [f"{NAME}.ipynb"], "cy": [f"{NAME}.ipynb"]}
    assert [n for n, _ in unplaced] == ["Zed Unknown_88125_assignsubmission_file_/01-mini.ipynb"]
    assert (
        "Moodle participant 88125 (its participant id for this assignment, not an LMS id of the roster): no "
        in (unplaced[0][1])
    )
    assert "no student in the roster has the name 'Zed Unknown'" in unplaced[0][1]
    assert lines[0] == (
        "collect-zip: 2 notebook(s) of 2 student(s) in submitted/ as in this download (kept as "
        "downloaded/whole-transformer/archive/moodle.zip); 1 file(s) not placed"
    )
    assert "  ada: kept 01-mini.ipynb (the same file as handed in 2026-10-16 23:30 UTC)" in lines
    with pytest.raises(ValueError, match="is not a zip file"):
        collect_zip(course, roster)


# ------------------------------------------------------------------------------ a term of six, graded
DUE_UTC = datetime(2026, 10, 16, 21, 59, tzinfo=UTC)  # 23:59 in Berlin (CEST)
TERM_TOML = """[assignment]
due = "2026-10-16 23:59"
timezone = "Europe/Berlin"
[late]
policy = "per_day"
penalty = 10
"""
SIX = """id,first_name,last_name,email,lms_user_id
ada,Ada,Lovelace,ada@example.org,2001
ben,Ben,Empty,ben@example.org,2002
cy,Cy,Twombly,cy@example.org,2003
dee,Dee,Extended,dee@example.org,2004
eve,Eve,Partial,eve@example.org,2005
fay,Fay,Late,fay@example.org,2006
"""
NB1, NB2, NB3, NB4 = "01-whole-machine", "02-microscope", "03-one-word-at-a-time", "04-how-it-learned"


def _stamp(folder: Path, when: datetime) -> None:
    (folder / "timestamp.txt").write_text(when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def _wrong(exercise: str, name: str) -> str:
    """The catalogued mistake ``name`` of ``exercise``, by name: one that fails every hidden case (partial credit
    by kind of case gives any other a share of the points, and the catalogue grows)."""
    from implementations import implementations

    (found,) = [i for i in implementations(exercise, "wrong") if i.name == name]
    return found.source


def _class_of_six(root: Path, nbs: Notebooks) -> None:
    everything = [NB1, NB2, NB3, NB4]
    hand_in = {
        "ada": ({n: nbs.solved(n) for n in everything}, DUE_UTC - timedelta(hours=2)),  # right
        "ben": ({n: nbs.blank(n) for n in everything}, DUE_UTC - timedelta(hours=1)),  # empty
        "cy": ({n: nbs.solved(n) for n in everything}, DUE_UTC - timedelta(days=1)),  # a typical bug
        "dee": ({n: nbs.solved(n) for n in everything}, DUE_UTC + timedelta(days=1)),  # another; an extension later
        "eve": ({NB2: nbs.solved(NB2)}, DUE_UTC - timedelta(minutes=5)),  # partial: one notebook only
        "fay": ({n: nbs.solved(n) for n in everything}, DUE_UTC + timedelta(days=1, hours=12)),  # late
    }
    set_answer(hand_in["cy"][0][NB3], "next_token", _wrong("next_token", "argmin"))
    set_answer(hand_in["dee"][0][NB4], "make_xy", _wrong("make_xy", "changes_seq"))
    for student, (notebooks, when) in hand_in.items():
        _stamp(write_submission(root, student, notebooks), when)


def _expected(nbs: Notebooks, key_changed: bool) -> dict[str, dict[str, float]]:
    """student → notebook → points the tests give."""
    pts = {n: nbs.grade_cells(n) for n in nbs.names}
    full = {n: sum(p.values()) for n, p in pts.items()}
    lost_905 = pts[NB1]["test_tokens_905"] if key_changed else 0.0  # they all answered 8
    solved = {NB1: full[NB1] - lost_905, NB2: full[NB2], NB3: full[NB3], NB4: full[NB4]}
    return {
        "ada": dict(solved),
        "fay": dict(solved),
        "ben": {n: 0.0 for n in nbs.names},
        "cy": {**solved, NB3: full[NB3] - pts[NB3]["test_next_token"]},
        "dee": {**solved, NB4: full[NB4] - pts[NB4]["test_make_xy"]},
        "eve": {NB1: 0.0, NB2: full[NB2], NB3: 0.0, NB4: 0.0},
    }


def _first_grading(nbs: Notebooks) -> dict[str, dict[str, float]]:
    """student → grade_id → the points the class of six got before the changes, in the notebooks each handed in:
    full but for ben's (the release, nothing answered), cy's next_token and dee's make_xy (mistakes failing every
    case)."""
    cells = {n: nbs.grade_cells(n) for n in nbs.names}
    everything = {g: p for n in nbs.names for g, p in cells[n].items()}
    return {
        "ada": dict(everything),
        "ben": {g: 0.0 for g in everything},
        "cy": {**everything, "test_next_token": 0.0},
        "dee": {**everything, "test_make_xy": 0.0},
        "eve": dict(cells[NB2]),
        "fay": dict(everything),
    }


def _term_lines(course: Course, capsys) -> dict[str, str]:
    """student → make term's line of them (their hand-in and its lateness)."""
    from whole_transformer.course.__main__ import main

    capsys.readouterr()
    assert main(["--root", str(course.root), "term"]) == 0
    lines = capsys.readouterr().out.splitlines()
    return {ln.split()[0]: ln for ln in lines if ln.startswith("  ") and ln.split()[0] in SIX}


def _fix_one_make_xy_case(monkeypatch):
    """The instructor fixes a case of test_make_xy where its cases live (hidden_tests.make_xy_cases)."""
    from whole_transformer import grading as g

    original = hidden_tests.CASES["make_xy"]

    def make_xy_cases():
        cases = original()
        cases[0] = hidden_tests._case(
            ref.make_xy,
            cases[0].kind,
            "(task.sequence(5),)",
            "{}",
            {"ints": g.numpy_ints},
            watch=0,
            changed=cases[0].changed,
        )
        return cases

    monkeypatch.setitem(hidden_tests.CASES, "make_xy", make_xy_cases)


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_term_of_six(tmp_path, monkeypatch, capsys, sandbox):
    root = make_course(tmp_path / "course", real_source=True)
    course = Course(root)
    (root / "course.toml").write_text(TERM_TOML)
    qdata = tmp_path / "questions.json"  # the visible checks' answer keys of this course (not the package's)
    shutil.copy(check_data.QUESTIONS_DATA, qdata)
    log: list[str] = []
    release(course, log=log.append, questions_data=qdata)
    assert (root / "release-history" / "001").is_dir()
    roster = tmp_path / "students.csv"
    roster.write_text(SIX)
    assert import_roster(course, roster, log=log.append) == (6, 0)
    nbs = Notebooks(root)
    _class_of_six(root, nbs)

    # ---- who was late, as make term says it; the first grading, stored as it came out (tests/simclass/stored.py)
    said = _term_lines(course, capsys)
    assert said["ada"].endswith("on time") and said["eve"].endswith("on time")
    assert said["fay"].endswith("late by 1 d 12 h (-20 %)")
    assert said["dee"].endswith("late by 1 d (-10 %)")
    for student, points in _first_grading(nbs).items():
        store(course, student, points)

    # ---- mid-term: points of one exercise, one hidden case, one answer key; an extension
    old_points = nbs.grade_cells(NB3)["test_next_token"]
    new_points = old_points + 2
    (root / "course.toml").write_text(
        TERM_TOML + f'[extensions]\ndee = "+2d"\n[points]\ntest_next_token = {new_points:g}\n'
    )
    with pytest.raises(ValueError, match="run make release first"):
        autograde(course, log=lambda *a: None, progress=False)
    _fix_one_make_xy_case(monkeypatch)
    nb4 = course.source / f"{NB4}.ipynb"
    kept = nb4.read_text()
    _edit_cell(nb4, "test_make_xy", lambda s: s.replace("task.sequence(999)", "task.sequence(998)"))
    with pytest.raises(hidden_cells.HandEdited, match=r"make_xy_cases\) instead"):  # the nbgrader way: refused
        release(course, log=lambda *a: None, questions_data=qdata)
    nb4.write_text(kept)
    _edit_cell(course.source / f"{NB1}.ipynb", "tokens_905", lambda s: s.replace("tokens_905 = 8", "tokens_905 = 7"))
    with pytest.raises(ValueError, match="hints at as a wrong answer"):
        release(course, log=lambda *a: None, questions_data=qdata)
    catalogue = json.loads(qdata.read_text())
    catalogue["tokens_905"]["hints"] = [h for h in catalogue["tokens_905"]["hints"] if h[0] != 7]
    qdata.write_text(json.dumps(catalogue, indent=1))
    log.clear()
    release(course, log=log.append, questions_data=qdata)
    assert log[:4] == [
        f"release: points of test_next_token in {NB3}.ipynb: {old_points:g} → {new_points:g} (course.toml)",
        "release: hidden test test_tokens_905 rewritten",
        "release: hidden test test_make_xy rewritten",
        "release: visible check of tokens_905 follows its new answer key (questions.json)",
    ]
    assert (root / "release-history" / "002").is_dir()
    assert _questions(qdata)["tokens_905"].feedback(7) == (True, "✓ Right.")  # the visible check follows
    assert _questions(qdata)["tokens_905"].feedback(8)[0] is False
    nbs = Notebooks(root)
    assert nbs.grade_cells(NB3)["test_next_token"] == new_points

    # ---- the regrade, for real: exactly who handed in a changed notebook (not eve); who was late; no finding
    lines: list[str] = []
    run = autograde(course, jobs=2, log=lines.append, progress=False)
    assert sorted(run.graded) == ["ada", "ben", "cy", "dee", "fay"] and run.skipped == ["eve"]
    assert _csv(root / "integrity-report.csv") == []
    said = {ln.split()[0]: ln for ln in lines if ln.split() and ln.split()[0] in SIX}
    assert said["dee"].endswith("on time (extension to 2026-10-18 23:59 CEST)")
    assert said["fay"].endswith("late by 1 d 12 h (-20 %)") and said["ada"].endswith("on time")

    # ---- an instructor's comment, then grades and feedback
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        comment = gb.find_comment("tokens_905", NB1, ASSIGNMENT, "ada")
        comment.manual_comment = "Count the <eos> again: the key changed to 7."
        gb.db.commit()
    grades(course, log=log.append)
    feedback(course, log=log.append)

    expect = _expected(nbs, key_changed=True)
    maxima = {n: sum(p.values()) for n, p in ((n, nbs.grade_cells(n)) for n in nbs.names)}
    penalty = {"fay": 20.0}
    total = {s: round(sum(v.values()) * (1 - penalty.get(s, 0) / 100), 6) for s, v in expect.items()}
    assert total["ada"] == sum(maxima.values()) - nbs.grade_cells(NB1)["test_tokens_905"]

    exported = {r["student_id"]: r for r in _csv(root / "grades.csv")}  # nbgrader's columns, by course.toml
    assert float(exported["fay"]["late_submission_penalty"]) == pytest.approx(
        float(Decimal(_n(sum(expect["fay"].values()))) - Decimal(_n(total["fay"])))
    )
    assert float(exported["fay"]["score"]) == pytest.approx(total["fay"], abs=0.005)
    assert exported["fay"]["duedate"].startswith("2026-10-16 23:59") and exported["dee"]["duedate"].startswith(
        "2026-10-18 23:59"
    )
    assert float(exported["ada"]["late_submission_penalty"]) == 0.0

    canvas = _csv(root / "canvas-grades.csv")
    assert list(canvas[0]) == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "The whole Transformer (total)",
        NB1,
        NB2,
        NB3,
        NB4,
    ]
    assert canvas[0]["Student"] == "Points Possible"
    assert float(canvas[0]["The whole Transformer (total)"]) == sum(maxima.values())
    assert [float(canvas[0][n]) for n in nbs.names] == [maxima[n] for n in nbs.names]
    people = {r["id"]: r for r in csv.DictReader(SIX.splitlines())}
    by_id = {r["ID"]: r for r in canvas[1:]}  # Canvas's user id: the roster's LMS id
    assert sorted(by_id) == sorted(people[s]["lms_user_id"] for s in expect)
    users = [LmsUser(s, p["lms_user_id"], p["email"]) for s, p in people.items()]
    imported = canvas_import(root / "canvas-grades.csv", users)  # as Canvas reads it: every row matched
    assert sorted(imported) == sorted(expect)
    for s, per in expect.items():
        row = by_id[people[s]["lms_user_id"]]
        assert row["Student"] == f"{people[s]['last_name']}, {people[s]['first_name']}"
        assert row["SIS Login ID"] == people[s]["email"] and row["SIS User ID"] == ""
        assert imported[s]["The whole Transformer (total)"] == pytest.approx(total[s]), s
        assert float(row["The whole Transformer (total)"]) == pytest.approx(total[s]), s
        assert [float(row[n]) for n in nbs.names] == [per[n] for n in nbs.names], s

    moodle = _csv(root / "moodle-grades.csv")
    assert list(moodle[0]) == [
        "ID number",
        "Email address",
        "First name",
        "Last name",
        "The whole Transformer (total)",
        NB1,
        NB2,
        NB3,
        NB4,
        "Feedback",
    ]
    for map_from, map_to in (("ID number", "useridnumber"), ("Email address", "useremail")):
        imported = moodle_import(root / "moodle-grades.csv", users, map_from, map_to)  # as Moodle reads it
        assert {s: v["The whole Transformer (total)"] for s, v in imported.items()} == pytest.approx(total)
    by_id = {[s for s in people if people[s]["lms_user_id"] == r["ID number"]][0]: r for r in moodle}
    for s, per in expect.items():
        row = by_id[s]
        assert (row["Email address"], row["First name"], row["Last name"]) == (
            people[s]["email"],
            people[s]["first_name"],
            people[s]["last_name"],
        )
        assert float(row["The whole Transformer (total)"]) == pytest.approx(total[s]), s
        assert [float(row[n]) for n in nbs.names] == [per[n] for n in nbs.names], s
    assert by_id["fay"]["Feedback"].startswith("late by 1 d 12 h (-20 %); ")
    assert by_id["dee"]["Feedback"].startswith("on time (extension to 2026-10-18 23:59 CEST); handed in 2026-10-1")
    assert by_id["ada"]["Feedback"].startswith("on time; handed in 2026-10-1")  # the time used (handin_time.py)

    pages = {p.stem: p.read_text() for p in (root / "feedback-pages").glob("*.html")}
    assert sorted(pages) == sorted(expect)
    for s in expect:
        assert f"Total: {_n(total[s])} / {_n(sum(maxima.values()))}" in pages[s], s
        rows = {}
        for n in nbs.names:  # each row as scored, to the hundredth; together they add up to the score printed
            row = re.search(rf"<td>{n}</td><td>([0-9.]+) / {_n(maxima[n])}</td>", pages[s])
            assert row and abs(float(row.group(1)) - expect[s][n]) < 0.0101, (s, n)
            rows[n] = Decimal(row.group(1))
        assert sum(rows.values()) == Decimal(_n(sum(expect[s].values()))), (s, rows)
    fay_raw = sum(expect["fay"].values())
    less = Decimal(_n(fay_raw)) - Decimal(_n(total["fay"]))  # the parts printed add up to the total printed
    assert f"({_n(fay_raw)} from the tests, less {less.normalize():f} for lateness)" in pages["fay"]
    assert "Handed in: late by 1 d 12 h (-20 %)." in pages["fay"]

    # the class report tells who was late by course.toml too (dee's extension makes her on time)
    from whole_transformer.course.reports.insights import insights

    insights(course, log=lambda *a: None)
    late = [(r["item"], r["detail"]) for r in _csv(root / "insights.csv") if r["section"] == "late"]
    assert late == [("fay", "late by 1 d 12 h (-20 %)")], late
    assert "Handed in: on time (extension to 2026-10-18 23:59 CEST)." in pages["dee"]
    assert "Count the &lt;eos&gt; again: the key changed to 7." in pages["ada"]
    assert "not handed in or not graded" in pages["eve"] and pages["eve"].count("class='wt-notebook'") == 1
    assert pages["ada"].count("class='wt-notebook'") == 4

    # nothing of a student's in git: after the whole term, git offers to add only the course itself
    offered = _untracked(root)
    assert offered and not [p for p in offered if not p.startswith(COURSE_FILES)], offered


def _n(x: float) -> str:
    """A score as the reports print it: to the hundredth, half up, no trailing zeros."""
    from whole_transformer.course.reports.lms import _n as printed

    return printed(x)


# ------------------------------------------------------------------------------ release_feedback, mixed routes
def test_release_feedback_with_students_who_handed_in_another_way(released_mini, tmp_path):
    """Results stored without a kernel (tests/simclass/stored.py); that autograde keeps the exchange's
    submission_secret.txt for release_feedback is tests/test_course_exchange.py's, graded for real."""
    from simclass.local_exchange import nbgrader
    from simclass.stored import store

    from whole_transformer.course.layout import COURSE_ID

    course = copy_course(released_mini, tmp_path / "course")
    root = course.root
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    nbgrader(["release_assignment", ASSIGNMENT, "--force"], root, exchange)
    home = tmp_path / "ada"
    home.mkdir()
    nbgrader(["fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    nbgrader(["collect", ASSIGNMENT], root, exchange)
    released = nbformat.read(root / "release" / ASSIGNMENT / f"{NAME}.ipynb", as_version=4)
    write_submission(root, "bo", {NAME: released})  # handed in by git or an LMS: no submission secret
    for student in ("ada", "bo"):
        store(course, student)
    feedback(course, log=lambda *a: None)
    done = nbgrader(["release_feedback", ASSIGNMENT], root, exchange)
    assert "not released through the exchange (handed in another way, no submission_secret.txt): bo" in done.stderr
    nbgrader(["fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    assert len(list((home / ASSIGNMENT / "feedback").glob(f"*/{NAME}.html"))) == 1
    assert (root / "feedback-pages" / "bo.html").is_file()


# ------------------------------------------------------------------------------ nothing of a student's in git
def _untracked(root: Path) -> list[str]:
    """What ``git status`` in ``root`` (a course folder with the repository's .gitignore) would offer to add."""
    shutil.copy(REPO / ".gitignore", root / ".gitignore")
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True, check=True
    )
    return [line[3:] for line in done.stdout.splitlines()]


#: what an instructor commits of a course folder: the course itself, nothing about students
COURSE_FILES = (".gitignore", "course.toml", "nbgrader_config.py", "source/", "release/", "release-history/")


def test_every_file_the_commands_write_about_students_is_ignored_by_git(tmp_path):
    from whole_transformer.course.reports import ABOUT_STUDENTS

    root = tmp_path / "course"
    for path, _ in ABOUT_STUDENTS:
        target = root / path / "ada" / "note.txt" if path.endswith("/") else root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("about ada")
    (root / "course.toml").write_text("")
    assert _untracked(root) == [".gitignore", "course.toml"]


# ------------------------------------------------------------------------------ totals that add up as printed
class _Late:
    """A lateness as term/late.py gives one: a penalty in per cent, applied to the tests' score."""

    def __init__(self, percent: float):
        self.percent, self.due, self.handin = percent, None, None

    def apply(self, score: float) -> float:
        return score * (1 - self.percent / 100)


@pytest.mark.parametrize(
    "notebooks, percent",
    [
        ({"01": 7.2489, "02": 5.4977, "03": 6.0, "04": 4.0}, 30.0),  # 22.7466 less 30 %: the 15.93 / 22.75
        ({"01": 1.005, "02": 2.675, "03": 0.125, "04": 3.3333}, 10.0),
        ({"01": 1 / 3, "02": 1 / 3, "03": 1 / 3, "04": 0.0}, 0.0),
        ({"01": 2.5, "02": 2.5, "03": 2.5, "04": 2.5}, 25.0),
    ],
)
def test_every_printed_part_adds_up_to_the_printed_total(notebooks, percent):
    from decimal import Decimal

    from whole_transformer.course.reports.lms import _n
    from whole_transformer.course.reports.totals import StudentTotal

    t = StudentTotal("ada", notebooks={n: (s, 10.0) for n, s in notebooks.items()})
    t.lateness = _Late(percent) if percent else None  # type: ignore[assignment]
    shown = t.printed()
    assert shown.final == Decimal(_n(t.final))  # the page prints what the LMS files hold
    assert shown.score - shown.penalty == shown.final  # "Total: F (S from the tests, less P for lateness)"
    assert sum(shown.notebooks.values()) == shown.score  # the notebook rows add up to the tests' score
    assert all(abs(shown.notebooks[n] - Decimal(repr(s))) < Decimal("0.01") for n, s in notebooks.items())
    if notebooks["01"] == 7.2489:
        assert (_n(shown.final), _n(shown.score), _n(shown.penalty)) == ("15.92", "22.75", "6.83")
