"""A term of the course on a real JupyterHub, end to end, in Chromium (``make classroom-test``).

``classroom.up`` makes a classroom on this machine (examples/classroom/up.py: Linux
accounts logging in through PAM, configurable-http-proxy, nbgrader's exchange, the shared
students' environment, the course released by the instructor); then, through the browser:

1. the instructor and two students log in as soon as the hub answers (their three servers start at
   once, while the instructor's course may still be being released); the instructor opens the
   Formgrader (from JupyterLab's Nbgrader menu, in its frame): the assignment is there, released;
2. each student fetches the assignment in the Assignments tab, opens notebook 01, types answers into
   two answer cells (one student right, one wrong), saves and submits; the wrong one is also hostile:
   every payload of tests/simclass/payloads.py is in the notebook handed in;
3. the instructor collects (``nbgrader collect``), runs the course's sandboxed autograde as
   themselves, writes a comment on one student's answer in the Formgrader, opens the hostile one's
   submission and comments on it too (no payload runs, nothing is fetched from evil.invalid, the
   instructor's files and gradebook are as they were, the answer still shows), makes the feedback
   (``python -m whole_transformer.course feedback``) and releases it (``nbgrader release_feedback``);
4. each student fetches the feedback in the Assignments tab and opens it: the right one has the
   points of both questions, the wrong one none of them, no hidden test shows; through their own
   server's contents API and a terminal, neither can read the other's files, the exchange's
   submissions, or the instructor's course folder; neither student has the Formgrader. No feedback shows
   anything of the course's secrets (reports.feedback.secrets of the instructor's course: each hidden-test
   line, expected value and solution line), and each path a terminal tries is refused on its own;
5. (the second act, test_grading_on_submission) the instructor turns [service] on in course.toml
   (attempts = 2): the hub's ``grading`` service leaves the first act's attempts to the instructor (already
   graded), then grades one student's attempts as they Submit: a wrong answer's feedback names the failed
   kind of case, the fixed one's has every test passed, a third is refused with a line that says why; the
   gradebook holds the counted score and the status page every attempt; the other student's Fetch Feedback
   brings none of it.

Screenshots of each step: artifacts/classroom/*.png; the seconds of each step: artifacts/classroom/times.json
(printed at the end of the pytest run by tests/conftest.py). The classroom is removed afterwards
(``classroom.down``), whatever happened. Needs root (Linux accounts), Debian's Chromium, bubblewrap,
configurable-http-proxy (``make classroom-proxy``) and a Python every account can run; without one of
them the test skips and says which, or fails under WT_REQUIRE_CLASSROOM=1 (set by .ci/run). The browser
resolves no host name but the loopback address: nothing of the term may come from the internet (the
Formgrader's page asks for MathJax from a CDN; it fails at once instead of whenever a lookup times out).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from test_classroom_setup import check_each_denied, check_no_secret, check_refused, check_whoami, tries_command

from whole_transformer.course.sandbox.zygote import FALLBACK

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "classroom"
_spec = importlib.util.spec_from_file_location("wt_e2e_conftest", REPO / "tests" / "e2e" / "conftest.py")
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)

pytestmark = [pytest.mark.classroom, pytest.mark.e2e, pytest.mark.xdist_group("classroom")]

NB = "01-whole-machine"
ANSWERS = {
    "right": {"tokens_905": "tokens_905 = 8", "ffn_params": "ffn_params = 16576"},
    "wrong": {"tokens_905": "tokens_905 = 9", "ffn_params": "ffn_params = 16448"},
}
COMMENT = "Both counts right: well done."
#: the instructor's Python prints each student's score in the gradebook after SCORES: (``instructor_json``)
SCORES = (
    "import json; from nbgrader.api import Gradebook; gb = Gradebook('sqlite:///gradebook.db'); "
    "print('SCORES:' + json.dumps({s.student.id: s.score "
    "for s in gb.assignment_submissions('whole-transformer')})); gb.close()"
)
LOGIN_TIMEOUT = 240_000  # ms: a cold single-user server (JupyterLab, torch-free) on a busy 2-core machine
TIMES: dict[str, float] = {}
PAGES: dict = {}  # user: their browser page, logged in while the classroom is made


def _require(ok: bool, reason: str):
    """Skip with the reason, or fail with it under WT_REQUIRE_CLASSROOM=1 (CI)."""
    if ok:
        return
    if os.environ.get("WT_REQUIRE_CLASSROOM") == "1":
        pytest.fail(f"{reason} (WT_REQUIRE_CLASSROOM=1, so this fails instead of skipping)", pytrace=False)
    pytest.skip(f"the JupyterHub term cannot run here: {reason}")


class Step:
    """A step of a term, its seconds kept in ``times`` and written to ``folder``/times.json (this term's by default;
    the LTI act keeps its own)."""

    def __init__(self, name, times: dict[str, float] | None = None, folder: Path | None = None):
        self.name, self.times, self.folder = name, TIMES if times is None else times, folder or ARTIFACTS

    def __enter__(self):
        self.t0 = time.monotonic()

    def __exit__(self, *exc):
        self.times[self.name] = round(time.monotonic() - self.t0, 1)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "times.json").write_text(json.dumps(self.times, indent=1))


@pytest.fixture(scope="module")
def room(browser):
    from examples.classroom import up as classroom

    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    tag = os.urandom(2).hex()
    folder = Path(f"/tmp/wt-classroom-test-{tag}")
    made = None
    try:
        with Step("0 make the classroom (accounts, environment, hub, release); the three log in once the hub is up"):
            made = classroom.up(
                folder,
                students=2,
                port=0,
                prefix=f"wtc{tag}",
                log=print,
                hub_up=lambda room: PAGES.update(
                    {user: log_in(browser, room, user) for user in (room.instructor, *room.students)}
                ),
            )
        TIMES.update({f"0.{i} {part}": t for i, (part, t) in enumerate(made.times.items(), 1)})
        yield made
    finally:
        log = folder / "logs" / "jupyterhub.log"
        if log.exists():
            shutil.copy2(log, ARTIFACTS / "jupyterhub.log")
        for name in ("env.log", "course.log", "grading.log"):
            if (folder / "logs" / name).exists():
                shutil.copy2(folder / "logs" / name, ARTIFACTS / name)
        if made is not None and (service_state(made) / "serve.log").exists():
            shutil.copy2(service_state(made) / "serve.log", ARTIFACTS / "serve.log")
        if (folder / classroom.RECORD).exists():
            with Step("9 remove the classroom"):
                classroom.down(folder, log=print)
        assert not folder.exists()
        if made is not None:
            import pwd

            for name in made.accounts:
                with pytest.raises(KeyError):
                    pwd.getpwnam(name)


def check_requirements():
    """What the term needs on this machine: each missing piece skips it (or fails it, in CI) with its reason."""
    from examples.classroom import env as classroom_env
    from examples.classroom import up as classroom

    _require(os.geteuid() == 0, "it needs root (it creates Linux accounts): run it as root")
    _require(
        classroom.DEFAULT_PROXY.is_file(),
        f"no configurable-http-proxy at {classroom.DEFAULT_PROXY}: run `make classroom-proxy` (needs npm)",
    )
    _require(Path(_e2e.CHROMIUM).exists(), f"no Chromium at {_e2e.CHROMIUM}: install Debian's `chromium`")
    _require(
        shutil.which("bwrap") is not None,
        "no bubblewrap (bwrap) for the sandboxed autograde: install Debian's `bubblewrap`",
    )
    _require(
        all(shutil.which(c) for c in ("useradd", "userdel", "chpasswd")),
        "no useradd/userdel/chpasswd: install Debian's `passwd`",
    )
    try:
        classroom_env.pick_python()
    except classroom_env.ClassroomError as err:
        _require(False, str(err))


@pytest.fixture(scope="module")
def browser(pw_driver):
    check_requirements()
    b = pw_driver.chromium.launch(
        executable_path=_e2e.CHROMIUM,
        headless=True,
        args=[*_e2e.CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
    )
    yield b
    b.close()


def shot(page, name):
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def log_in(browser, room, user):
    """A page of a new browser context that has sent ``user``'s login form (the hub then starts their server)."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{room.url}/hub/login")
    page.add_locator_handler(page.locator(".jp-Dialog", has_text="has changed on disk"), keep_what_was_typed)
    page.fill("#username_input", user)
    page.fill("#password_input", room.passwords[user])
    page.click("#login_submit")
    return page


