"""What a student wrote, made inert before a page someone else opens shows it.

A graded notebook is shown to the instructor by the Formgrader (nbconvert's HTML, served from the
instructor's own Jupyter server) and to the student by the feedback files and the page per student.
nbconvert puts a Markdown cell's HTML, and an output's HTML, SVG, Markdown and JavaScript, into
the page as they are: a ``<script>`` or an ``onerror=`` the student wrote would run as whoever
opens the page. Here every such piece goes through the ``nh3`` sanitizer (the Rust ``ammonia``
library), with an allowlist of the tags, attributes, URL schemes and style properties that
formatting needs; what is not on it is gone, and the text stays:

- a Markdown cell is rendered by nbconvert's own Markdown renderer (tables, code, math, images
  from the cell's own attachments), sanitized, and stored as that HTML on one line, which the
  renderer passes through unchanged when the page is made;
- an output keeps plain text, tracebacks, images the notebook holds (checked to be base64),
  and its HTML, SVG and Markdown sanitized; JavaScript and widget views are dropped;
- a raw cell is sanitized (nbconvert's HTML shows it as it is); the notebook's saved widget state
  and title are dropped;
- ids get ``student-`` in front and only the classes the renderer writes stay, so nothing takes
  the name or the look of one of the page's own elements.

``clean_notebook`` does it to a notebook, ``clean_file`` to a graded file as the course writes
it (``autograder/store.py``), ``MakeInert`` inside nbgrader's feedback (``nbgrader_config.py``).
``csp.py`` adds a Content-Security-Policy to every page the course writes or serves. The
student's own notebook and kernel are not touched: only the copies shown to others are.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

import nh3
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from pygments.token import STANDARD_TYPES  # type: ignore[import-untyped]

#: HTML a student's Markdown or output may hold: text formatting, lists, tables, code, images, links
HTML_TAGS = {
    *"a abbr b blockquote br caption cite code col colgroup dd del details div dl dt em figcaption".split(),
    *"figure h1 h2 h3 h4 h5 h6 hr i img ins kbd li mark ol p pre q s samp small span strong sub".split(),
    *"summary sup table tbody td tfoot th thead tr u ul var".split(),
}
#: SVG drawing elements (a plot's own elements and styles), without scripts, links, animation or foreign content
SVG_TAGS = {
    *"svg g defs symbol use path rect circle ellipse line polyline polygon text tspan title desc".split(),
    *"clipPath mask linearGradient radialGradient stop marker pattern".split(),
}
_GEOMETRY = {
    *"x y x1 y1 x2 y2 cx cy r rx ry d points width height viewBox transform dx dy rotate".split(),
    *"preserveAspectRatio gradientUnits gradientTransform patternUnits offset markerWidth markerHeight".split(),
    *"refX refY orient clip-path clipPathUnits mask fill stroke stroke-width stroke-linecap".split(),
    *"stroke-linejoin stroke-dasharray stroke-opacity fill-opacity fill-rule opacity font-family".split(),
    *"font-size font-weight font-style text-anchor dominant-baseline stop-color stop-opacity".split(),
    *"marker-start marker-mid marker-end href xmlns version id class style".split(),
}
_COMMON = {"title", "class", "id", "lang", "dir", "align"}
HTML_ATTRS = {
    "*": _COMMON,
    "a": _COMMON | {"href"},
    "img": _COMMON | {"src", "alt", "width", "height"},
    "td": _COMMON | {"colspan", "rowspan", "style"},
    "th": _COMMON | {"colspan", "rowspan", "scope", "style"},
    "ol": _COMMON | {"start", "type"},
    "col": _COMMON | {"span"},
    "span": _COMMON | {"style"},
    "p": _COMMON | {"style"},
    "div": _COMMON | {"style"},
}
#: style a table or text may keep: colour, alignment, spacing; never position, size, display or z-order
STYLE_PROPERTIES = {
    *"color background-color font-weight font-style font-family font-size text-align text-decoration".split(),
    *"vertical-align white-space border border-collapse".split(),
    *"fill stroke stroke-width stroke-linecap stroke-linejoin stroke-dasharray stroke-opacity".split(),
    *"fill-opacity opacity stop-color stop-opacity font-stretch text-anchor".split(),
}
STUDENT = "student-"
_CLASSES = {*STANDARD_TYPES.values(), "anchor-link", "highlight", "wt-inert"} - {""}
_IMAGE_DATA = re.compile(r"^data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=\s]+$")
_SAFE_SCHEMES = {"http", "https", "mailto"}
IMAGES = ("image/png", "image/jpeg", "image/gif")
DROPPED = "[output not shown here: {kinds}, which could run code in the page of whoever opens it]"


def _attribute(tag: str, attr: str, value: str) -> str | None:
    """An attribute's value as the page may keep it: an id in the student's own namespace (it cannot take
    the name of one of the page's elements), only the classes nbconvert's renderer writes (none of the page's
    own, which could place or hide it), and only safe URLs (``_url``)."""
    if attr == "id":  # made inert twice (the graded notebook, then its feedback), an id keeps one STUDENT
        return value if value.startswith(STUDENT) else STUDENT + value
    if attr == "class":
        kept = [c for c in value.split() if c in _CLASSES or re.fullmatch(r"hl-[\w-]+", c)]
        return " ".join(kept) or None
    return _url(tag, attr, value)


def _url(tag: str, attr: str, value: str) -> str | None:
    """A link or image source the page may keep: http(s) and mailto links, a link to the student's own
    #fragment, an image the notebook itself holds (base64 PNG, JPEG, GIF); never javascript:, data: or
    other schemes."""
    if attr not in {"href", "src", "xlink:href"}:
        return value
    v = value.strip()
    if v.startswith("#"):  # the student's own ids carry STUDENT in front
        ours = v if v.startswith("#" + STUDENT) else "#" + STUDENT + v[1:]
        return ours if tag in {"a", "use"} else None
    if tag == "img" and attr == "src" and _IMAGE_DATA.match(v):
        return v
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", v)
    if scheme is None:
        return v if attr == "href" and tag == "a" else None  # relative links go nowhere harmful
    return v if scheme.group(1).lower() in _SAFE_SCHEMES and tag == "a" else None


def clean_html(text: str) -> str:
    """HTML as a student wrote it, with only formatting left."""
    return nh3.clean(
        str(text),
        tags=HTML_TAGS,
        attributes=HTML_ATTRS,
        url_schemes=_SAFE_SCHEMES | {"data"},
        attribute_filter=_attribute,
        filter_style_properties=STYLE_PROPERTIES,
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
    )


def clean_svg(text: str) -> str:
    """An SVG image with only its drawing left (no script, handler, link, animation or foreign content)."""
    return nh3.clean(
        str(text),
        tags=SVG_TAGS,
        attributes={t: _GEOMETRY for t in SVG_TAGS},
        url_schemes=set(),
        attribute_filter=_attribute,
        filter_style_properties=STYLE_PROPERTIES,
        strip_comments=True,
        link_rel=None,
    )


def _base64(data) -> bool:
    try:
        base64.b64decode("".join(str(data).split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def clean_attachments(attachments) -> dict:
    """A cell's attachments that are images in base64 (the ones a Markdown image can show)."""
    out = {}
    for name, bundle in (attachments or {}).items():
        kept = {m: d for m, d in (bundle or {}).items() if m in IMAGES and _base64(d)}
        if kept and re.fullmatch(r"[\w .-]{1,200}", str(name)):
            out[str(name)] = kept
    return out


def markdown_html(source: str, attachments=None) -> str:
    """Markdown rendered as nbconvert renders a Markdown cell, then sanitized."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    files = clean_attachments(attachments)
    text = re.sub(r"attachment:(\S+?)(?=[)\s\"'])", lambda m: m.group(0) if m.group(1) in files else "#", source)
    renderer = IPythonRenderer(escape=False, attachments=files, allow_harmful_protocols=False)
    return clean_html(MarkdownWithMath(renderer=renderer).render(text))


def one_block(html: str) -> str:
    """Sanitized HTML as a Markdown cell's source the renderer passes through whole: one ``<div>`` on one
    line (a newline inside is the same character written as ``&#10;``, so no blank line ends the block)."""
    return '<div class="wt-inert">' + html.replace("\r", "").replace("\n", "&#10;") + "</div>"


def clean_output(out: NotebookNode) -> NotebookNode:
    """One output as a page may show it: plain text as it is, rich content sanitized, code dropped."""
    if out.get("output_type") not in {"display_data", "execute_result"}:
        return out
    data, kept, dropped = out.get("data", {}), {}, []
    for mime, value in data.items():
        text = "".join(value) if isinstance(value, list) else value
        if mime in {"text/plain", "text/latex", "application/json"}:
            kept[mime] = value
        elif mime == "text/html":
            kept[mime] = clean_html(text)
        elif mime == "text/markdown" and "text/html" not in data:
            kept["text/html"] = markdown_html(str(text))
        elif mime == "image/svg+xml":
            kept[mime] = clean_svg(text)
        elif mime in IMAGES and _base64(text):
            kept[mime] = text
        elif mime != "text/markdown":
            dropped.append(mime)
    if not kept:
        kept["text/plain"] = DROPPED.format(kinds=", ".join(dropped) or "no content")
    meta = {
        m: {k: v for k, v in md.items() if k in {"width", "height"} and isinstance(v, int | float)}
        for m, md in (out.get("metadata") or {}).items()
        if m in kept and isinstance(md, dict)
    }
    new = NotebookNode({**out, "data": kept, "metadata": NotebookNode(meta)})
    return new


def clean_cell(cell: NotebookNode) -> NotebookNode:
    if cell.cell_type == "markdown":
        cell.source = one_block(markdown_html(cell.source, cell.get("attachments")))
        cell.pop("attachments", None)
    elif cell.cell_type == "raw":  # nbconvert's HTML puts a raw cell in as it is, with or without a mimetype
        cell.source = clean_html(cell.source)
    elif cell.cell_type == "code":
        cell.outputs = [clean_output(o) for o in cell.get("outputs", [])]
    return cell


def clean_notebook(nb: NotebookNode) -> NotebookNode:
    """The notebook with everything a student wrote made inert (in place; also returned)."""
    for cell in nb.cells:
        clean_cell(cell)
    for key in ("widgets", "title"):  # saved widget views run their own scripts; a title is the page's
        nb.metadata.pop(key, None)
    return nb


def clean_file(name: str, data: bytes) -> bytes | None:
    """A file of a graded hand-in as the course keeps it for the Formgrader: a notebook made inert; a
    file a browser would run (HTML, SVG, XML, JavaScript) left out (None); any other file as it is."""
    import nbformat

    suffix = name.lower().rsplit(".", 1)[-1] if "." in name else ""
    if suffix == "ipynb":
        try:
            nb = nbformat.reads(data.decode("utf-8", errors="replace"), as_version=4)
        except Exception:  # noqa: BLE001 - not a notebook nbformat reads: nothing to show it by, so not kept
            return None
        return json.dumps(clean_notebook(nb), ensure_ascii=False, indent=1).encode() + b"\n"
    if suffix in {"html", "htm", "xhtml", "xht", "shtml", "svg", "svgz", "xml", "xsl", "js", "mjs", "mhtml", "pdf"}:
        return None
    return data


class MakeInert(NbGraderPreprocessor):
    """nbgrader preprocessor: every Markdown cell, raw HTML cell and output of the notebook made inert."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        return clean_notebook(nb), resources
