"""The term without surprises (issue 30): nothing handed in is lost, nothing an instructor sets is silently
ignored. Each surprise an instructor met in a term is a step here, with the line the course now says and a
check that nothing was lost: a second LMS zip with one resubmitted notebook, a forged zip, names that match
nobody, a stale hidden test, an expected value planted in the release, a refused feedback run.

The course here is small (tests/simclass/minicourse.py's notebook under the four real notebooks' names, real
nbgrader); the term of the real notebooks, graded, is tests/test_term.py's.
"""

from __future__ import annotations

import json
import shutil
import stat
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from simclass.built import copy_course, release_course
from simclass.minicourse import make_course, mini_notebook

from whole_transformer.course.__main__ import main
from whole_transformer.course.autograder.collect_zip import collect_zip
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.term.handin_merge import read_times
from whole_transformer.course.term.roster import import_roster
from whole_transformer.course.term.times import read_timestamp

NBS = ["01-whole-machine", "02-microscope", "03-one-word-at-a-time", "04-how-it-learned"]
ROSTER = """id,first_name,last_name,email,lms_user_id
ada,Ada,Lovelace,ada@example.org,1001
bo,Bo,Diddley,bo@example.org,1002
"""


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    root = make_course(tmp_path_factory.mktemp("surprises") / "course", {n: mini_notebook() for n in NBS})
    course = Course(root)
    release_course(course)  # with answer keys of its own (a copy of the package's)
    roster = root.parent / "students.csv"
    roster.write_text(ROSTER)
    import_roster(course, roster, log=lambda *a: None)
    return root