def keep_what_was_typed(dialog):
    """JupyterLab's autosave (120 s after a notebook opens) racing the test's own Ctrl+S makes it ask whether
    the file "has changed on disk": the editor holds what was typed (and saved), so keep it, as a student would."""
    with open(ARTIFACTS / "autosave-races.txt", "a") as f:
        f.write(f"{time.strftime('%H:%M:%S')} File Changed: Overwrite\n")
    dialog.get_by_role("button", name="Overwrite").click()


def save_notebook(page, tries: int = 4):
    """Ctrl+S until the notebook's tab loses its unsaved mark. On a busy machine the last keystrokes can reach
    the notebook's model just after a save took it (the save is done, the mark stays): save again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(tries):
        page.keyboard.press("Control+S")
        try:
            page.locator(".lm-TabBar-tab.jp-mod-dirty").wait_for(state="detached", timeout=15_000)
            return
        except PlaywrightTimeout:
            continue
    raise AssertionError(f"the notebook still has unsaved changes after {tries} Ctrl+S")


def lab_ready(page, user):
    """Wait until ``user``'s JupyterLab is up in ``page``, with nbgrader's menu."""
    page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=LOGIN_TIMEOUT)
    page.wait_for_selector("#jp-main-dock-panel", timeout=LOGIN_TIMEOUT)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=LOGIN_TIMEOUT)
    return page


def open_menu_item(page, menu, item, tries: int = 6):
    """Click ``menu``, then its ``item``. A menu opened while JupyterLab still starts may close again (a
    notification takes the focus) or open before the plugin that adds the item: then it is opened again."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    entry = page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{item}$"))
    for attempt in range(tries):
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{menu}$")).click()
        try:
            entry.click(timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise
            page.keyboard.press("Escape")


def menu_items(page, menu):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{menu}$")).click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    return items


def instructor_json(room, tag: str, code: str):
    """What ``code``, run by the instructor's Python in their course folder, prints after ``TAG:``, as JSON."""
    done = as_user(room, room.instructor, room.env / "bin" / "python", "-c", code)
    return json.loads(done.stdout.split(f"{tag}:", 1)[1])


def as_user(room, user, *cmd):
    """A command as the instructor would type it in their terminal (their account, the shared env)."""
    return room.run_as(user, *cmd, log=room.dir / "logs" / "grading.log")


def api(page, path, method="GET"):
    """A request of the logged-in user's page to its own server (cookies and XSRF token as JupyterLab sends)."""
    return page.evaluate(
        """async ([path, method]) => {
        const m = document.cookie.match(/_xsrf=([^;]+)/);
        const r = await fetch(path, {method, headers: m ? {'X-XSRFToken': decodeURIComponent(m[1])} : {}});
        return {status: r.status, url: r.url, body: await r.text()};
    }""",
        [path, method],
    )


def terminal(page, user, command, timeout=30):
    """Output of ``command`` run in a new terminal of the user's own server (REST API + websocket)."""
    term = api(page, f"/user/{user}/api/terminals", "POST")
    assert term["status"] == 200, term
    name = json.loads(term["body"])["name"]
    out = page.evaluate(
        """([ws_url, cmd, ms]) => new Promise(resolve => {
        const ws = new WebSocket(ws_url);
        let out = '';
        const done = () => { try { ws.close(); } catch (e) {} resolve(out); };
        ws.onmessage = e => { const m = JSON.parse(e.data); if (m[0] === 'stdout') out += m[1];
                              if (out.includes('__END_' + 'OF_OUTPUT__')) done(); };
        ws.onopen = () => ws.send(JSON.stringify(['stdin', cmd + '; echo __END_""OF_OUTPUT__\\r']));
        setTimeout(done, ms);
    })""",
        [
            f"{page.url.split('/user/')[0].replace('http', 'ws')}/user/{user}/terminals/websocket/{name}",
            command,
            timeout * 1000,
        ],
    )
    api(page, f"/user/{user}/api/terminals/{name}", "DELETE")
    assert "__END_OF_OUTPUT__" in out, f"the terminal did not finish {command!r}: {out[-500:]}"
    return out


def answer_cell(page, grade_id):
    """The editor of the answer cell whose first line names ``grade_id``."""
    cell = page.locator(".jp-Notebook .jp-CodeCell", has=page.locator(".cm-content", has_text=f"# {grade_id} ="))
    return cell.locator(".cm-content")


def test_a_term_on_jupyterhub(room, browser):
    instructor, (right, wrong) = room.instructor, room.students
    who = {right: "right", wrong: "wrong"}

    # 1. everyone logs in at once; the instructor sees the assignment released in the Formgrader, inside JupyterLab
    with Step("1 instructor: JupyterLab is up, the Formgrader shows the assignment released"):
        pages = dict(PAGES)
        teacher = lab_ready(pages.pop(instructor), instructor)
        open_menu_item(teacher, "Nbgrader", "Formgrader")
        frame = teacher.frame_locator("iframe[src*='formgrader']")
        row = frame.locator("tr", has_text="whole-transformer").first
        row.wait_for(timeout=60_000)
        assert (
            "released" in row.inner_text().lower()
            or frame.locator("tr:has-text('whole-transformer') .unrelease").count() > 0
        ), row.inner_text()
        shot(teacher, "1-instructor-formgrader")

    students_submit(room, pages, who)
    instructor_grades(room, teacher)
    students_fetch_feedback(room, pages, who)


def students_submit(room, pages, who):
    """2. two students fetch, answer in the notebook, save and submit (one right, one wrong)."""
    right, wrong = room.students
    with Step("2 students: fetch, answer two questions, save, submit"):
        for student in (right, wrong):
            page = lab_ready(pages[student], student)
            items = menu_items(page, "Nbgrader")
            assert "Formgrader" not in items and "Assignment List" in items, items
            open_menu_item(page, "Nbgrader", "Assignment List")
            released = page.locator("#released_assignments_list")
            released.locator("button", has_text="Fetch").click()
            fetched = page.locator("#fetched_assignments_list")
            fetched.locator(".item_name", has_text="whole-transformer").wait_for()
            shot(page, f"2-{who[student]}-fetched")
            fetched.locator("a", has_text="whole-transformer").first.click()  # shows its notebooks
            fetched.locator("a", has_text=NB).first.click()
            page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=120_000)
            type_answers(page, ANSWERS[who[student]], "a whole number")
            answer_cell(page, "tokens_905").scroll_into_view_if_needed()
            shot(page, f"2-{who[student]}-answered")
            saved = json.loads(api(page, f"/user/{student}/api/contents/whole-transformer/{NB}.ipynb")["body"])
            sources = ["".join(c["source"]) for c in saved["content"]["cells"]]
            for text in ANSWERS[who[student]].values():
                assert any(text in s for s in sources), f"{student}'s saved notebook lacks {text!r}"
            if student == wrong:  # a hostile student: every payload of simclass/payloads.py added, then submitted
                add_payloads(page, student)
            page.locator(".lm-TabBar-tab", has_text="Assignments").click()  # back to the Assignments tab
            page.locator("#fetched_assignments_list button", has_text="Submit").first.click()
            page.locator("#submitted_assignments_list .item_name", has_text="whole-transformer").first.wait_for()
            shot(page, f"2-{who[student]}-submitted")


