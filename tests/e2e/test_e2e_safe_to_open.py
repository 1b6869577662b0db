"""Safe to open: nothing a student hands in runs in a page someone else opens (issue 29).

A hostile student (``mallory``) hands in, through a real local exchange, the small course's notebook
answered, with every payload of ``simclass/payloads.py`` added (Markdown cells, attachments, raw
cells, outputs their code displays, an answer that is HTML); a hand-in folder named as HTML sits
beside it. The grading service grades it in the sandbox, then ``make feedback`` writes the feedback.
Each page is opened in Chromium: the Formgrader's submission page through the real formgrader (nbgrader's
extension, in a Jupyter server started here on loopback), nbgrader's feedback file, the page per
student, the feedback the service released, the class report and the service's status page. No marker
is set, nothing is fetched from ``evil.invalid``, the API payload left no file and read nothing, the
gradebook is as it was, and the student's answer and text still show. Then each safeguard is turned
off in turn and the same page is seen to run the payloads: the test can see what it says did not happen.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from e2e.conftest import start_jupyter, stop_jupyter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simclass.local_exchange import course_with_exchange
from simclass.minicourse import NAME, require_sandbox
from simclass.payloads import CATALOGUE, FOLDER_PAYLOAD, files_digest, hostile, markers, watch_pages
from test_service import answered, hand_in

from whole_transformer.course.layout import ASSIGNMENT

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]
ANSWER, TEXT = "return 2 * x", "Here is my answer."


@pytest.fixture(scope="module")
def handed_in(tmp_path_factory, released_mini):
    """The hostile hand-in graded by the service and its feedback written; the graded files as nbgrader left
    them (before they were made inert) in ``raw``."""
    require_sandbox()
    from whole_transformer.course.autograder import store
    from whole_transformer.course.reports.feedback import feedback
    from whole_transformer.course.service.serve import serve

    tmp = tmp_path_factory.mktemp("safe-to-open")
    course, exchange = course_with_exchange(
        tmp, '[service]\nenabled = true\nfeedback_before_due = "full"\n', released=released_mini
    )
    now = datetime.now(UTC)
    folder = hand_in(
        exchange, "mallory", {f"{NAME}.ipynb": nbformat.writes(hostile(answered(course)))}, now - timedelta(minutes=1)
    )
    named = f"ada+{ASSIGNMENT}+{FOLDER_PAYLOAD.content}+r1"
    hand_in(exchange, "ada", {f"{NAME}.ipynb": "{}"}, now, name=named)
    raw: dict[str, bytes] = {}
    inert = store.clean_file

    def keep_raw(name: str, data: bytes) -> bytes | None:
        raw[name] = data
        return inert(name, data)

    lines: list[str] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "clean_file", keep_raw)
        assert serve(course, str(exchange), once=True, echo=lines.append) == 0
    assert any("GRADED mallory" in ln for ln in lines), lines
    feedback(course, log=lines.append)
    secret = (folder / "submission_secret.txt").read_text()
    return SimpleNamespace(course=course, exchange=exchange, raw=raw, lines=lines, tmp=tmp, secret=secret)


class Watch:
    """A browser context whose pages report every marker a payload sets and every request to evil.invalid."""

    def __init__(self, browser):
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.seen = watch_pages(self.context)

    def markers(self) -> set[str]:
        """Each payload id whose marker was set, and each request that reached evil.invalid."""
        return markers(self.seen)

    def open(self, url: str):
        """The page loaded and settled; every link that could run code and the form payload's button clicked."""
        self.seen.clear()
        page = self.context.new_page()
        response = page.goto(url, wait_until="load")
        page.wait_for_load_state("networkidle")
        for sel in ('a[href^="javascript:"]', 'a[href^="data:"]', "#wt-form-payload", "#student-wt-form-payload"):
            for el in page.query_selector_all(sel):
                try:
                    el.click(timeout=2000, no_wait_after=True)
                except Exception:  # noqa: BLE001 - a link that goes nowhere: nothing ran
                    pass
        page.wait_for_load_state("networkidle")
        return page, response

    def log_in(self, server) -> None:
        """Log in to the Jupyter server with its token, as the instructor is: the session cookie every API call
        of the page (and of a payload) carries."""
        page = self.context.new_page()
        page.goto(f"{server.url}/login")
        page.fill("input[name=password]", server.token)
        with page.expect_navigation():
            page.click("[type=submit]")
        page.close()

    def close(self):
        self.context.close()


