"""The grading service (``python -m whole_transformer.course serve``): feedback the moment a student submits.

The small course (tests/simclass/minicourse.py), a real local nbgrader exchange and the real sandbox:
a student submits with nbgrader's own ``submit`` and fetches their feedback with its
``fetch_feedback``; the attempt limit refuses a third attempt; the service is killed (SIGKILL) in
the middle of a grading and started again, and grades every attempt exactly once, a malformed
one reported beside the others. The policy's settings and decisions are checked without grading.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest
from simclass.local_exchange import course_with_exchange, nbgrader
from simclass.minicourse import NAME, require_sandbox
from simclass.notebooks import set_answer

from whole_transformer.course.autograder.autograde import autograde
from whole_transformer.course.core.results import Status
from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID, Course, checkout_env, inbound
from whole_transformer.course.service.decision import counts, decide, feedback_kind
from whole_transformer.course.service.serve import serve
from whole_transformer.course.service.watch import AttemptRecord, Store, inbound_attempts, read_attempt
from whole_transformer.course.term.settings import SettingsError, parse

SERVICE = '[service]\nenabled = true\nattempts = 2\ncounts = "last"\n'


def answered(course: Course, double: str = "def double(x):\n    return 2 * x"):
    """The released notebook, answered."""
    nb = nbformat.read(course.release / f"{NAME}.ipynb", as_version=4)
    set_answer(nb, "answer_q", "answer_q = 8")
    return set_answer(nb, "double", double)


def hand_in(exchange: Path, student: str, files: dict[str, str], when: datetime, name: str | None = None) -> Path:
    """An attempt in the exchange's inbound folder, laid out as nbgrader submit writes it."""
    stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = exchange / COURSE_ID / "inbound" / (name or f"{student}+{ASSIGNMENT}+{stamp}+r{os.urandom(3).hex()}")
    folder.mkdir(parents=True)
    for fname, text in {"timestamp.txt": stamp, "submission_secret.txt": os.urandom(16).hex(), **files}.items():
        (folder / fname).write_text(text)
    return folder