def instructor_grades(room, teacher):
    """3. the instructor collects, autogrades in the sandbox, comments in the Formgrader, releases feedback."""
    instructor, (right, wrong) = room.instructor, room.students
    with Step("3a instructor: nbgrader collect"):
        as_user(room, instructor, room.env / "bin" / "nbgrader", "collect", "whole-transformer")
        for student in (right, wrong):
            assert (room.course / "submitted" / student / "whole-transformer" / f"{NB}.ipynb").is_file()
    with Step("3b instructor: python -m whole_transformer.course autograde (sandboxed)"):
        done = as_user(
            room, instructor, room.env / "bin" / "python", "-m", "whole_transformer.course", "autograde", "--jobs", "2"
        )
        assert "sandboxed with bubblewrap" in done.stdout, done.stdout
        print(done.stdout)
    with Step("3c instructor: a comment in the Formgrader"):
        open_submission(room, teacher, max)  # the Formgrader hides names: the higher score is the right student's
        write_comment(teacher, COMMENT)
        shot(teacher, "3-instructor-comment")
    with Step("3c' instructor: the hostile submission in the Formgrader: nothing of it runs; a comment"):
        formgrade_hostile(room, teacher)
    with Step("3d instructor: python -m whole_transformer.course feedback"):
        as_user(room, instructor, room.env / "bin" / "python", "-m", "whole_transformer.course", "feedback")
    with Step("3e instructor: nbgrader release_feedback; the Formgrader's assignments"):
        as_user(room, instructor, room.env / "bin" / "nbgrader", "release_feedback", "whole-transformer")
        teacher.goto(f"{room.url}/user/{instructor}/formgrader/manage_assignments")
        teacher.locator("tr", has_text="whole-transformer").first.wait_for()
        shot(teacher, "3-instructor-feedback-released")


