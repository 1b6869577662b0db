"""What one ``nbgrader autograde`` run hands back to the course: one file, written by the last preprocessor.

Each graded notebook passes through ``HoldExpected``, ``SandboxExecute``, ``Verdict`` and nbgrader's own
preprocessors (``nbgrader_config.py``); ``RunResult`` comes last and adds the notebook's part to the run's file
(``RunResult.path``; empty: nothing is written, as when nbgrader is run by hand):

- per graded cell: what happened when it ran (``ok``, ``timeout``, ``died``, ``not-run``; ``not-code``), from
  ``SandboxExecute`` (``resources["wt_execution"]``); the grader's verdict on a test cell (``core/verdict.py``),
  from ``Verdict`` (``resources["wt_verdicts"]``); and the points nbgrader's ``SaveAutoGrades`` gave it;
- what happened while grading (a timeout, a dead kernel, cells not run), each named as the student finds the cell;
- nbgrader's comments on the answer cells, its late penalty and the hand-in time it read (timestamp.txt).

The grader (``autograder/grade.py``) reads the file once, after the run, into the submission's ``Result``
(``core/results.py``): nothing of the grading is read back from the graded notebooks or the run's gradebook.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nbgrader import utils as nbutils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from ..cells import cell_name

EXECUTION = "wt_execution"  # resources key: SandboxExecute's events and each graded cell's ending
VERDICTS = "wt_verdicts"  # resources key: Verdict's verdict on each test cell (grade_id → its JSON, {} for none)


def read_run(path: Path) -> dict:
    """The run's file (``{"timestamp": …, "notebooks": {name: part}}``); empty when the run wrote none."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {"timestamp": None, "notebooks": {}}


class RunResult(NbGraderPreprocessor):
    """Last of the autograde preprocessors: this notebook's part of the run's one file (see the module doc)."""

    path = Unicode("", help="the file the run hands back to the course (autograder/grade.py reads it)").tag(config=True)

    def preprocess(self, nb, resources):
        if not self.path:
            return nb, resources
        meta = resources["nbgrader"]
        execution = resources.get(EXECUTION, {"events": [], "cells": {}})
        verdicts = resources.get(VERDICTS, {})
        cells = {}
        for index, cell in enumerate(nb.cells):
            if nbutils.is_grade(cell):
                gid = cell.metadata.nbgrader["grade_id"]
                ran = execution["cells"].get(gid, {"index": index, "status": "ok"})
                cells[gid] = {"index": ran["index"], "status": ran["status"], "verdict": verdicts.get(gid) or {}}
        events = [{**ev, "where": ev.get("grade_id") or cell_name(nb.cells, ev["cell"])} for ev in execution["events"]]
        with Gradebook(meta["db_url"]) as gb:
            sub = gb.find_submission_notebook(meta["notebook"], meta["assignment"], meta["student"])
            for g in sub.grades:
                if g.name in cells:
                    cells[g.name]["score"] = g.auto_score
            part = {
                "cells": cells,
                "events": events,
                "comments": {c.name: c.auto_comment for c in sub.comments},
                "late_penalty": sub.late_submission_penalty,
            }
            when = sub.assignment.timestamp
        run = read_run(Path(self.path))
        run["timestamp"] = when.isoformat() if when else None
        run["notebooks"][meta["notebook"]] = part
        tmp = Path(f"{self.path}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(run, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)
        return nb, resources
