"""The term's LTI act: the course inside an LMS, on a real JupyterHub, in Chromium (``make classroom-test``).

An LMS for the act: the LTI 1.3 platform of tests/lti_platform.py (``lti1p3platform``) on 127.0.0.1, started and
stopped here. ``classroom.up(..., lti=FILE)`` makes a classroom whose hub signs users in from it
(examples/classroom/up.py with ``--lti``: the course's ``lti/hub.py`` on JupyterHub, each student's Linux account
made at their first launch); its admin pastes the tool's key and ``make lti-config``'s URLs into the platform.
Then:

1. the instructor imports the class list (ada, by email), the due date is two hours past with 10 % a started
   day late, and the grading service is on;
2. ada opens the assignment on the LMS's course page and lands in notebook 02 in her own server, signed in,
   her copy fetched for her; her LMS id lands on her roster row, and the hub's log says so;
3. launches that are not what they claim are refused, each with its reason in the hub's log and a page that
   tells the student to launch again from the LMS, nothing of ada on it: a bad signature, her launch replayed
   with her browser's cookies (the replayed nonce), her launch posted again without them (within the five
   minutes her id_token lives: later, it is refused as expired);
4. she writes the graded exercise ``layer_norm`` (the reference's equation), saves and submits;
5. the grading service grades the attempt and the platform records her score, 10 % taken for the late hand-in;
6. eve, whom the roster does not know, launches: she is added to the roster under a name of her own, the log
   says so, and she lands in her notebook; the LMS's instructor launches and lands in JupyterLab as the
   classroom's instructor, the hub's admin;
7. the platform stopped while eve's attempt is graded: her score is kept, ``make term`` lists it and why;
8. the platform back, the instructor's ``make grades`` posts the class: the platform's scores equal grades.csv's;
   ``make lti-post AGAIN=1`` sends the class once more, never a second, different score.

Screenshots: artifacts/classroom-lti/*.png (the LMS page, the student's landing, each refused page); the hub's
log, the refusals' lines and the score table beside grades.csv there too. Needs what the term needs (root, the
proxy, Chromium, bubblewrap); without one it skips and says which, or fails under WT_REQUIRE_CLASSROOM=1.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from lti_platform import INSTRUCTOR, LEARNER, Platform  # tests/: pyproject's pythonpath
from test_classroom import (
    LOGIN_TIMEOUT,
    api,
    as_user,
    attempt_record,
    check_requirements,
    inbound,
    open_menu_item,
    save_notebook,
)
from test_classroom import Step as TermStep

from whole_transformer.course.lti.launch import PAGE_TITLE, STUDENT_TEXT
from whole_transformer.course.lti.tool_config import notebook_url

REPO = Path(__file__).resolve().parents[2]

ARTIFACTS = REPO / "artifacts" / "classroom-lti"
pytestmark = [pytest.mark.classroom, pytest.mark.e2e, pytest.mark.xdist_group("classroom")]

NB = "02-microscope"
#: ada's layer_norm, the equation of answers/reference.py as she would write it
LAYER_NORM = '''def layer_norm(x, gamma, beta, eps=1e-5):
    """Each row of x (last axis) to mean 0 and variance 1, then times gamma plus beta: x's shape."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta'''
USERS = {
    "lms-ada": {"id": "lms-ada", "roles": [LEARNER], "email": "ada@example.org", "name": "Ada Lovelace"},
    "lms-eve": {"id": "lms-eve", "roles": [LEARNER], "email": "eve@example.org", "name": "Eve Newcomer"},
    "lms-prof": {"id": "lms-prof", "roles": [INSTRUCTOR], "email": "prof@example.org", "name": "Pat Professor"},
}
TIMES: dict[str, float] = {}


def step(name: str):
    """A step of the act, timed into artifacts/classroom-lti/times.json."""
    return TermStep(name, TIMES, ARTIFACTS)


@pytest.fixture(scope="module")
def browser(pw_driver):
    from test_classroom import _e2e

    check_requirements()
    rules = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"  # nothing of the act from the internet
    chromium = pw_driver.chromium.launch(
        executable_path=_e2e.CHROMIUM, headless=True, args=[*_e2e.CHROMIUM_ARGS, rules]
    )
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def lms():
    platform = Platform()
    platform.users.update(USERS)
    yield platform
    platform.stop()


