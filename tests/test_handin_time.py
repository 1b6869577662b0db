"""Hand-in times the course can trust (issue 29): a claim, only as far as the evidence allows.

The rule on its own first (``term/handin_time.judge``). Then a class of the small course hands in
through a real local exchange, one day after the due date (10 % a started day): ``hal`` honestly,
``bo`` under a folder name and timestamp.txt that say two hours before the due date, ``fu`` two days
in the future, and ``co`` twice, the second attempt dated past the service's one-hour cooldown. The
grading service grades them; then ``ab`` (backdated) and ``ah`` (honest) hand in while it is off and
the instructor collects with ``nbgrader collect`` and runs ``make autograde``. For each: the time used,
the lateness, the LMS totals, and the integrity finding (the service's log and record, ``make grades``,
``make term``); an honest late hand-in and a forged one handed in at the same moment get the same total.

The twin-claim forgery (issue 38): ``tw`` hands in on time, then again after their due date under the very
folder-name time and timestamp.txt of the first attempt, beside ``ot`` (on time) and ``lt`` (late, honestly,
at tw's second moment); the three have one due date between the two moments. The exchange is given only
by flag, as ``make serve EXCHANGE=DIR`` and ``nbgrader --Exchange.root`` give it: nbgrader_config.py names
none, so ``make grades`` can only use the times recorded when the hand-ins were taken in.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import nbformat
import pytest
from simclass.local_exchange import course_with_exchange, nbgrader
from simclass.minicourse import NAME, require_sandbox
from test_service import answered, hand_in

from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID
from whole_transformer.course.term.handin_time import CLAIM, EXCHANGE, TOLERANCE, changed_at, judge

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def test_the_time_used_is_the_claim_only_as_far_as_the_evidence_allows():
    honest = judge(NOW - timedelta(seconds=2), NOW, EXCHANGE)  # submit writes its time, then the files
    assert honest.used == NOW and honest.finding == ""
    back = judge(NOW - timedelta(days=1), NOW, EXCHANGE)
    assert (
        back.used == NOW and "1 d later" in back.finding and "graded as handed in at 2026-12-02 12:00" in back.finding
    )
    ahead = judge(NOW + timedelta(hours=3), NOW, EXCHANGE)
    assert ahead.used == NOW and "3 h earlier" in ahead.finding
    near = judge(NOW + TOLERANCE - timedelta(seconds=1), NOW, EXCHANGE)  # a clock a little ahead: believed
    assert near.used == NOW + TOLERANCE - timedelta(seconds=1) and near.finding == ""
    alone = judge(NOW - timedelta(days=3), None, CLAIM)  # no evidence at all: the claim stands
    assert alone.used == NOW - timedelta(days=3) and alone.finding == ""


def test_a_claim_copied_from_an_earlier_attempt_is_a_finding_and_counts_when_written(tmp_path):
    from whole_transformer.course.term.handin_time import inbound_time

    claim = datetime.now(UTC)
    first = hand_in(tmp_path, "tw", {f"{NAME}.ipynb": "{}"}, claim)
    time.sleep(1.5)
    second = hand_in(tmp_path, "tw", {f"{NAME}.ipynb": "{ }"}, claim)  # the same name time and timestamp.txt
    both = [first, second]
    early, late = inbound_time(first, both), inbound_time(second, both)
    assert early.finding == "" and early.used == changed_at(first)
    assert late.used == changed_at(second) > early.used
    assert late.finding.startswith(f"claims the time of an earlier attempt ({first.name}, written at ")


def test_every_later_command_reads_the_recorded_time_and_a_copy_by_hand_is_not_checked(tmp_path):
    from whole_transformer.course.layout import Course
    from whole_transformer.course.term.handin_merge import entry, record_files
    from whole_transformer.course.term.handin_time import student_handin

    course = Course(tmp_path)
    folder = course.submitted / "ada" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text(_stamp(NOW - timedelta(days=3)))  # a claim nobody checks again
    (folder / "01-whole-machine.ipynb").write_text("{}")
    assert (
        student_handin(course, "ada").source == CLAIM and "time not checked" in student_handin(course, "ada").describe()
    )
    record_files(course, "ada", {"01-whole-machine.ipynb": entry(NOW, "the exchange: ada+…", "exchange", claimed=NOW)})
    h = student_handin(course, "ada", "Europe/Berlin")
    assert h.used == NOW and h.source == EXCHANGE and h.describe() == "handed in 2026-12-02 13:00 CET"
    (folder / "02-microscope.ipynb").write_text("{}")  # copied in by hand later: named as such
    assert "(time not checked for 02-microscope.ipynb: copied in by hand)" in student_handin(course, "ada").describe()


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory, released_mini):
    """The class graded: by the service (hal, bo, fu, co), then by make autograde after nbgrader collect (ah, ab,
    and the twin claim: ot, tw, lt)."""
    require_sandbox()
    from whole_transformer.course.autograder.autograde import autograde
    from whole_transformer.course.service.serve import serve

    due = datetime.now(UTC) - timedelta(days=1)
    toml = (
        f'[assignment]\ndue = "{due:%Y-%m-%d %H:%M}"\ntimezone = "UTC"\n[late]\npolicy = "per_day"\npenalty = 10\n'
        '[service]\nenabled = true\ncooldown = "1h"\nfeedback_before_due = "full"\n'
    )
    tmp = tmp_path_factory.mktemp("handin-time")
    # the exchange given only by flag: the config names none
    course, exchange = course_with_exchange(tmp, toml, released=released_mini)
    assert "Exchange.root" not in (course.root / "nbgrader_config.py").read_text()
    notebook = {f"{NAME}.ipynb": nbformat.writes(answered(course))}
    now = datetime.now(UTC)  # after the course is built (minutes on a busy machine): the claims are made now
    claims = {"hal": now, "bo": due - timedelta(hours=2), "fu": now + timedelta(days=2), "co": now}
    for student, when in claims.items():
        hand_in(exchange, student, notebook, when)
    hand_in(exchange, "co", notebook, now + timedelta(hours=2))  # past the cooldown, by its claim
    lines: list[str] = []
    assert serve(course, str(exchange), once=True, echo=lines.append) == 0
    for student, when in {"ah": datetime.now(UTC), "ab": due - timedelta(hours=2)}.items():
        hand_in(exchange, student, notebook, when)
    first = datetime.now(UTC)  # the twin claim: tw on time, then late under the first attempt's claim
    on_time = [
        hand_in(exchange, "ot", notebook, first),
        hand_in(exchange, "tw", {k: v + "\n" for k, v in notebook.items()}, first),
    ]
    twin_due = max(changed_at(f) for f in on_time) + timedelta(seconds=1)
    with open(course.root / "course.toml", "a") as f:
        f.write("[extensions]\n" + "".join(f'{s} = "{twin_due:%Y-%m-%d %H:%M:%S.%f}"\n' for s in ("ot", "tw", "lt")))
    while datetime.now(UTC) < twin_due + timedelta(seconds=1):
        time.sleep(0.2)
    hand_in(exchange, "tw", notebook, first)  # the same folder-name time and timestamp.txt as the first attempt
    hand_in(exchange, "lt", notebook, datetime.now(UTC))
    collected = nbgrader(["collect", ASSIGNMENT, f"--course={COURSE_ID}"], course.root, exchange)
    lines.extend(ln for ln in collected.stderr.splitlines() if "collect " in ln or "INTEGRITY" in ln)
    run = autograde(course, log=lines.append, progress=False)
    assert sorted(run.graded) == ["ab", "ah", "lt", "ot", "tw"], lines
    return course, exchange, due, now, "\n".join(lines)


def _records(course) -> dict[str, list[dict]]:
    from whole_transformer.course.service.watch import Store

    out: dict[str, list[dict]] = {}
    for r in sorted(Store(course).all(), key=lambda r: r.when or datetime.min.replace(tzinfo=UTC)):
        out.setdefault(r.student, []).append(r.to_json())  # as the service's record keeps it
    return out


@pytest.mark.slow
def test_the_service_uses_the_evidence_and_names_the_forger(handed_in):
    course, _, due, now, log = handed_in
    records = _records(course)
    for student in ("hal", "bo", "fu"):
        (r,) = records[student]
        used = datetime.fromisoformat(r["when"])
        assert now <= used < now + timedelta(minutes=5), (student, r)  # when its files were written
        assert r["status"] == "graded" and r["score"] == 3.0
    assert datetime.fromisoformat(records["bo"][0]["claimed"]) == due - timedelta(hours=2)
    assert "1 d 2 h later" in records["bo"][0]["integrity"] and "integrity" not in records["hal"][0]
    assert "earlier" in records["fu"][0]["integrity"]
    assert f"INTEGRITY bo: claims to have handed in at {due - timedelta(hours=2):%Y-%m-%d %H:%M} UTC" in log
    first, second = records["co"]  # the cooldown counts from the times used: the future date does not pass it
    assert first["status"] == "graded" and second["status"] == "refused", records["co"]
    assert "sooner than 1 hour(s) after your last graded one" in second["reason"]


@pytest.mark.slow
def test_lateness_totals_and_lms_files_use_the_time_used(handed_in, capsys):
    from whole_transformer.course.commands.submissions import cmd_term
    from whole_transformer.course.reports.grades import write_lms_files
    from whole_transformer.course.reports.lms import TOTAL, canvas_rows, moodle_rows
    from whole_transformer.course.reports.student_page import write_pages
    from whole_transformer.course.reports.totals import totals

    course, _, due, now, _ = handed_in
    by = {t.student: t for t in totals(course)}
    for student in ("bo", "fu", "ab"):  # forged, each handed in beside an honest one: the same total
        assert by[student].final == by["hal"].final == by["ah"].final, {s: t.final for s, t in by.items()}
        assert by[student].lateness.describe() == by["hal"].lateness.describe() == "late by 1 d (-20 %)"
    assert by["hal"].penalty == 0.6 and by["hal"].final == 2.4
    for student in ("bo", "ab"):
        h = by[student].lateness.handin
        assert (
            h.source == EXCHANGE and h.claimed == due - timedelta(hours=2) and now <= h.used < now + timedelta(hours=1)
        )
        assert "the claim said" in h.describe() and h.finding
    assert by["hal"].lateness.handin.finding == "" and by["ah"].lateness.handin.finding == ""
    head, canvas = canvas_rows(list(by.values()))  # a row per student, in the order given, after Points Possible
    total = {s: row[head.index(TOTAL)] for s, row in zip(by, canvas[1:], strict=True)}
    assert total["bo"] == total["hal"] == total["ab"] == total["ah"] == "2.4"
    _, moodle = moodle_rows(list(by.values()))
    note = {s: row[-1] for s, row in zip(by, moodle, strict=True)}
    assert f"; handed in {by['bo'].lateness.handin.used:%Y-%m-%d %H:%M} UTC (the evidence in the exchange" in note["bo"]
    pages = {p.stem: p.read_text() for p in write_pages(course)}  # the page per student says the time used
    assert f"Handed in {by['bo'].lateness.handin.used:%Y-%m-%d %H:%M} UTC (the evidence in the exchange" in pages["bo"]
    lines: list[str] = []
    write_lms_files(course, lines.append)
    flagged = sorted(ln.split()[1].rstrip(":") for ln in lines if ln.startswith("INTEGRITY"))
    assert flagged == ["ab", "bo", "fu", "tw"], lines
    cmd_term(course, None)
    out = capsys.readouterr().out
    assert "INTEGRITY ab: claims to have handed in" in out and "INTEGRITY hal" not in out


@pytest.mark.slow
def test_the_gradebook_keeps_the_time_used(handed_in):
    from nbgrader.api import Gradebook

    course, _, due, now, _ = handed_in
    with Gradebook(course.db_url) as gb:
        for student in ("bo", "ab", "hal"):
            when = gb.find_submission(ASSIGNMENT, student).timestamp
            assert now <= when.replace(tzinfo=UTC) < now + timedelta(hours=1), (student, when)


@pytest.mark.slow
def test_a_late_attempt_under_an_earlier_attempts_claim_is_late(handed_in, capsys):
    """The twin claim: tw's late files, collected by nbgrader collect, count at the time they were written."""
    from whole_transformer.course.commands.submissions import cmd_term
    from whole_transformer.course.reports.lms import TOTAL, canvas_rows
    from whole_transformer.course.reports.totals import totals

    course, _, _, _, log = handed_in
    assert "INTEGRITY tw: claims the time of an earlier attempt" in log, log
    by = {t.student: t for t in totals(course)}
    ot, tw, lt = by["ot"], by["tw"], by["lt"]
    assert ot.lateness.describe().startswith("on time") and ot.penalty == 0 and not ot.lateness.handin.finding
    assert tw.lateness.is_late and tw.lateness.penalty == lt.lateness.penalty == 10.0
    assert abs(tw.lateness.handin.used - lt.lateness.handin.used) < timedelta(seconds=30)
    assert tw.final == lt.final < ot.final and tw.score == ot.score
    assert "claims the time of an earlier attempt" in tw.lateness.handin.finding and not lt.lateness.handin.finding
    head, canvas = canvas_rows(list(by.values()))
    total = {s: row[head.index(TOTAL)] for s, row in zip(by, canvas[1:], strict=True)}
    assert total["tw"] == total["lt"] != total["ot"]
    cmd_term(course, None)
    out = capsys.readouterr().out
    said = {
        s: [ln for ln in out.splitlines() if ln.split()[:1] == [s] or ln.split()[:2] == ["INTEGRITY", f"{s}:"]]
        for s in ("ot", "tw", "lt")
    }
    print("\n".join(ln for lines in said.values() for ln in lines))  # for the closing note
    assert ": on time (extension to" in said["ot"][0] and "late by" in said["lt"][0] and "(-10 %" in said["lt"][0]
    assert "late by" in said["tw"][0] and "(-10 %" in said["tw"][0]
    assert any(ln.startswith("  INTEGRITY tw: claims the time of an earlier attempt") for ln in said["tw"])


@pytest.mark.slow
def test_make_grades_uses_the_time_the_service_recorded_with_the_exchange_given_by_flag(handed_in):
    """The exchange given only to the service: make grades has no exchange, and needs none."""
    from whole_transformer.course.reports.grades import write_lms_files
    from whole_transformer.course.reports.totals import totals

    course, _, _, _, _ = handed_in
    records = _records(course)
    by = {t.student: t for t in totals(course)}
    for student in ("hal", "bo", "fu"):
        (r,) = records[student]
        t = by[student]
        assert t.lateness.handin.used == datetime.fromisoformat(r["when"]), (student, r, t.lateness.handin)
        assert t.lateness.is_late == r["late"] and t.score == r["score"], (student, r)
        assert t.final == round(r["score"] * (1 - t.lateness.penalty / 100), 6)
    assert by["bo"].final == by["hal"].final  # the backdated claim: the service's time, not the claim
    lines: list[str] = []
    write_lms_files(course, lines.append)  # no exchange to look anything up in: the recorded times
    assert [ln.split()[1] for ln in lines if ln.startswith("INTEGRITY")] == ["ab:", "bo:", "fu:", "tw:"], lines
