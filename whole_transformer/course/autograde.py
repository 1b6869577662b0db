"""Autograde a whole class: every student once, in parallel if asked, nothing lost if killed.

For each student under ``submitted/<student>/``:

1. **Find the notebooks.** The expected names come from the assignment; a notebook handed in
   under another name (``03-one-word-at-a-time (1).ipynb``, a sub-folder) is recognised by its
   nbgrader cells and graded as the notebook it is, with a finding. A file that is not valid
   JSON or not a notebook cannot be graded: its cells get status ``failed`` with the reason.
   Symbolic links are never followed (a link could point at the answers).
2. **Restore and scan** (``integrity.py``): protected cells are put back as released, every
   change is a finding, and the student's code is scanned for suspicious constructs.
3. **Grade in a private course.** A temporary course folder holds a copy of the gradebook (made
   once per run from the course gradebook if ``make release`` or an earlier run stamped it as
   generated from the current source/, else generated from source/), the restored notebooks and
   a config that loads ``nbgrader_config.py``.
   Real ``nbgrader autograde`` runs there in its own process, with the kernel in the sandbox
   (``execute.py``). N students are graded at once (``--jobs N``); none of them can touch the
   course gradebook or another student's files. If nbgrader fails on the student as a whole,
   each notebook is graded on its own so that one bad notebook does not sink the others.
4. **Merge**, one student at a time, in this process: grades and comments go into the course's
   ``gradebook.db`` (an existing submission is updated, never duplicated; manual grades are
   kept), the graded notebooks replace ``autograde/<student>/whole-transformer/`` by renames,
   and last a record ``autograde/.wt/students/<student>.json`` with the statuses, reasons and
   findings, and a fingerprint of the submission and of the assignment.

A student whose record matches the current fingerprints is already graded and is skipped, so a
run that was killed half-way and is started again grades each remaining student once (use
``--force`` to grade everyone again). At the end ``integrity-report.csv`` is written from all
records, and a summary per student is printed.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import difflib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import integrity
from .layout import ASSIGNMENT, Course, digest_files, nbgrader_env, run_nbgrader, write_json
from .sandbox import INSTALL_HINT, sandbox_opt_out, sandbox_status

GRADED, FAILED, MISSING = "graded", "failed", "missing"
STATE_VERSION = 1


class SandboxMissing(RuntimeError):
    pass


# ------------------------------------------------------------------------------ the template
@dataclass
class Template:
    """The assignment as nbgrader knows it, built once per run from source/."""

    folder: Path
    db: Path
    release: Path  # released notebooks students started from
    notebooks: list[str]
    fingerprint: str
    grade_cells: dict[str, list[tuple[str, float]]]  # notebook → [(grade_id, max_score)]


def _course_config(root: Path, main_config: Path, extra: str = "") -> None:
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(main_config)!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(root)!r}\n" + extra
    )


def source_digest(course: Course) -> str:
    """What the course gradebook's assignment must have been generated from."""
    import nbgrader

    files = sorted(course.source.glob("*.ipynb"))
    return f"nbgrader {nbgrader.__version__}:" + digest_files(files, course.root)


def stamp_gradebook(course: Course) -> None:
    """Record that the course gradebook holds the assignment as source/ defines it now."""
    write_json(course.state / "assignment.json", {"source": source_digest(course)})


def _fingerprint(course: Course, release: Path, names: list[str]) -> str:
    files = list(course.source.glob("*.ipynb")) + [release / f"{n}.ipynb" for n in names]
    return digest_files(files, course.root)