def open_submission(room, teacher, pick):
    """The Formgrader's page of one submission of NB (``pick``: max or min, by score), its comment boxes bound."""
    teacher.goto(f"{room.url}/user/{room.instructor}/formgrader/gradebook/whole-transformer/{NB}")
    teacher.locator("a", has_text=re.compile("Submission #")).first.wait_for()
    rows = teacher.locator("tr", has=teacher.locator("a", has_text=re.compile("Submission #")))
    chosen = pick(
        range(rows.count()), key=lambda i: float(re.findall(r"([\d.]+) / [\d.]+", rows.nth(i).inner_text())[0])
    )
    with teacher.expect_navigation(url=re.compile(r"/formgrader/submissions/"), wait_until="commit") as page_of_it:
        rows.nth(chosen).locator("a", has_text=re.compile("Submission #")).click()
    assert page_of_it.value.ok, f"the submission's page: HTTP {page_of_it.value.status} (see jupyterhub.log)"
    # The comment boxes are in the page's HTML at once, but formgrade.js binds them (its CommentUI views,
    # which save a comment on the box's change event) only after the window's load event and the
    # answer of its own /api/comments request. Text typed before that is never saved, and the view's
    # first render empties the box. So wait for the bound views, then type.
    teacher.locator("#tokens_905-comment").wait_for()  # all this test used to wait for before typing
    bound = "() => !!(window.formgrader && formgrader.comments && formgrader.comments.loaded)"
    (ARTIFACTS / "3-formgrader-comment-views.txt").write_text(
        f"comment views bound when the comment box showed: {teacher.evaluate(bound)}\n"
    )
    teacher.wait_for_function(f"() => ({bound})() && formgrader.comment_uis.length > 0")


