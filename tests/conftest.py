"""Shared fixtures: the three shipped models, loaded once per test session (per xdist worker).

The repository root goes first on sys.path so the tests import this checkout's package even
when pytest is started without ``python -m`` and the package is not installed.
"""

import os
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a model the tests train in 04's training lab is saved here, not in the checkout (labs/_yours.py)
os.environ.setdefault("WT_YOUR_MODEL_DIR", tempfile.mkdtemp(prefix="wt-test-your-model-"))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@pytest.fixture(scope="session")
def pw_driver():
    """The one Playwright of this test process. Its sync API runs an asyncio loop, and a second one started while
    it lives is refused ("Sync API inside the asyncio loop"), so the browser tests, the class report's page and the
    JupyterHub term each launch their Chromium from this one, whichever order a worker runs them in."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    yield pw
    pw.stop()


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


_SESSION_START = time.time()


def pytest_terminal_summary(terminalreporter):
    """The JupyterHub term's step times (tests/classroom/test_classroom.py), when it ran in this session; here
    so that the run's own terminal shows them, with or without xdist workers."""
    import json

    times = ROOT / "artifacts" / "classroom" / "times.json"
    if times.is_file() and times.stat().st_mtime >= _SESSION_START:
        terminalreporter.section("the JupyterHub term: seconds per step (artifacts/classroom/)")
        for step, seconds in json.loads(times.read_text()).items():
            terminalreporter.write_line(f"{seconds:8.1f}  {step}")


#: Tests that take more than about 2 s on this 2-core machine (measured with ``--durations``), beside
#: those already marked ``slow``, ``e2e`` or ``classroom``: ``make quick`` leaves all of them out
#: (``-m "not slow and not e2e and not classroom"``); ``make test`` runs everything. A node id, or the
#: start of one (a whole module).
OVER_2_SECONDS = (
    "tests/test_autograde.py::test_parallel_grading_gives_the_same_grades",
    "tests/test_autograde.py::test_killed_half_way_then_run_again_grades_everyone_once",
    "tests/test_autograde.py::test_autograde_without_sandbox_only_when_asked",
    "tests/test_sandbox.py::test_the_sandbox_runs_the_kernel_wherever_python_lives",
    "tests/test_build.py::test_release_is_up_to_date_with_source",
    "tests/test_sandbox.py::test_execute_",
    "tests/test_sandbox.py::test_sandboxed_kernel_sees_nothing_of_the_course",
    "tests/test_autograde.py::test_autograde_refuses_without_a_sandbox",
    "tests/test_autograde.py::test_a_second_run_grades_nobody_again",
    "tests/test_course_exchange.py",
    "tests/test_warm_kernels.py",
    "tests/test_handout.py",
    "tests/test_train.py::test_cli_trains_saves_and_refuses_to_overwrite",
    "tests/test_train.py::test_the_copy_task_is_learned",
    "tests/test_train.py::test_retraining_with_the_recorded_seed",
    "tests/test_train.py::test_three_seeded_epochs_lower_the_loss",
    "tests/test_train.py::test_training_gives_the_same_numbers_whatever_the_thread_count",
    "tests/test_numpy_model.py::test_twin_",
    "tests/test_labs_03_04.py::test_training_lab_",
    "tests/test_labs_03_04.py::test_each_training_lab_",
    "tests/test_labs_01_02.py::test_block_picture_carries_the_microscope_shapes_and_numbers",
    "tests/test_decode.py::test_batched_reading_equals_one_at_a_time_for_all_1000",
    "tests/classroom/test_classroom_setup.py",
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(OVER_2_SECONDS):
            item.add_marker(pytest.mark.slow)