@pytest.fixture(scope="module")
def room(browser, lms, tmp_path_factory):
    """A classroom whose hub signs users in from ``lms``, registered there as its admin would."""
    from examples.classroom import up as classroom
    from examples.classroom.hub import free_port

    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    tag = os.urandom(2).hex()
    folder, port = Path(f"/tmp/wt-classroom-lti-{tag}"), free_port()
    hub = f"http://127.0.0.1:{port}"
    registration = tmp_path_factory.mktemp("lms") / "lti.toml"  # what the LMS's admin gave the instructor
    registration.write_text(lms.lti_table(tool_url=hub) + "post_after_grading = true\n")
    made = None
    try:
        with step("0 make the classroom, users signing in from the LMS"):
            made = classroom.up(folder, port=port, prefix=f"wtl{tag}", log=print, lti=registration)
        lms.registration.set_tool_key_set(json.loads((made.course / "lti-tool-jwks.json").read_text()))
        lms.point_at(hub, notebook_url(hub, f"{NB}.ipynb"))  # the LMS's link opens notebook 02
        yield made
    finally:
        for name in ("jupyterhub.log", "course.log", "grading.log"):
            if (folder / "logs" / name).exists():
                shutil.copy2(folder / "logs" / name, ARTIFACTS / name)
        if (folder / classroom.RECORD).exists():
            made_accounts = _accounts_under(folder / "home")
            classroom.down(folder, log=print)
            import pwd

            for name in made_accounts:  # the hub's accounts (made at a first launch) are gone too
                with pytest.raises(KeyError):
                    pwd.getpwnam(name)
        assert not folder.exists()


def _accounts_under(homes: Path) -> list[str]:
    import pwd

    return [p.pw_name for p in pwd.getpwall() if Path(p.pw_dir).is_relative_to(homes)]


def shot(page, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def hub_log(room) -> str:
    return (room.dir / "logs" / "jupyterhub.log").read_text(errors="replace")


def instructor(room, *args: str) -> str:
    """A course command as the instructor types it in their terminal; its output."""
    done = as_user(room, room.instructor, room.env / "bin" / "python", "-m", "whole_transformer.course", *args)
    return done.stdout + done.stderr


def course_file(room, name: str, text: str) -> Path:
    """A file of the instructor's course folder, theirs as if they had written it."""
    path = room.course / name
    path.write_text(text)
    owner = room.course.stat()
    os.chown(path, owner.st_uid, owner.st_gid)
    return path


def launch(browser, lms, user: str, name: str, keep: dict | None = None):
    """``user`` opens the assignment on the LMS's course page (a browser of their own); the page, once the launch
    has left the LMS for the hub. With ``keep``, what an eavesdropper would take of the launch goes there: the
    form the LMS posts to the hub, and the browser's cookies as they are sent with it."""
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.set_default_timeout(60_000)
    if keep is not None:

        def take(route):
            keep.update(body=route.request.post_data, cookies=page.context.cookies(), url=route.request.url)
            route.continue_()

        page.route("**/hub/lti13/oauth_callback", take)
    page.goto(f"{lms.url}/course?user={user}")
    shot(page, f"{name}-lms-course-page")
    page.click("#assignment")
    return page


def lands_in_notebook(page, room, student: str, name: str) -> None:
    """The launch ends in ``student``'s own server, notebook 02 open, signed in."""
    page.wait_for_url(re.compile(rf"/user/{student}/lab/tree/whole-transformer/{NB}\.ipynb"), timeout=LOGIN_TIMEOUT)
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=LOGIN_TIMEOUT)
    page.locator(".jp-Notebook .cm-content", has_text="def layer_norm(x, gamma, beta").first.wait_for()
    shot(page, f"{name}-landing")
    assert (room.home(student) / "whole-transformer" / f"{NB}.ipynb").is_file()


def refused(page, name: str, secrets: list[str]) -> str:
    """The page of a refused launch: a 403 that says to launch again from the LMS, nothing of anyone."""
    page.locator("text=open the assignment again").wait_for(timeout=60_000)
    shot(page, f"{name}-refused")
    text = page.inner_text("body")
    (ARTIFACTS / f"{name}-refused.txt").write_text(text)
    assert "403" in text and PAGE_TITLE in text and STUDENT_TEXT in " ".join(text.split()), text
    assert "refused" not in text and "nonce" not in text and "signature" not in text, text  # the why: the log's
    assert not [s for s in secrets if re.search(rf"\b{re.escape(s)}\b", text, re.IGNORECASE)], text
    return text


def submit(page, room, student: str) -> Path:
    """Submit in the Assignments tab; the attempt's folder in the exchange."""
    before = inbound(room, student)
    open_menu_item(page, "Nbgrader", "Assignment List")
    page.locator("#fetched_assignments_list button", has_text="Submit").first.click()
    deadline = time.monotonic() + 60
    while not (new := inbound(room, student) - before):
        assert time.monotonic() < deadline, "Submit put no new attempt into the exchange"
        time.sleep(0.5)
    page.locator("#submitted_assignments_list .item_name", has_text="whole-transformer").first.wait_for()
    return new.pop()


