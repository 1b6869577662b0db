"""A Content-Security-Policy for every page the course writes or serves.

The pages show what students wrote, made inert first (``plugins/inert.py``). The policy is the
second wall: should anything active ever get through, the browser still runs no script the page's
own template did not put in its ``<head>``, loads nothing from elsewhere, submits no form and
takes no ``<base>``. For a page the course writes (feedback files, the page per student, the
class report) the policy is worked out from that page's head, which only the course's templates
write (student content is in the body): each script it loads is allowed by its own folder, each
inline script by its SHA-256; a page with no script in its head allows none. It goes in as a
``<meta http-equiv>`` first thing in the head. The grading service's status page has no script at
all and sends ``SERVED`` as a header.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

BASE = "default-src 'none'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-src 'none'"
#: the policy of a page with no script, loading only its own inline styles and images
SERVED = f"{BASE}; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"
NONE = "'none'"
MARK = '<meta http-equiv="Content-Security-Policy"'
_HEAD = re.compile(r"<head\b[^>]*>", re.I)


class _Head(HTMLParser):
    """The scripts and stylesheets of a page's head."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.sources: set[str] = set()
        self.styles: set[str] = set()
        self.inline: list[str] = []
        self._script: list[str] | None = None
        self.done = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.done:
            return
        if tag == "body":
            self.done = True
        elif tag == "script" and a.get("src"):
            self.sources.add(_folder(a["src"] or ""))
        elif tag == "script":
            self._script = []
        elif tag == "link" and "stylesheet" in (a.get("rel") or "") and a.get("href"):
            self.styles.add(_folder(a["href"] or ""))

    def handle_data(self, data):
        if self._script is not None:
            self._script.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.inline.append("".join(self._script))
            self._script = None
        elif tag == "head":
            self.done = True


def _folder(url: str) -> str:
    """A script's URL as a CSP source: its origin and folder (what it loads next lives there)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.netloc:
        return ""
    return f"https://{parts.netloc}{parts.path.rsplit('/', 1)[0]}/"


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(page: str) -> str:
    """The policy of a page the course wrote: what its own head loads and runs, nothing else."""
    head = _Head()
    m = re.search(r"</head\s*>", page, re.I)
    head.feed(page[: m.end()] if m else "")
    scripts = " ".join(sorted(s for s in head.sources if s) + sorted({_sha(t) for t in head.inline}))
    styles = " ".join(sorted(s for s in head.styles if s))
    parts = [BASE, f"script-src {scripts or NONE}", f"style-src 'unsafe-inline' {styles}", "img-src data:"]
    return "; ".join(p.strip() for p in [*parts, f"font-src data: {styles}"])


def with_policy(page: str) -> str:
    """The page with its policy as the first thing in its head (a page without a head gets one)."""
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(page)}">'
    m = _HEAD.search(page)
    if m is not None and page[m.end() :].startswith(MARK):
        return page  # it has its policy already
    if m is None:
        return f"<head>{meta}</head>{page}"
    return page[: m.end()] + meta + page[m.end() :]


def protect(path: Path) -> None:
    """Give a written page its policy, in place."""
    path.write_text(with_policy(path.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
