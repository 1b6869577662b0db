"""The locate stage: which file a student handed in is which notebook of the assignment.

The expected names come from the assignment; a notebook handed in under another name
(``03-one-word-at-a-time (1).ipynb``, a sub-folder) is recognised by its nbgrader cells and graded
as the notebook it is, with a finding. A file that is not valid JSON or not a notebook cannot be
graded (``read_notebook`` says why). It reads the submission as it was unpacked for grading
(``submission.py``: symbolic links never followed, notebooks over 64 MB not shipped).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import nbformat

from ..cells import grade_ids
from ..layout import ASSIGNMENT
from .submission import MAX_NOTEBOOK_BYTES, submission_files


def read_notebook(path: Path):
    """(notebook, None) or (None, why it cannot be graded)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        return None, f"{path.name} is not UTF-8 text ({e.reason}); it cannot be graded"
    except OSError as e:
        return None, f"{path.name} could not be read ({e.strerror})"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"{path.name} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); it cannot be graded"
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None, f"{path.name} is JSON but not a notebook (no list of cells); it cannot be graded"
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as e:  # noqa: BLE001 - nbformat raises many kinds
        return None, f"{path.name} is not a readable notebook ({type(e).__name__}: {e}); it cannot be graded"
    return nb, None


def locate(folder: Path, expected: list[str], release_ids: dict[str, set[str]]):
    """{notebook name: (path, finding or None)} for the files a student handed in.

    A file under its own name is taken as is. Any other notebook file (renamed, a copy, in a
    sub-folder) is matched to a missing notebook by the grade ids only that notebook has, or else
    by a very similar name; the best matches are taken first.
    """
    canonical = folder / ASSIGNMENT
    found: dict[str, tuple[Path, str | None]] = {}
    files = [p for p in submission_files(folder) if p.suffix == ".ipynb" and p.stat().st_size <= MAX_NOTEBOOK_BYTES]
    for name in expected:
        p = canonical / f"{name}.ipynb"
        if p in files:
            found[name] = (p, None)
    others = [p for p in files if all(p != f for f, _ in found.values())]
    wanted = [n for n in expected if n not in found]
    if not others or not wanted:
        return found
    counts: dict[str, int] = {}
    for ids in release_ids.values():
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
    distinctive = {n: {i for i in release_ids.get(n, set()) if counts[i] == 1} for n in wanted}
    pairs = []
    for p in others:
        nb, _ = read_notebook(p)
        ids = grade_ids(nb) if nb is not None else set()
        for n in wanted:
            overlap = len(ids & distinctive[n]) / max(1, len(distinctive[n]))
            similar = difflib.SequenceMatcher(None, p.stem.lower(), n.lower()).ratio()
            if overlap > 0 or similar >= 0.8:
                pairs.append((2 * overlap + similar, str(p), p, n))
    for _, _, p, n in sorted(pairs, reverse=True):
        if n in found or any(p == f for f, _ in found.values()):
            continue
        found[n] = (p, f"notebook handed in as {str(p.relative_to(folder))!r}; graded as {n}.ipynb")
    return found
