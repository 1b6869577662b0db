"""Running the source notebooks in a fresh kernel, shared by the notebook tests."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import nbformat

from whole_transformer.course.layout import ASSIGNMENT
from whole_transformer.course.publish import notebook as kernel
from whole_transformer.course.publish.notebook import kernel_env

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "source" / ASSIGNMENT


def load(name):
    return nbformat.read(SOURCE / name, as_version=4)


def execute(nb, *, timeout=180, allow_errors=False, store_widget_state=False, **env):
    """Run nb in a fresh kernel (cwd: the source folder); returns the seconds it took, kernel start included.
    With store_widget_state the widgets' last state is kept in nb.metadata.widgets (see widget_text)."""
    return kernel.run_notebook(
        nb,
        SOURCE,
        timeout=timeout,
        env=kernel_env(**env),
        allow_errors=allow_errors,
        store_widget_state=store_widget_state,
    )


def run_fresh(name, mode, record_property, **options):
    """Source notebook `name` run in a fresh kernel as a student runs it (mode "interactive") or as the grader does
    ("autograde"), with execute's `options`; the seconds it took go to the test's record. Asserts that no cell
    raised; returns (the notebook run, the seconds)."""
    nb = load(name)
    extra = {"NBGRADER_EXECUTION": "autograde"} if mode == "autograde" else {}
    seconds = execute(nb, **options, **extra)
    record_property("seconds", round(seconds, 1))
    print(f"{name} ({mode}): {seconds:.1f} s")
    assert not errors(nb), errors(nb)
    return nb, seconds


def stream_text(cell):
    """What a cell printed, with errors as 'Name: message'."""
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append(f"{o.ename}: {o.evalue}")
    return "".join(out)


def errors(nb):
    return [
        (i, o.ename)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.output_type == "error"
    ]


def plain(html_text):
    """Text as a reader sees it: tags dropped, entities read, runs of white space made one space."""
    import html

    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", html_text))).strip()


def widget_text(nb, cell):
    """What the widgets a cell displays show as text, in their last state (run with store_widget_state=True):
    every string value (HTML, Label, Text), description, tooltip and option label, children included."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    out, seen = [], set()

    def visit(model_id):
        if model_id in seen or model_id not in state:
            return
        seen.add(model_id)
        st = state[model_id].get("state", {})
        for key in ("description", "tooltip", "value", "placeholder"):
            if isinstance(st.get(key), str):
                out.append(st[key])
        out.extend(str(x) for x in st.get("_options_labels", []))
        for child in st.get("children", []):
            visit(str(child).removeprefix("IPY_MODEL_"))

    for o in cell.get("outputs", []):
        view = o.get("data", {}).get("application/vnd.jupyter.widget-view+json")
        if view:
            visit(view["model_id"])
    return plain(" ".join(out))


def output_text(nb, cell):
    """Everything a cell's outputs show as text: printed lines, errors, text, HTML and Markdown, and widgets."""
    out = [stream_text(cell)]
    for o in cell.get("outputs", []):
        data = o.get("data", {})
        for mime in ("text/html", "text/markdown"):
            if mime in data:
                out.append(data[mime])
                break
        else:
            if "text/plain" in data and "application/vnd.jupyter.widget-view+json" not in data:
                out.append(data["text/plain"])
    return plain(" ".join(out) + " " + widget_text(nb, cell))


def assert_nbgrader_validates(name: str, folder: Path) -> None:
    """``nbgrader validate`` passes on the source notebook ``name``, copied into ``folder``. The kernel talks over
    Unix sockets, as the handout's nbgrader_config.py has it: over TCP, another process may take the port
    jupyter_client chose before the kernel binds it ("Address already in use", seen once on a busy machine)."""
    (folder / name).write_bytes((SOURCE / name).read_bytes())
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", name, "--KernelManager.transport=ipc"],
        cwd=folder,
        env=kernel_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Success! Your notebook passes all the tests." in result.stdout, result.stdout + result.stderr
    assert "without encryption" not in result.stdout + result.stderr, "the kernel ran over TCP, not Unix sockets"
