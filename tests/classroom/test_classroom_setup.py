"""The parts of ``make classroom`` that need no root and no browser (the whole term: test_classroom.py),
and the term's checks of what it saw, each shown failing on a planted fault."""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from examples.classroom import env as classroom_env
from examples.classroom import seed as classroom_seed
from examples.classroom import up as classroom


def test_without_root_it_says_so_and_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(classroom.ClassroomError) as err:
        classroom.up(tmp_path / "room")
    assert "needs root" in str(err.value) and "sudo make classroom" in str(err.value)
    assert not (tmp_path / "room").exists()
    assert classroom.main(["up", "--dir", str(tmp_path / "room")]) == 2


def test_a_python_under_a_closed_folder_is_not_used_for_students():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="wt-python-"))  # mkdtemp makes it 0700
    try:
        exe = base / "python3"
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
        assert stat.S_IMODE(base.stat().st_mode) == 0o700
        assert not classroom_env.everyone_can_run(exe)
        base.chmod(0o755)
        assert classroom_env.everyone_can_run(exe)
    finally:
        shutil.rmtree(base)


def test_stop_without_a_classroom_touches_nothing(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    classroom.down(tmp_path, log=lambda *a: None)
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_up_refuses_a_folder_that_is_not_its_own(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    (tmp_path / "keep.txt").write_text("mine")
    proxy = tmp_path / "chp"
    proxy.write_text("")
    with pytest.raises(classroom.ClassroomError, match="not empty"):
        classroom.up(tmp_path, proxy=proxy)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["chp", "keep.txt"]


def test_the_students_environment_takes_installed_packages_and_starts_its_own_python(tmp_path):
    """seed_env puts an installed distribution (tqdm here) into a new venv: importable there, and its
    console script runs the new venv's Python, not this one's."""
    import subprocess
    import sys

    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", env], check=True)
    dists = classroom_seed.installed_closure(["tqdm", "no-such-distribution-here==1"])
    assert [d.metadata["Name"] for d in dists] == ["tqdm"]
    assert classroom_seed.seed_env(env, dists) == 1
    script = (env / "bin" / "tqdm").read_text()
    assert script.startswith(f"#!{env / 'bin' / 'python'}\n") and sys.prefix not in script
    out = subprocess.run(
        [env / "bin" / "python", "-c", "import sys, tqdm; print(sys.prefix, tqdm.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0] == str(env) and out[1].startswith(str(env / "lib")), out
    version = subprocess.run([env / "bin" / "tqdm", "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == dists[0].version


def test_a_package_the_students_python_is_too_old_for_is_left_to_pip():
    """Requires-Python is read against the students' Python, to the patch release (soupsieve 4.1.3 needs
    3.11.5: linked into a venv of Debian's 3.11.2 it broke the Formgrader's pages)."""
    from packaging.markers import default_environment

    assert classroom_seed.installed_closure(["tqdm"]) != []
    old = {**default_environment(), "python_full_version": "3.6.0", "python_version": "3.6"}
    assert classroom_seed.installed_closure(["tqdm"], old) == []


def test_a_distribution_without_requires_python_is_taken_whichever_metadata_finder_answers():
    """importlib_metadata (which Dask imports) adds its own finder to the import system; its metadata raise
    KeyError for a missing field where the standard library's give None. A make test ran the classroom after
    a Dask test in the same process and stopped on the first distribution without Requires-Python."""
    import importlib_metadata  # noqa: F401  (its finder, as in that process)

    dists = classroom_seed.installed_closure(["whole_transformer[instructor]"])
    assert any(d.metadata.get("Requires-Python") is None for d in dists)  # there is such a distribution
    assert {"torch", "nbgrader", "distributed"} <= {d.metadata["Name"].lower() for d in dists}


# ------------------------------------------------------------------ the term's checks (test_classroom.py uses them)
# Each is a plain function of what the term saw, so that it is shown below to fail when its property does not hold.
def check_no_secret(page_file: Path, secrets: dict[str, str], own: str) -> None:
    """The feedback page shows nothing a student must not see: ``secrets`` is reports.feedback.secrets of the
    released course (every hidden-test line, expected value and solution line of the instructor's source
    notebooks); a solution line the student wrote is theirs (``own``: what they typed)."""
    from whole_transformer.course.reports.feedback import EXPECTED, HIDDEN, SOLUTION, leaks

    kinds = set(secrets.values())
    assert {HIDDEN, EXPECTED, SOLUTION} <= kinds, f"the course's secrets lack a kind (so cannot be checked): {kinds}"
    shown = leaks(page_file, secrets, own)
    assert not shown, f"{page_file.name} shows what a student must not see: {[(s, secrets[s]) for s in shown]}"


def tries_command(tries: list[str]) -> str:
    """The commands for a terminal: each one's output (stdout and stderr) marked line by line ``TRY<i>: ``.
    The quotes keep the marker out of the terminal's echo of the command."""
    return "; ".join(f"{cmd} 2>&1 | sed 's/^/TRY''{i}: /'" for i, cmd in enumerate(tries))


def terminal_lines(out: str) -> list[str]:
    """A terminal's output as lines, without its control sequences (colours, title, bracketed paste)."""
    return re.split(r"\r\n|\r|\n", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", out))


def check_each_denied(out: str, tries: list[str]) -> None:
    """Every one of ``tries`` was refused: it printed, and printed only, "Permission denied" lines."""
    got: dict[int, list[str]] = {i: [] for i in range(len(tries))}
    for m in filter(None, (re.match(r"TRY(\d+): (.*)", line) for line in terminal_lines(out))):
        got.setdefault(int(m[1]), []).append(m[2])
    for i, cmd in enumerate(tries):
        assert got[i] and all("Permission denied" in line for line in got[i]), (
            f"not refused: `{cmd}` printed {got[i] or 'nothing'}"
        )


def check_whoami(out: str, user: str) -> None:
    """The terminal runs as ``user``: the line ``WHO=<name>`` printed by ``echo WHO''=$(id -un)`` (not the
    prompt, which holds the name anyway)."""
    names = [line[4:] for line in terminal_lines(out) if re.fullmatch(r"WHO=\S+", line)]
    assert names == [user], f"the terminal runs as {names}, not {user}"


def check_refused(path: str, got: dict) -> None:
    """A contents-API request was refused: a 4xx answer (the own server: 404 outside its root; another's
    server: 403). Any 200, with a contents model or not (a login page after a redirect), is not a refusal."""
    assert 400 <= got["status"] < 500, (
        f"not refused: {path} answered {got['status']} at {got['url']}: {got['body'][:300]}"
    )


def test_the_terms_checks_fail_on_planted_faults(tmp_path):
    """Each check of the term fails when what it names does not hold (a fault planted in what the term saw)."""
    from whole_transformer.course.reports.feedback import EXPECTED, HIDDEN, SOLUTION

    secrets = {
        'grading.hand_out_answer("tokens_905", tokens_905)': HIDDEN,
        "tokens_905 = 8": SOLUTION,
        '# {"name": "tokens_905", "cases": [{"kind": "the answer", "want": 8}]}': EXPECTED,
    }
    page = tmp_path / "feedback.html"
    page.write_text("<p>check(&quot;tokens_905&quot;)</p><pre>tokens_905 = 8</pre>")
    check_no_secret(page, secrets, own="tokens_905 = 8")  # the right student's own answer: theirs
    with pytest.raises(AssertionError, match="solution"):
        check_no_secret(page, secrets, own="tokens_905 = 9")  # the answer shown to the wrong student
    page.write_text("<span>grading</span>.hand_out_answer(<span>&quot;tokens_905&quot;</span>, tokens_905)")
    with pytest.raises(AssertionError, match="hidden test"):
        check_no_secret(page, secrets, own="")
    with pytest.raises(AssertionError, match="lack a kind"):
        check_no_secret(page, {"x": HIDDEN}, own="")

    tries = ["ls /home/b", "grep -o 'x' /home/b/nb.ipynb"]
    command = tries_command(tries)
    denied = (
        f"$ {command}\r\nTRY0: ls: cannot open directory '/home/b': Permission denied\r\n"
        "TRY1: grep: /home/b/nb.ipynb: Permission denied\r\n"
    )
    check_each_denied(denied, tries)
    for planted in (
        denied.replace("TRY1: grep: /home/b/nb.ipynb: Permission denied", "TRY1: tokens_905 = 9"),
        denied.replace("Permission denied", "No such file or directory", 1),
        denied.split("TRY1")[0] + "Permission denied\r\n",  # two denials, only one of them a try's
        denied + "TRY1: tokens_905 = 9\r\n",
    ):
        with pytest.raises(AssertionError, match="not refused"):
            check_each_denied(planted, tries)

    check_whoami(
        "\x1b[?2004hwt-student1@host:~$ echo WHO''=$(id -un)\r\n\x1b[?2004l\rWHO=wt-student1\r\n", "wt-student1"
    )  # as the terminal sends it: bracketed paste turned off before the line
    with pytest.raises(AssertionError, match="runs as"):  # the prompt names the student; the account is another
        check_whoami("wt-student1@host:~$ echo WHO''=$(id -un)\r\nWHO=root\r\n", "wt-student1")

    for ok in (
        {"status": 404, "url": "http://h/user/a/api/contents/..%2Fb", "body": '{"message": ""}'},
        {"status": 403, "url": "http://h/user/b/api/contents/x", "body": '{"message": "Forbidden"}'},
    ):
        check_refused("p", ok)
    for leak in (
        {"status": 200, "url": "http://h/user/b/api/contents/x", "body": '{"name": "x", "type": "d"}'},
        {"status": 200, "url": "http://h/hub/login?next=x", "body": "<!DOCTYPE html>"},
        {"status": 200, "url": "http://h/user/b/api/contents/x", "body": "<html>a page</html>"},
        {"status": 500, "url": "http://h/user/b/api/contents/x", "body": ""},
    ):
        with pytest.raises(AssertionError, match="not refused"):
            check_refused("p", leak)


def test_an_lms_registration_with_a_value_missing_stops_before_anything_is_made(tmp_path):
    """make classroom LTI=FILE: FILE's [lti] is checked first; a missing value is named with its fix."""
    lti = tmp_path / "lti.toml"
    lti.write_text('[lti]\nissuer = "https://canvas.instructure.com"\ntool_url = "http://127.0.0.1:8000"\n')
    with pytest.raises(classroom.ClassroomError) as err:
        classroom.up(tmp_path / "room", lti=lti)
    assert "the LMS's registration is not complete: " in str(err.value)
    assert "[lti] client_id: missing; set it to the client id the LMS gave the tool" in str(err.value)
    assert not (tmp_path / "room").exists()
    with pytest.raises(classroom.ClassroomError, match="no such file"):
        classroom.up(tmp_path / "room", lti=tmp_path / "nowhere.toml")


def test_the_hub_of_an_lti_classroom_signs_in_from_the_lms_and_makes_each_students_account(tmp_path):
    """The hub's sign-in lines with --lti: the course's LTI authenticator on Linux accounts, made under DIR/home with
    the classroom's prefix; the instructor's account for the LMS's instructors; Python that runs."""
    from examples.classroom.hub import sign_in
    from examples.classroom.room import Classroom
    from whole_transformer.course.lti.settings import read_lti
    from whole_transformer.course.term.settings import parse

    lti = read_lti(
        parse(
            '[lti]\nissuer = "http://127.0.0.1:9001"\nclient_id = "c-1"\ndeployment_id = "d-1"\n'
            'jwks_url = "http://127.0.0.1:9001/jwks"\nlogin_url = "http://127.0.0.1:9001/auth"\n'
            'token_url = "http://127.0.0.1:9001/token"\ntool_url = "http://127.0.0.1:8000"\n'
        )
    )
    room = Classroom(tmp_path, 8000, "wtq-instructor")
    text = sign_in(room, lti)
    assert "LinuxAccountsLTI13Authenticator" in text and '"pam"' not in text
    assert "c.CourseLTI13Authenticator.name_prefix = 'wtq-'" in text
    assert "c.CourseLTI13Authenticator.instructor_name = 'wtq-instructor'" in text
    assert f"{tmp_path}/home/USERNAME" in text and "HOME_MODE=0700" in text
    compile(text, "jupyterhub_config.py", "exec")
    assert 'c.JupyterHub.authenticator_class = "pam"' in sign_in(room, None)
