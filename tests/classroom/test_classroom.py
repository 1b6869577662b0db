"""A term of the course on a real JupyterHub, end to end, in Chromium (``make classroom-test``).

``classroom.up`` makes a classroom on this machine (whole_transformer/course/classroom/hub.py: Linux
accounts logging in through PAM, configurable-http-proxy, nbgrader's exchange, the shared
students' environment, the course released by the instructor); then, through the browser:

1. the instructor and two students log in as soon as the hub answers (their three servers start at
   once, while the instructor's course may still be being released); the instructor opens the
   Formgrader (from JupyterLab's Nbgrader menu, in its frame): the assignment is there, released;
2. each student fetches the assignment in the Assignments tab, opens notebook 01, types answers into
   two answer cells (one student right, one wrong), saves and submits;
3. the instructor collects (``nbgrader collect``), runs the course's sandboxed autograde as
   themselves, writes a comment on one student's answer in the Formgrader, makes the feedback
   (``python -m whole_transformer.course feedback``) and releases it (``nbgrader release_feedback``);
4. each student fetches the feedback in the Assignments tab and opens it: the right one has the
   points of both questions, the wrong one none of them, no hidden test shows; through their own
   server's contents API and a terminal, neither can read the other's files, the exchange's
   submissions, or the instructor's course folder; neither student has the Formgrader.

Screenshots of each step: artifacts/classroom/*.png; the seconds of each step: artifacts/classroom/times.json
(printed at the end of the pytest run by tests/conftest.py). The classroom is removed afterwards
(``classroom.down``), whatever happened. Needs root (Linux accounts), Debian's Chromium, bubblewrap,
configurable-http-proxy (``make classroom-proxy``) and a Python every account can run; without one of
them the test skips and says which, or fails under WT_REQUIRE_CLASSROOM=1 (set by .ci/run). The browser
resolves no host name but the loopback address: nothing of the term may come from the internet (the
Formgrader's page asks for MathJax from a CDN; it fails at once instead of whenever a lookup times out).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "classroom"
_spec = importlib.util.spec_from_file_location("wt_e2e_conftest", REPO / "tests" / "e2e" / "conftest.py")
_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_e2e)

pytestmark = [pytest.mark.classroom, pytest.mark.e2e, pytest.mark.xdist_group("classroom")]

NB = "01-whole-machine"
ANSWERS = {"right": {"tokens_905": "tokens_905 = 8", "ffn_params": "ffn_params = 16576"},
           "wrong": {"tokens_905": "tokens_905 = 9", "ffn_params": "ffn_params = 16448"}}
HIDDEN = ["grading.same(tokens_905", "grading.same(ffn_params", "BEGIN HIDDEN TESTS"]
COMMENT = "Both counts right: well done."
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
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.t0 = time.monotonic()

    def __exit__(self, *exc):
        TIMES[self.name] = round(time.monotonic() - self.t0, 1)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        (ARTIFACTS / "times.json").write_text(json.dumps(TIMES, indent=1))


@pytest.fixture(scope="module")
def room(browser):
    from whole_transformer.course.classroom import hub as classroom

    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    tag = os.urandom(2).hex()
    folder = Path(f"/tmp/wt-classroom-test-{tag}")
    made = None
    try:
        with Step("0 make the classroom (accounts, environment, hub, release); the three log in once the hub is up"):
            made = classroom.up(folder, students=2, port=0, prefix=f"wtc{tag}", log=print,
                                hub_up=lambda room: PAGES.update({user: log_in(browser, room, user)
                                                                  for user in (room.instructor, *room.students)}))
        TIMES.update({f"0.{i} {part}": t for i, (part, t) in enumerate(made.times.items(), 1)})
        yield made
    finally:
        log = folder / "logs" / "jupyterhub.log"
        if log.exists():
            shutil.copy2(log, ARTIFACTS / "jupyterhub.log")
        for name in ("env.log", "course.log", "grading.log"):
            if (folder / "logs" / name).exists():
                shutil.copy2(folder / "logs" / name, ARTIFACTS / name)
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
    from whole_transformer.course.classroom import env as classroom_env
    from whole_transformer.course.classroom import hub as classroom

    _require(os.geteuid() == 0, "it needs root (it creates Linux accounts): run it as root")
    _require(classroom.DEFAULT_PROXY.is_file(), f"no configurable-http-proxy at {classroom.DEFAULT_PROXY}: "
                                                "run `make classroom-proxy` (needs npm)")
    _require(Path(_e2e.CHROMIUM).exists(), f"no Chromium at {_e2e.CHROMIUM}: install Debian's `chromium`")
    _require(shutil.which("bwrap") is not None, "no bubblewrap (bwrap) for the sandboxed autograde: "
                                                "install Debian's `bubblewrap`")
    _require(all(shutil.which(c) for c in ("useradd", "userdel", "chpasswd")),
             "no useradd/userdel/chpasswd: install Debian's `passwd`")
    try:
        classroom_env.pick_python()
    except classroom_env.ClassroomError as err:
        _require(False, str(err))


@pytest.fixture(scope="module")
def browser():
    check_requirements()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require(False, "Playwright for Python is not installed: pip install -e '.[dev]'")

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=_e2e.CHROMIUM, headless=True, args=[
            *_e2e.CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
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
    page.fill("#username_input", user)
    page.fill("#password_input", room.passwords[user])
    page.click("#login_submit")
    return page


def lab_ready(page, user):
    """Wait until ``user``'s JupyterLab is up in ``page``, with nbgrader's menu."""
    page.wait_for_url(re.compile(rf"/user/{user}/lab"), timeout=LOGIN_TIMEOUT)
    page.wait_for_selector("#jp-main-dock-panel", timeout=LOGIN_TIMEOUT)
    page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").wait_for(timeout=LOGIN_TIMEOUT)
    return page


def open_menu_item(page, menu, item):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{item}$")).click()


def menu_items(page, menu):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(rf"^{menu}$")).click()
    items = page.locator(".lm-Menu-itemLabel").all_inner_texts()
    page.keyboard.press("Escape")
    return items


def as_user(room, user, *cmd):
    """A command as the instructor would type it in their terminal (their account, the shared env)."""
    return room.run_as(user, *cmd, log=room.dir / "logs" / "grading.log")


def api(page, path, method="GET"):
    """A request of the logged-in user's page to its own server (cookies and XSRF token as JupyterLab sends)."""
    return page.evaluate("""async ([path, method]) => {
        const m = document.cookie.match(/_xsrf=([^;]+)/);
        const r = await fetch(path, {method, headers: m ? {'X-XSRFToken': decodeURIComponent(m[1])} : {}});
        return {status: r.status, url: r.url, body: await r.text()};
    }""", [path, method])