def write_comment(teacher, text: str) -> None:
    """A comment on the answer tokens_905, saved by the Formgrader's own request."""
    comment = teacher.locator("#tokens_905-comment")
    with teacher.expect_response(lambda r: "/formgrader/api/comment/" in r.url and r.request.method == "PUT") as put:
        comment.fill(text)
        teacher.locator("#ffn_params-comment").click()  # leaving the box fires change: the view saves it
    assert put.value.ok, (put.value.status, put.value.text())
    assert put.value.json()["manual_comment"] == text, put.value.text()
    comment.scroll_into_view_if_needed()


def add_payloads(page, student) -> None:
    """Every payload of simclass/payloads.py added to the student's notebook through their own server's contents
    API (as their JupyterLab saves it), just before they submit."""
    import nbformat
    import nbformat.v4 as nbf
    from simclass.payloads import payload_cells

    cells = json.loads(nbformat.writes(nbf.new_notebook(cells=payload_cells())))["cells"]
    status = page.evaluate(
        """async ([path, cells]) => {
        const m = document.cookie.match(/_xsrf=([^;]+)/);
        const h = {'Content-Type': 'application/json', ...(m ? {'X-XSRFToken': decodeURIComponent(m[1])} : {})};
        const nb = (await (await fetch(path, {headers: h})).json()).content;
        nb.cells.push(...cells);
        const body = JSON.stringify({type: 'notebook', format: 'json', content: nb});
        return (await fetch(path, {method: 'PUT', headers: h, body})).status;
    }""",
        [f"/user/{student}/api/contents/whole-transformer/{NB}.ipynb", cells],
    )
    assert status == 200, status


def formgrade_hostile(room, teacher) -> None:
    """The instructor opens the hostile (wrong) student's submission and comments on it: no payload ran, nothing
    reached evil.invalid, the instructor's files and gradebook are as they were, the answer still shows."""
    from simclass.payloads import files_digest, markers, watch_pages

    seen = watch_pages(teacher.context)
    scores, files = instructor_json(room, "SCORES", SCORES), files_digest(room.course / "source")
    open_submission(room, teacher, min)
    teacher.wait_for_load_state("networkidle")
    shot(teacher, "3-instructor-hostile-submission")
    text = teacher.inner_text("body")
    assert ANSWERS["wrong"]["tokens_905"] in text and "Here is my answer." in text, text[:2000]
    write_comment(teacher, "9 counts one token too many: count the words and <eos>.")
    assert markers(seen) == set(), seen
    assert not list(room.home(room.instructor).rglob("pwned.txt"))
    assert instructor_json(room, "SCORES", SCORES) == scores and files_digest(room.course / "source") == files


def students_fetch_feedback(room, pages, who):
    """4. each student fetches the feedback and opens it; nothing of anyone else is reachable."""
    right, wrong = room.students
    with Step("4 students: fetch and open feedback; no way into others' files"):
        scores, secrets = {}, course_secrets(room)
        for student in (right, wrong):
            page = pages[student]
            page.locator(".lm-TabBar-tab", has_text="Assignments").click()
            page.locator("#refresh_assignments_list").click()
            page.locator("#submitted_assignments_list button", has_text="Fetch Feedback").first.click()
            link = page.locator("#submitted_assignments_list a", has_text=re.compile("view feedback", re.I)).first
            link.wait_for(timeout=60_000)
            shot(page, f"4-{who[student]}-feedback-fetched")
            link.click()  # the file browser goes to the feedback folder; the student opens the page there
            item = page.locator(".jp-DirListing-item", has_text=f"{NB}.html")
            item.wait_for()
            item.dblclick()
            frame = page.frame_locator(".jp-HTMLViewer iframe, iframe[srcdoc]").first
            frame.locator("text=test_tokens_905").first.wait_for(timeout=60_000)
            body = frame.locator("body").inner_text()
            frame.locator("text=test_tokens_905").first.scroll_into_view_if_needed()
            shot(page, f"4-{who[student]}-feedback")
            got = dict(re.findall(r"(test_tokens_905|test_ffn_params)\s*Score: ([\d.]+) / 1", body))
            scores[student] = got
            assert (COMMENT in body) == (who[student] == "right"), body[:3000]
            (ARTIFACTS / f"4-{who[student]}-feedback.txt").write_text(body)
            check_no_secret(
                ARTIFACTS / f"4-{who[student]}-feedback.txt", secrets, own="\n".join(ANSWERS[who[student]].values())
            )
        assert scores[right] == {"test_tokens_905": "1.0", "test_ffn_params": "1.0"}, scores
        assert scores[wrong] == {"test_tokens_905": "0.0", "test_ffn_params": "0.0"}, scores

        check_isolation(room, pages, who)


