"""The format of a hidden test's expected values: the EXPECTED part of its cell in ``source/``.

A hidden test has two parts (``answers/hidden_parts.py`` writes them)::

    ### BEGIN HIDDEN TESTS
    grading.hand_out("make_xy", make_xy, [((task.sequence(0),), {}), …], watch=0)
    ### BEGIN EXPECTED
    # {"name": "make_xy", "compare": "pair", "cases": [{"kind": "a one-digit number", "want": […]}, …]}
    ### END EXPECTED
    ### END HIDDEN TESTS

The kernel runs the first part; the EXPECTED part, one JSON comment line between its markers, is cut out
before the kernel runs anything and stays with the grader (``plugins/verdict.py``). Its payload: the
test's ``name``, how a result is compared (``compare``: ``core/compare.py``) and the ``cases``, each with
its ``kind`` and the right result (``want``); a question's test also says ``question`` and ``what`` it asks.
"""

from __future__ import annotations

import json
import re

BEGIN, END = "### BEGIN EXPECTED", "### END EXPECTED"
_REGION = re.compile(rf"^[ \t]*{re.escape(BEGIN)}[ \t]*\n(.*?)^[ \t]*{re.escape(END)}[ \t]*(\n|$)", re.S | re.M)


def expected_region(payload: dict) -> str:
    """The EXPECTED part of a hidden test, holding ``payload`` as one JSON comment line."""
    return f"{BEGIN}\n# {json.dumps(payload, ensure_ascii=False, allow_nan=False)}\n{END}"


def split_expected(source: str) -> tuple[str, dict | None]:
    """(the source without its EXPECTED part, the expected payload or None)."""
    m = _REGION.search(source)
    if not m:
        return source, None
    text = "".join(line.lstrip()[1:].strip() for line in m.group(1).splitlines() if line.strip().startswith("#"))
    payload = json.loads(text)
    return source[: m.start()] + source[m.end() :], payload