def terminal(page, user, command, timeout=30):
    """Output of ``command`` run in a new terminal of the user's own server (REST API + websocket)."""
    term = api(page, f"/user/{user}/api/terminals", "POST")
    assert term["status"] == 200, term
    name = json.loads(term["body"])["name"]
    out = page.evaluate("""([ws_url, cmd, ms]) => new Promise(resolve => {
        const ws = new WebSocket(ws_url);
        let out = '';
        const done = () => { try { ws.close(); } catch (e) {} resolve(out); };
        ws.onmessage = e => { const m = JSON.parse(e.data); if (m[0] === 'stdout') out += m[1];
                              if (out.includes('__END_' + 'OF_OUTPUT__')) done(); };
        ws.onopen = () => ws.send(JSON.stringify(['stdin', cmd + '; echo __END_""OF_OUTPUT__\\r']));
        setTimeout(done, ms);
    })""", [f"{page.url.split('/user/')[0].replace('http', 'ws')}/user/{user}/terminals/websocket/{name}",
            command, timeout * 1000])
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
        assert "released" in row.inner_text().lower() or frame.locator(
            "tr:has-text('whole-transformer') .unrelease").count() > 0, row.inner_text()
        shot(teacher, "1-instructor-formgrader")

    # 2. two students fetch, answer in the notebook, save and submit
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
            for grade_id, text in ANSWERS[who[student]].items():
                editor = answer_cell(page, grade_id)
                editor.scroll_into_view_if_needed()
                editor.click()
                page.keyboard.press("Control+A")
                page.keyboard.type(f"# {grade_id} = a whole number\n{text}")
                page.keyboard.press("Escape")
            page.keyboard.press("Control+S")
            page.locator(".lm-TabBar-tab.jp-mod-dirty").wait_for(state="detached")  # saved: the tab has no unsaved mark
            answer_cell(page, "tokens_905").scroll_into_view_if_needed()
            shot(page, f"2-{who[student]}-answered")
            saved = json.loads(api(page, f"/user/{student}/api/contents/whole-transformer/{NB}.ipynb")["body"])
            sources = ["".join(c["source"]) for c in saved["content"]["cells"]]
            for text in ANSWERS[who[student]].values():
                assert any(text in s for s in sources), f"{student}'s saved notebook lacks {text!r}"
            page.locator(".lm-TabBar-tab", has_text="Assignments").click()  # back to the Assignments tab
            page.locator("#fetched_assignments_list button", has_text="Submit").first.click()
            page.locator("#submitted_assignments_list .item_name", has_text="whole-transformer").first.wait_for()
            shot(page, f"2-{who[student]}-submitted")

    # 3. the instructor collects, autogrades in the sandbox, comments in the Formgrader, releases feedback
    with Step("3a instructor: nbgrader collect"):
        as_user(room, instructor, room.env / "bin" / "nbgrader", "collect", "whole-transformer")
        for student in (right, wrong):
            assert (room.course / "submitted" / student / "whole-transformer" / f"{NB}.ipynb").is_file()
    with Step("3b instructor: python -m whole_transformer.course autograde (sandboxed)"):
        done = as_user(room, instructor, room.env / "bin" / "python", "-m", "whole_transformer.course",
                       "autograde", "--jobs", "2")
        assert "sandboxed with bubblewrap" in done.stdout, done.stdout
        print(done.stdout)
    with Step("3c instructor: a comment in the Formgrader"):
        teacher.goto(f"{room.url}/user/{instructor}/formgrader/gradebook/whole-transformer/{NB}")
        teacher.locator("a", has_text=re.compile("Submission #")).first.wait_for()
        rows = teacher.locator("tr", has=teacher.locator("a", has_text=re.compile("Submission #")))
        # the Formgrader hides names; take the submission with the higher score (the right student)
        best = max(range(rows.count()), key=lambda i: float(re.findall(r"([\d.]+) / [\d.]+",
                                                                      rows.nth(i).inner_text())[0]))
        with teacher.expect_navigation(url=re.compile(r"/formgrader/submissions/"), wait_until="commit") as page_of_it:
            rows.nth(best).locator("a", has_text=re.compile("Submission #")).click()
        assert page_of_it.value.ok, f"the submission's page: HTTP {page_of_it.value.status} (see jupyterhub.log)"
        # The comment boxes are in the page's HTML at once, but formgrade.js binds them (its CommentUI views,
        # which save a comment on the box's change event) only after the window's load event and the
        # answer of its own /api/comments request. Text typed before that is never saved, and the view's
        # first render empties the box. So wait for the bound views, then type.
        teacher.locator("#tokens_905-comment").wait_for()  # all this test used to wait for before typing
        bound = "() => !!(window.formgrader && formgrader.comments && formgrader.comments.loaded)"
        (ARTIFACTS / "3-formgrader-comment-views.txt").write_text(
            f"comment views bound when the comment box showed: {teacher.evaluate(bound)}\n")
        teacher.wait_for_function(f"() => ({bound})() && formgrader.comment_uis.length > 0")
        comment = teacher.locator("#tokens_905-comment")
        with teacher.expect_response(lambda r: "/formgrader/api/comment/" in r.url
                                     and r.request.method == "PUT") as put:
            comment.fill(COMMENT)
            teacher.locator("#ffn_params-comment").click()  # leaving the box fires change: the view saves it
        assert put.value.ok, (put.value.status, put.value.text())
        assert put.value.json()["manual_comment"] == COMMENT, put.value.text()
        comment.scroll_into_view_if_needed()
        shot(teacher, "3-instructor-comment")
    with Step("3d instructor: python -m whole_transformer.course feedback"):
        as_user(room, instructor, room.env / "bin" / "python", "-m", "whole_transformer.course", "feedback")
    with Step("3e instructor: nbgrader release_feedback; the Formgrader's assignments"):
        as_user(room, instructor, room.env / "bin" / "nbgrader", "release_feedback", "whole-transformer")
        teacher.goto(f"{room.url}/user/{instructor}/formgrader/manage_assignments")
        teacher.locator("tr", has_text="whole-transformer").first.wait_for()
        shot(teacher, "3-instructor-feedback-released")

    # 4. each student fetches the feedback and opens it; nothing of anyone else is reachable
    with Step("4 students: fetch and open feedback; no way into others' files"):
        scores = {}
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
            for hidden in HIDDEN:
                assert hidden not in body, f"{student}'s feedback shows a hidden test ({hidden!r})"
            got = dict(re.findall(r"(test_tokens_905|test_ffn_params)\s*Score: ([\d.]+) / 1", body))
            scores[student] = got
            assert (COMMENT in body) == (who[student] == "right"), body[:3000]
            (ARTIFACTS / f"4-{who[student]}-feedback.txt").write_text(body)
        assert scores[right] == {"test_tokens_905": "1.0", "test_ffn_params": "1.0"}, scores
        assert scores[wrong] == {"test_tokens_905": "0.0", "test_ffn_params": "0.0"}, scores

        check_isolation(room, pages, who)


