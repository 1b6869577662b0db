"""What a private course's ``nbgrader autograde`` left behind, read back as data (``student.py`` runs it).

Each test cell's status from the sandboxed run's report (``plugins/execute.py`` writes it) with the grader's
verdict kept in the graded notebook (``core/verdict.DETAIL_KEY``), and the scores nbgrader wrote into the
private gradebook.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from ..cells import cell_name
from ..core.results import FAILED, GRADED, CellStatus, NotebookResult
from ..core.verdict import DETAIL_KEY, CellVerdict
from ..layout import ASSIGNMENT, sqlite_url


def cell_statuses(res: NotebookResult, report: Path, graded: Path, cells) -> list[tuple[str, str]]:
    """Each test cell's status (``cells``: its (grade_id, points)) into ``res``, from the sandboxed run's
    report and the graded notebook; returns what happened while grading (timeouts, dead kernels) as
    (where, what) findings."""
    rep = json.loads(report.read_text()) if report.exists() else {"events": [], "cells": {}}
    details: dict[int, str] = {}  # cell index → what happened to it
    findings: list[tuple[str, str]] = []
    named = _cells(graded) if any(not ev.get("grade_id") for ev in rep.get("events", [])) else []
    for ev in rep.get("events", []):
        if ev["kind"] == "restarted":
            continue
        where = ev.get("grade_id") or cell_name(named, ev["cell"])
        findings.append((where, f"while grading: {ev['detail']}"))
        details.setdefault(ev["cell"], ev["detail"])
    verdicts = _verdicts(graded, {gid for gid, _ in cells})
    for gid, _ in cells:
        info = rep.get("cells", {}).get(gid, {"status": "ok"})
        st = info.get("status", "ok")
        if st in {"ok", "not-code"}:
            res.cells[gid] = CellStatus(GRADED, "", verdicts.get(gid))
        else:
            res.cells[gid] = CellStatus(FAILED, details.get(info.get("index"), st))
    bad = [g for g, c in res.cells.items() if c.status != GRADED]
    if bad:
        res.reason = f"{len(bad)} test cell(s) could not run to the end: {', '.join(bad)}"
    return findings


def _cells(graded: Path) -> list:
    """The graded notebook's cells (none when it cannot be read): to name a cell as the student sees it."""
    try:
        return list(nbformat.read(graded, as_version=4).cells)
    except Exception:  # noqa: BLE001 - unreadable: a cell is then named by its number
        return []


def _verdicts(graded: Path, grade_ids: set[str]) -> dict[str, CellVerdict]:
    """grade_id → the grader's verdict on each test cell of ``grade_ids`` that has one, from the graded notebook
    (the grader wrote it there; another cell's metadata, which a student may have written, is not read)."""
    try:
        nb = nbformat.read(graded, as_version=4)
    except Exception:  # noqa: BLE001 - no details is no loss: the scores are in the gradebook
        return {}
    out = {}
    for c in nb.cells:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        stored = c.get("metadata", {}).get(DETAIL_KEY)
        if gid in grade_ids and isinstance(stored, dict) and stored:
            out[gid] = CellVerdict.from_json(dict(stored))
    return out


def scores_of(db: Path, student: str) -> dict | None:
    """What nbgrader autograde wrote into the private gradebook for the student, as plain data."""
    from nbgrader.api import Gradebook, MissingEntry  # lazy: nbgrader's gradebook (sqlalchemy) is heavy

    if not db.exists():
        return None
    with Gradebook(sqlite_url(db)) as tgb:
        try:
            tsub = tgb.find_submission(ASSIGNMENT, student)
        except MissingEntry:
            return None
        return {
            "timestamp": tsub.timestamp,
            "notebooks": {
                nb.name: {
                    "late": nb.late_submission_penalty,
                    "grades": {g.name: (g.auto_score, g.extra_credit) for g in nb.grades},
                    "comments": {c.name: c.auto_comment for c in nb.comments},
                }
                for nb in tsub.notebooks
            },
        }