def build_template(course: Course, work: Path, log=print) -> Template:
    """The assignment as nbgrader knows it: its gradebook and release, from source/.

    If the course gradebook was generated from source/ as it is now (``make release`` or an
    earlier autograde stamped it), a snapshot of it is used; otherwise the assignment is
    generated in a private course and the course gradebook is brought up to date from it.
    """
    folder = work / "template"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    names = sorted(p.stem for p in course.source.glob("*.ipynb"))
    complete_release = all((course.release / f"{n}.ipynb").exists() for n in names)
    try:
        stamp = json.loads((course.state / "assignment.json").read_text()).get("source")
    except (OSError, json.JSONDecodeError):
        stamp = None
    if complete_release and course.gradebook.exists() and stamp == source_digest(course):
        db = folder / "gradebook.db"
        shutil.copy2(course.gradebook, db)
        try:
            cells = grade_cells_of(db)
        except Exception:  # noqa: BLE001 - the gradebook lacks the assignment: generate it
            cells = None
        if cells and sorted(cells) == names:
            return Template(folder, db, course.release, names, _fingerprint(course, course.release, names), cells)
    (folder / "source").mkdir(parents=True)
    shutil.copytree(course.source, folder / "source" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    _course_config(folder, course.root / "nbgrader_config.py")
    done = run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], folder, log=folder / "nbgrader.log")
    db = folder / "gradebook.db"
    if done.returncode != 0 or not db.exists():
        tail = (folder / "nbgrader.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"nbgrader generate_assignment failed on source/:\n{tail}")
    release = course.release if complete_release else folder / "release" / ASSIGNMENT
    template = Template(folder, db, release, names, _fingerprint(course, release, names), grade_cells_of(db))
    ensure_course_gradebook(course, template, log)
    stamp_gradebook(course)
    return template


def grade_cells_of(db: Path) -> dict[str, list[tuple[str, float]]]:
    from nbgrader.api import Gradebook

    out: dict[str, list[tuple[str, float]]] = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            out[nb.name] = [(g.name, float(g.max_score)) for g in nb.grade_cells]
    return out


def ensure_course_gradebook(course: Course, template: Template, log) -> None:
    """The course gradebook knows the assignment as source/ defines it (created if needed)."""
    from nbgrader.api import Gradebook, MissingEntry

    if not course.gradebook.exists():
        shutil.copy2(template.db, course.gradebook)
        log(f"created {course.gradebook.name} from source/")
        return
    try:
        same = grade_cells_of(course.gradebook) == template.grade_cells
    except MissingEntry:
        same = False
    if same:
        with Gradebook(course.db_url) as gb:  # also the source of every cell (hidden tests)
            nb_src = {(nb.name, c.name): c.checksum for nb in gb.find_assignment(ASSIGNMENT).notebooks
                      for c in nb.source_cells}
        with Gradebook(f"sqlite:///{template.db}") as gb:
            tp_src = {(nb.name, c.name): c.checksum for nb in gb.find_assignment(ASSIGNMENT).notebooks
                      for c in nb.source_cells}
        if nb_src == tp_src:
            return
    tmp = template.folder / "release-for-course"
    done = run_nbgrader(["generate_assignment", ASSIGNMENT, "--force",
                         f"--CourseDirectory.release_directory={tmp}"], course.root,
                        log=template.folder / "nbgrader.log")
    if done.returncode != 0:
        raise RuntimeError(f"could not update the assignment in {course.gradebook}: see {template.folder}/nbgrader.log")
    log(f"updated the assignment in {course.gradebook.name} from source/")


# ------------------------------------------------------------------------------ one student
@dataclass
class NotebookResult:
    status: str = MISSING
    reason: str = ""
    file: str = ""  # path handed in, relative to submitted/<student>/
    cells: dict[str, dict] = field(default_factory=dict)  # grade_id → {status, reason}


@dataclass
class StudentResult:
    student: str
    fingerprint: str
    notebooks: dict[str, NotebookResult]
    findings: list[dict]
    graded_dir: Path | None = None  # temp autograde/<student>/whole-transformer
    temp_db: Path | None = None
    seconds: float = 0.0
    log: Path | None = None

    def record(self) -> dict:
        return {
            "version": STATE_VERSION,
            "student": self.student,
            "fingerprint": self.fingerprint,
            "seconds": round(self.seconds, 2),
            "notebooks": {k: vars(v) for k, v in self.notebooks.items()},
            "findings": self.findings,
        }


MAX_NOTEBOOK_BYTES = 64 * 2**20


def submission_files(folder: Path) -> list[Path]:
    """Regular files handed in (never through a symbolic link: a link could point at the answers)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != ".ipynb_checkpoints"]
        for name in filenames:
            p = Path(dirpath) / name
            if not p.is_symlink() and p.is_file():
                out.append(p)
    return sorted(out)


def odd_files(folder: Path) -> list[str]:
    """Symbolic links and oversized notebooks in a submission, which are not graded."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(folder))
            if p.is_symlink():
                out.append(f"{rel!r} is a symbolic link: ignored")
            elif p.suffix == ".ipynb" and p.is_file() and p.stat().st_size > MAX_NOTEBOOK_BYTES:
                out.append(f"{rel!r} is larger than {MAX_NOTEBOOK_BYTES >> 20} MB: ignored")
    return out


def fingerprint(course: Course, student: str, template: Template) -> str:
    folder = course.submitted / student
    return digest_files(submission_files(folder), folder) + ":" + template.fingerprint


def _read_notebook(path: Path):
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


def _grade_ids(nb) -> set[str]:
    return {integrity._gid(c) for c in nb.get("cells", []) if integrity._gid(c)}


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
        nb, _ = _read_notebook(p)
        ids = _grade_ids(nb) if nb is not None else set()
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


def _work_dir(course: Course, student: str) -> Path:
    return course.state / "work" / student


def _pdeathsig():
    """In the child: die if the autograde process dies (a killed run leaves no graders behind)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    os.setsid()


_RUNNING: set[subprocess.Popen] = set()
_RUNNING_LOCK = threading.Lock()
_STOPPING = threading.Event()


def _stop_all() -> None:
    """Kill every nbgrader run in progress (and with it, its sandboxed kernels); start no new one."""
    _STOPPING.set()
    with _RUNNING_LOCK:
        for proc in list(_RUNNING):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _nbgrader_autograde(tc: Path, student: str, extra: list[str], log: Path, timeout: float) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", student, "--force", *extra]
    if _STOPPING.is_set():
        return -9, "autograde was stopped"
    with open(log, "a") as out:
        proc = subprocess.Popen(cmd, cwd=tc, env=nbgrader_env(Course(tc)), stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_pdeathsig)
        with _RUNNING_LOCK:
            _RUNNING.add(proc)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return -9, f"grading took longer than {int(timeout)} s and was stopped"
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(proc)
    if rc != 0:
        lines = [ln for ln in log.read_text(errors="replace").splitlines() if "ERROR" in ln or "Error" in ln]
        why = lines[-1].split("]", 1)[-1].strip() if lines else f"nbgrader exited with code {rc}"
        return rc, why[:300]
    return 0, ""


def grade_student(course: Course, student: str, template: Template, *, threads: int, sandbox: bool,
                  cell_timeout: int | None = None) -> StudentResult:
    """Grade one student in a private course folder (nothing of the course is written here)."""
    t0 = time.monotonic()
    work = _work_dir(course, student)
    shutil.rmtree(work, ignore_errors=True)
    tc = work / "course"
    sub = tc / "submitted" / student / ASSIGNMENT
    sub.mkdir(parents=True)
    (tc / "source" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy2(template.db, tc / "gradebook.db")
    scratch, reports, log = work / "scratch", work / "reports", work / "nbgrader.log"
    scratch.mkdir()
    _course_config(tc, course.root / "nbgrader_config.py")
    result = StudentResult(student, fingerprint(course, student, template), {}, [], log=log)

    release_nbs = {n: nbformat.read(template.release / f"{n}.ipynb", as_version=4) for n in template.notebooks}
    release_ids = {n: _grade_ids(nb) for n, nb in release_nbs.items()}
    folder = course.submitted / student
    located = locate(folder, template.notebooks, release_ids)
    for odd in odd_files(folder):
        result.findings.append({"notebook": "submission", "cell": "files", "finding": odd})
    timestamp = folder / ASSIGNMENT / "timestamp.txt"
    if timestamp in submission_files(folder):
        from nbgrader.utils import parse_utc

        try:
            parse_utc(timestamp.read_text(errors="replace").strip()[:100])
            shutil.copy2(timestamp, sub / "timestamp.txt")
        except Exception:  # noqa: BLE001 - any unreadable time: graded as if none was given
            result.findings.append({"notebook": "submission", "cell": "timestamp.txt",
                                    "finding": "timestamp.txt is not a time nbgrader can read: ignored"})
    # Every other file goes along, as stock nbgrader does: release_feedback needs submission_secret.txt
    for p in submission_files(folder / ASSIGNMENT):
        rel = p.relative_to(folder / ASSIGNMENT)
        if p.suffix != ".ipynb" and str(rel) != "timestamp.txt" and p.stat().st_size <= MAX_NOTEBOOK_BYTES:
            (sub / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, sub / rel)
    to_grade = []
    for name in template.notebooks:
        res = NotebookResult()
        result.notebooks[name] = res
        path, note = located.get(name, (None, None))
        if path is None:
            res.status, res.reason = MISSING, f"{name}.ipynb was not handed in"
            continue
        res.file = str(path.relative_to(folder))
        if note:
            result.findings.append({"notebook": name, "cell": "notebook", "finding": note})
        nb, why = _read_notebook(path)
        if nb is None:
            res.status, res.reason = FAILED, why
            result.findings.append({"notebook": name, "cell": "notebook", "finding": why})
            continue
        try:
            restored, findings = integrity.restore(nb, release_nbs[name])
            findings += integrity.scan_notebook(restored, release_nbs[name])
            nbformat.write(restored, sub / f"{name}.ipynb")
        except Exception as e:  # noqa: BLE001 - a notebook too broken to rebuild is reported, not fatal
            res.status, res.reason = FAILED, f"{path.name} could not be rebuilt for grading ({type(e).__name__}: {e})"
            result.findings.append({"notebook": name, "cell": "notebook", "finding": res.reason})
            continue
        result.findings += [{"notebook": name, "cell": f.cell, "finding": f.finding} for f in findings]
        to_grade.append(name)

    extra = [f"--SandboxExecute.report_dir={reports}", f"--SandboxExecute.scratch_dir={scratch}",
             f"--SandboxExecute.threads={threads}"]
    if not sandbox:
        extra.append("--SandboxExecute.sandbox=off")
    if cell_timeout:
        extra.append(f"--SandboxExecute.timeout={cell_timeout}")
    budget = 120 + 200 * max(1, len(to_grade))
    graded_dir = tc / "autograde" / student / ASSIGNMENT
    if to_grade:
        rc, why = _nbgrader_autograde(tc, student, extra, log, budget)
        if rc != 0:
            # one bad notebook must not sink the others: grade them one by one
            for name in to_grade:
                rc1, why1 = _nbgrader_autograde(tc, student, extra + [f"--notebook={name}"], log, budget)
                if rc1 != 0 or not (graded_dir / f"{name}.ipynb").exists():
                    res = result.notebooks[name]
                    res.status, res.reason = FAILED, f"nbgrader could not grade it: {why1 or why}"
        for name in to_grade:
            res = result.notebooks[name]
            if res.status == FAILED:
                continue
            if not (graded_dir / f"{name}.ipynb").exists():
                res.status, res.reason = FAILED, f"nbgrader could not grade it: {why or 'no graded notebook'}"
                continue
            res.status = GRADED
            _cell_statuses(res, reports / f"{name}.json", template.grade_cells.get(name, []), result, name)
    for name, res in result.notebooks.items():
        if res.status != GRADED:
            res.cells = {gid: {"status": res.status, "reason": res.reason} for gid, _ in template.grade_cells[name]}
    result.graded_dir = graded_dir if graded_dir.is_dir() else None
    result.temp_db = tc / "gradebook.db"
    result.seconds = time.monotonic() - t0
    return result


def _cell_statuses(res: NotebookResult, report: Path, cells, result: StudentResult, name: str) -> None:
    rep = json.loads(report.read_text()) if report.exists() else {"events": [], "cells": {}}
    details = {}
    for ev in rep.get("events", []):
        if ev["kind"] == "restarted":
            continue
        where = ev.get("grade_id") or f"cell {ev['cell'] + 1}"
        result.findings.append({"notebook": name, "cell": where, "finding": f"while grading: {ev['detail']}"})
        details.setdefault(ev["cell"], ev["detail"])
    for gid, _ in cells:
        info = rep.get("cells", {}).get(gid, {"status": "ok"})
        st = info.get("status", "ok")
        if st in {"ok", "not-code"}:
            res.cells[gid] = {"status": GRADED, "reason": ""}
        else:
            res.cells[gid] = {"status": FAILED, "reason": details.get(info.get("index"), st)}
    bad = [g for g, c in res.cells.items() if c["status"] != GRADED]
    if bad:
        res.reason = f"{len(bad)} test cell(s) could not run to the end: {', '.join(bad)}"


# ------------------------------------------------------------------------------ merging
def merge(course: Course, result: StudentResult, template: Template) -> None:
    """Put one student's grading into the course: gradebook, autograde folder, record (last)."""
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    with warnings.catch_warnings(), Gradebook(course.db_url) as gb:
        # nbgrader's add_submission makes SQLAlchemy warn about autoflush; harmless
        warnings.simplefilter("ignore")
        try:
            gb.find_student(result.student)
        except MissingEntry:
            gb.add_student(result.student)
        graded_any = any(r.status == GRADED for r in result.notebooks.values())
        handed_in = any(r.status != MISSING for r in result.notebooks.values())
        data = None
        if graded_any and result.temp_db and result.temp_db.exists():
            with Gradebook(f"sqlite:///{result.temp_db}") as tgb:
                try:
                    tsub = tgb.find_submission(ASSIGNMENT, result.student)
                except MissingEntry:
                    tsub = None
                if tsub is not None:
                    data = {
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
        if data is not None:
            kw = {"timestamp": data["timestamp"]} if data["timestamp"] else {}
            gb.update_or_create_submission(ASSIGNMENT, result.student, **kw)
            for nb_name, nb_data in data["notebooks"].items():
                res = result.notebooks.get(nb_name)
                snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                snb.late_submission_penalty = nb_data["late"]
                snb.flagged = bool(res and res.status != GRADED) or any(
                    c["status"] != GRADED for c in (res.cells.values() if res else [])) or any(
                    f["notebook"] == nb_name for f in result.findings)
                for gid, (auto, extra_credit) in nb_data["grades"].items():
                    g = gb.find_grade(gid, nb_name, ASSIGNMENT, result.student)
                    if res is not None and res.status != GRADED:
                        auto = 0.0
                    g.auto_score = auto
                    g.extra_credit = extra_credit
                    g.needs_manual_grade = g.manual_score is not None or auto is None
                for cid, text in nb_data["comments"].items():
                    gb.find_comment(cid, nb_name, ASSIGNMENT, result.student).auto_comment = text
            gb.db.commit()
        elif handed_in:
            # nothing could be graded (e.g. every notebook invalid): zeros, flagged for a look
            gb.update_or_create_submission(ASSIGNMENT, result.student)
            for nb_name, res in result.notebooks.items():
                snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                snb.flagged = res.status != MISSING
                for gid, _ in template.grade_cells.get(nb_name, []):
                    g = gb.find_grade(gid, nb_name, ASSIGNMENT, result.student)
                    g.auto_score = 0.0
                    g.needs_manual_grade = g.manual_score is not None
            gb.db.commit()

    dest = course.autograde / result.student / ASSIGNMENT
    if result.graded_dir is not None:
        staging = course.state / "staging" / result.student
        shutil.rmtree(staging, ignore_errors=True)
        staging.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(result.graded_dir, staging, symlinks=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        old = course.state / "staging" / f"{result.student}.old"
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(staging, dest)
        shutil.rmtree(old, ignore_errors=True)
    elif dest.exists():
        shutil.rmtree(dest)
    if result.log is not None and result.log.exists():
        logs = course.state / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        shutil.copy2(result.log, logs / f"{result.student}.log")
    write_json(record_path(course, result.student), result.record())
    shutil.rmtree(_work_dir(course, result.student), ignore_errors=True)


def record_path(course: Course, student: str) -> Path:
    return course.state / "students" / f"{student}.json"


def load_record(course: Course, student: str) -> dict | None:
    try:
        rec = json.loads(record_path(course, student).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return rec if rec.get("version") == STATE_VERSION else None


# ------------------------------------------------------------------------------ the class
def write_integrity_report(course: Course, students: list[str]) -> Path:
    import csv

    path = course.root / "integrity-report.csv"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student_id", "notebook", "cell", "finding"])
        for s in students:
            rec = load_record(course, s)
            for fd in (rec or {}).get("findings", []):
                w.writerow([s, fd["notebook"], fd["cell"], fd["finding"]])
    os.replace(tmp, path)
    return path


def summary_line(course: Course, student: str, rec: dict) -> str:
    from nbgrader.api import Gradebook, MissingEntry

    score = maximum = 0.0
    with Gradebook(course.db_url) as gb:
        try:
            sub = gb.find_submission(ASSIGNMENT, student)
            score, maximum = sub.score, sub.max_score
        except MissingEntry:
            maximum = sum(ms for cells in grade_cells_of(course.gradebook).values() for _, ms in cells)
    nbs = rec["notebooks"]
    counts = {k: sum(1 for v in nbs.values() if v["status"] == k) for k in (GRADED, FAILED, MISSING)}
    parts = [f"{counts[GRADED]} graded"]
    if counts[FAILED]:
        parts.append(f"{counts[FAILED]} failed")
    if counts[MISSING]:
        parts.append(f"{counts[MISSING]} missing")
    bad_cells = sum(1 for v in nbs.values() if v["status"] == GRADED
                    for c in v["cells"].values() if c["status"] != GRADED)
    if bad_cells:
        parts.append(f"{bad_cells} test cell(s) failed to run")
    nf = len(rec.get("findings", []))
    return (f"{student:<24} {score:6.1f} / {maximum:<5.1f} notebooks: {', '.join(parts):<34} "
            f"findings: {nf}  ({rec.get('seconds', 0):.0f} s)")


@dataclass
class ClassRun:
    graded: list[str]
    skipped: list[str]
    seconds: float
    report: Path


def check_sandbox(no_sandbox: bool) -> bool:
    """True to use the sandbox; raises SandboxMissing if there is none and no explicit opt-out."""
    if no_sandbox or sandbox_opt_out():
        return False
    status = sandbox_status()
    if not status.ok:
        raise SandboxMissing(status.message())
    return True


def autograde(course: Course, jobs: int = 1, *, force: bool = False, students: list[str] | None = None,
              no_sandbox: bool = False, cell_timeout: int | None = None, log=print) -> ClassRun:
    """Grade every student of submitted/ (or those given) who is not graded yet; see module doc."""
    t0 = time.monotonic()
    if jobs < 1:
        raise ValueError(f"--jobs must be 1 or more, got {jobs}")
    sandbox = check_sandbox(no_sandbox)
    if not sandbox:
        log("WARNING: grading WITHOUT a sandbox: student code runs with your rights and can read the hidden "
            "tests and the gradebook.")
    if not course.source.is_dir():
        raise ValueError(f"no source notebooks in {course.source}")
    everyone = course.students()
    if students:
        unknown = [s for s in students if s not in everyone]
        if unknown:
            raise ValueError(f"no submission folder for {', '.join(unknown)} in {course.submitted}")
        everyone = [s for s in everyone if s in students]
    course.state.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(course.state / "work", ignore_errors=True)
    shutil.rmtree(course.state / "staging", ignore_errors=True)
    t_prep = time.monotonic()
    template = build_template(course, course.state / "work", log)
    log(f"autograde: assignment ready in {time.monotonic() - t_prep:.1f} s")

    todo, skipped = [], []
    for s in sorted(everyone, key=lambda s: -len([p for p in submission_files(course.submitted / s)
                                                   if p.suffix == ".ipynb"])):
        rec = load_record(course, s)
        done = (rec is not None and rec["fingerprint"] == fingerprint(course, s, template)
                and (course.autograde / s / ASSIGNMENT).exists() == any(
                    v["status"] == GRADED for v in rec["notebooks"].values()))
        (skipped if done and not force else todo).append(s)
    log(f"autograde: {len(todo)} to grade, {len(skipped)} already graded, {jobs} at a time "
        f"({'sandboxed with bubblewrap' if sandbox else 'NO SANDBOX'})")
    threads = max(1, (os.cpu_count() or 1) // jobs)
    graded: list[str] = []
    pool = cf.ThreadPoolExecutor(max_workers=jobs)
    _STOPPING.clear()
    try:
        # the biggest submissions first, so that the last ones to finish are short
        futures = {pool.submit(grade_student, course, s, template, threads=threads, sandbox=sandbox,
                               cell_timeout=cell_timeout): s for s in todo}
        for fut in cf.as_completed(futures):
            s = futures[fut]
            try:
                result = fut.result()
            except Exception as e:  # noqa: BLE001 - a grader bug must not stop the class
                result = StudentResult(s, fingerprint(course, s, template), {}, [])
                for name in template.notebooks:
                    result.notebooks[name] = NotebookResult(
                        FAILED, f"the autograder failed on this student: {type(e).__name__}: {e}")
                    result.notebooks[name].cells = {
                        g: {"status": FAILED, "reason": result.notebooks[name].reason}
                        for g, _ in template.grade_cells[name]}
            merge(course, result, template)
            graded.append(s)
            log(summary_line(course, s, result.record()))
    except BaseException:
        # Ctrl-C or an error: stop the graders now; students merged so far stay graded
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_all()
        raise
    pool.shutdown(wait=True)
    report = write_integrity_report(course, course.students())
    seconds = time.monotonic() - t0
    records = {s: load_record(course, s) or {} for s in course.students()}
    total_findings = sum(len(r.get("findings", [])) for r in records.values())
    log(f"autograde: graded {len(graded)}, skipped {len(skipped)} already graded, in {seconds:.1f} s; "
        f"{total_findings} finding(s) in {report.name}")
    look = []
    for s, r in records.items():
        bad = [f"{n[:2]} {v['status']}" for n, v in r.get("notebooks", {}).items() if v["status"] == FAILED]
        nf = len(r.get("findings", []))
        if bad or nf:
            look.append(f"{s} ({', '.join(bad + ([f'{nf} finding(s)'] if nf else []))})")
    if look:
        log(f"to look at ({len(look)}): " + "; ".join(look))
    return ClassRun(graded, skipped, seconds, report)


__all__ = ["autograde", "grade_student", "merge", "SandboxMissing", "INSTALL_HINT", "GRADED", "FAILED", "MISSING"]
