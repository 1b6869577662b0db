"""Helpers of the browser tests: drive one JupyterLab page the way a student does, and read what it shows.

    lab.open("release/01-whole-machine.ipynb")  -> Notebook (kernel started, status bar says Idle)
    nb.run_all()                                  -> runs every cell, waits for the kernel to answer each one
    nb.code_cells()                               -> [{index, count, tags, source, outputs: [{output_type, ename}]}]
    nb.panel.locator(".wt-machine")               -> a lab, found by the CSS class its module documents
    set_slider(slider_locator, "128")             -> moves an ipywidgets slider with the keyboard
    lab.shot(locator, "01-machine-before")        -> artifacts/e2e/01-machine-before.png

Opening files and running commands goes through `window.jupyterapp` (exposed by the server fixture);
everything a test asserts about a lab is read from the page, as a student would see it.
"""

import os
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
# The course whose built folders are tested: this checkout, unless WT_E2E_COURSE names another course folder.
COURSE = Path(os.environ.get("WT_E2E_COURSE") or REPO).resolve()
RELEASE = COURSE / "release" / "whole-transformer"
LECTURE = COURSE / "notebooks"
NOTEBOOKS = [
    "01-whole-machine.ipynb",
    "02-microscope.ipynb",
    "03-one-word-at-a-time.ipynb",
    "04-how-it-learned.ipynb",
]
LABS = {  # the labs each notebook shows: the wt-<name> class of each lab's root (see the lab modules)
    "01-whole-machine.ipynb": ["machine"],
    "02-microscope.ipynb": ["microscope", "block", "scale"],
    "03-one-word-at-a-time.ipynb": ["decode", "maps", "cache", "sampling"],
    "04-how-it-learned.ipynb": ["batch", "training"],
}
RUN_ALL_TIMEOUT = 120  # seconds; each notebook runs in < 30 s in a fresh kernel, the page adds rendering
KERNEL_TIMEOUT = 60

_FIND = "(id) => Array.from(window.jupyterapp.shell.widgets('main')).find(w => w.id === id)"


def require_built(folder, command, names=NOTEBOOKS):
    """Fail (never skip) when a built folder is missing: the browser tests test what was built."""
    shown = folder.relative_to(COURSE) if folder.is_relative_to(COURSE) else folder
    if not folder.is_dir():
        pytest.fail(f"{shown}/ does not exist: run `{command}` first", pytrace=False)
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        pytest.fail(f"{shown}/ lacks {', '.join(missing)}: run `{command}` to rebuild it", pytrace=False)


def copy_into(server, src, dest_name):
    """Copy a file or folder into the server's root: tests never run (and save) the repository's notebooks."""
    dest = server.root / dest_name
    if dest.is_dir():
        shutil.rmtree(dest)
    elif dest.exists():
        dest.unlink()
    src = Path(src)
    if src.is_dir():
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "html"))
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    return dest


class Run:
    """A notebook opened and run top to bottom; kept open so that several tests can use its labs."""

    def __init__(self, nb, seconds, cells):
        self.nb, self.seconds, self.cells = nb, seconds, cells

    def errors(self):
        """(cell index, ename, evalue, first source line, cell) of every error output."""
        return [
            (c["index"], o["ename"], o["evalue"], (c["source"].strip().splitlines() or [""])[0], c)
            for c in self.cells
            for o in c["outputs"]
            if o["output_type"] == "error"
        ]

    def not_run(self):
        return [(c["index"], (c["source"].strip().splitlines() or [""])[0]) for c in self.cells if c["count"] is None]


