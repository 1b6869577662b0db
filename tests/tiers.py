"""The suite's tiers: what a test needs, cheapest first (``TIERS``), and the tier of a collected test (``tier_of``):
the most expensive need among the fixtures it uses (with those they use), the marks it carries and the checks its
code or its fixtures' code calls. tests/conftest.py marks each test with its tier, runs only the tiers asked for
(``--tier``), starts the run with the most expensive, and sums each tier's seconds in the summary."""

from __future__ import annotations

import inspect
from dataclasses import dataclass


@dataclass(frozen=True)
class Tier:
    """A tier: what its tests need, and how a test says it needs that: a fixture it uses, a mark it carries, or a
    call in its code or its fixtures' code (a check that skips, or fails under WT_REQUIRE_*, when it is missing)."""

    name: str
    needs: str
    fixtures: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()


#: cheapest first
TIERS = (
    Tier("unit", "nothing but Python: the code under test, in this process"),
    Tier(
        "package",
        "the package run the long way: a model trained, notebooks run in a kernel, a command in a fresh Python, its"
        " code over all its data (every implementation, thousands of draws, the check data worked out)",
        fixtures=("shipped",),  # every shipped model, run over the task
        marks=("package", "slow"),  # slow: the older name, where a module still carries it
        calls=("subprocess.", "sys.executable", "run_fresh(", "assert_nbgrader_validates("),
    ),
    Tier(
        "course",
        "a course released by nbgrader (the small one and the real one are built once per run)",
        fixtures=("released_mini", "released_course"),
        calls=("release_course(", "course_with_exchange("),
    ),
    Tier(
        "grading",
        "real grading: nbgrader and the sandbox (and PostgreSQL)",
        fixtures=("sandbox", "postgres"),
        calls=("require_sandbox(", "require_postgres("),
    ),
    Tier("class", "the simulated class, graded once per run", fixtures=("graded_class",)),
    Tier("browser", "Chromium, and JupyterLab", fixtures=("pw_driver",), marks=("e2e",), calls=("require_browser(",)),
    Tier("hub", "JupyterHub, as root", marks=("classroom",)),
)
RANK = {t.name: i for i, t in enumerate(TIERS)}
#: the order a run starts the tiers in, the longest single pieces of work first: the JupyterHub term, the class graded
#: (one group: its grading, then what reads it), the browser tests' modules; then the rest, the cheapest last
STARTS = ("hub", "class", "browser", "grading", "package", "course", "unit")
#: a unit test that takes longer than this (its set-up and call, in seconds) is named in the summary: say what it needs
UNIT_SECONDS = 2.0

_SOURCES: dict[object, str] = {}


def _source(fn) -> str:
    """The code of a test or fixture function ("" when it cannot be read)."""
    if fn not in _SOURCES:
        try:
            _SOURCES[fn] = inspect.getsource(fn)
        except (OSError, TypeError):
            _SOURCES[fn] = ""
    return _SOURCES[fn]


def tier_of(item) -> str:
    """The tier of a collected test: the most expensive need among its fixtures, marks and calls."""
    fixtures = set(getattr(item, "fixturenames", ()))
    marks = {m.name for m in item.iter_markers()}
    info = getattr(item, "_fixtureinfo", None)
    code = [_source(getattr(item, "function", None))]
    if info is not None:
        code += [_source(d.func) for name in fixtures for d in info.name2fixturedefs.get(name, ())]
    text = "\n".join(code)
    best = "unit"
    for t in TIERS:
        if fixtures & set(t.fixtures) or marks & set(t.marks) or any(c in text for c in t.calls):
            best = t.name if RANK[t.name] > RANK[best] else best
    return best
