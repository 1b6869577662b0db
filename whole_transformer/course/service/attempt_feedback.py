"""One attempt's feedback, made at once and released through nbgrader's exchange.

Two kinds (course.toml [service]): ``pass_fail``, a short page per notebook that says for each
graded test whether it passed and, if not, which kinds of case failed (from the grader's verdict,
never the tests themselves); and ``full``, nbgrader's own feedback (``generate_feedback`` with the
course's HideHiddenTests), made in a private course folder from this attempt alone, so that the
instructor's feedback/ is never touched. A full page that shows anything a student must not see
(``reports.feedback.leaks``) is not released: the pass/fail page goes instead.

``deliver`` writes each page where nbgrader's ``fetch_feedback`` looks for it:
``<exchange>/<course_id>/feedback/<notebook_hash(secret, notebook_id)>.html``, the notebook id
being the name of a notebook at the top of the attempt's folder, as in the student's own copy.
"""

from __future__ import annotations

import html
import os
import shutil
import uuid
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash

from ..autograder.store import merge
from ..core.results import GRADED, MISSING, CellStatus
from ..core.verdict import Outcome
from ..csp import with_policy
from ..gradebook import private_course_config
from ..layout import ASSIGNMENT, COURSE_ID, Course, run_nbgrader, sqlite_url
from ..plugins.verdict_text import TIMEOUTS, what_it_did
from ..reports.feedback import leaks, notebook_text
from ..reports.student_page import readable
from .watch import Attempt

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:52em;margin:2em auto;line-height:1.5}"
    "td,th{padding:.3em .8em;border-bottom:1px solid #ccc;text-align:left}.ok{color:#176b1f}.no{color:#a31515}"
)


def page(title: str, lines: list[str], rows: list[tuple[str, str, bool]] | None = None) -> str:
    """A small standalone HTML page: a title, paragraphs, and a table of (test, what happened, passed)."""
    body = "".join(f"<p>{html.escape(line)}</p>" for line in lines)
    if rows:
        body += (
            "<table><tr><th>test</th><th>result</th></tr>"
            + "".join(
                f'<tr><td>{html.escape(t)}</td><td class="{"ok" if ok else "no"}">{html.escape(r)}</td></tr>'
                for t, r, ok in rows
            )
            + "</table>"
        )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>{body}</body></html>"
    )


def _cell_line(cell: CellStatus | None) -> tuple[str, bool]:
    """What happened to one graded test, in a line a student may read, and whether it passed."""
    if cell is None:
        return "not graded", False
    if cell.status != GRADED:
        return f"could not run to the end: {cell.reason}", False
    v = cell.verdict
    if v is None:  # the grader gave no verdict (the test had no expected values): nbgrader's score stands
        return "passed", True
    if v.outcome == Outcome.RIGHT:
        return "passed", True
    if v.outcome == Outcome.UNANSWERED:
        return f"not answered yet ({v.why or ''})", False
    if v.why and v.why.startswith("the answer cell"):  # stopped by the clock: "your answer cell ran over 30 s…"
        return "your " + v.why.removeprefix("the ") + ", so its answer is not right yet", False
    errs = v.errors or {}
    if v.outcome == Outcome.RAISED and "the whole test cell" in errs:
        ename = errs["the whole test cell"]
        what = v.why if ename in TIMEOUTS and v.why else what_it_did(ename)
        return f"your code {what}, so no case could be checked", False
    by_error: dict[str, list[str]] = {}
    for kind, ename in errs.items():
        by_error.setdefault(ename, []).append(kind)
    said = [f"your code {what_it_did(e)} on: {'; '.join(kinds)}" for e, kinds in by_error.items()]
    wrong = [k for k in v.failed or [] if k not in errs]
    if wrong:
        said.insert(0, "not right yet for: " + "; ".join(wrong))
    return ("; ".join(said) if said else "not right yet"), False