def wait_for(what: str, check, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"no {what} within {timeout:.0f} s"
        time.sleep(1)
    return found


def last_scores(lms) -> dict[str, float]:
    return {user: history[-1]["scoreGiven"] for user, history in lms.scores.items()}


def test_students_launch_from_the_lms_and_their_scores_reach_it(room, browser, lms):
    prefix = room.instructor.removesuffix("instructor")
    ada, eve = f"{prefix}ada", f"{prefix}eve"
    with step("1 instructor: the class list, the due date two hours past (10 % a started day late), the service on"):
        toml = room.course / "course.toml"
        due = (datetime.now(UTC) - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M")
        text = toml.read_text()
        for old, new in (
            ('[assignment]\ntimezone = "UTC"\n', f'[assignment]\ntimezone = "UTC"\ndue = "{due}"\n'),
            ('[late]\npolicy = "none"\n', '[late]\npolicy = "per_day"\npenalty = 10\n'),
            ("\n[service]\nenabled = false\n", "\n[service]\nenabled = true\n"),
        ):
            assert old in text, old
            text = text.replace(old, new)
        toml.write_text(text)
        course_file(
            room, "students.csv", f"id,first_name,last_name,email,lms_user_id\n{ada},Ada,Lovelace,ada@example.org,\n"
        )
        instructor(room, "roster", "students.csv")

    captured: dict = {}
    with step("2 ada opens the assignment in the LMS and lands in notebook 02, signed in, her copy fetched"):
        page = launch(browser, lms, "lms-ada", "2-ada", keep=captured)
        lands_in_notebook(page, room, ada, "2-ada")
        assert captured["body"] and any(c["name"].startswith("lti13authenticator") for c in captured["cookies"])
        log = hub_log(room)
        assert f"lti: {ada}'s LMS id lms-ada added to the roster from their launch" in log, log[-3000:]
        assert f"lti: {ada}'s copy of whole-transformer fetched from the exchange" in log, log[-3000:]

    secrets = ["ada", "Lovelace", "lms-ada", "example.org"]  # what a refused page must not show of her
    lines = {}
    with step("3 a forged launch, hers replayed and hers posted again are refused; the page says launch again"):
        lms.forge = "bad signature"
        refused(launch(browser, lms, "lms-ada", "3a-forged"), "3a-bad-signature", secrets)
        replay = browser.new_context().new_page()
        replay.context.add_cookies(captured["cookies"])  # the eavesdropper has her cookies too: the nonce is the check
        post_again(replay, lms, captured)
        refused(replay, "3b-replayed-nonce", secrets)
        bare = browser.new_context().new_page()
        post_again(bare, lms, captured)
        refused(bare, "3c-posted-again", secrets)
        log = hub_log(room)
        for why, start in (
            ("bad signature", "bad signature: the id_token does not verify with the platform's key"),
            ("replayed nonce", "replayed nonce: "),
            ("posted again", "the launch does not answer a login this browser started (OAuth state missing"),
        ):
            found = re.findall(rf"LTI 1\.3 launch refused: ({re.escape(start)}[^\n]*)", log)
            assert found, f"no refusal for the {why} in the hub's log: {log[-3000:]}"
            lines[why] = found[-1]
        (ARTIFACTS / "3-refusals.txt").write_text("".join(f"{why}: {line}\n" for why, line in lines.items()))
        print("\n".join(f"REFUSED {why}: {line}" for why, line in lines.items()))

    with step("4 ada writes layer_norm in notebook 02, saves and submits"):
        editor = page.locator(".jp-Notebook .jp-CodeCell .cm-content", has_text="def layer_norm(x, gamma, beta").first
        editor.scroll_into_view_if_needed()
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.insert_text(LAYER_NORM)
        page.keyboard.press("Escape")
        save_notebook(page)
        saved = json.loads(api(page, f"/user/{ada}/api/contents/whole-transformer/{NB}.ipynb")["body"])
        assert any("np.sqrt(var + eps)" in "".join(c["source"]) for c in saved["content"]["cells"])
        shot(page, "4-ada-answered")
        attempt = submit(page, room, ada)
        shot(page, "4-ada-submitted")

    with step("5 the grading service grades it; the LMS records ada's score, 10 % taken for the late hand-in"):
        record = attempt_record(room, attempt)
        assert (record["status"], record["score"], record["late"]) == ("graded", 2.0, True), record
        wait_for("score of ada at the LMS", lambda: "lms-ada" in lms.scores)
        given = lms.scores["lms-ada"][-1]
        assert given["scoreGiven"] == pytest.approx(1.8) and given["gradingProgress"] == "FullyGraded", given
        maximum = given["scoreMaximum"]

    with step("6 eve, whom the roster does not know, launches: added and said so; the LMS's instructor is admin"):
        eve_page = launch(browser, lms, "lms-eve", "6-eve")
        lands_in_notebook(eve_page, room, eve, "6-eve")
        log = hub_log(room)
        assert f"lti: {eve} added to the roster by their first launch (LMS user lms-eve, eve@example.org)" in log
        people = instructor_roster(room)
        assert people[ada]["lms_user_id"] == "lms-ada" and people[ada]["email"] == "ada@example.org", people
        assert people[eve]["lms_user_id"] == "lms-eve" and people[eve]["email"] == "eve@example.org", people
        teacher = launch(browser, lms, "lms-prof", "6-instructor")
        teacher.wait_for_url(re.compile(rf"/user/{room.instructor}/lab"), timeout=LOGIN_TIMEOUT)  # not a student's copy
        teacher.goto(f"{room.url}/hub/home")
        teacher.locator("a", has_text="Admin").first.wait_for()  # the hub's admin page: theirs alone
        shot(teacher, "6-instructor-hub-home")

    with step("7 the LMS stopped while eve's attempt is graded: her score kept; make term lists it and why"):
        lms.stop()
        attempt = submit(eve_page, room, eve)
        assert attempt_record(room, attempt)["status"] == "graded"
        state = room.course / "lti-passback.json"
        wait_for("kept score of eve", lambda: state.is_file() and eve in json.loads(state.read_text())["outbox"])
        term = [ln for ln in instructor(room, "term").splitlines() if ln.startswith("term: LMS: ")]
        (ARTIFACTS / "7-make-term.txt").write_text("\n".join(term) + "\n")
        assert len(term) == 1 and term[0].startswith(f"term: LMS: {eve}: 0/{maximum:g} has not reached the LMS"), term
        assert "the LMS did not answer at" in term[0] and "make lti-post sends it again" in term[0], term

    with step("8 the LMS back: make grades posts the class; its scores equal grades.csv's; AGAIN=1 sends the same"):
        lms.start()
        said = instructor(room, "grades")
        assert f"lti-post: {eve}: 0/{maximum:g} sent to the LMS (user lms-eve; retried: the LMS did not answer" in said
        grades = {r["student_id"]: float(r["score"]) for r in csv.DictReader(io.StringIO(read(room, "grades.csv")))}
        table = score_table(lms, grades, {"lms-ada": ada, "lms-eve": eve})
        (ARTIFACTS / "8-scores.txt").write_text(table)
        print(table)
        assert last_scores(lms) == {"lms-ada": grades[ada], "lms-eve": grades[eve]} == {"lms-ada": 1.8, "lms-eve": 0.0}
        assert not [ln for ln in instructor(room, "term").splitlines() if ln.startswith("term: LMS: ")]
        instructor(room, "lti-post", "--again")
        assert {u: {s["scoreGiven"] for s in h} for u, h in lms.scores.items()} == {"lms-ada": {1.8}, "lms-eve": {0.0}}
        assert {u: len(h) for u, h in lms.scores.items()} == {"lms-ada": 2, "lms-eve": 2}


def post_again(page, lms, captured: dict) -> None:
    """The launch ``captured`` posted to the hub once more, from a page of the LMS's site (a form, as the LMS's)."""
    page.goto(f"{lms.url}/course?user=nobody")
    fields = dict(parse_qsl(captured["body"]))
    page.evaluate(
        """([url, fields]) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = url;
        for (const [name, value] of Object.entries(fields)) {
            const input = document.createElement('input');
            input.type = 'hidden'; input.name = name; input.value = value;
            form.appendChild(input);
        }
        document.body.appendChild(form);
        form.submit();
    }""",
        [captured["url"], fields],
    )


def instructor_roster(room) -> dict:
    code = (
        "import json, pathlib; from whole_transformer.course.layout import Course; "
        "from whole_transformer.course.term.names import roster; "
        "print('ROSTER:' + json.dumps(roster(Course(pathlib.Path.cwd()))))"
    )
    done = as_user(room, room.instructor, room.env / "bin" / "python", "-c", code)
    return json.loads(done.stdout.split("ROSTER:", 1)[1])


def read(room, name: str) -> str:
    return (room.course / name).read_text()


def score_table(lms, grades: dict[str, float], students: dict[str, str]) -> str:
    """The platform's score table beside grades.csv's, one row a student."""
    rows = [f"{'LMS user':<10} {'student':<16} {'platform':>9} {'grades.csv':>11} {'every score the platform took'}"]
    for user, student in students.items():
        history = [s["scoreGiven"] for s in lms.scores.get(user, [])]
        given = f"{history[-1]:g}/{lms.scores[user][-1]['scoreMaximum']:g}" if history else "-"
        rows.append(f"{user:<10} {student:<16} {given:>9} {grades[student]:>11g} {history}")
    return "\n".join(rows) + "\n"