class Lab:
    """One JupyterLab page, shared by all tests."""

    def __init__(self, page, server, artifacts):
        self.page, self.server, self.artifacts = page, server, artifacts
        self.runs = {}  # path -> Run, or the message of the failure that stopped it
        self.copied = set()
        self.console = []  # browser console errors and page errors since the last reset_log()
        page.on("console", lambda m: m.type == "error" and self.console.append(m.text))
        page.on("pageerror", lambda e: self.console.append(f"page error: {e}"))
        page.set_default_timeout(30_000)

    def start(self):
        self.page.goto(f"{self.server.url}/lab?token={self.server.token}")
        self.page.wait_for_function("() => window.jupyterapp !== undefined", timeout=60_000)
        self.page.evaluate("async () => { await window.jupyterapp.restored; }")
        self.page.locator("#jp-main-statusbar").wait_for()
        self.dismiss_dialogs()

    def reset_log(self):
        self.console.clear()

    def dismiss_dialogs(self):
        dialogs = self.page.locator(".jp-Dialog")
        texts = []
        for _ in range(5):
            if dialogs.count() == 0:
                break
            texts.append(dialogs.first.inner_text())
            self.page.keyboard.press("Escape")
            self.page.wait_for_timeout(200)
        return texts

    def open(self, path):
        """Open a notebook (a path under the server root), start its kernel and wait until the status bar says Idle."""
        widget_id = self.page.evaluate(
            """async (path) => {
                const app = window.jupyterapp;
                const w = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
                await w.context.ready;
                await w.sessionContext.ready;
                app.shell.activateById(w.id);
                return w.id;
            }""",
            path,
        )
        nb = Notebook(self, widget_id, path)
        nb.wait_kernel("Idle")
        return nb

    def run(self, folder, name, edition, command, before_run=None, trust=False):
        """The notebook `folder/name`, copied to `<edition>/name` under the server root, opened and run; it stays
        open (with its kernel) until a test runs another notebook, so the tests of one notebook share one run."""
        require_built(folder, command, [name])
        path = f"{edition}/{name}"
        done = self.runs.get(path)
        if isinstance(done, str):
            pytest.fail(f"{path} failed earlier in this session: {done}", pytrace=False)
        if done is not None:
            done.nb.activate()
            return done
        self.close_everything()  # one notebook and one kernel at a time: 2 shared cores
        if edition not in self.copied:
            copied = copy_into(self.server, folder, edition)
            if trust:  # what `jupyter trust` does, in this server's own data folder
                from nbformat.sign import NotebookNotary

                notary = NotebookNotary(data_dir=self.server.env["JUPYTER_DATA_DIR"])
                for file in copied.glob("*.ipynb"):
                    notary.sign(nbformat.read(file, as_version=4))
            self.copied.add(edition)
        self.runs[path] = "it did not open or run"
        nb = self.open(path)
        if before_run is not None:
            before_run(nb)  # e.g. look at what the notebook shows before it runs
        seconds = nb.run_all()
        self.runs[path] = Run(nb, seconds, nb.code_cells())
        return self.runs[path]

    def shot(self, locator, name):
        """Screenshot one element (or the page) to artifacts/e2e/<name>.png."""
        path = self.artifacts / f"{name}.png"
        target = locator if locator is not None else self.page
        target.screenshot(path=str(path), animations="disabled")
        return path

    def close_everything(self):
        """Close every open document without saving prompts and shut every kernel down."""
        self.dismiss_dialogs()
        self.runs = {path: done for path, done in self.runs.items() if isinstance(done, str)}
        self.page.evaluate(
            """async () => {
                const app = window.jupyterapp;
                for (const w of Array.from(app.shell.widgets('main'))) {
                    if (w.context && w.context.model) { w.context.model.dirty = false; }
                    w.close();
                }
                await app.serviceManager.sessions.shutdownAll();
                await app.serviceManager.kernels.shutdownAll();
            }"""
        )
        self.dismiss_dialogs()