@pytest.fixture
def course(released, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(released, root)
    return Course(root)


def _zip(path: Path, files: dict[str, bytes | str], when=(2026, 10, 16, 20, 0, 0), links=()) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(zipfile.ZipInfo(name, date_time=when), text)
        for name, target in links:
            info = zipfile.ZipInfo(name, date_time=when)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return path


def _released(course: Course, name: str, mark: str = "") -> str:
    text = (course.release / f"{name}.ipynb").read_text()
    return text.replace("A tiny notebook.", f"A tiny notebook. {mark}") if mark else text


def test_a_second_zip_with_one_resubmitted_notebook_keeps_the_other_three(course, tmp_path):
    first = {f"diddleybo_1002_7001_{n}.ipynb": _released(course, n, "first") for n in NBS}
    collect_zip(course, _zip(tmp_path / "submissions.zip", first), log=lambda *a: None)
    folder = course.submitted / "bo" / ASSIGNMENT
    assert sorted(p.stem for p in folder.glob("*.ipynb")) == NBS
    lines: list[str] = []
    second = {f"diddleybo_late_1002_7002_{NBS[1]}-1.ipynb": _released(course, NBS[1], "again")}
    out = collect_zip(course, _zip(tmp_path / "submissions.zip", second, when=(2026, 10, 17, 9, 30, 0)), lines.append)
    said = next(ln for ln in lines if ln.startswith("  bo: "))
    print("\n".join(lines))
    assert said == (
        f"  bo: replaced {NBS[1]}.ipynb: 2026-10-16 20:00 UTC → 2026-10-17 09:30 UTC; kept "
        f"{NBS[0]}.ipynb, {NBS[2]}.ipynb, {NBS[3]}.ipynb (not in this download)"
    )
    assert out.placed == {"bo": [f"{NBS[1]}.ipynb"]}
    assert sorted(p.stem for p in folder.glob("*.ipynb")) == NBS  # nothing lost
    assert "again" in (folder / f"{NBS[1]}.ipynb").read_text()
    assert all("first" in (folder / f"{n}.ipynb").read_text() for n in (NBS[0], NBS[2], NBS[3]))
    assert read_timestamp(folder) == datetime(2026, 10, 17, 9, 30, tzinfo=UTC)  # the newest file's time
    archive = sorted(p.name for p in (course.root / "downloaded" / ASSIGNMENT / "archive").iterdir())
    assert archive == ["submissions-2.zip", "submissions.zip"]  # every download kept
    times = read_times(course)["bo"]
    assert times[f"{NBS[0]}.ipynb"]["time"] == "2026-10-16 20:00:00 UTC"
    assert times[f"{NBS[1]}.ipynb"]["time"] == "2026-10-17 09:30:00 UTC"  # the LMS's own time, per file

    # an older download again: nothing in submitted/ changes, and it says so with both times
    lines.clear()
    older = {f"diddleybo_1002_7001_{NBS[1]}.ipynb": _released(course, NBS[1], "first")}
    collect_zip(course, _zip(tmp_path / "old.zip", older), lines.append)
    assert f"kept {NBS[1]}.ipynb handed in 2026-10-17 09:30 UTC (this one, 2026-10-16 20:00 UTC, is not newer)" in (
        "\n".join(lines)
    )
    assert "again" in (folder / f"{NBS[1]}.ipynb").read_text()

    # replacing a whole hand-in only when asked, with a line that says so; the old one kept aside
    lines.clear()
    assert main(["--root", str(course.root), "collect-zip", str(tmp_path / "old.zip"), "--replace"]) == 0
    assert [p.name for p in folder.glob("*.ipynb")] == [f"{NBS[1]}.ipynb"]
    aside = list((course.root / "downloaded" / ASSIGNMENT / "replaced").glob(f"*/bo/{NBS[0]}.ipynb"))
    assert len(aside) == 1 and "first" in aside[0].read_text()


def test_a_forged_zip_is_refused_entry_by_entry_and_the_honest_ones_placed(course, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    forged = _zip(
        tmp_path / "forged.zip",
        {
            f"lovelaceada_1001_7101_{NBS[0]}.ipynb": _released(course, NBS[0]),  # honest
            f"../../../outside/{NBS[1]}.ipynb": "climbs out",
            f"/{outside}/abs.ipynb": "absolute",
            f"lovelaceada_1001_7102_..\\..\\{NBS[2]}.ipynb": "climbs out, Windows style",
        },
        links=[(f"lovelaceada_1001_7103_{NBS[3]}.ipynb", "/etc/passwd")],
    )
    status = main(["--root", str(course.root), "collect-zip", str(forged)])
    out = capsys.readouterr()
    print(out.out)
    assert status == 0 and "Traceback" not in out.out + out.err
    assert f"REFUSED '../../../outside/{NBS[1]}.ipynb': its path climbs out with '..'" in out.out
    assert f"REFUSED '{outside}/abs.ipynb': an absolute path" in out.out or f"REFUSED '/{outside}" in out.out
    assert f"REFUSED 'lovelaceada_1001_7103_{NBS[3]}.ipynb': a symbolic link" in out.out
    assert "4 entry(ies) refused" in out.out
    assert list(outside.iterdir()) == []  # nothing written outside
    written = [p for p in tmp_path.rglob("*") if p.is_file() and "course" not in p.relative_to(tmp_path).parts[:1]]
    assert sorted(p.name for p in written) == ["forged.zip"]
    ada = course.submitted / "ada" / ASSIGNMENT
    assert [p.name for p in ada.glob("*.ipynb")] == [f"{NBS[0]}.ipynb"]  # the honest entry placed
    assert not any(p.is_symlink() for p in course.root.rglob("*"))
    assert json.loads((ada / f"{NBS[0]}.ipynb").read_text())["nbformat"] == 4


# ------------------------------------------------------------------------------ what students receive holds no answer
def _pad_7_case():
    """The hidden case of masked_loss with pad 7, in hidden_tests.py's notation, and its expected loss."""
    from whole_transformer.course.answers import hidden_tests

    case = next(c for c in hidden_tests.CASES["masked_loss"]() if c.kwargs == "{'pad': 7}")
    return case, repr(case.want)


def test_an_expected_value_planted_in_a_markdown_cell_is_refused_by_make_release(released_course, tmp_path):
    import nbformat

    course = copy_course(released_course, tmp_path / "course")  # the real notebooks released
    nb4 = course.source / f"{NBS[3]}.ipynb"
    nb = nbformat.read(nb4, as_version=4)
    case, want = _pad_7_case()
    note = f"*Instructor's note:* with pad 7 and the targets of {case.args} the loss is {want}."
    nb.cells.insert(3, nbformat.v4.new_markdown_cell(note))
    nbformat.write(nb, nb4)
    released = (course.release / f"{NBS[3]}.ipynb").read_bytes()
    with pytest.raises(ValueError) as e:  # make release: "error: " and this message, exit status 1
        release_course(course)
    err = str(e.value)
    print(err)
    assert "make release refused: what students would receive shows what only the grader may know:" in err
    line = next(ln for ln in err.splitlines() if f"{NBS[3]}.ipynb, cell 4 (markdown, " in ln)  # the cell named
    assert f"expected value {want!r}" in line, line  # the full value, worked out anew, of the value stored
    assert (course.release / f"{NBS[3]}.ipynb").read_bytes() == released  # release/ left as it was
    assert sorted(p.name for p in course.release.parent.iterdir()) == [ASSIGNMENT]


def test_the_feedback_check_finds_a_hidden_case_in_hidden_tests_notation_and_a_hidden_input(released_course, tmp_path):
    from whole_transformer.course.reports.feedback import INPUT, remove_leaks, secrets

    course = copy_course(released_course, tmp_path / "course")
    case, _ = _pad_7_case()
    logits, targets = case.args.strip("()").split(", g.array")
    as_written = f'add("{case.kind}", "{logits}", "g.array{targets.rstrip(",")}", "{case.kwargs}")'
    kinds = secrets(course)
    assert kinds[logits.removeprefix("g.")] == INPUT
    files = {}
    for student, text in {
        "ada": f"<p>Your answer missed this case: <code>{as_written}</code></p>",  # hidden_tests.py's notation
        "bo": f"<p>Try <span>{logits.removeprefix('g.')}</span> yourself.</p>",  # one hidden input, alone
        "cy": "<p>Well done: every case passed.</p>",  # honest
    }.items():
        files[student] = course.feedback / student / ASSIGNMENT / f"{NBS[3]}.html"
        files[student].parent.mkdir(parents=True, exist_ok=True)
        files[student].write_text(f"<html><body>{text}</body></html>")
    said: list[str] = []
    removed = remove_leaks(course, list(files.values()), said.append)
    print("\n".join(said))
    assert sorted(removed) == sorted([files["ada"], files["bo"]]) and files["cy"].is_file()
    assert any(ln.startswith(f"REFUSED feedback/bo/{ASSIGNMENT}/{NBS[3]}.html: it showed hidden input") for ln in said)


def test_a_refused_feedback_run_leaves_the_previous_output_as_it_was(released_course, tmp_path, monkeypatch):
    from whole_transformer.course.reports import feedback as fb

    course = copy_course(released_course, tmp_path / "course")
    root = course.root
    course.autograde.mkdir(exist_ok=True)
    before = {}
    for rel in (f"feedback/ada/{ASSIGNMENT}/{n}.html" for n in NBS):
        before[rel] = f"<p>last week's feedback for {rel}</p>"
    before["feedback-pages/ada.html"] = "<p>last week's page</p>"
    for rel, text in before.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _, want = _pad_7_case()

    def generate_feedback(args, cwd):  # nbgrader's generate_feedback, one file of it showing an expected value
        for n in NBS:
            leak = want if n == NBS[3] else ""
            path = root / "feedback" / "ada" / ASSIGNMENT / f"{n}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"<p>this week's feedback {leak}</p>")
        return __import__("subprocess").CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(fb, "run_nbgrader", generate_feedback)
    with pytest.raises(fb.LeakError) as e:
        fb.feedback(course, log=lambda *a: None)
    print(e.value)
    assert f"REFUSED feedback/ada/{ASSIGNMENT}/{NBS[3]}.html: it showed expected value {want!r}" in str(e.value)
    assert "nothing of this run was handed out" in str(e.value) and "REMOVED" not in str(e.value)
    assert "kept: the previous feedback/ and feedback-pages/ are left as they were" in str(e.value)
    after = {
        str(p.relative_to(root)): p.read_text()
        for d in ("feedback", "feedback-pages")
        for p in (root / d).rglob("*.html")
    }
    assert after == before  # the old output intact: nothing new, nothing missing
    assert not list(root.glob(".*previous*"))


# ------------------------------------------------------------------------------ names that must match, checked
def _hand_in(course: Course, student: str, when: datetime) -> None:
    folder = course.submitted / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(course.release / f"{NBS[0]}.ipynb", folder / f"{NBS[0]}.ipynb")
    (folder / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def test_an_extension_for_nobody_and_a_student_off_the_roster_are_said_by_make_term(course, capsys):
    (course.root / "course.toml").write_text(
        '[assignment]\ndue = "2026-10-16"\n[late]\npolicy = "per_day"\npenalty = 10\n[extensions]\nboo = "+2d"\n'
    )
    _hand_in(course, "bo", datetime(2026, 10, 17, 9, 0, tzinfo=UTC))  # meant to have the extension
    _hand_in(course, "zed", datetime(2026, 10, 15, 9, 0, tzinfo=UTC))  # not on the roster
    assert main(["--root", str(course.root), "term"]) == 0
    out = capsys.readouterr().out
    assert "term (course.toml): due 2026-10-16 00:00 UTC; 10 % per started day late; 1 extension(s)" in out
    bo = (
        "  bo                       handed in 2026-10-17 09:00 UTC (time not checked: copied into submitted/ by hand, "
        "its timestamp.txt alone): late by 1 d 9 h (-20 %)"
    )
    assert bo in out  # as course.toml says: its extension is boo's; a copy by hand has only its claim
    assert "term: time not checked (copied into submitted/ by hand, its timestamp.txt alone): bo, zed" in out
    lines = [ln for ln in out.splitlines() if ln.startswith("term: check: ")]
    assert lines == [
        "term: check: course.toml, [assignment] due: '2026-10-16' has no time, so it is taken as 00:00, the very "
        'start of that day; write "2026-10-16 23:59" if the end of the day is meant',
        "term: check: course.toml, [assignment] timezone: not set, so the due date is taken as UTC; set it, e.g. "
        'timezone = "Europe/Berlin"',
        "term: check: course.toml [extensions] boo: no such student (not on the roster, nothing in submitted/), so "
        "the extension applies to nobody; did you mean bo?",
        "term: check: zed: handed in (submitted/zed/) but not on the roster: graded, but the LMS files have no LMS "
        "id or email for them; add them to the roster",
        "term: check: ada: on the roster, nothing handed in (no submitted/ada/)",
    ]
    assert main(["--root", str(course.root), "roster"]) == 0  # make roster, no FILE: the roster and who handed in
    out = capsys.readouterr().out
    print(out)
    assert out.startswith("roster: 2 student(s) on the class list, 1 of them handed in; 1 more handed in without")
    assert "handed in 1 notebook(s), 2026-10-17 09:00 UTC (time not checked" in out and "(not on the roster)" in out
    assert "nothing handed in" in out.split("\n  ada")[1].split("\n")[0]

    # graded, zed is in the gradebook (autograde adds every student it grades): still not on the roster
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        gb.update_or_create_student("zed")
    off = "zed: handed in (submitted/zed/) but not on the roster"
    assert main(["--root", str(course.root), "term"]) == 0
    assert off in capsys.readouterr().out
    assert main(["--root", str(course.root), "roster"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("roster: 2 student(s) on the class list, 1 of them handed in; 1 more handed in without")
    assert "(not on the roster)" in out.split("\n  zed")[1].split("\n")[0] and off in out
    roster = course.root.parent / "with-zed.csv"  # once the roster has them, they are on it
    roster.write_text(ROSTER + "zed,Zed,Late,zed@example.org,1009\n")
    assert main(["--root", str(course.root), "roster", str(roster)]) == 0
    out = capsys.readouterr().out
    assert "roster: 0 students added, 3 updated" in out and off not in out  # zed was in the gradebook
    assert "roster: check: ada: on the roster, nothing handed in (no submitted/ada/)" in out  # as the guide says
    assert main(["--root", str(course.root), "term"]) == 0
    assert off not in capsys.readouterr().out


def test_a_roster_without_email_or_with_semicolons_is_read_and_said(course, tmp_path):
    said: list[str] = []
    semi = tmp_path / "semi.csv"
    semi.write_text("id;first_name;last_name;lms_user_id\ncy;Cy;Twombly;1003\n")
    assert import_roster(course, semi, log=said.append) == (1, 0)
    print("\n".join(said))
    assert said[:2] == [
        "roster: semi.csv is separated by semicolons, not commas: read that way",
        "roster: semi.csv has no email column (email or email_address): canvas-grades.csv will have no SIS Login ID "
        "and moodle-grades.csv no Email address to match students on",
    ]
    tabs = tmp_path / "tabs.csv"
    tabs.write_text("name\temail\nCy\tcy@example.org\n")
    with pytest.raises(ValueError, match="no id column.*it has: name, email, read as separated by tabs"):
        import_roster(course, tabs, log=said.append)


def test_make_grades_before_any_grading_says_what_to_run_and_writes_nothing(course, capsys):
    assert main(["--root", str(course.root), "grades"]) == 1
    err = capsys.readouterr().err
    assert (
        err.strip() == "error: nothing is graded yet: run make autograde first, then make grades (nothing was written)"
    )
    assert not list(course.root.glob("*grades*.csv"))


def test_a_stale_hidden_test_is_refused_by_make_autograde(released_course, tmp_path, monkeypatch):
    from whole_transformer import grading as g
    from whole_transformer.course.answers import hidden_tests
    from whole_transformer.course.autograder.autograde import autograde

    course = copy_course(released_course, tmp_path / "course")
    _hand_in(course, "ada", datetime(2026, 10, 15, 9, 0, tzinfo=UTC))
    original = hidden_tests.CASES["make_xy"]

    def make_xy_cases():  # the instructor fixes a case in hidden_tests.py, and forgets make release
        cases = original()
        cases[0] = hidden_tests._case(
            hidden_tests.ref.make_xy, cases[0].kind, "(task.sequence(5),)", "{}", {"ints": g.numpy_ints}, watch=0
        )
        return cases

    monkeypatch.setitem(hidden_tests.CASES, "make_xy", make_xy_cases)
    with pytest.raises(ValueError) as e:
        autograde(course, log=lambda *a: None, progress=False, no_sandbox=True)
    print(e.value)
    assert str(e.value).startswith("make autograde refused: 1 thing(s) out of step")
    assert "\n  hidden test test_make_xy out of step with its generator\n" in str(e.value)
    assert str(e.value).endswith(
        "run make release first (it brings them in step; python -m whole_transformer.course "
        "in-step lists them), then make autograde"
    )
    assert not (course.autograde / "ada").exists()  # nobody graded


# ------------------------------------------------------------------------------ LMS files that import
def test_the_lms_files_import_as_canvas_and_moodle_read_them(course):
    from simclass.lms_import import ImportError_, LmsUser, canvas_import, moodle_import

    from whole_transformer.course.reports.lms import write_lms
    from whole_transformer.course.reports.totals import StudentTotal

    people = [
        StudentTotal("ada", "Ada", "Lovelace", "ada@example.org", "1001", {NBS[0]: (3.0, 3.0), NBS[1]: (1.0, 3.0)}),
        StudentTotal("bo", "Bo", "Diddley", "bo@example.org", "1002", {NBS[0]: (2.0, 3.0), NBS[1]: (0.0, 3.0)}),
    ]
    canvas, moodle = write_lms(course, people)
    # the LMS knows them by its own ids and their emails; their folder names in the course mean nothing to it
    users = [LmsUser("ada", "1001", "ada@example.org", sis_id="S-77"), LmsUser("bo", "1002", "bo@example.org")]
    total = "The whole Transformer (total)"
    assert canvas_import(canvas, users) == {
        "ada": {total: 4.0, NBS[0]: 3.0, NBS[1]: 1.0},
        "bo": {total: 2.0, NBS[0]: 2.0, NBS[1]: 0.0},
    }
    for map_from, map_to in (("ID number", "useridnumber"), ("Email address", "useremail")):
        got = moodle_import(moodle, users, map_from, map_to)
        assert {s: g[total] for s, g in got.items()} == {"ada": 4.0, "bo": 2.0}, map_from
    # by Canvas's login alone (no Canvas id in the roster), Canvas still finds the student
    people[1].lms_user_id = ""
    canvas, moodle = write_lms(course, people)
    assert canvas_import(canvas, users)["bo"][total] == 2.0
    with pytest.raises(ImportError_, match="could not find user with useridnumber of ''"):
        moodle_import(moodle, users, "ID number", "useridnumber")  # what make term's check line warns of


def test_the_page_per_student_spaces_its_score_table(course):
    import re

    from whole_transformer.course.reports.student_page import page
    from whole_transformer.course.reports.totals import StudentTotal

    t = StudentTotal("ada", "Ada", "Lovelace", notebooks={NBS[0]: (3.0, 3.0), NBS[2]: (10.5, 23.0)})
    html = page(course, t)
    head = html.split("</head>")[0]
    padding = re.search(r"table\.wt-scores th,table\.wt-scores td\{padding:([^;}]+)", head)
    assert padding and padding.group(1) != "0", "the score table's cells have no spacing"
    assert f"<td>{NBS[2]}</td><td>10.5 / 23</td>" in html


def test_an_empty_hand_in_fills_no_line_of_the_next_lecture():
    from whole_transformer.course.core.results import GRADED, MISSING, UNANSWERED
    from whole_transformer.course.reports.class_insights import Exercise, _answered_nothing, _next_lecture

    names = ["next_token", "greedy_decode", "make_xy", "masked_loss"]
    status = {
        "ben": {n: UNANSWERED for n in names},  # handed in the notebooks as released
        "cy": {**{n: GRADED for n in names}, "make_xy": UNANSWERED},
        "eve": {**{n: MISSING for n in names}, "masked_loss": GRADED},
    }
    rows = [
        {"student_id": s, "grade_id": f"test_{n}", "status": st, "score": "0", "max_score": "1"}
        for s, by in status.items()
        for n, st in by.items()
    ]
    assert _answered_nothing(rows) == {"ben"}
    exercises = {n: Exercise(n) for n in names}
    for s, by in status.items():
        for n, st in by.items():
            if st == UNANSWERED:
                exercises[n].outcomes["unanswered"].append(s)
    lines = _next_lecture(exercises, {}, _answered_nothing(rows))
    assert [(it["what"], it["students"]) for it in lines] == [("make_xy: not answered", ["cy"])]
    assert len(_next_lecture(exercises, {})) == 4  # as before: ben's empty hand-in filled four of the lines


# ------------------------------------------------------------------------------ whose, and when (issue 38)
YOUNGS = "cy,Cy,Young,cy@example.org,1003\ndee,Dee,Dee,dee@example.org,1004\n"
WORKSHEET = (  # a Moodle grading worksheet, as "Download grading worksheet" writes it
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
    "Participant 1004,Cy Young,cy@example.org,Submitted for grading,,100.00,Yes,"
    '"Friday, 16 October 2026, 9:00 PM",-,\n'
    "Participant 1003,Dee Dee,dee@example.org,Submitted for grading,,100.00,Yes,"
    '"Friday, 16 October 2026, 9:10 PM",-,\n'
    "Participant 1001,Bo Diddley,bo@example.org,Submitted for grading,,100.00,Yes,"
    '"Friday, 16 October 2026, 9:20 PM",-,\n'
)


def _with_youngs(course: Course) -> None:
    roster = course.root.parent / "youngs.csv"
    roster.write_text(ROSTER + YOUNGS)
    import_roster(course, roster, log=lambda *a: None)


def test_a_moodle_zip_whose_participant_ids_are_roster_lms_ids_files_each_under_its_own_student(course, tmp_path):
    """Moodle's 1004 is Cy Young's participant id, and dee's LMS id: Cy's files go to cy, never to dee."""
    _with_youngs(course)
    entries = {
        f"Cy Young_1004_assignsubmission_file_/{NBS[0]}.ipynb": _released(course, NBS[0], "cy's"),
        f"Dee Dee_1003_assignsubmission_file_/{NBS[0]}.ipynb": _released(course, NBS[0], "dee's"),
        f"Bo Diddley_1001_assignsubmission_file_/{NBS[0]}.ipynb": _released(course, NBS[0], "bo's"),
        f"Ada Lovelace_1004_assignsubmission_file_/{NBS[1]}.ipynb": _released(course, NBS[1], "whose?"),
    }
    (tmp_path / "dl").mkdir()
    (tmp_path / "dl" / "Grades-course-assignment-12.csv").write_text(WORKSHEET)  # Moodle's worksheet beside it
    with zipfile.ZipFile(tmp_path / "dl" / "moodle.zip", "w") as z:  # Moodle's zip: each file its own time
        for minute, (name, text) in enumerate(entries.items()):
            z.writestr(zipfile.ZipInfo(name, date_time=(2026, 10, 16, 21, minute, 0)), text)
    lines: list[str] = []
    out = collect_zip(course, tmp_path / "dl" / "moodle.zip", lines.append)
    print("\n".join(lines))  # for the closing note
    assert out.placed == {s: [f"{NBS[0]}.ipynb"] for s in ("bo", "cy", "dee")}
    for student, mark in (("cy", "cy's"), ("dee", "dee's"), ("bo", "bo's")):
        assert mark in (course.submitted / student / ASSIGNMENT / f"{NBS[0]}.ipynb").read_text()
    assert not (course.submitted / "ada").exists()  # nothing placed under a guess
    ((name, why),) = out.refused
    assert name.startswith("Ada Lovelace_1004") and "Moodle participant 1004 is cy (Cy Young" in why
    assert "read Moodle's participant ids from Grades-course-assignment-12.csv" in lines[0]
    assert f"  REFUSED 'Ada Lovelace_1004_assignsubmission_file_/{NBS[1]}.ipynb': Moodle participant 1004" in "\n".join(
        lines
    )

    # a later zip without the worksheet: the participant ids kept from it still decide
    later = {f"Dee Dee_1004_assignsubmission_file_/{NBS[2]}.ipynb": _released(course, NBS[2])}
    out = collect_zip(course, _zip(tmp_path / "later.zip", later), log=lambda *a: None)
    assert out.placed == {} and "Moodle participant 1004 is cy" in out.refused[0][1]


def test_a_moodle_zip_without_a_worksheet_goes_by_the_name_and_never_by_the_roster_lms_id(course, tmp_path):
    _with_youngs(course)
    entries = {f"Cy Young_1004_assignsubmission_file_/{NBS[0]}.ipynb": _released(course, NBS[0], "cy's")}
    out = collect_zip(course, _zip(tmp_path / "moodle.zip", entries), log=lambda *a: None)
    assert out.placed == {"cy": [f"{NBS[0]}.ipynb"]} and not (course.submitted / "dee").exists()
    # learned and kept: participant 1004 is cy; a later entry naming someone else under it is refused
    again = {f"Dee Dee_1004_assignsubmission_file_/{NBS[1]}.ipynb": _released(course, NBS[1])}
    out = collect_zip(course, _zip(tmp_path / "again.zip", again), log=lambda *a: None)
    assert out.placed == {} and "Moodle participant 1004 is cy" in out.refused[0][1]
    assert "learned" not in out.refused[0][1] and "the name in moodle.zip" in out.refused[0][1]


def test_a_canvas_entry_whose_user_id_is_another_students_is_refused_and_named(course, tmp_path):
    _with_youngs(course)
    entries = {
        f"youngcy_1004_5551_{NBS[0]}.ipynb": _released(course, NBS[0]),  # 1004 is dee's Canvas id, not cy's
        f"lovelaceada_1001_5552_{NBS[0]}.ipynb": _released(course, NBS[0]),
    }
    lines: list[str] = []
    out = collect_zip(course, _zip(tmp_path / "canvas.zip", entries, when=(2026, 10, 16, 20, 0, 0)), lines.append)
    print("\n".join(lines))  # for the closing note (pytest -s)
    assert out.placed == {"ada": [f"{NBS[0]}.ipynb"]}
    ((name, why),) = out.refused
    assert (
        "Canvas user id 1004 is dee's (Dee Dee) in the roster, but the entry is named 'youngcy', which is cy's" in why
    )
    assert not (course.submitted / "cy").exists() and not (course.submitted / "dee").exists()


def _canvas_download(course: Course, tmp_path: Path, name: str = "canvas.zip") -> Path:
    """A Canvas download whose entries all carry the moment the zip was built: bo's file flagged late."""
    entries = {
        f"lovelaceada_1001_6001_{NBS[0]}.ipynb": _released(course, NBS[0]),
        f"diddleybo_late_1002_6002_{NBS[0]}.ipynb": _released(course, NBS[0]),
    }
    return _zip(tmp_path / name, entries, when=(2026, 10, 19, 8, 0, 0))  # two days after the due date


def test_a_canvas_download_without_times_invents_no_lateness(course, tmp_path, capsys):
    (course.root / "course.toml").write_text(
        '[assignment]\ndue = "2026-10-16 23:59"\ntimezone = "UTC"\n[late]\npolicy = "per_day"\npenalty = 10\n'
    )
    assert main(["--root", str(course.root), "collect-zip", str(_canvas_download(course, tmp_path))]) == 0
    out = capsys.readouterr().out
    with capsys.disabled():
        print(out)  # for the closing note (pytest -s)
    assert "the download gives no hand-in times: every entry carries 2026-10-19 08:00" in out
    assert "by the flag only: ada, bo" in out
    from whole_transformer.course.term.late import student_lateness
    from whole_transformer.course.term.settings import load

    s = load(course)
    ada, bo = (student_lateness(course, s, x) for x in ("ada", "bo"))
    assert not ada.is_late and ada.penalty == 0 and "on time by the LMS" in ada.describe()
    assert bo.is_late and bo.penalty == 10.0 and "late by the LMS's flag, how late it does not say" in bo.describe()
    assert main(["--root", str(course.root), "term"]) == 0
    term = capsys.readouterr().out
    with capsys.disabled():
        print(term)  # for the closing note (pytest -s)
    assert "term: the LMS's late flag only, no hand-in time (its download gave none): ada, bo" in term
    assert "late by 2 d" not in term

    # the instructor supplies the times Canvas has: they decide
    times = tmp_path / "times.csv"
    times.write_text("student,submitted\nada,2026-10-16 23:00\n1002,2026-10-17 10:00\n")
    again = [str(_canvas_download(course, tmp_path, "b.zip")), "--times", str(times), "--replace"]
    assert main(["--root", str(course.root), "collect-zip", *again]) == 0
    capsys.readouterr()
    ada, bo = (student_lateness(course, s, x) for x in ("ada", "bo"))
    assert ada.describe() == "on time" and bo.describe() == "late by 10 h 1 min (-10 %)"
    assert "supplied" in bo.handin.source


def test_a_time_zone_set_after_collecting_keeps_each_lateness(course, tmp_path, capsys):
    """Zip times collected under UTC, then the course's zone set: the same lateness as before, and said."""
    toml = (
        '[assignment]\ndue = "2026-10-16 23:59"\ntimezone = "{}"\n'
        '[late]\npolicy = "per_day"\npenalty = 10\ngrace_minutes = 15\n'
    )
    (course.root / "course.toml").write_text(toml.format("UTC"))
    entries = {f"lovelaceada_1001_6001_{NBS[0]}.ipynb": _released(course, NBS[0])}
    collect_zip(course, _zip(tmp_path / "a.zip", entries, when=(2026, 10, 17, 0, 10, 0)), log=lambda *a: None)
    entries = {f"diddleybo_1002_6002_{NBS[0]}.ipynb": _released(course, NBS[0])}
    collect_zip(course, _zip(tmp_path / "b.zip", entries, when=(2026, 10, 16, 23, 58, 0)), log=lambda *a: None)
    from whole_transformer.course.term.late import student_lateness
    from whole_transformer.course.term.settings import load

    before = {x: student_lateness(course, load(course), x).describe() for x in ("ada", "bo")}
    assert before == {"ada": "late by 11 min (within the grace period, no penalty)", "bo": "on time"}
    (course.root / "course.toml").write_text(toml.format("Europe/Berlin"))
    after = {x: student_lateness(course, load(course), x).describe() for x in ("ada", "bo")}
    assert after == before
    assert main(["--root", str(course.root), "term"]) == 0
    out = capsys.readouterr().out
    assert "handed in 2026-10-17 00:10 CEST" in out
    assert "zip times read again in Europe/Berlin (course.toml's timezone now)" in out and "ada (read as UTC)" in out


def test_collect_zip_with_an_empty_roster_says_so_in_one_line_and_fails(released, tmp_path, capsys):
    root = tmp_path / "course"
    shutil.copytree(released, root)
    course = Course(root)
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        for sid in ("ada", "bo"):
            gb.remove_student(sid)
    entries = {f"lovelaceada_1001_6001_{NBS[0]}.ipynb": _released(course, NBS[0])}
    assert main(["--root", str(root), "collect-zip", str(_zip(tmp_path / "a.zip", entries))]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "the roster is empty" in err and "make roster FILE=" in err
    assert not course.submitted.exists() or not any(course.submitted.iterdir())