def check_isolation(room, pages, who):
    """Through each student's own server: nothing of the other student, the exchange or the instructor."""
    instructor, (right, wrong) = room.instructor, room.students
    for student, other in ((right, wrong), (wrong, right)):
        page = pages[student]
        other_home = room.home(other)
        # the contents API: only the student's own folder
        mine = api(page, f"/user/{student}/api/contents/whole-transformer/feedback")
        assert mine["status"] == 200, mine
        for path in (f"/user/{student}/api/contents/..%2F{other}",
                     f"/user/{student}/api/contents/..%2F{instructor}%2Fwhole-transformer%2Fsource",
                     f"/user/{other}/api/contents/whole-transformer",
                     f"/user/{instructor}/api/contents/whole-transformer/source"):
            got = api(page, path)
            assert got["status"] != 200 or '"content"' not in got["body"], (path, got)
        # a terminal: the same rights as the account
        out = terminal(page, student, "id -un; "
                       f"ls {other_home}; cat {other_home}/whole-transformer/{NB}.ipynb | head -c 100; "
                       f"ls {room.course}; ls {room.course}/source; "
                       f"ls {room.exchange}/whole-transformer/inbound; "
                       f"ls {room.exchange}/whole-transformer/feedback; "
                       "python -c 'import whole_transformer as w; print(\"PACKAGE:\", w.__file__)'; "
                       f"grep -ls -r -e {room.home(instructor)} -e {REPO} "
                       f"{room.env}/etc {room.env}/bin {room.env}/pyvenv.cfg "
                       f"{room.env}/lib/python3*/site-packages/*.pth {room.env}/lib/python3*/site-packages/whole_* "
                       f"{room.env}/lib/python3*/site-packages/*.dist-info/direct_url.json "
                       "| sed 's/^/NAMES-INSTRUCTOR''-HIT: /'")  # the quotes keep the marker out of the echo
        (ARTIFACTS / f"4-{who[student]}-terminal.txt").write_text(out)
        assert student in out
        assert out.count("Permission denied") >= 6, out
        assert "tokens_905" not in out and "BEGIN SOLUTION" not in out, out
        package = re.search(r"PACKAGE: (\S+)", out)
        assert package and package.group(1).startswith(f"{room.env}/lib/"), out  # the shared copy, not a course
        assert "NAMES-INSTRUCTOR-HIT" not in out, f"the students' environment names the instructor's folders: {out}"