class Notebook:
    def __init__(self, lab, widget_id, path):
        self.lab, self.id, self.path = lab, widget_id, path
        self.page = lab.page
        self.panel = self.page.locator(f"#{widget_id}")

    def activate(self):
        self.page.evaluate("(id) => window.jupyterapp.shell.activateById(id)", self.id)

    def kernel_status(self):
        """The kernel status shown in JupyterLab's status bar, e.g. 'Python 3 (ipykernel) | Idle'."""
        item = self.page.locator("#jp-main-statusbar .jp-StatusBar-TextItem", has_text=" | ")
        return item.first.inner_text() if item.count() else ""

    def wait_kernel(self, state, timeout=KERNEL_TIMEOUT):
        """Wait until the status bar (not the toolbar, which says Idle too early) shows the kernel in `state`."""
        self.activate()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dialogs = self.lab.dismiss_dialogs()
            if dialogs:
                pytest.fail(f"{self.path}: JupyterLab showed a dialog while starting the kernel: {dialogs}")
            text = self.kernel_status()
            if text.strip().endswith(f"| {state}"):
                return text
            self.page.wait_for_timeout(100)
        pytest.fail(f"{self.path}: the status bar still says {self.kernel_status()!r} after {timeout} s, not {state}")

    def run_all(self, timeout=RUN_ALL_TIMEOUT):
        """Run > Run All Cells, then wait until the kernel has replied to every cell it was sent (JupyterLab's
        command may resolve while cells are still queued, and queued cells scrolled out of view show no [*]).
        Returns the seconds it took."""
        self.wait_kernel("Idle")
        start = time.monotonic()
        finished = self.page.evaluate(
            f"""async ([id, timeout]) => {{
                const app = window.jupyterapp;
                const w = ({_FIND})(id);
                const kernel = w.sessionContext.session.kernel;
                const pending = new Set();
                let sent = 0;
                const watch = (k, {{msg, direction}}) => {{
                    if (direction === 'send' && msg.header.msg_type === 'execute_request') {{
                        pending.add(msg.header.msg_id); sent += 1;
                    }} else if (direction === 'recv' && msg.header.msg_type === 'execute_reply') {{
                        pending.delete(msg.parent_header.msg_id);
                    }}
                }};
                kernel.anyMessage.connect(watch);
                try {{
                    app.shell.activateById(id);
                    const run = app.commands.execute('notebook:run-all-cells');
                    const deadline = Date.now() + timeout * 1000;
                    await Promise.race([run, new Promise(r => setTimeout(r, timeout * 1000))]);
                    while (Date.now() < deadline && (sent === 0 || pending.size > 0)) {{
                        await new Promise(r => setTimeout(r, 100));
                    }}
                    return pending.size === 0 && sent > 0 ? 'done' : `${{pending.size}} of ${{sent}} cells unanswered`;
                }} finally {{
                    kernel.anyMessage.disconnect(watch);
                }}
            }}""",
            [self.id, timeout],
        )
        if finished != "done":
            pytest.fail(f"{self.path}: Run All Cells did not finish within {timeout} s ({finished})")
        self.wait_settled(deadline=start + timeout)
        return time.monotonic() - start

    def busy_cells(self):
        """Code cells still queued or running (prompt [*])."""
        return self.page.evaluate(
            f"""(id) => ({_FIND})(id).content.widgets.filter(c => c.model.type === 'code' &&
                (c.model.executionState === 'running' ||
                 (c.node.querySelector('.jp-InputPrompt')?.textContent || '').includes('*'))).length""",
            self.id,
        )

    def wait_settled(self, deadline, calm=3):
        """Wait until no cell is queued or running and the status bar says Idle, `calm` polls in a row (the kernel
        is briefly idle between two cells; and run_all's count sees a reply as it arrives, before JupyterLab has
        handled it, while the cell's last outputs and the kernel's idle status may come after it)."""
        quiet = 0
        while quiet < calm:
            if time.monotonic() > deadline:
                pytest.fail(
                    f"{self.path}: still running after Run All: {self.busy_cells()} cells busy, "
                    f"status bar {self.kernel_status()!r}"
                )
            busy = self.busy_cells() or not self.kernel_status().strip().endswith("| Idle")
            quiet = 0 if busy else quiet + 1
            self.page.wait_for_timeout(250)

    def code_cells(self):
        return self.page.evaluate(
            f"""(id) => {{
                const w = ({_FIND})(id);
                return w.content.widgets.map((c, index) => ({{index, type: c.model.type,
                    count: c.model.type === 'code' ? c.model.executionCount : null,
                    tags: c.model.getMetadata('tags') || [],
                    nbgrader: c.model.getMetadata('nbgrader') || null,
                    source: c.model.sharedModel.getSource(),
                    outputs: c.model.type === 'code' ? c.model.outputs.toJSON().map(o => ({{
                        output_type: o.output_type, ename: o.ename || null, evalue: o.evalue || null,
                        text: typeof o.text === 'string' ? o.text : (o.text || []).join('')}})) : []
                }})).filter(c => c.type === 'code');
            }}""",
            self.id,
        )

    def save(self):
        self.page.evaluate(f"async (id) => {{ await ({_FIND})(id).context.save(); }}", self.id)

    def lab_widget(self, name):
        """The root of a lab, by the class its module documents (wt-<name>); waits until it is shown."""
        loc = self.panel.locator(f".wt-lab.wt-{name}")
        loc.first.wait_for(state="visible")
        return loc

    def widget_errors(self):
        """Texts of ipywidgets' 'Error displaying widget' / failed-view boxes in this notebook."""
        errors = ".jupyter-widgets-error-widget, .jp-OutputArea-output:has-text('Error displaying widget')"
        return self.panel.locator(errors).all_inner_texts()


def by_description(scope, kind, description):
    """An ipywidgets control of `kind` ('slider', 'dropdown', 'button', ...) by its description label."""
    if kind == "button":
        return scope.locator("button.jupyter-button", has_text=re.compile(rf"^\s*{re.escape(description)}\s*$"))
    label = scope.page.locator(".widget-label", has_text=re.compile(rf"^\s*{re.escape(description)}\s*:?\s*$"))
    return scope.locator(f".widget-{kind}", has=label)