def unsanitized(data: bytes) -> str:
    """A graded notebook as nbgrader left it, less any Markdown cell showing an attachment the grading dropped
    (nbconvert stops at it, and the page would show only an error: inert.py renders it without the image)."""
    nb = nbformat.reads(data.decode(), as_version=4)
    nb.cells = [c for c in nb.cells if not ("attachment:" in c.source and not c.get("attachments"))]
    return nbformat.writes(nb)


def _scores(course) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url) as gb:
        sub = gb.find_submission(ASSIGNMENT, "mallory")
        return {"score": sub.score, "grades": sorted((g.name, g.score) for nb in sub.notebooks for g in nb.grades)}


def test_the_catalogue_holds_every_kind_of_payload():
    where = {p.where for p in CATALOGUE}
    assert len(CATALOGUE) >= 15 and {"markdown", "attachment", "output", "raw", "answer", "folder"} <= where
    assert len({p.pid for p in CATALOGUE}) == len(CATALOGUE)


def test_the_formgrader_runs_nothing_the_student_wrote(handed_in, browser, artifacts):
    from nbgrader.api import Gradebook

    course = handed_in.course
    with Gradebook(course.db_url) as gb:
        sid = gb.find_submission_notebook(NAME, ASSIGNMENT, "mallory").id
    before, source_before = _scores(course), files_digest(course.root / "source")
    graded = course.autograde / "mallory" / ASSIGNMENT / f"{NAME}.ipynb"
    inert = graded.read_bytes()
    server = start_jupyter(handed_in.tmp / "jupyter", course.root, artifacts / "safe-to-open-formgrader.log")
    watch = Watch(browser)
    try:
        watch.log_in(server)
        url = f"{server.url}/formgrader/submissions/{sid}/"
        page, response = watch.open(url)
        assert response.ok and "formgrader" in page.content()
        page.screenshot(path=str(artifacts / "safe-to-open-formgrader.png"), full_page=True)
        text = page.inner_text("body")
        assert watch.markers() == set(), watch.seen
        assert ANSWER in text and TEXT in text and "All grades saved." in text  # the student's work still shows
        assert not (course.root / "pwned.txt").exists()
        assert _scores(course) == before and files_digest(course.root / "source") == source_before

        graded.write_text(unsanitized(handed_in.raw[graded.name]))  # the sanitizer off
        page.close()
        page, _ = watch.open(url)
        ran = watch.markers()
        print("formgrader, sanitizer off, ran:", sorted(ran))
        assert {"md-script", "md-onerror", "out-html-script", "out-js", "out-api"} <= ran, ran
        assert (course.root / "pwned.txt").exists()  # the API payload acted as the instructor
    finally:
        graded.write_bytes(inert)
        (course.root / "pwned.txt").unlink(missing_ok=True)
        watch.close()
        stop_jupyter(server)


def _feedback_pages(handed_in) -> dict[str, Path]:
    from nbgrader.utils import notebook_hash

    from whole_transformer.course.layout import COURSE_ID

    course = handed_in.course
    page = notebook_hash(secret=handed_in.secret, notebook_id=NAME)  # where nbgrader fetch_feedback looks
    released = handed_in.exchange / COURSE_ID / "feedback" / f"{page}.html"
    return {
        "nbgrader's feedback file": course.feedback / "mallory" / ASSIGNMENT / f"{NAME}.html",
        "the page per student": course.root / "feedback-pages" / "mallory.html",
        "the feedback the service released": released,
    }


def _markers_on(watch: Watch, pages: dict[str, Path]) -> dict[str, set[str]]:
    out = {}
    for what, path in pages.items():
        page, _ = watch.open(path.as_uri())
        out[what] = watch.markers()
        page.close()
    return out