def pass_fail_pages(result, grade_cells: dict, header: list[str]) -> dict[str, str]:
    """{notebook name: page}: pass or fail per graded test of each notebook handed in."""
    pages = {}
    for name, res in result.notebooks.items():
        if res.status == MISSING:
            continue
        if res.status != GRADED:
            pages[name] = page(f"{name}: feedback", header + [f"This notebook could not be graded: {res.reason}"])
            continue
        rows = [(gid, *_cell_line(res.cells.get(gid))) for gid, _ in grade_cells.get(name, [])]
        passed = sum(ok for _, _, ok in rows)
        pages[name] = page(f"{name}: feedback", header + [f"{passed} of {len(rows)} graded test(s) passed."], rows)
    return pages


def full_pages(
    course: Course, result, assignment, work: Path, secrets: dict, own: str, header: list[str], log
) -> dict[str, str]:
    """{notebook name: page}: nbgrader's feedback of this attempt alone, made in a private course;
    a page that shows a secret (``reports.feedback.secrets``) is left out, and said."""
    private = work / f"feedback-{uuid.uuid4().hex[:8]}"
    private.mkdir(parents=True)
    try:
        (private / "gradebook.db").write_bytes(assignment.gradebook)
        private_course_config(private, course.root / "nbgrader_config.py")
        with Gradebook(sqlite_url(private / "gradebook.db")) as gb:  # nbgrader's own hand-in time there
            merge(Course(private), result, assignment, None, gb, private / "staging")
        done = run_nbgrader(
            ["generate_feedback", ASSIGNMENT, "--force", f"--student={result.student}"],
            private,
            log=private / "nbgrader.log",
            timeout=300,
        )
        if done.returncode != 0:
            log(f"{result.student}: nbgrader generate_feedback failed (see its log); pass/fail feedback instead")
        banner = "".join(f"<p>{html.escape(line)}</p>" for line in header)
        banner = f'<div style="border:2px solid #888;padding:.5em 1em;margin:1em">{banner}</div>'
        pages = {}
        for f in sorted((private / "feedback" / result.student / ASSIGNMENT).glob("*.html")):
            found = leaks(f, secrets, own)
            if found:
                log(f"{result.student}: NOT RELEASED {f.name}: it showed {secrets[found[0]]} text; pass/fail instead")
                continue
            text = f.read_text(errors="replace")
            at = text.find(">", text.find("<body")) + 1 if "<body" in text else 0
            pages[f.stem] = readable(text[:at] + banner + text[at:])
        return pages
    finally:
        shutil.rmtree(private, ignore_errors=True)


def own_text(files: dict[str, bytes]) -> str:
    """What the student wrote in this attempt (raw and cell by cell): a solution line found there is theirs."""
    return "\n".join(
        notebook_text(data.decode("utf-8", errors="replace")) for rel, data in files.items() if rel.endswith(".ipynb")
    )


def notebook_ids(sub: Attempt) -> list[str]:
    """The notebook ids fetch_feedback asks for: the notebooks at the top of the attempt's folder."""
    return sorted(p.stem for p in sub.folder.glob("*.ipynb"))


def pages_by_id(sub: Attempt, result, pages: dict[str, str], header: list[str]) -> dict[str, str]:
    """Each notebook id of the attempt → its page: a notebook handed in under another name gets the page
    of the notebook it was graded as; any other a page that says it was not graded."""
    out = {}
    located = {
        Path(r.file).stem: n
        for n, r in (result.notebooks.items() if result else [])
        if r.file and Path(r.file).parent == Path(ASSIGNMENT)
    }
    for nid in notebook_ids(sub):
        name = located.get(nid, nid)
        out[nid] = pages.get(name) or page(
            f"{nid}: feedback", header + [f"{nid}.ipynb was not graded: it is not one of the assignment's notebooks"]
        )
    return out


def deliver(exchange: Path, sub: Attempt, pages: dict[str, str]) -> list[str]:
    """Put each page where ``nbgrader fetch_feedback`` finds it (see the module doc); the files written."""
    folder = Path(exchange) / COURSE_ID / "feedback"
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    secret = sub.secret
    written = []
    for nid, text in pages.items():
        dest = folder / f"{notebook_hash(secret=secret, notebook_id=nid)}.html"
        tmp = folder / f".{dest.stem}-{os.getpid()}.tmp"
        tmp.write_text(with_policy(text), encoding="utf-8")  # csp.py: no script of the student's runs there
        tmp.chmod(0o644)
        os.replace(tmp, dest)
        written.append(dest.name)
    return written