def course_secrets(room) -> dict[str, str]:
    """What no student may see, as the instructor's course lists it (reports.feedback.secrets: every
    hidden-test line, expected value and solution line of its source notebooks, less what was released)."""
    code = (
        "import json, pathlib; from whole_transformer.course.layout import Course; "
        "from whole_transformer.course.reports.feedback import secrets; "
        "print('SECRETS:' + json.dumps(secrets(Course(pathlib.Path.cwd()))))"
    )
    found = instructor_json(room, "SECRETS", code)
    (ARTIFACTS / "course-secrets.json").write_text(json.dumps(found, indent=1))
    return found


def check_isolation(room, pages, who):
    """Through each student's own server: nothing of the other student, the exchange or the instructor."""
    instructor, (right, wrong) = room.instructor, room.students
    answers = []
    for student, other in ((right, wrong), (wrong, right)):
        page = pages[student]
        other_home = room.home(other)
        # the contents API: only the student's own folder
        mine = api(page, f"/user/{student}/api/contents/whole-transformer/feedback")
        assert mine["status"] == 200 and '"content"' in mine["body"], mine
        for path in (
            f"/user/{student}/api/contents/..%2F{other}",
            f"/user/{student}/api/contents/..%2F{instructor}%2Fwhole-transformer%2Fsource",
            f"/user/{other}/api/contents/whole-transformer",
            f"/user/{instructor}/api/contents/whole-transformer/source",
        ):
            got = api(page, path)
            answers.append({"path": path, "status": got["status"], "url": got["url"], "body": got["body"][:200]})
            check_refused(path, got)
        # a terminal: the same rights as the account; each path tried is refused
        tries = [
            f"ls {other_home}",
            f"grep -o 'tokens_905 = [0-9][0-9]*' {other_home}/whole-transformer/{NB}.ipynb",
            f"ls {room.course}",
            f"grep -m1 'BEGIN'' SOLUTION' {room.course}/source/whole-transformer/{NB}.ipynb",
            f"ls {room.exchange}/whole-transformer/inbound",
            f"ls {room.exchange}/whole-transformer/feedback",
        ]
        out = terminal(
            page,
            student,
            "echo WHO''=$(id -un); " + tries_command(tries) + "; "
            "python -c 'import whole_transformer as w; print(\"PACKAGE:\", w.__file__)'; "
            f"grep -ls -r -e {room.home(instructor)} -e {REPO} "
            f"{room.env}/etc {room.env}/bin {room.env}/pyvenv.cfg "
            f"{room.env}/lib/python3*/site-packages/*.pth {room.env}/lib/python3*/site-packages/whole_* "
            f"{room.env}/lib/python3*/site-packages/*.dist-info/direct_url.json "
            "| sed 's/^/NAMES-INSTRUCTOR''-HIT: /'",
        )  # the quotes keep the marker out of the echo
        (ARTIFACTS / f"4-{who[student]}-terminal.txt").write_text(out)
        check_whoami(out, student)
        check_each_denied(out, tries)
        assert ANSWERS[who[other]]["tokens_905"] not in out and "BEGIN SOLUTION" not in out, out
        package = re.search(r"PACKAGE: (\S+)", out)
        assert package and package.group(1).startswith(f"{room.env}/lib/"), out  # the shared copy, not a course
        assert "NAMES-INSTRUCTOR-HIT" not in out, f"the students' environment names the instructor's folders: {out}"
    (ARTIFACTS / "4-contents-api-refusals.json").write_text(json.dumps(answers, indent=1))


# ------------------------------------------------------------------ the second act: grading on submission
SERVICE_POLICY = 'enabled = true\nattempts = 2\ncounts = "last"\n'
ATTEMPT = {
    "tokens_905": "tokens_905 = 9",
    "logits_shape": "logits_shape = (64, 8, 42)",
    "heads_4_to_8": 'heads_4_to_8 = "C"',
    "ffn_params": "ffn_params = 16576",
}
FIXED = {**ATTEMPT, "tokens_905": "tokens_905 = 8"}


def service_state(room) -> Path:
    return room.course / "autograde" / ".wt" / "service"


def attempt_record(room, folder: Path, timeout: float = 480) -> dict:
    """The service's record of the attempt in ``folder`` (written last: its feedback is out), once written."""
    path = service_state(room) / "attempts" / f"{hashlib.sha256(folder.name.encode()).hexdigest()[:32]}.json"
    deadline = time.monotonic() + timeout
    while not path.exists():
        log = service_state(room) / "serve.log"
        assert time.monotonic() < deadline, (
            f"no record of {folder.name} within {timeout:.0f} s; the service's "
            f"log:\n{log.read_text()[-3000:] if log.exists() else '(none)'}"
        )
        time.sleep(1)
    return json.loads(path.read_text())


def inbound(room, student) -> set[Path]:
    return set((room.exchange / "whole-transformer" / "inbound").glob(f"{student}+*"))


