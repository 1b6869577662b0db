"""``make collect-zip FILE=…``: a Canvas or Moodle "download all submissions" zip sorted into submitted/.

nbgrader's ``zip_collect`` does the work (the zip goes to ``downloaded/whole-transformer/archive/``,
is extracted to ``…/extracted/``, and every file it can place is copied to
``submitted/<student>/whole-transformer/``), with the course's file-name rules (``CourseFileNames``):

- Canvas names a file ``<lastfirst>_[late_]<Canvas user id>_<submission id>_<file name>`` (a
  resubmission's file name gets ``-1``, ``-2``…);
- Moodle puts it in ``<Full Name>_<participant id>_assignsubmission_file_/<file name>`` (older
  versions: the same as one flat name).

The student is found in the roster the gradebook holds (``make roster``): by LMS id, else by name,
else by a student id equal to the one in the name. A file is placed only if it is one of the
released notebooks; every other file (and every student not in the roster) is reported. The
hand-in time (``timestamp.txt``) is the newest time the zip gives the student's files, taken as
local time in course.toml's time zone.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import Unicode

from whole_transformer.course.layout import ASSIGNMENT, Course, run_nbgrader

CANVAS = re.compile(r"^(?P<name>[^_/]+)_(?:late_)?(?P<lms>\d+)_(?P<sub>\d+)_(?P<file>[^/]+)$", re.I)
MOODLE = re.compile(r"^(?P<name>[^_/]+)_(?P<lms>\d+)_assignsubmission_[a-z]+_/?(?P<file>.+)$", re.I)
RESUBMITTED = re.compile(r"^(?P<stem>.+)-\d+(?P<ext>\.ipynb)$")


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def roster_keys(course: Course) -> dict[str, str]:
    """LMS ids, names ("first last" and Canvas's "lastfirst", letters only) and ids → student id."""
    from nbgrader.api import Gradebook

    keys: dict[str, str] = {}
    with Gradebook(course.db_url) as gb:
        for s in gb.students:
            for k in (
                s.id,
                s.lms_user_id,
                f"{s.first_name or ''}{s.last_name or ''}",
                f"{s.last_name or ''}{s.first_name or ''}",
            ):
                if k and _key(k):
                    keys.setdefault(_key(k), s.id)
            if s.lms_user_id:
                keys[f"lms:{s.lms_user_id}"] = s.id
    return keys


def place(rel: str, keys: dict[str, str], notebooks: set[str]) -> tuple[str | None, str | None, str]:
    """(student id, file name in submitted/, why not) for a file at ``rel`` inside the zip."""
    m = CANVAS.match(rel) or MOODLE.match(rel)
    if m is None:
        return None, None, "its name is neither Canvas's nor Moodle's (name_id_..._file)"
    fname = Path(m.group("file")).name
    r = RESUBMITTED.match(fname)
    if fname not in notebooks and r and f"{r.group('stem')}{r.group('ext')}" in notebooks:
        fname = f"{r.group('stem')}{r.group('ext')}"
    student = keys.get(f"lms:{m.group('lms')}") or keys.get(_key(m.group("name")))
    if student is None:
        return (
            None,
            None,
            (
                f"no student in the roster has LMS id {m.group('lms')} or the name "
                f"{m.group('name')!r}: import the roster (make roster FILE=...) and run again"
            ),
        )
    if fname not in notebooks:
        return student, None, f"{fname!r} is not one of the notebooks ({', '.join(sorted(notebooks))})"
    return student, fname, ""


class CourseFileNames(FileNameCollectorPlugin):
    """The course's file-name rules for nbgrader zip_collect (Canvas and Moodle downloads)."""

    rules = Unicode(
        "",
        help="JSON file written by make collect-zip: the roster keys, the released notebooks, "
        "the extracted folder and the hand-in time of every file",
    ).tag(config=True)

    def collect(self, submitted_file: str):
        data = json.loads(Path(self.rules).read_text(encoding="utf-8"))
        rel = Path(submitted_file).relative_to(data["extracted"]).as_posix().split("/", 1)[-1]
        student, fname, why = place(rel, data["keys"], set(data["notebooks"]))
        if fname is None:
            self.log.warning("not placed: %s (%s)", rel, why)
            return None
        info = {"student_id": student, "file_id": fname}
        if data["times"].get(rel):
            info["timestamp"] = data["times"][rel]
        return info


def _times(zip_path: Path, zone) -> dict[str, str]:
    out = {}
    with zipfile.ZipFile(zip_path) as z:
        for info in z.infolist():
            if not info.is_dir():
                local = datetime(*info.date_time, tzinfo=zone)
                out[info.filename] = local.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return out


def collect_zip(course: Course, zip_path: Path, log=print) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    """Sort the zip into submitted/; (student → files placed, [(file in the zip, why not placed)])."""
    from whole_transformer.course.term.settings import load

    zip_path = Path(zip_path)
    if not zip_path.is_file():
        raise ValueError(f"no file {zip_path}: give the zip Canvas or Moodle downloaded, make collect-zip FILE=...")
    if not zipfile.is_zipfile(zip_path):
        raise ValueError(f"{zip_path} is not a zip file: download all submissions from Canvas or Moodle as one zip")
    notebooks = {p.name for p in course.release.glob("*.ipynb")}
    if not notebooks:
        raise ValueError(f"no released notebooks in {course.release}: run make release first")
    keys = roster_keys(course)
    down = course.root / "downloaded" / ASSIGNMENT
    shutil.rmtree(down, ignore_errors=True)
    (down / "archive").mkdir(parents=True)
    shutil.copy2(zip_path, down / "archive" / zip_path.name)
    times = _times(zip_path, load(course).zone)
    rules = down / "rules.json"
    rules.write_text(
        json.dumps(
            {"keys": keys, "notebooks": sorted(notebooks), "times": times, "extracted": str(down / "extracted")}
        ),
        encoding="utf-8",
    )
    done = run_nbgrader(
        [
            "zip_collect",
            ASSIGNMENT,
            "--force",
            "--strict",
            f"--ZipCollectApp.collector_plugin={__name__}.CourseFileNames",
            f"--CourseFileNames.rules={rules}",
        ],
        course.root,
    )
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader zip_collect failed:\n{(done.stdout or '')[-3000:]}{(done.stderr or '')[-3000:]}")
    placed: dict[str, list[str]] = {}
    unplaced = []
    with zipfile.ZipFile(zip_path) as z:
        for name in sorted(n for n in z.namelist() if not n.endswith("/")):
            student, fname, why = place(name, keys, notebooks)
            if student is not None and fname and (course.submitted / student / ASSIGNMENT / fname).is_file():
                placed.setdefault(student, []).append(fname)
            else:
                unplaced.append((name, why or "nbgrader zip_collect did not place it"))
    log(
        f"collect-zip: {sum(len(v) for v in placed.values())} notebooks of {len(placed)} students into submitted/"
        + (f"; {len(unplaced)} file(s) not placed:" if unplaced else "; every file placed")
    )
    for name, why in unplaced:
        log(f"  not placed: {name}: {why}")
    return placed, unplaced
