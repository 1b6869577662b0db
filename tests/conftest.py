"""Shared fixtures: the three shipped models, loaded once per test session (per xdist worker).

The repository root goes first on sys.path so the tests import this checkout's package even
when pytest is started without ``python -m`` and the package is not installed.
"""

import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


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