def test_feedback_runs_nothing_the_student_wrote(handed_in, browser, artifacts):
    pages = _feedback_pages(handed_in)
    watch = Watch(browser)
    try:
        for what, path in pages.items():
            assert '<meta http-equiv="Content-Security-Policy"' in path.read_text(), what
            page, _ = watch.open(path.as_uri())
            assert watch.markers() == set(), (what, watch.seen)
            text = page.inner_text("body")
            assert TEXT in text and "All grades saved." in text, what  # the student's text, as text
            page.screenshot(path=str(artifacts / f"safe-to-open-{path.stem[:12]}.png"), full_page=True)
            page.close()
    finally:
        watch.close()


def test_each_feedback_safeguard_alone_stops_the_scripts(handed_in, browser):
    """With the sanitizer off (MakeInert out of nbgrader's feedback, the graded notebook as nbgrader left it) and
    no policy, the payloads run in the feedback file and the page per student; with the sanitizer off but the
    policy on, no script runs."""
    from whole_transformer.course.reports import feedback as fb
    from whole_transformer.course.reports import student_page

    course = handed_in.course
    graded = course.autograde / "mallory" / ASSIGNMENT / f"{NAME}.ipynb"
    config = course.root / "nbgrader_config.py"
    inert, own_config = graded.read_bytes(), config.read_text()
    written = {k: v for k, v in _feedback_pages(handed_in).items() if "service" not in k}
    watch = Watch(browser)
    try:
        graded.write_text(unsanitized(handed_in.raw[graded.name]))
        config.write_text(
            own_config + "from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor\n"
            "from nbgrader.preprocessors import GetGrades\n"
            "from whole_transformer.course.plugins.hide_tests import HideHiddenTests\n"
            "c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor]\n"
        )
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(fb, "protect", lambda path: None)
            mp.setattr(student_page, "with_policy", lambda page: page)
            fb.feedback(course, log=lambda *a: None)
            bare = _markers_on(watch, written)
        print("feedback, sanitizer and policy off, ran:", bare)
        for what, ran in bare.items():
            assert {"md-script", "md-onerror", "out-html-script"} <= ran, (what, ran)
        fb.feedback(course, log=lambda *a: None)  # the policy on, the sanitizer still off
        walled = _markers_on(watch, written)
        print("feedback, sanitizer off, policy on, ran:", walled)
        for what, ran in walled.items():
            assert not {m for m in ran if not m.startswith("request ")}, (what, ran)  # no script ran
    finally:
        graded.write_bytes(inert)
        config.write_text(own_config)
        fb.feedback(course, log=lambda *a: None)
        watch.close()


def test_the_class_report_and_the_status_page_run_nothing(handed_in, browser, artifacts):
    from whole_transformer.course.csp import SERVED
    from whole_transformer.course.reports.insights import insights
    from whole_transformer.course.service import status as st
    from whole_transformer.course.service.watch import Store

    course = handed_in.course
    report, _ = insights(course, log=lambda *a: None)
    assert '<meta http-equiv="Content-Security-Policy"' in report.read_text()
    status = st.ServiceState(handed_in.tmp / "status", echo=lambda *a: None)
    for record in Store(course).all():
        status.done(record)
    server = st.serve_status(status, 0)
    url = f"http://127.0.0.1:{server.server_port}/?token={status.token}"
    watch = Watch(browser)
    try:
        page, _ = watch.open(report.as_uri())
        assert watch.markers() == set(), watch.seen
        page.close()
        page, response = watch.open(url)
        assert response.headers.get("content-security-policy") == SERVED
        assert watch.markers() == set(), watch.seen
        assert FOLDER_PAYLOAD.content.split("(")[0] in page.inner_text("body")  # the folder's name, shown as text
        page.screenshot(path=str(artifacts / "safe-to-open-status.png"), full_page=True)
        page.close()
        with pytest.MonkeyPatch.context() as mp:  # no escaping: the policy alone stops the script
            mp.setattr(st, "html", SimpleNamespace(escape=str))
            watch.open(url)[0].close()
            assert watch.markers() == set(), watch.seen
            mp.setattr(st, "SERVED", "")  # and no policy either: it runs
            watch.open(url)[0].close()
            assert watch.markers() == {"folder-name"}, watch.seen
    finally:
        server.shutdown()
        watch.close()
