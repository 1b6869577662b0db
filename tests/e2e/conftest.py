"""Fixtures of the browser tests: one JupyterLab server and one headless Chromium for the whole session.

- `jupyter_server`: JupyterLab on a free localhost port, serving a fresh temporary folder, with its own
  (empty) config, data, runtime, settings and workspaces folders. News and update checks are off, widget
  state is saved with the notebook, every cell is kept in the page (no windowing), and the application
  object is exposed as `window.jupyterapp` so tests can open files and run commands.
- `browser`: Debian's /usr/bin/chromium started by Playwright for Python (no browser download). When it is
  missing the tests skip, unless WT_REQUIRE_BROWSER=1 (set by .ci/run): then they fail.
- `lab`: a `Lab` (see e2e_lab.py) on one JupyterLab page shared by every test; after each test its
  notebooks are closed and their kernels shut down.

Every e2e test module sets `pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]`; here each module (each
class, where its tests are in classes) is made a group of its own beside it (`pytest_collection_modifyitems`), so that
`pytest -n 2 --dist loadgroup` runs the tests of one module, which share one run of a notebook, on one worker, and
spreads the modules over both workers, each with a server and a browser of its own.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts" / "e2e"
CHROMIUM = os.environ.get("WT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 90  # seconds; a cold start on a busy 2-core machine takes ~10 s

# User settings written into the fresh JupyterLab settings folder.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyter-widgets/jupyterlab-manager/plugin.jupyterlab-settings": {"saveState": True},
    # Keep every cell in the page, so a lab far down the notebook can be found and screenshotted.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    # Nothing may save behind the test's back while it reads the notebook.
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}


def require_browser(reason):
    """Skip, or fail when WT_REQUIRE_BROWSER=1 (CI): a missing browser must not hide broken labs there."""
    if os.environ.get("WT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"{reason} (WT_REQUIRE_BROWSER=1, so this fails instead of skipping)", pytrace=False)
    pytest.skip(reason)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        path = item.nodeid.split("::")[0]
        if path.startswith("tests/e2e/"):
            cls = getattr(item, "cls", None)
            item.add_marker(pytest.mark.xdist_group(path + (f"::{cls.__name__}" if cls is not None else "")))


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def browser(pw_driver):
    if not Path(CHROMIUM).exists():
        require_browser(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package (.ci/run does)")
    try:
        browser = pw_driver.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    except Exception as err:  # noqa: BLE001 - a broken browser install is the same as a missing one
        require_browser(f"Chromium at {CHROMIUM} does not start: {err}")
    yield browser
    browser.close()


class Server:
    """A running JupyterLab: its root folder (where tests copy notebooks), URL and token."""

    def __init__(self, root, port, token, proc, log, env):
        self.root, self.port, self.token, self.proc, self.log, self.env = root, port, token, proc, log, env
        self.url = f"http://127.0.0.1:{port}"

    def api(self, path, method="GET"):
        req = urllib.request.Request(f"{self.url}{path}", method=method)
        req.add_header("Authorization", f"token {self.token}")
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, n=40):
        return "\n".join(Path(self.log).read_text(errors="replace").splitlines()[-n:])


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "root"
    root.mkdir()
    # The course as an instructor has it, so the formgrader (which reads ./nbgrader_config.py) sees it.
    for name in ("nbgrader_config.py", "source"):
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, root / name)
        elif (REPO / name).is_dir():
            shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    server = start_jupyter(base, root, ARTIFACTS / "jupyterlab.log")
    yield server
    stop_jupyter(server)


def start_jupyter(base: Path, root: Path, log: Path) -> Server:
    """JupyterLab (with nbgrader's formgrader, as installed) serving ``root`` on a free loopback port, its own
    config, data and settings folders made under ``base``; its output in ``log``."""
    env = dict(os.environ)
    for var, sub in [
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("IPYTHONDIR", "ipython"),
    ]:
        (base / sub).mkdir(parents=True)
        env[var] = str(base / sub)
    # Kernels import this checkout's package, even where it is not pip-installed (editable) into the venv.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    # This environment's commands first, as in an activated venv: the formgrader runs `alembic` from PATH.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    env.pop("WT_YOUR_MODEL_DIR", None)  # 04's training lab saves the student's model beside the notebook, as for them
    for name, values in LAB_SETTINGS.items():
        path = base / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    port, token = _free_port(), "e2e-" + os.urandom(8).hex()
    log.parent.mkdir(parents=True, exist_ok=True)  # kept after the run, for a failure's story
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=", "--ServerApp.allow_root=True",
    ]  # fmt: skip
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Server(root, port, token, proc, log, env)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"JupyterLab exited with code {proc.returncode} while starting:\n{server.log_tail()}")
        try:
            server.api("/api/status")
            break
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"JupyterLab did not answer within {SERVER_START_TIMEOUT} s:\n{server.log_tail()}")
            time.sleep(0.25)
    return server


def stop_jupyter(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()


@pytest.fixture(scope="session")
def _lab_session(browser, jupyter_server, artifacts):
    from e2e_lab import Lab

    context = browser.new_context(viewport={"width": 1400, "height": 2400})
    lab = Lab(context.new_page(), jupyter_server, artifacts)
    lab.start()
    yield lab
    context.close()


@pytest.fixture
def lab(_lab_session):
    """The shared JupyterLab page. A notebook run by `lab.run` stays open for the next test of that notebook."""
    _lab_session.dismiss_dialogs()
    _lab_session.reset_log()
    return _lab_session


@pytest.fixture
def clean_lab(_lab_session):
    """The shared JupyterLab page with nothing open; whatever the test opens is closed after it."""
    _lab_session.close_everything()
    _lab_session.reset_log()
    yield _lab_session
    _lab_session.close_everything()
