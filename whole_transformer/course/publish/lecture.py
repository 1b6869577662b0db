"""``make lecture``: what the lecturer shows.

``lecture`` builds ``notebooks/`` from the same source: solutions kept (their markers
removed), hidden tests and nbgrader metadata removed, every notebook run top to bottom in a
fresh kernel with the widgets' state saved in the notebook, so the labs show when a notebook
is opened, even before it is run. Each notebook is also exported to
``notebooks/html/<name>.html``, a standalone page with the widget state embedded; the widget
manager (vendored, see ``vendor/README.md``) and require.js are copied to
``notebooks/html/_static/`` beside it, so the page works with no network.

The lecture edition is for projecting, so it asks first (``ask_first.py``): every question's and
Predict's answer waits behind a "Show answer" control, in JupyterLab and in the HTML page. The worked
edition, answers in place, is for reading: ``notebooks/html/<name>-worked.html``.
"""

from __future__ import annotations

import copy
import shutil
import sys
import time
from pathlib import Path

import nbformat

from ..cells import HIDDEN_TESTS, SOLUTION, split_region, unmark_region
from ..layout import Course
from .ask_first import ANSWER_TAG, ask_first, worked
from .notebook import run_notebook

HERE = Path(__file__).resolve().parent
VENDOR = HERE / "vendor"
TEMPLATES = HERE / "templates"
STATIC = "_static"
WIDGET_JS = f"{STATIC}/embed-amd.js"
REQUIRE_JS = f"{STATIC}/require.js"
MATHJAX = "mathjax-tex-svg.js"  # the notebooks' formulas, drawn offline (vendor/README.md)


