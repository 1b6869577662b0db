"""Shared fixtures, and how the suite runs in tiers.

The fixtures: the three shipped models, loaded once per test process; what is built once per test run and shared
(``released_mini``, ``released_course``, ``graded_class``: tests/simclass/built.py), and the resources a test needs
(``sandbox``, ``pw_driver``).

The tiers (tests/tiers.py): each test's tier, derived at collection from what it needs, is put on it as a mark
(tier_ and its name); ``--tier NAME`` (repeatable) runs only those tiers (``make quick``: ``--tier unit``). A test that
shares a module's fixture is grouped with its module for pytest-xdist, and the modules whose tests need the most
start the run (the JupyterHub term, the browser tests, the graded class), so that no long test is left to finish
alone at the end. The run's summary says how many tests of each tier ran and the seconds each tier took, and names a
unit test that took long. Nothing is listed by hand here: a test says what it needs where it is written.

The repository root goes first on sys.path so the tests import this checkout's package even when pytest is started
without ``python -m`` and the package is not installed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import pytest
from tiers import RANK, STARTS, TIERS, UNIT_SECONDS, tier_of

ROOT = Path(__file__).resolve().parents[1]
# a model the tests train in 04's training lab is saved here, not in the checkout (labs/_yours.py)
os.environ.setdefault("WT_YOUR_MODEL_DIR", tempfile.mkdtemp(prefix="wt-test-your-model-"))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


# ------------------------------------------------------------------------------ the tiers (tests/tiers.py)
def pytest_addoption(parser):
    parser.addoption(
        "--tier",
        action="append",
        default=[],
        choices=[t.name for t in TIERS],
        help="run only the tests of this tier (repeatable); tests/tiers.py's TIERS says what each needs",
    )


def pytest_configure(config):
    for t in TIERS:
        config.addinivalue_line("markers", f"tier_{t.name}: derived (tests/tiers.py): needs {t.needs}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Each test's tier, as a mark; a test that shares a module's fixture grouped with its module for pytest-xdist;
    only the tiers asked for (--tier); the modules in the order tiers.STARTS gives their most expensive test's tier,
    each whole and in the order collected (pytest-xdist hands work out in this order with --no-loadscope-reorder)."""
    for item in items:
        tier = tier_of(item)
        item.add_marker(getattr(pytest.mark, f"tier_{tier}"))
        item.user_properties.append(("tier", tier))
        if item.get_closest_marker("xdist_group") is None and _shares_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    wanted = config.getoption("tier")
    if wanted:
        keep = [i for i in items if _tier(i) in wanted]
        gone = [i for i in items if _tier(i) not in wanted]
        if gone:
            config.hook.pytest_deselected(items=gone)
        items[:] = keep
    top: dict[str, str] = {}  # module → the tier of its most expensive test: a module stays together
    for i in items:
        module = i.nodeid.split("::")[0]
        top[module] = max(top.get(module, TIERS[0].name), _tier(i), key=RANK.__getitem__)
    items.sort(key=lambda i: STARTS.index(top[i.nodeid.split("::")[0]]))


def pytest_report_collectionfinish(config, start_path, items):
    counts = {t.name: 0 for t in TIERS}
    for i in items:
        counts[_tier(i)] += 1
    return "tiers: " + ", ".join(f"{name} {n}" for name, n in counts.items())