def type_answers(page, answers: dict[str, str], comment: str) -> None:
    """Each answer typed over its answer cell as a student types it (its comment line, then the answer), and
    the notebook saved."""
    for grade_id, text in answers.items():
        editor = answer_cell(page, grade_id)
        editor.scroll_into_view_if_needed()
        editor.click()
        page.keyboard.press("Control+A")
        page.keyboard.type(f"# {grade_id} = {comment}\n{text}")
        page.keyboard.press("Escape")
    save_notebook(page)


def answer_and_submit(page, room, student, answers: dict[str, str], name: str) -> tuple[Path, str]:
    """Answers typed into notebook 01 (saved), then Submit in the Assignments tab; the new attempt's folder
    in the exchange and its time as the Assignments tab shows it."""
    if answers:
        page.locator(".lm-TabBar-tab", has_text=f"{NB}.ipynb").click()
        type_answers(page, answers, "my answer")
        saved = json.loads(api(page, f"/user/{student}/api/contents/whole-transformer/{NB}.ipynb")["body"])
        sources = "\n".join("".join(c["source"]) for c in saved["content"]["cells"])
        assert all(text in sources for text in answers.values()), f"the saved notebook lacks {answers}"
        answer_cell(page, "tokens_905").scroll_into_view_if_needed()
        shot(page, f"{name}-answered")
    before = inbound(room, student)
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#fetched_assignments_list button", has_text="Submit").first.click()
    deadline = time.monotonic() + 60
    while not (new := inbound(room, student) - before):
        assert time.monotonic() < deadline, "Submit put no new attempt into the exchange"
        time.sleep(0.5)
    (folder,) = new
    # nbgrader submit makes the folder, then the file, then writes into it: an empty timestamp.txt was seen once
    # under load, and an empty time matches every row of the list
    while len(when := stamp(folder)) < 19:
        assert time.monotonic() < deadline, f"Submit's attempt {folder.name} has no time in timestamp.txt"
        time.sleep(0.2)
    page.locator("#submitted_assignments_list .nested_list_item", has_text=when).wait_for()
    shot(page, f"{name}-submitted")
    return folder, when


def stamp(folder: Path) -> str:
    """The attempt's time to the second, as the Assignments tab shows it ('' while timestamp.txt is not written)."""
    try:
        return (folder / "timestamp.txt").read_text().strip()[:19]
    except FileNotFoundError:
        return ""


def fetch_and_open(page, student, when: str, marker: str, name: str) -> str:
    """Fetch Feedback in the Assignments tab, open the attempt's feedback page; its text (as the viewer shows it)."""
    assert len(when) == 19, f"no attempt's time to find its row by: {when!r}"
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#refresh_assignments_list").click()
    page.locator("#submitted_assignments_list button", has_text="Fetch Feedback").first.click()
    row = page.locator("#submitted_assignments_list .nested_list_item", has_text=when)
    # .first: while the list is drawn again after the fetch, the attempt's row can stand in it twice for a moment
    # (seen once under load: two links, one path); both open the same folder
    link = row.locator("a", has_text=re.compile("view feedback", re.I)).first
    link.wait_for(timeout=60_000)
    shot(page, f"{name}-fetched")
    link.click()
    page.locator(".jp-BreadCrumbs", has_text=when).wait_for()
    item = page.locator(".jp-DirListing-item", has_text=f"{NB}.html")
    item.wait_for()
    item.dblclick()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for frame in page.frames[1:]:
            try:
                text = frame.locator("body").inner_text(timeout=1000)
            except Exception:  # noqa: BLE001 - a frame gone or not loaded yet
                continue
            if marker in text:
                shot(page, f"{name}-feedback")
                (ARTIFACTS / f"{name}-feedback.txt").write_text(text)
                return text
        time.sleep(0.5)
    raise AssertionError(f"no feedback page with {marker!r} opened for {student} ({when})")