# ------------------------------------------------------------------------------ lecture edition
def lecture_notebook(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The lecture version of a source notebook (not yet run)."""
    nb = ask_first(copy.deepcopy(nb))  # while the cells still say which are questions
    for cell in nb.cells:
        cell.source = split_region(cell.source, HIDDEN_TESTS)[0]
        cell.source = unmark_region(cell.source, SOLUTION).rstrip("\n")
        for key in ("nbgrader", "deletable", "editable"):
            cell.metadata.pop(key, None)
        tags = [t for t in cell.metadata.get("tags", []) if t != "raises-exception"]
        if tags:
            cell.metadata["tags"] = tags
        else:
            cell.metadata.pop("tags", None)
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("celltoolbar", None)
    nb.metadata.pop("widgets", None)
    return nb


def run_lecture_notebook(nb: nbformat.NotebookNode, cwd: Path, timeout: int = 120) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel; widget state is saved in the notebook's metadata."""
    from nbclient.exceptions import CellExecutionError

    try:
        run_notebook(nb, cwd, timeout=timeout, store_widget_state=True, unix_sockets=True)
    except CellExecutionError as e:
        raise RuntimeError(f"a cell of the lecture edition failed:\n{str(e)[-3000:]}") from None
    return nb


def export_html(nb: nbformat.NotebookNode, path: Path) -> Path:
    """Standalone HTML with the widget state embedded and the widget JS beside it (offline)."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    c = Config()
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.HTMLExporter.template_name = "wt_lecture"
    c.HTMLExporter.widget_renderer_url = WIDGET_JS
    c.HTMLExporter.require_js_url = REQUIRE_JS
    c.HTMLExporter.jupyter_widgets_base_url = f"{STATIC}/"
    c.HTMLExporter.mathjax_url = ""
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {ANSWER_TAG}  # behind "Show answer" (ask_first.py)
    exporter = HTMLExporter(config=c)
    resources = {"metadata": {"name": path.stem}, "wt_mathjax_url": f"{STATIC}/{MATHJAX}"}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


#: where the widget manager's CSS looks for its icon fonts, relative to the page (the module
#: paths it was built with), besides _static/
FONT_DIRS = ("@jupyter-widgets", "@jupyter-widgets/html-manager/dist")


def copy_static(html_dir: Path) -> Path:
    static = html_dir / STATIC
    shutil.rmtree(static, ignore_errors=True)
    shutil.rmtree(html_dir / "@jupyter-widgets", ignore_errors=True)
    static.mkdir(parents=True)
    for f in (VENDOR / "html-manager").iterdir():
        shutil.copy2(f, static / f.name)
        if f.suffix in {".woff2", ".woff"}:
            for d in FONT_DIRS:
                (html_dir / d).mkdir(parents=True, exist_ok=True)
                shutil.copy2(f, html_dir / d / f.name)
    shutil.copy2(VENDOR / "require.js", static / "require.js")
    shutil.copy2(VENDOR / MATHJAX, static / MATHJAX)
    shutil.copy2(VENDOR / "README.md", static / "README.md")
    return static


def lecture(course: Course, dest: Path | None = None, *, execute: bool = True, log=print) -> Path:
    """Build the lecture edition into notebooks/ (or ``dest``)."""
    out = Path(dest) if dest is not None else course.lecture
    out.mkdir(parents=True, exist_ok=True)
    html_dir = out / "html"
    copy_static(html_dir)
    names = sorted(course.source.glob("*.ipynb"))
    if not names:
        raise ValueError(f"no source notebooks in {course.source}")
    for src in names:
        t0 = time.monotonic()
        nb = lecture_notebook(nbformat.read(src, as_version=4))
        if execute:
            run_lecture_notebook(nb, out)
        target = out / src.name
        nbformat.validate(nb)
        nbformat.write(nb, target)
        export_html(nb, html_dir / f"{src.stem}.html")
        export_html(worked(nb), html_dir / f"{src.stem}-worked.html")
        state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
        log(
            f"lecture: {src.name} run in {time.monotonic() - t0:.1f} s, "
            f"{len(state.get('state', {}))} widget models saved → {target.relative_to(out.parent)}, "
            f"html/{src.stem}.html"
        )
    for stale in out.glob("*.ipynb"):
        if not (course.source / stale.name).exists():
            stale.unlink()
    return out


# ------------------------------------------------------------------------------ freshness checks
def source_signature(nb: nbformat.NotebookNode) -> list[dict]:
    """What must match between a generated notebook and a fresh build: cells, not run results."""
    return [
        {
            "cell_type": c.cell_type,
            "source": c.source,
            "tags": sorted(c.metadata.get("tags", [])),
            "nbgrader": c.metadata.get("nbgrader"),
            "id": c.get("id"),
        }
        for c in nb.cells
    ]


def lecture_is_current(course: Course) -> list[str]:
    """Problems with notebooks/ compared with a fresh lecture build of source/ (empty if none)."""
    problems = []
    for src in sorted(course.source.glob("*.ipynb")):
        built = course.lecture / src.name
        if not built.exists():
            problems.append(f"{built} is missing")
            continue
        want = source_signature(lecture_notebook(nbformat.read(src, as_version=4)))
        have_nb = nbformat.read(built, as_version=4)
        if source_signature(have_nb) != want:
            problems.append(f"{built.name} differs from a fresh build of {src.name}")
        code = [c for c in have_nb.cells if c.cell_type == "code" and c.source.strip()]
        if any(c.execution_count is None for c in code):
            problems.append(f"{built.name} has cells that were not run")
        if any(o.get("output_type") == "error" for c in code for o in c.outputs):
            problems.append(f"{built.name} has an error output")
        for html in (course.lecture / "html" / f"{src.stem}{end}.html" for end in ("", "-worked")):
            if not html.exists():
                problems.append(f"{html} is missing")
            elif html.stat().st_mtime + 1 < built.stat().st_mtime:
                problems.append(f"{html.name} is older than {built.name}")
    return problems


if __name__ == "__main__":  # pragma: no cover
    sys.exit("use: python -m whole_transformer.course lecture")