def _shares_a_module_fixture(item) -> bool:
    """Whether the test uses a fixture built once per module (or class): pytest-xdist then runs the module's tests
    that use one on one worker (``--dist loadgroup``), which builds it once."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(d.scope in ("module", "class", "package") for ds in defs for d in ds)


def _tier(item) -> str:
    return dict(item.user_properties)["tier"]


_SESSION_START = time.time()


def pytest_terminal_summary(terminalreporter):
    """How many tests of each tier ran and the seconds each took (their calls, set-up included), and the unit tests
    that took long; and the JupyterHub term's step times (tests/classroom/test_classroom.py), when it ran. Here so
    that the run's own terminal shows them, with or without xdist workers."""
    import json

    per: dict[str, list[float]] = {}
    units: dict[str, float] = {}  # a unit test's seconds, its set-up (a module's fixture) included
    for reports in terminalreporter.stats.values():
        for rep in reports:
            if getattr(rep, "when", None) not in ("setup", "call") or not hasattr(rep, "user_properties"):
                continue
            tier = dict(rep.user_properties).get("tier")
            if tier is None:
                continue
            seconds = per.setdefault(tier, [0, 0.0])
            seconds[0] += rep.when == "call"
            seconds[1] += rep.duration
            if tier == "unit":
                units[rep.nodeid] = units.get(rep.nodeid, 0.0) + rep.duration
    slow_units = sorted(((s, n) for n, s in units.items() if s > UNIT_SECONDS), reverse=True)
    if per:
        terminalreporter.section("tiers: tests run and their seconds (tests/tiers.py)")
        for t in TIERS:
            if t.name in per:
                n, s = per[t.name]
                terminalreporter.write_line(f"{t.name:8} {n:5d} tests {s:8.1f} s   needs {t.needs}")
        for seconds, nodeid in slow_units:
            terminalreporter.write_line(
                f"a unit test took {seconds:.1f} s (over {UNIT_SECONDS:g} s): say what it needs: {nodeid}"
            )
    times = ROOT / "artifacts" / "classroom" / "times.json"
    if times.is_file() and times.stat().st_mtime >= _SESSION_START:
        terminalreporter.section("the JupyterHub term: seconds per step (artifacts/classroom/)")
        for step, seconds in json.loads(times.read_text()).items():
            terminalreporter.write_line(f"{seconds:8.1f}  {step}")


# ------------------------------------------------------------------------------ resources
@pytest.fixture(scope="session")
def sandbox():
    """The grading sandbox works here, or the test skips (fails under WT_REQUIRE_SANDBOX=1)."""
    from simclass.minicourse import require_sandbox

    require_sandbox()


@pytest.fixture(scope="session")
def pw_driver():
    """The one Playwright of this test process. Its sync API runs an asyncio loop, and a second one started while
    it lives is refused ("Sync API inside the asyncio loop"), so the browser tests, the class report's page and the
    JupyterHub term each launch their Chromium from this one, whichever order a worker runs them in."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    yield pw
    pw.stop()


# ------------------------------------------------------------------------------ built once per run (simclass/built.py)
@pytest.fixture(scope="session")
def released_mini(tmp_path_factory) -> Path:
    """The small course (tests/simclass/minicourse.py) released: read it, or copy it (``built.copy_course``) to
    write into it."""
    from simclass.built import build_released, once

    return once(tmp_path_factory, "released-mini", lambda f: build_released(f, real_source=False))[0] / "course"


@pytest.fixture(scope="session")
def released_course(tmp_path_factory) -> Path:
    """The course of source/ released: read it, or copy it (``built.copy_course``) to write into it."""
    from simclass.built import build_released, once

    return once(tmp_path_factory, "released-course", lambda f: build_released(f, real_source=True))[0] / "course"


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory, released_course, sandbox):
    """The simulated class graded, its grades, feedback and insights written (``built.GradedClass``): read only."""
    from simclass.built import GradedClass, build_class, once

    folder, meta = once(tmp_path_factory, "graded-class", lambda f: build_class(f, released_course))
    return GradedClass.read(folder / "course", meta)


# ------------------------------------------------------------------------------ the shipped models
@pytest.fixture(scope="session")
def model60():
    """The shipped model after 60 epochs (eval mode). Tests must not change its weights."""
    from whole_transformer.train import load_model

    return load_model("60")


@pytest.fixture(scope="session")
def model2():
    """The shipped model after 2 epochs."""
    from whole_transformer.train import load_model

    return load_model("2")


@pytest.fixture(scope="session")
def microscope():
    """The shipped tiny model: 1 block, 1 head, d_model 6, d_ff 12."""
    from whole_transformer.train import load_model

    return load_model("microscope")


@pytest.fixture(scope="session")
def shipped(model60, model2, microscope):
    """{name: model} for the three shipped checkpoints."""
    return {"60": model60, "2": model2, "microscope": microscope}


# ------------------------------------------------------------------------------ the mistake table
@pytest.fixture
def table_built_once(monkeypatch) -> dict:
    """``diagnose.build`` worked out once for each source folder during the test, then given again: for a test that
    checks the mistake table, writes it and checks it again with nothing changed in between (a build is about 15 s
    of CPU). The builds made, source → table."""
    from whole_transformer.course.answers import diagnose
    from whole_transformer.course.layout import REPO, Course

    tables: dict = {}
    build = diagnose.build

    def once(source=None):
        source = Course(REPO).source if source is None else source  # build's default
        if source not in tables:
            tables[source] = build(source)
        return tables[source]

    monkeypatch.setattr(diagnose, "build", once)
    return tables