def test_grading_on_submission(room, browser):
    """The second act, in the same classroom: with [service] on, a student's attempts are graded on Submit."""
    instructor, (right, wrong) = room.instructor, room.students
    page = lab_ready(PAGES[wrong], wrong)
    with Step("5a instructor: [service] on in course.toml (attempts = 2); the service takes the first act's attempts"):
        toml = room.course / "course.toml"
        text = toml.read_text()
        assert "\n[service]\nenabled = false\n" in text, text[-300:]
        toml.write_text(text.replace("\n[service]\nenabled = false\n", "\n[service]\n" + SERVICE_POLICY))
        earlier = {s: attempt_record(room, folder) for s in (right, wrong) for folder in inbound(room, s)}
        assert {s: r["status"] for s, r in earlier.items()} == {right: "collected", wrong: "collected"}, earlier
    with Step("5b student: a wrong answer (three of four right), submitted"):
        first, when1 = answer_and_submit(page, room, wrong, ATTEMPT, "5b-attempt1")
    with Step("5c the service grades it; the student fetches feedback naming the failed kind of case"):
        rec1 = attempt_record(room, first)
        assert (rec1["status"], rec1["number"], rec1["score"], rec1["counts"]) == ("graded", 1, 3.0, True), rec1
        body = fetch_and_open(page, wrong, when1, "Graded attempt 1 of 2", "5c-attempt1")
        assert "3 of 4 graded test(s) passed" in body and "not right yet for: the answer" in body, body
    with Step("5d student: the answer fixed, submitted again"):
        second, when2 = answer_and_submit(page, room, wrong, {"tokens_905": FIXED["tokens_905"]}, "5d-attempt2")
    with Step("5e the service grades it; full-points feedback fetched"):
        rec2 = attempt_record(room, second)
        assert (rec2["status"], rec2["number"], rec2["score"], rec2["counts"]) == ("graded", 2, 4.0, True), rec2
        body = fetch_and_open(page, wrong, when2, "Graded attempt 2 of 2", "5e-attempt2")
        assert "4 of 4 graded test(s) passed" in body and "not right yet" not in body, body
        # both attempts' kernels came from the service's kernel zygote, run by the instructor's own account
        # (bubblewrap unprivileged: the zygote enters the user namespace bwrap made first, then the sandbox's)
        log = (service_state(room) / "serve.log").read_text()
        assert "kernels: forked by one kernel zygote for every student" in log and FALLBACK not in log, log[-3000:]
    with Step("5f student: a third submission, over the limit: refused, and the feedback says so"):
        third, when3 = answer_and_submit(page, room, wrong, {}, "5f-attempt3")
        rec3 = attempt_record(room, third)
        assert rec3["status"] == "refused", rec3
        body = fetch_and_open(page, wrong, when3, "over the limit", "5f-attempt3")
        assert "over the limit of 2 graded attempt(s)" in body and "stays your attempt 2" in body, body
    secrets = course_secrets(room)
    for n, own in ((1, ATTEMPT), (2, FIXED), (3, FIXED)):
        check_no_secret(ARTIFACTS / f"5{'cef'[n - 1]}-attempt{n}-feedback.txt", secrets, own="\n".join(own.values()))
    with Step("5g instructor: the gradebook holds the attempts and the counted score"):
        check_gradebook(room, PAGES[instructor], wrong, right)
    with Step("5h the other student: Fetch Feedback brings none of this student's; the exchange stays closed"):
        check_other_cannot_fetch(room, PAGES[right], right, [when1, when2, when3])


def check_gradebook(room, teacher, student, other):
    """nbgrader's gradebook holds the counted score (the last graded attempt); the service's status page, with
    the instructor's token, every attempt."""
    scores = instructor_json(room, "SCORES", SCORES)
    assert scores[student] == 4.0 and scores[other] == 2.0, scores
    token = (service_state(room) / "status-token").read_text().strip()
    status = api(teacher, f"/services/grading/status.json?token={token}")
    assert status["status"] == 200, status
    attempts = [
        (r["status"], r["score"], r["counts"]) for r in json.loads(status["body"])["last"] if r["student"] == student
    ]
    assert attempts == [
        ("refused", None, None),
        ("graded", 4.0, True),
        ("graded", 3.0, True),
        ("collected", None, None),
    ], attempts
    (ARTIFACTS / "5g-status.json").write_text(status["body"])
    teacher.goto(f"{room.url}/services/grading/?token={token}")
    teacher.locator("h2", has_text="Last gradings").wait_for()
    shot(teacher, "5g-instructor-service-status")
    teacher.goto(f"{room.url}/user/{room.instructor}/formgrader/gradebook/whole-transformer/{NB}")
    teacher.locator("a", has_text=re.compile("Submission #")).first.wait_for()
    shot(teacher, "5g-instructor-formgrader-scores")


def check_other_cannot_fetch(room, page, user, whens):
    """Fetch Feedback brings the other student only their own feedback; they cannot list the exchange either."""
    page.locator(".lm-TabBar-tab", has_text="Assignments").click()
    page.locator("#refresh_assignments_list").click()
    page.locator("#submitted_assignments_list button", has_text="Fetch Feedback").first.click()
    page.locator("#submitted_assignments_list a", has_text=re.compile("view feedback", re.I)).first.wait_for()
    time.sleep(2)  # the fetch's answer is in: anything it brought is on disk
    shot(page, "5h-other-student-fetched")
    listing = json.loads(api(page, f"/user/{user}/api/contents/whole-transformer/feedback")["body"])
    folders = sorted(c["name"] for c in listing["content"])
    assert len(folders) == 1 and not any(f.startswith(w) for f in folders for w in whens), folders
    tries = [f"ls {room.exchange}/whole-transformer/feedback", f"ls {room.exchange}/whole-transformer/inbound"]
    out = terminal(page, user, "echo WHO''=$(id -un); " + tries_command(tries))
    (ARTIFACTS / "5h-other-student-terminal.txt").write_text(out)
    check_whoami(out, user)
    check_each_denied(out, tries)