def slider_value(slider):
    return slider.locator(".widget-readout").inner_text().strip()


def set_slider(slider, value, max_presses=64):
    """Move an ipywidgets slider with the keyboard (focus its handle, press arrows) until it reads `value`."""
    value = str(value)
    handle = slider.locator(".noUi-handle")
    handle.focus()
    seen = []
    for direction in ("ArrowRight", "ArrowLeft"):
        # Go one way to the end of the track, then the other way; stop at the value.
        for _ in range(max_presses):
            current = slider_value(slider)
            seen.append(current)
            if current == value:
                return
            handle.press(direction)
            slider.page.wait_for_timeout(30)
            if slider_value(slider) == current:  # reached this end of the track
                break
    if slider_value(slider) != value:
        pytest.fail(f"slider never showed {value!r}; it showed {sorted(set(seen))}")


def wait_text(locator, text, timeout=10):
    """Wait until `locator` shows `text` (a string it contains, or a compiled regex it matches somewhere);
    fail with what it shows instead."""
    deadline = time.monotonic() + timeout
    while True:
        shown = locator.inner_text()
        if text.search(shown) if isinstance(text, re.Pattern) else text in shown:
            return shown
        if time.monotonic() > deadline:
            pytest.fail(f"expected {text!r} on screen within {timeout} s; it shows {shown!r}", pytrace=False)
        locator.page.wait_for_timeout(50)


def type_into(field, text):
    """Type into a text box (or an editable slider readout) as a student does: replace its text, press Enter."""
    field.click()
    field.fill(text)
    field.press("Enter")


# ------------------------------------------------------------------------------------- labs fit the page
NOTEBOOK_WIDTH = 1000  # px: the notebook panel of a laptop screen with JupyterLab's side bars closed

_OVERFLOW_JS = """root => {
    // The output area that holds the lab scrolls sideways when something in it is too wide; an element
    // inside it that clips or scrolls (overflow other than visible) hides part of its content.
    const area = root.closest('.jp-OutputArea-output') || root;
    const name = el => (el.className && el.className.baseVal === undefined ? String(el.className) : el.tagName)
        .split(/\\s+/).filter(c => c.startsWith('wt-') || c.startsWith('widget-')).slice(0, 3).join('.') || el.tagName;
    const bad = [];
    for (const el of [area, ...area.querySelectorAll('*')]) {
        if (el.clientWidth === 0 || el.closest('svg') && el.tagName !== 'svg') continue;
        if (el.closest('.wt-sr')) continue;  // text for screen readers only: clipped to 1 px on purpose
        const overflow = getComputedStyle(el).overflowX;
        if (el !== area && overflow === 'visible') continue;
        if (el.scrollWidth > el.clientWidth + 1) {
            bad.push(`${name(el)} (${overflow}): ${el.scrollWidth} px of content in ${el.clientWidth} px`);
        }
    }
    return {area: area.clientWidth, content: Math.max(root.scrollWidth, ...Array.from(root.querySelectorAll('*'),
            el => el.getBoundingClientRect().right - root.getBoundingClientRect().left)), bad};
}"""


def set_notebook_width(nb, width=NOTEBOOK_WIDTH):
    """Resize the page so that the notebook panel is `width` px wide, as on a laptop."""
    page = nb.page
    for _ in range(3):
        now = nb.panel.evaluate("el => el.getBoundingClientRect().width")
        if abs(now - width) <= 1:
            return
        size = page.viewport_size
        page.set_viewport_size({"width": round(size["width"] + width - now), "height": size["height"]})
        page.wait_for_timeout(300)  # JupyterLab lays the panels out again
    pytest.fail(f"the notebook panel is {now:.0f} px wide, not {width}")


def overflow(root):
    """{area: the output area's width, content: how far the lab reaches, bad: every element whose content is wider
    than the element (so it scrolls sideways or is cut off)}."""
    return root.evaluate(_OVERFLOW_JS)


def assert_fits(lab, nb, root, shot_name):
    """The lab, as it is now, fits a NOTEBOOK_WIDTH px notebook: nothing in it, nor the output area around it, is
    wider than its box. The lab is screenshotted to artifacts/e2e/<shot_name>.png either way."""
    set_notebook_width(nb)
    root.page.wait_for_timeout(100)
    found = overflow(root)
    lab.shot(root, shot_name)
    assert not found["bad"], (
        f"{shot_name}: in a {NOTEBOOK_WIDTH} px notebook (output area {found['area']} px) this lab scrolls sideways "
        f"or cuts content off: {found['bad'][:6]}"
    )
    return found
