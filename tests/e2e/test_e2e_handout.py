"""The students' handout in JupyterLab, started by its own `make lab`: no instructor tool, no error.

A fresh `make handout` is built into a temporary folder, with a `.venv` of its own (a copy of the
course's, files hard-linked, its `etc/` copied whole so nothing written there reaches the course's
`.venv`, its scripts pointed at the copy's Python, and no `.installed` stamp), so that the handout's
`make lab` does everything it does on a student's machine but the download: it installs the handout's
package into that `.venv`, turns nbgrader's instructor extensions off there, and starts JupyterLab.

In Chromium the page then has no Nbgrader menu (Formgrader, Create Assignment), no Create Assignment
sidebar, no Assignments or Courses tab and none of their errors ("Error fetching courses!", "The
exchange directory does not exist"); the server's log has no "No nbgrader_config.py file found" and no
error. Validate is there and tells the truth: pressed on notebook 01 as released, it lists the checks not
answered yet with the note that hidden tests decide the grade. Screenshots:
artifacts/e2e/handout-lab.png and artifacts/e2e/handout-validate.png.

In a terminal of that JupyterLab (as File ▸ New ▸ Terminal opens one), each command of the student
guide (docs/student.md) typed as written works: `python -m whole_transformer.train` trains and prints the
held-out score, and `nbgrader validate` says the course's header from the notebooks' folder and from a
folder without an nbgrader_config.py alike. The transcript: artifacts/e2e/handout-terminal.txt.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from terminal import run_in_terminal

from whole_transformer.checks import VALIDATE_NOTE
from whole_transformer.course.layout import Course
from whole_transformer.course.publish import handout as handout_mod

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"
TOKEN = "wt-handout"
INSTRUCTOR_WORDS = [
    "Formgrader",
    "Create Assignment",
    "Error fetching courses",
    "exchange directory",
    "Courses",
    "Assignments",
    "Nbgrader",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _student_venv(dest: Path) -> None:
    """A copy of the course's .venv at dest/.venv, as the handout's `make lab` would find a fresh one."""
    target = dest / ".venv"
    subprocess.run(["cp", "-al", str(VENV), str(target)], check=True)
    shutil.rmtree(target / "etc")
    shutil.copytree(VENV / "etc", target / "etc", symlinks=True)  # written by `make lab`: a copy, not links
    (target / ".installed").unlink(missing_ok=True)
    old, new = f"#!{VENV}/bin/python", f"#!{target}/bin/python"
    for script in (target / "bin").iterdir():
        if script.is_file() and not script.is_symlink():
            head = script.read_bytes()[:200]
            if head.startswith(old.encode()):
                text = script.read_bytes().replace(old.encode(), new.encode(), 1)
                script.unlink()  # a new file: the course's .venv keeps its own
                script.write_bytes(text)
                script.chmod(0o755)


@pytest.fixture(scope="module")
def handout_lab(tmp_path_factory):
    """(url of notebook 01, the server's log file) of the handout's own `make lab`."""
    if not (VENV / "bin" / "jupyter").exists():
        pytest.skip("no .venv: run make venv")
    dest = tmp_path_factory.mktemp("student") / "handout"
    handout_mod.handout(Course.here(REPO), dest, log=lambda *_: None)
    _student_venv(dest)
    port = _free_port()
    log = dest.parent / "make-lab.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "NBGRADER", "VIRTUAL_ENV"))}
    env.update(
        JUPYTER_TOKEN=TOKEN,
        BROWSER="true",
        JUPYTER_CONFIG_DIR=str(dest.parent / "home-jupyter"),
        JUPYTERLAB_SETTINGS_DIR=str(dest.parent / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(dest.parent / "lab-workspaces"),
    )
    with log.open("w") as out:
        proc = subprocess.Popen(
            ["make", "lab", f"PORT={port}"],
            cwd=dest,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.time() + 900  # pip installs the handout's package, then two jupyter commands
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", timeout=5)
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    pytest.fail(f"the handout's make lab did not start JupyterLab:\n{log.read_text()[-4000:]}")
                time.sleep(2)
        yield f"http://127.0.0.1:{port}/lab/tree/release/whole-transformer/01-whole-machine.ipynb?token={TOKEN}", log
    finally:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)


def test_the_handouts_jupyterlab_shows_no_instructor_tool_and_no_error(handout_lab, browser, artifacts):
    url, log = handout_lab
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(url)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=180_000)
        validate = page.get_by_role("button", name="Validate").first
        validate.wait_for(timeout=60_000)
        time.sleep(3)  # every plugin has started: a late error dialog would show now
        page.screenshot(path=str(artifacts / "handout-lab.png"))
        menus = page.locator(".lm-MenuBar-itemLabel").all_inner_texts()
        assert "Nbgrader" not in menus, menus
        tabs = page.locator(".lm-TabBar-tab").evaluate_all(
            "els => els.map(e => (e.getAttribute('title') || '') + ' ' + e.textContent)"
        )
        shown = page.inner_text("body") + " ".join(tabs) + " ".join(menus)
        for word in INSTRUCTOR_WORDS:
            assert word not in shown, f"the handout's JupyterLab shows {word!r}"
        assert page.locator(".jp-Dialog").count() == 0, page.inner_text(".jp-Dialog")

        # Validate, on notebook 01 as released: the checks not answered yet, each with the note
        validate.click()
        page.wait_for_selector(".jp-Dialog", timeout=300_000)
        time.sleep(1)
        page.screenshot(path=str(artifacts / "handout-validate.png"))
        said = " ".join(page.inner_text(".jp-Dialog").split())
        assert "passes all the tests" not in said
        assert said.count("The following cell failed:") == 4, said[:2000]
        for qid in ("tokens_905", "logits_shape", "heads_4_to_8", "ffn_params"):
            assert f'check("{qid}") No answer yet: write `{qid} = ...`' in said, qid
        assert said.count(VALIDATE_NOTE) == 4
    finally:
        page.close()
    server_log = log.read_text()
    assert "No nbgrader_config.py file found" not in server_log
    for line in server_log.splitlines():
        assert not line.startswith("[E ") and "Traceback" not in line, line


# ------------------------------------------------------------------------------------------ the guide's terminal
GUIDE = REPO / "docs" / "student.md"
#: what the handout's nbgrader_config.py heads Validate's list with (nbgrader's own header without it)
COURSE_HEADER = "visible check(s) below are not right yet"


def guide_commands() -> list[str]:
    """The commands the student guide tells a student to type, as written (its code spans that are commands)."""
    spans = re.findall(r"`([^`\n]+)`", GUIDE.read_text())
    return [s for s in spans if s.split()[0] in ("python", "nbgrader", "cd") and len(s.split()) > 1]


def test_the_guides_commands_work_as_written_in_the_handouts_terminal(handout_lab, artifacts):
    """Each command of the guide, typed as written in a terminal of the JupyterLab the handout's `make lab`
    started (the terminal a student opens with File ▸ New ▸ Terminal), in the guide's order; then
    Validate again from a folder without an nbgrader_config.py: it says the same."""
    url, _ = handout_lab
    base = url.split("/lab/")[0]
    commands = guide_commands()
    assert commands == [
        "python -m whole_transformer.train",
        "cd release/whole-transformer",
        "nbgrader validate 04-how-it-learned.ipynb",
    ], commands
    elsewhere = ["cd ../../whole_transformer", "nbgrader validate ../release/whole-transformer/04-how-it-learned.ipynb"]
    shown = run_in_terminal(base, TOKEN, commands + elsewhere, timeout=900)
    (artifacts / "handout-terminal.txt").write_text("\n".join(out for _, _, out in shown))
    said = {command: (status, out) for command, status, out in shown}
    for command, (status, out) in said.items():
        assert "command not found" not in out and "No module named" not in out, out[-2000:]
        assert "No nbgrader_config.py file found" not in out, out[-2000:]
        if not command.startswith("nbgrader"):  # Validate exits 0 or 1 by what it found
            assert status == 0, out[-2000:]
    train = said["python -m whole_transformer.train"][1]
    assert re.search(r"held out: \d+/100 right", train), train[-2000:]
    checks = []
    for command in (commands[2], elsewhere[1]):
        out = said[command][1]
        assert COURSE_HEADER in out and "The following cell failed:" in out, out[-3000:]
        checks.append(sorted(set(re.findall(r'check\("(\w+)"\)', out))))
    assert checks[0] == checks[1] and len(checks[0]) >= 4, checks


def test_validate_says_what_a_sampler_s_error_is_missing(handout_lab, browser, artifacts):
    """Issue 40: a sample_next whose bad-argument error says nothing (ValueError()) is not a Success: Validate,
    pressed in the handout's JupyterLab, lists its check with what is missing. make lab printed notebook 01's
    address (not the bare /lab)."""
    import sys

    import nbformat

    sys.path.insert(0, str(REPO / "tests"))
    from simclass.notebooks import Notebooks, set_answer

    from whole_transformer.course.answers.mistakes import CATALOGUE

    url, log = handout_lab
    assert "/lab/tree/release/whole-transformer/01-whole-machine.ipynb?token=" in log.read_text()
    nb = Notebooks(REPO).solved("03-one-word-at-a-time")
    (m,) = [m for m in CATALOGUE["sample_next"] if m.id == "bare_value_error"]
    set_answer(nb, "sample_next", m.code_text.strip() + "\n")
    name = "03-bare-value-error.ipynb"
    nbformat.write(nb, log.parent / "handout" / "release" / "whole-transformer" / name)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(url.replace("01-whole-machine.ipynb", name))
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=180_000)
        # the workspace may keep notebook 01 open in a hidden tab: its Validate button is not this one
        validate = page.locator("[aria-label=Validate] >> visible=true").first
        validate.wait_for(timeout=60_000)
        time.sleep(2)
        validate.click()
        page.wait_for_selector(".jp-Dialog", timeout=600_000)
        time.sleep(1)
        page.screenshot(path=str(artifacts / "handout-validate-sampler.png"))
        said = " ".join(page.inner_text(".jp-Dialog").split())
        assert "Success" not in said and "passes all the tests" not in said, said[:2000]
        assert 'check("sample_next")' in said, said[:2000]
        assert "raises ValueError without a message" in said, said[:2000]
    finally:
        page.close()