@pytest.mark.slow
def test_feedback_is_fetched_at_once_and_the_limit_refuses_a_third_attempt(tmp_path, released_mini):
    require_sandbox()
    course, exchange = course_with_exchange(tmp_path, SERVICE, released=released_mini)
    home = tmp_path / "ada"
    home.mkdir()
    nbgrader(["fetch_assignment", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    path = home / ASSIGNMENT / f"{NAME}.ipynb"
    for double in (
        "def double(x):\n    return 2 * x",
        "def double(x):\n    return 2 * abs(x)",
        "def double(x):\n    return x + x",
    ):
        nb = nbformat.read(path, as_version=4)
        nbformat.write(set_answer(set_answer(nb, "answer_q", "answer_q = 8"), "double", double), path)
        nbgrader(["submit", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
        time.sleep(0.01)
    lines = []
    t0 = time.monotonic()
    assert serve(course, str(exchange), once=True, echo=lines.append) == 0
    seconds = time.monotonic() - t0
    nbgrader(["fetch_feedback", ASSIGNMENT, f"--course={COURSE_ID}"], home, exchange, user="ada")
    pages = sorted((home / ASSIGNMENT / "feedback").glob(f"*/{NAME}.html"))  # one folder per attempt, by time
    assert len(pages) == 3, (sorted(p.relative_to(home) for p in (home / ASSIGNMENT).rglob("*")), lines)
    first, second, third = (p.read_text() for p in pages)
    assert "3 of 3 graded test(s) passed" in first and "Graded attempt 1 of 2" in first
    assert "2 of 3 graded test(s) passed" in second and "not right yet for: a negative number" in second
    assert "over the limit of 2 graded attempt(s)" in third and "stays your attempt 2" in third
    assert "-6" not in second and "EXPECTED" not in second  # pass/fail before the due date: no expected value

    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:  # the last graded attempt counts: the second
        assert gb.find_submission(ASSIGNMENT, "ada").score == 2.0
    assert "abs(x)" in (course.submitted / "ada" / ASSIGNMENT / f"{NAME}.ipynb").read_text()
    run = autograde(course, log=lambda *a: None, progress=False)  # the instructor's own run grades nobody again
    assert run.graded == [] and run.skipped == ["ada"]
    print(f"service: 3 attempts (2 graded, 1 refused) in {seconds:.1f} s")


def _status(url: str) -> dict:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as r:
        return json.loads(r.read())


def _wait_for(path: Path, text: str, proc: subprocess.Popen, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        log = path.read_text() if path.exists() else ""
        if text in log:
            return log
        assert proc.poll() is None, f"the service exited ({proc.returncode}):\n{log}"
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in the service's log within {timeout} s")


@pytest.mark.slow
def test_killed_mid_grading_then_restarted_grades_each_attempt_once(tmp_path, released_mini):
    require_sandbox()
    course, exchange = course_with_exchange(
        tmp_path, '[service]\nenabled = true\nfeedback_before_due = "full"\n', released=released_mini
    )
    now = datetime.now(UTC)
    bob = hand_in(exchange, "bob", {f"{NAME}.ipynb": nbformat.writes(answered(course))}, now - timedelta(minutes=3))
    crash = answered(course, "def double(x):\n    import os\n    os._exit(1)")  # the student's kernel dies
    dee = hand_in(exchange, "dee", {f"{NAME}.ipynb": nbformat.writes(crash)}, now - timedelta(minutes=2, seconds=30))
    cy = hand_in(exchange, "cy", {f"{NAME}.ipynb": '{"cells": [ oops'}, now - timedelta(minutes=2))
    hand_in(exchange, "", {f"{NAME}.ipynb": "{}"}, now, name="not-a-submission")
    log = course.state / "service" / "serve.log"
    cmd = [
        sys.executable,
        "-m",
        "whole_transformer.course",
        "--root",
        str(course.root),
        "serve",
        f"--exchange={exchange}",
        "--poll=0.5",
    ]
    proc = subprocess.Popen([*cmd, "--port=0"], env=checkout_env(), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        text = _wait_for(log, "grading bob", proc)
        url = text.split("status page ", 1)[1].split()[0]
        time.sleep(2)  # nbgrader is running bob's notebook in the sandbox now
        busy = _status(url.replace("/?", "/status.json?"))
        assert (busy["running"], busy["queue"], busy["failed"]) == (1, 2, 1), busy  # the malformed one: failed
        assert busy["running_now"][0].startswith("bob") and "running_now" not in _status(
            url.split("?")[0] + "status.json"
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    store = Store(course)
    assert [r.status for r in store.all()] == ["malformed"], "killed before bob's grading was finished"
    done = subprocess.run([*cmd, "--once"], env=checkout_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = log.read_text()
    assert text.count("grading bob") == 2 and text.count("GRADED bob") == 1, text
    assert text.count("FAILED cy") == 1 and text.count("MALFORMED ? not-a-submission") == 1, text
    records = {r.name.split("+")[0]: r for r in store.all()}
    assert sorted(records) == ["bob", "cy", "dee", "not-a-submission"]
    assert records["bob"].status == "graded" and records["bob"].score == 3.0
    assert records["dee"].status == "graded" and records["dee"].score == 1.0  # answer_q still counts
    assert "could not run to the end" in records["dee"].reason and records["bob"].reason == ""
    assert "to look at: 01-mini: 2 test cell(s) could not run to the end" in text
    dee_page = released(exchange, dee).read_text()
    assert "Score of this attempt: 1 / 3" in dee_page and "test_double_small" in dee_page
    assert "not valid JSON" in records["cy"].reason
    cy_page = released(exchange, cy).read_text()
    assert "could not be graded" in cy_page and "not valid JSON" in cy_page
    bob_page = released(exchange, bob).read_text()  # the full feedback: nbgrader's, hidden tests left out
    assert "Score of this attempt: 3 / 3" in bob_page and "3.0 / 3.0" in bob_page and "test_double_neg" in bob_page
    assert "hand_out" not in bob_page and "END HIDDEN TESTS" not in bob_page


class Killed(BaseException):
    """The service's process ending at this point (nothing of the service catches it)."""


@pytest.mark.slow
def test_stopped_between_its_merge_and_the_record_the_attempt_is_graded_again_not_left_to_the_instructor(
    tmp_path, monkeypatch, released_mini
):
    require_sandbox()
    course, exchange = course_with_exchange(
        tmp_path, '[service]\nenabled = true\nfeedback_before_due = "full"\n', released=released_mini
    )
    bob = hand_in(exchange, "bob", {f"{NAME}.ipynb": nbformat.writes(answered(course))}, datetime.now(UTC))
    from whole_transformer.course.service import attempt_feedback as feedback

    real = feedback.deliver

    def killed(*a, **kw):
        raise Killed()

    monkeypatch.setattr(feedback, "deliver", killed)  # merged into the course; ended before its feedback
    with pytest.raises(Killed):
        serve(course, str(exchange), once=True, echo=lambda line: None)
    assert Store(course).all() == [] and (course.root / "autograde" / "bob").is_dir()
    monkeypatch.setattr(feedback, "deliver", real)
    lines = []
    assert serve(course, str(exchange), once=True, echo=lines.append) == 0
    text = "\n".join(lines)
    assert text.count("GRADED bob") == 1 and "COLLECTED" not in text, text  # not taken for make autograde's
    (record,) = Store(course).all()
    assert record.status == "graded" and record.score == 3.0
    assert "Score of this attempt: 3 / 3" in released(exchange, bob).read_text()
    assert not list(Store(course).folder.glob("*.merging"))


def released(exchange: Path, attempt: Path) -> Path:
    """Where the attempt's feedback must be for nbgrader fetch_feedback (its exchange/default/fetch_feedback.py)."""
    from nbgrader.utils import notebook_hash

    secret = (attempt / "submission_secret.txt").read_text()
    return exchange / COURSE_ID / "feedback" / f"{notebook_hash(secret=secret, notebook_id=NAME)}.html"


def test_the_service_policy_is_read_with_clear_errors():
    s = parse(
        '[assignment]\ndue = "2026-10-16 23:59"\n[service]\nenabled = true\nattempts = 3\n'
        'cooldown = "30m"\ncounts = "best"\ngrade_after_due = false\nfeedback_before_due = "full"\n'
    )
    p = s.service
    assert (p.enabled, p.attempts, p.cooldown, p.counts, p.grade_after_due) == (
        True,
        3,
        timedelta(minutes=30),
        "best",
        False,
    )
    assert parse("").service.enabled is False
    for bad, words in [
        ("attempts = -1", "whole number"),
        ('cooldown = "soon"', '"30m"'),
        ('counts = "first"', "'last', 'best'"),
        ('enabled = "yes"', "true or false"),
        ("colour = 1", "unknown key"),
        ('feedback_after_due = "all"', "'pass_fail', 'full'"),
    ]:
        with pytest.raises(SettingsError, match="service") as e:
            parse(f"[service]\n{bad}\n")
        assert words in str(e.value), str(e.value)


def test_the_policy_decides_attempt_by_attempt():
    s = parse(
        '[assignment]\ndue = "2026-10-16 23:59"\n[service]\nenabled = true\nattempts = 2\ncooldown = "1h"\n'
        "grade_after_due = false\n"
    )
    due = s.due
    first = AttemptRecord("a1", "ada", due - timedelta(hours=5), Status.GRADED, number=1, counts=True)
    assert decide(s, "ada", due - timedelta(hours=6), []).grade
    soon = decide(s, "ada", due - timedelta(hours=4, minutes=30), [first])
    assert not soon.grade and "next attempt counts from 2026-10-16 19:59 UTC (1 of 2 left)" in soon.why
    assert decide(s, "ada", due - timedelta(hours=3), [first]).grade
    second = replace(first, name="a2", when=due - timedelta(hours=3), number=2)
    over = decide(s, "ada", due - timedelta(hours=1), [first, second])
    assert not over.grade and "over the limit of 2" in over.why and "stays your attempt 2" in over.why
    late = decide(s, "ada", due + timedelta(minutes=1), [])
    assert not late.grade and late.late and "after the due date" in late.why
    assert (feedback_kind(s, "ada", due), feedback_kind(s, "ada", due + timedelta(seconds=1))) == ("pass_fail", "full")
    best = parse('[service]\nenabled = true\ncounts = "best"\n').service
    history = [
        AttemptRecord("a1", "ada", None, Status.GRADED, score=2.0),
        AttemptRecord("a2", "ada", None, Status.REFUSED),
    ]
    assert [counts(best, x, history) for x in (1.0, 2.0, 3.0)] == [False, True, True]
    assert counts(s.service, 0.0, history)  # "last": the newest graded attempt counts, whatever its score


def test_an_attempt_in_another_accounts_folder_is_not_graded(tmp_path):
    import pwd

    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    me = pwd.getpwuid(os.getuid()).pw_name
    other = next(p.pw_name for p in pwd.getpwall() if p.pw_uid != os.getuid() and "+" not in p.pw_name)
    for name, wrong in ((me, False), (other, True), ("no-such-account-here", False)):
        folder = tmp_path / f"{name}+{ASSIGNMENT}+{stamp}+abc"
        folder.mkdir()
        (folder / "submission_secret.txt").write_text("s")
        sub = read_attempt(folder)
        assert (sub.student, bool(sub.problem)) == (name, wrong), sub.problem
        assert not wrong or "belongs to another account" in sub.problem
    assert read_attempt(tmp_path / f"{me}+another-assignment+{stamp}+abc") is None


def test_the_status_page_shows_each_grading_as_a_row_and_names_no_student_without_the_token(tmp_path):
    from whole_transformer.course.service.status import ServiceState, _html

    status = ServiceState(tmp_path, echo=lambda line: None)
    ada = datetime.fromisoformat("2026-12-02T11:53:59.9+00:00")
    status.done(
        AttemptRecord(
            "a", "ada", ada, Status.GRADED, "", score=3.0, max_score=22.0, late=False, seconds=2.6, counts=True
        )
    )
    bob = datetime.fromisoformat("2026-12-02T11:54:10.6+00:00")
    status.done(AttemptRecord("b", "bob", bob, Status.REFUSED, "over the limit", late=False))
    page = _html(status.snapshot(full=True))
    rows = page.split('<table aria-labelledby="last">', 1)[1].split("</table>", 1)[0]
    assert rows.count("<tr>") == 3 and '<th scope="col">handed in (UTC)</th>' in rows
    assert "<td>ada</td><td>2026-12-02 11:53:59</td><td>graded</td><td>3 / 22</td><td>yes</td><td>no</td>" in rows
    assert rows.index("bob") < rows.index("ada") and "<td>over the limit</td>" in rows
    counts_only = _html(status.snapshot(full=False))
    assert "ada" not in counts_only and "Last gradings" not in counts_only
    assert (
        '<th scope="row">graded</th><td>1</td>' in counts_only
        and '<th scope="row">refused</th><td>1</td>' in counts_only
    )


def test_an_attempt_nbgrader_submit_is_still_writing_waits_for_its_secret(tmp_path):
    """nbgrader submit makes the attempt's folder in the inbound, then writes the notebooks, timestamp.txt and
    submission_secret.txt into it: a pass that sees it before the secret leaves it for the next pass."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    folder = inbound(tmp_path) / f"ada+{ASSIGNMENT}+{stamp}+abc"
    folder.mkdir(parents=True)
    (folder / f"{NAME}.ipynb").write_text("{}")
    assert read_attempt(folder).writing and inbound_attempts(tmp_path) == []
    (folder / "submission_secret.txt").write_text("")  # opened, not written yet
    assert inbound_attempts(tmp_path) == []
    (folder / "submission_secret.txt").write_text("f" * 128)
    (sub,) = inbound_attempts(tmp_path)
    assert (sub.student, sub.problem, sub.writing) == ("ada", "", False)
    (folder / "submission_secret.txt").unlink()
    old = time.time() - 61  # a folder that has lacked it for over a minute was not handed in with submit
    os.utime(folder, (old, old))
    (sub,) = inbound_attempts(tmp_path)
    assert "no submission_secret.txt" in sub.problem


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["SIGTERM", "Ctrl-C"])
def test_a_stopped_service_leaves_no_temporary_folder(tmp_path, stop, released_mini):
    """make serve stopped by SIGTERM (a service manager) or Ctrl-C (SIGINT to its whole process group, as a
    terminal sends it) once its kernel zygote and fork server run: no wt-* folder is left in its TMPDIR."""
    require_sandbox()
    course, exchange = course_with_exchange(tmp_path, SERVICE, released=released_mini)
    import shutil
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="serve-stop-", dir="/tmp"))  # short: the service's sockets are made in it
    log = course.state / "service" / "serve.log"
    cmd = [sys.executable, "-m", "whole_transformer.course", "--root", str(course.root), "serve"]
    env = {**checkout_env(), "TMPDIR": str(tmp), "PYTHONFAULTHANDLER": "1"}  # SIGABRT: where each thread stood
    proc = subprocess.Popen(
        [*cmd, f"--exchange={exchange}", "--poll=0.5"],
        env=env,
        stdout=(tmp_path / "serve.out").open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        # Ctrl-C as a terminal's foreground job gets it: this test process may have SIGINT ignored by now (a kernel
        # or a Jupyter command run in it earlier sets SIG_IGN), which the service would inherit, and Python with it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        try:
            _wait_for(log, "serve: grading", proc)
        except AssertionError:
            raise AssertionError((tmp_path / "serve.out").read_text()[-3000:]) from None
        made = sorted(p.name for p in tmp.rglob("wt-*"))
        assert any(name.startswith("wt-zygote-") for name in made), made  # the zygote ran, in the service's folder
        if stop == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=180)  # generous: a busy machine is slow to stop, not wrong
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # the faulthandler prints every thread's stack into serve.out
            proc.wait(timeout=30)
            said = (tmp_path / "serve.out").read_text()[-6000:]
            raise AssertionError(f"not stopped in 180 s; serve.log:\n{log.read_text()[-2000:]}\n{said}") from None
        assert code == 130, (tmp_path / "serve.out").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    left = sorted(p.name for p in tmp.iterdir())
    shutil.rmtree(tmp, ignore_errors=True)
    assert not [name for name in left if name.startswith("wt-")], left
    assert f"serve: stopped ({'SIGTERM' if stop == 'SIGTERM' else 'Ctrl-C'})" in log.read_text()


def test_the_service_folder_s_multiprocessing_temporary_folder_is_cleaned_up_when_the_service_stops(tmp_path):
    """A service run in a process that goes on (a test, a notebook): multiprocessing's temporary folder, made inside
    the service's own, is cleaned up and forgotten as the service stops, so nothing fails on it at exit."""
    script = (
        "import os, multiprocessing.util as u\n"
        "from whole_transformer.course.service.serve import own_tmp\n"
        "with own_tmp():\n"
        "    made = u.get_temp_dir()\n"
        "assert not os.path.exists(made), made\n"
        "again = u.get_temp_dir()\n"  # a later use makes a folder of its own
        "assert again != made and os.path.isdir(again), again\n"
    )
    env = {**checkout_env(), "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
