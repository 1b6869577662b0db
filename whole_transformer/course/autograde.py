"""Autograde a whole class: every student once, in parallel or on a Dask cluster, nothing lost if killed.

For each student under ``submitted/<student>/``:

1. **Find the notebooks.** The expected names come from the assignment; a notebook handed in
   under another name (``03-one-word-at-a-time (1).ipynb``, a sub-folder) is recognised by its
   nbgrader cells and graded as the notebook it is, with a finding. A file that is not valid
   JSON or not a notebook cannot be graded: its cells get status ``failed`` with the reason.
   Symbolic links are never followed (a link could point at the answers).
2. **Restore and scan** (``integrity.py``): protected cells are put back as released, every
   change is a finding, and the student's code is scanned for suspicious constructs.
3. **Grade in a private course.** The student's files travel with the task (a ``Job``: bytes,
   never paths), and so does the assignment (a ``Pack``: a SQLite gradebook that knows it, the
   released notebooks and the course's nbgrader_config.py). The grader writes them into a
   temporary course folder of its own, runs real ``nbgrader autograde`` there in its own process,
   with the kernel in the sandbox (``execute.py``), and returns the result as data: statuses,
   findings, the graded notebooks and the scores nbgrader wrote. If nbgrader fails on the student
   as a whole, each notebook is graded on its own so that one bad notebook does not sink the others.
   The grader runs in a thread of this process (``--jobs N``: N students at once) or on a worker
   of a Dask cluster (``--scheduler tcp://host:8786``); a worker needs the course's Python
   environment and bubblewrap, not the course folder. The gradebook the student's grading
   writes is always that private SQLite file: none of them can touch the course gradebook.
4. **Merge**, one student at a time, in this process: grades and comments go into the course's
   gradebook (``gradebook.db``, or the database ``DB_URL`` names; an existing submission is
   updated, never duplicated; manual grades are kept), the graded notebooks replace
   ``autograde/<student>/whole-transformer/`` by renames, and last a record
   ``autograde/.wt/students/<student>.json`` with the statuses, reasons and findings, and a
   fingerprint of the submission and of the assignment.

A student whose record matches the current fingerprints is already graded and is skipped, so a
run that was stopped (Ctrl-C) or killed half-way and is started again grades each remaining
student once (use ``--force`` to grade everyone again). A student is claimed before grading and
until merged (a PostgreSQL advisory lock with a PostgreSQL gradebook, else a lock file), so two
runs started at once on the same course share the class instead of grading anyone twice. A task
whose Dask worker dies is run again by the cluster on another worker; only the result that
comes back is merged. At the end ``integrity-report.csv`` is written from all records, and a
summary per student is printed.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import difflib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import integrity
from .layout import ASSIGNMENT, Course, digest_files, nbgrader_env, redact, run_nbgrader, sqlite_url, write_json
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
    db: Path  # a SQLite gradebook that knows the assignment (private grading copies start from it)
    release: Path  # released notebooks students started from
    notebooks: list[str]
    fingerprint: str
    grade_cells: dict[str, list[tuple[str, float]]]  # notebook → [(grade_id, max_score)]


@dataclass
class Pack:
    """What a grader needs of the assignment, as data: shipped with every task (about 250 kB)."""

    db: bytes
    release: dict[str, str]  # notebook name → released notebook (JSON text)
    notebooks: list[str]
    grade_cells: dict[str, list[tuple[str, float]]]
    config: str  # the course's nbgrader_config.py


def make_pack(course: Course, template: Template) -> Pack:
    return Pack(template.db.read_bytes(),
                {n: (template.release / f"{n}.ipynb").read_text(encoding="utf-8") for n in template.notebooks},
                list(template.notebooks), template.grade_cells,
                (course.root / "nbgrader_config.py").read_text(encoding="utf-8"))


def _course_config(root: Path, main_config: Path, extra: str = "") -> None:
    """A private course's nbgrader_config.py: the course's config, this root, and always its own
    SQLite gradebook (whatever DB_URL says, a private course never writes the course's database)."""
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        f"load_subconfig({str(main_config)!r})  # noqa: F821\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.CourseDirectory.db_url = {sqlite_url(root / 'gradebook.db')!r}\n" + extra
    )


def source_digest(course: Course) -> str:
    """What the course gradebook's assignment must have been generated from."""
    import nbgrader

    files = sorted(course.source.glob("*.ipynb"))
    return f"nbgrader {nbgrader.__version__}:" + digest_files(files, course.root)


def stamp_gradebook(course: Course) -> None:
    """Record that the course gradebook holds the assignment as source/ defines it now."""
    write_json(course.state / "assignment.json", {"source": source_digest(course), "db": redact(course.db_url)})


def _fingerprint(course: Course, release: Path, names: list[str]) -> str:
    files = list(course.source.glob("*.ipynb")) + [release / f"{n}.ipynb" for n in names]
    return digest_files(files, course.root)


def gradebook_exists(course: Course) -> bool:
    """The course gradebook exists (a SQLite file, or a database with nbgrader's tables)."""
    if course.sqlite:
        return course.gradebook.exists()
    from sqlalchemy import create_engine, inspect

    engine = create_engine(course.db_url)
    try:
        return "assignment" in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def prepare_database(course: Course, log=print) -> None:
    """A server gradebook: nbgrader's schema created (first use) or migrated to nbgrader's version
    with its own migrations (``nbgrader db upgrade``). Nothing to do for SQLite."""
    if course.sqlite:
        return
    from nbgrader.api import Gradebook, get_alembic_version
    from sqlalchemy import create_engine, inspect, text

    bindir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` from this environment
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
    engine = create_engine(course.db_url)
    try:
        tables = inspect(engine).get_table_names()
        version = None
        if "alembic_version" in tables:
            with engine.connect() as con:
                version = con.execute(text("select version_num from alembic_version")).scalar()
    finally:
        engine.dispose()
    if not tables:
        Gradebook(course.db_url, course_id=course_id_of(course)).close()  # nbgrader creates the schema
        log(f"created nbgrader's tables in {redact(course.db_url)}")
    elif version != get_alembic_version():
        done = run_nbgrader(["db", "upgrade"], course.root)
        if done.returncode != 0:
            raise RuntimeError(f"nbgrader db upgrade failed on {redact(course.db_url)}:\n"
                               f"{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}")
        log(f"migrated {redact(course.db_url)} from nbgrader schema {version} to {get_alembic_version()}")


def course_id_of(course: Course) -> str:
    from .layout import COURSE_ID

    return COURSE_ID


def build_template(course: Course, work: Path, log=print) -> Template:
    """The assignment as nbgrader knows it: its gradebook and release, from source/.

    If the course gradebook is a SQLite file generated from source/ as it is now (``make release``
    or an earlier autograde stamped it), a snapshot of it is used; otherwise the assignment is
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
    if course.sqlite and complete_release and course.gradebook.exists() and stamp == source_digest(course):
        db = folder / "gradebook.db"
        shutil.copy2(course.gradebook, db)
        try:
            cells = grade_cells_of(sqlite_url(db))
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
    template = Template(folder, db, release, names, _fingerprint(course, release, names),
                        grade_cells_of(sqlite_url(db)))
    ensure_course_gradebook(course, template, log)
    stamp_gradebook(course)
    return template


def grade_cells_of(db_url: str) -> dict[str, list[tuple[str, float]]]:
    from nbgrader.api import Gradebook

    out: dict[str, list[tuple[str, float]]] = {}
    with Gradebook(db_url) as gb:
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            out[nb.name] = [(g.name, float(g.max_score)) for g in nb.grade_cells]
    return out


def ensure_course_gradebook(course: Course, template: Template, log) -> None:
    """The course gradebook knows the assignment as source/ defines it (created if needed)."""
    from nbgrader.api import Gradebook, MissingEntry

    if course.sqlite and not course.gradebook.exists():
        shutil.copy2(template.db, course.gradebook)
        log(f"created {course.gradebook.name} from source/")
        return
    prepare_database(course, log)
    try:
        same = grade_cells_of(course.db_url) == template.grade_cells
    except MissingEntry:
        same = False
    if same:
        with Gradebook(course.db_url) as gb:  # also the source of every cell (hidden tests)
            nb_src = {(nb.name, c.name): c.checksum for nb in gb.find_assignment(ASSIGNMENT).notebooks
                      for c in nb.source_cells}
        with Gradebook(sqlite_url(template.db)) as gb:
            tp_src = {(nb.name, c.name): c.checksum for nb in gb.find_assignment(ASSIGNMENT).notebooks
                      for c in nb.source_cells}
        if nb_src == tp_src:
            return
    tmp = template.folder / "release-for-course"
    done = run_nbgrader(["generate_assignment", ASSIGNMENT, "--force",
                         f"--CourseDirectory.release_directory={tmp}"], course.root,
                        log=template.folder / "nbgrader.log")
    if done.returncode != 0:
        raise RuntimeError(f"could not update the assignment in {redact(course.db_url)}: "
                           f"see {template.folder}/nbgrader.log")
    log(f"updated the assignment in {course.gradebook.name if course.sqlite else redact(course.db_url)} "
        "from source/")


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
    graded: dict[str, bytes] = field(default_factory=dict)  # notebook file name → graded notebook
    scores: dict | None = None  # what nbgrader wrote into the private gradebook (see _scores_of)
    seconds: float = 0.0
    log: str = ""
    worker: str = ""  # where it was graded

    def record(self) -> dict:
        return {
            "version": STATE_VERSION,
            "student": self.student,
            "fingerprint": self.fingerprint,
            "seconds": round(self.seconds, 2),
            "notebooks": {k: vars(v) for k, v in self.notebooks.items()},
            "findings": self.findings,
        }


@dataclass
class Job:
    """One student's grading, as data: the files handed in travel with the task."""

    student: str
    fingerprint: str
    files: dict[str, bytes]  # path relative to submitted/<student>/ → content (regular files only)
    findings: list[dict]  # found before grading (symbolic links, oversized notebooks)


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



def make_job(course: Course, student: str, template: Template) -> Job:
    folder = course.submitted / student
    files = {}
    for p in submission_files(folder):
        if p.suffix == ".ipynb" and p.stat().st_size > MAX_NOTEBOOK_BYTES:
            continue  # reported by odd_files, never shipped
        files[str(p.relative_to(folder))] = p.read_bytes()
    findings = [{"notebook": "submission", "cell": "files", "finding": odd} for odd in odd_files(folder)]
    return Job(student, fingerprint(course, student, template), files, findings)


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


class Stopped(Exception):
    """The run was stopped (Ctrl-C) while this student was being graded."""


def _nbgrader_autograde(tc: Path, student: str, extra: list[str], log: Path, timeout: float,
                        stop) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--student", student, "--force", *extra]
    if stop():
        raise Stopped()
    deadline = time.monotonic() + timeout
    with open(log, "a") as out:
        proc = subprocess.Popen(cmd, cwd=tc, env=nbgrader_env(Course(tc)), stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_pdeathsig)
        with _RUNNING_LOCK:
            _RUNNING.add(proc)
        try:
            while True:
                try:
                    rc = proc.wait(timeout=min(1.0, max(0.05, deadline - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    if stop():
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        raise Stopped() from None
                    if time.monotonic() >= deadline:
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


def grade_job(job: Job, pack: Pack, *, threads: int, sandbox: bool, cell_timeout: int | None = None,
              work: Path | None = None, stop=None) -> StudentResult:
    """Grade one student in a private course folder of its own (a temporary folder under ``work``)
    and return the result as data. Reads and writes nothing of the course: it can run anywhere
    the course's Python environment (and bubblewrap) is."""
    stop = stop or (lambda: False)
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix=f"wt-grade-{job.student[:40]}-", dir=work))
    try:
        return _grade_in(base, job, pack, threads=threads, sandbox=sandbox, cell_timeout=cell_timeout,
                         stop=stop, t0=t0)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _grade_in(base: Path, job: Job, pack: Pack, *, threads, sandbox, cell_timeout, stop, t0) -> StudentResult:
    student = job.student
    tc = base / "course"
    sub = tc / "submitted" / student / ASSIGNMENT
    sub.mkdir(parents=True)
    (tc / "source" / ASSIGNMENT).mkdir(parents=True)
    (tc / "gradebook.db").write_bytes(pack.db)
    (base / "course_config.py").write_text(pack.config, encoding="utf-8")
    scratch, reports, log = base / "scratch", base / "reports", base / "nbgrader.log"
    scratch.mkdir()
    _course_config(tc, base / "course_config.py")
    result = StudentResult(student, job.fingerprint, {}, list(job.findings), worker=socket.gethostname())

    # the submission as handed in, rebuilt from the bytes that came with the task
    folder = base / "handed-in"
    folder.mkdir()
    for rel, data in job.files.items():
        p = (folder / rel).resolve()
        if not p.is_relative_to(folder.resolve()):
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    release_nbs = {n: nbformat.reads(pack.release[n], as_version=4) for n in pack.notebooks}
    release_ids = {n: _grade_ids(nb) for n, nb in release_nbs.items()}
    located = locate(folder, pack.notebooks, release_ids)
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
    for name in pack.notebooks:
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
        rc, why = _nbgrader_autograde(tc, student, extra, log, budget, stop)
        if rc != 0:
            # one bad notebook must not sink the others: grade them one by one
            for name in to_grade:
                rc1, why1 = _nbgrader_autograde(tc, student, extra + [f"--notebook={name}"], log, budget, stop)
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
            _cell_statuses(res, reports / f"{name}.json", pack.grade_cells.get(name, []), result, name)
    for name, res in result.notebooks.items():
        if res.status != GRADED:
            res.cells = {gid: {"status": res.status, "reason": res.reason} for gid, _ in pack.grade_cells[name]}
    if graded_dir.is_dir():
        result.graded = {p.name: p.read_bytes() for p in sorted(graded_dir.iterdir())
                         if p.is_file() and not p.is_symlink()}
    if any(r.status == GRADED for r in result.notebooks.values()):
        result.scores = _scores_of(tc / "gradebook.db", student)
    result.log = log.read_text(errors="replace") if log.exists() else ""
    result.seconds = time.monotonic() - t0
    return result


def _scores_of(db: Path, student: str) -> dict | None:
    """What nbgrader autograde wrote into the private gradebook for the student, as plain data."""
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    if not db.exists():
        return None
    with warnings.catch_warnings(), Gradebook(sqlite_url(db)) as tgb:
        warnings.simplefilter("ignore")
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


def grade_on_dask_worker(job: Job, pack: Pack, sandbox: bool, cell_timeout: int | None, stop_event: str):
    """The task a Dask worker runs: one student, graded on this worker (threads: the worker's cores
    shared by its task slots); returns the StudentResult. Stops when the run's Event is set."""
    from distributed import Event, get_worker

    if sandbox:
        status = sandbox_status()
        if not status.ok:
            raise SandboxMissing(f"worker {socket.gethostname()}: {status.message()}")
    worker = get_worker()
    slots = max(1, worker.state.nthreads)
    threads = max(1, (os.cpu_count() or 1) // slots)
    event = Event(stop_event)
    last = [0.0, False]

    def stop() -> bool:
        if time.monotonic() - last[0] >= 2.0:  # ask the scheduler at most every 2 s
            last[0] = time.monotonic()
            try:
                last[1] = event.is_set()
            except Exception:  # noqa: BLE001 - scheduler unreachable: go on; the task is dropped anyway
                pass
        return last[1]

    result = grade_job(job, pack, threads=threads, sandbox=sandbox, cell_timeout=cell_timeout,
                       work=Path(worker.local_directory) / "wt-grading", stop=stop)
    result.worker = f"{socket.gethostname()} {worker.address}"
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
def open_gradebook(course: Course):
    from nbgrader.api import Gradebook

    return Gradebook(course.db_url)


def merge(course: Course, result: StudentResult, template: Template, gb=None, staging: Path | None = None) -> None:
    """Put one student's grading into the course: gradebook, autograde folder, record (last).

    ``gb``: an open course Gradebook to use (one per run; else one is opened for this student)."""
    if gb is None:
        with open_gradebook(course) as own:
            return merge(course, result, template, own, staging)
    try:
        _merge_grades(gb, result, template)
    except BaseException:
        gb.db.rollback()
        raise

    dest = course.autograde / result.student / ASSIGNMENT
    if result.graded:
        staging = (staging or course.state / "staging") / result.student
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        for fname, data in result.graded.items():
            (staging / fname).write_bytes(data)
        dest.parent.mkdir(parents=True, exist_ok=True)
        old = staging.with_name(f"{result.student}.old")
        shutil.rmtree(old, ignore_errors=True)
        if dest.exists():
            os.replace(dest, old)
        os.replace(staging, dest)
        shutil.rmtree(old, ignore_errors=True)
    elif dest.exists():
        shutil.rmtree(dest)
    if result.log:
        logs = course.state / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        (logs / f"{result.student}.log").write_text(result.log)
    write_json(record_path(course, result.student), result.record())


def _merge_grades(gb, result: StudentResult, template: Template) -> None:
    import warnings

    from nbgrader.api import MissingEntry

    with warnings.catch_warnings():
        # nbgrader's add_submission makes SQLAlchemy warn about autoflush; harmless
        warnings.simplefilter("ignore")
        try:
            gb.find_student(result.student)
        except MissingEntry:
            gb.add_student(result.student)
        graded_any = any(r.status == GRADED for r in result.notebooks.values())
        handed_in = any(r.status != MISSING for r in result.notebooks.values())
        data = result.scores if graded_any else None
        if data is not None:
            kw = {"timestamp": data["timestamp"]} if data["timestamp"] else {}
            gb.update_or_create_submission(ASSIGNMENT, result.student, **kw)
            with gb.db.no_autoflush:  # one flush at the commit, not one per query
                for nb_name, nb_data in data["notebooks"].items():
                    res = result.notebooks.get(nb_name)
                    snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                    snb.late_submission_penalty = nb_data["late"]
                    snb.flagged = bool(res and res.status != GRADED) or any(
                        c["status"] != GRADED for c in (res.cells.values() if res else [])) or any(
                        f["notebook"] == nb_name for f in result.findings)
                    grades = {g.name: g for g in snb.grades}  # one query per notebook
                    comments = {c.name: c for c in snb.comments}
                    for gid, (auto, extra_credit) in nb_data["grades"].items():
                        g = grades[gid]
                        if res is not None and res.status != GRADED:
                            auto = 0.0
                        g.auto_score = auto
                        g.extra_credit = extra_credit
                        g.needs_manual_grade = g.manual_score is not None or auto is None
                    for cid, text in nb_data["comments"].items():
                        comments[cid].auto_comment = text
            gb.db.commit()
        elif handed_in:
            # nothing could be graded (e.g. every notebook invalid): zeros, flagged for a look
            gb.update_or_create_submission(ASSIGNMENT, result.student)
            with gb.db.no_autoflush:
                for nb_name, res in result.notebooks.items():
                    snb = gb.find_submission_notebook(nb_name, ASSIGNMENT, result.student)
                    snb.flagged = res.status != MISSING
                    grades = {g.name: g for g in snb.grades}
                    for gid, _ in template.grade_cells.get(nb_name, []):
                        g = grades[gid]
                        g.auto_score = 0.0
                        g.needs_manual_grade = g.manual_score is not None
            gb.db.commit()
        else:
            gb.db.commit()


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


def summary_line(course: Course, student: str, rec: dict, gb=None, template: Template | None = None) -> str:
    from nbgrader.api import MissingEntry

    if gb is None:
        with open_gradebook(course) as own:
            return summary_line(course, student, rec, own, template)
    score = maximum = 0.0
    try:
        sub = gb.find_submission(ASSIGNMENT, student)
        score, maximum = sub.score, sub.max_score
    except MissingEntry:
        cells = template.grade_cells if template else grade_cells_of(course.db_url)
        maximum = sum(ms for c in cells.values() for _, ms in c)
    gb.db.commit()  # end the read transaction
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
    elsewhere: list[str] = field(default_factory=list)  # being graded by another run at the time
    left: list[str] = field(default_factory=list)  # not graded (stopped, or the grading infrastructure failed)
    workers: list[str] = field(default_factory=list)  # where each graded student was graded, in order


def check_sandbox(no_sandbox: bool) -> bool:
    """True to use the sandbox; raises SandboxMissing if there is none and no explicit opt-out."""
    if no_sandbox or sandbox_opt_out():
        return False
    status = sandbox_status()
    if not status.ok:
        raise SandboxMissing(status.message())
    return True


# ------------------------------------------------------------------------------ claims
def _lock_key(course: Course, name: str) -> int:
    return int.from_bytes(hashlib.sha256(f"whole-transformer:{name}".encode()).digest()[:8], "big", signed=True)


class Claims:
    """Who is being graded by this run. With a PostgreSQL gradebook, a session advisory lock per
    student (released by the server if this process dies); with SQLite, a lock file per student
    under autograde/.wt/claims/ (flock, released by the kernel if this process dies)."""

    def __init__(self, course: Course):
        self.course = course
        self.held: dict[str, object] = {}
        self._con = None
        if not course.sqlite:
            from sqlalchemy import create_engine

            self._engine = create_engine(course.db_url, poolclass=__import__("sqlalchemy.pool").pool.NullPool)
            self._con = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        else:
            (course.state / "claims").mkdir(parents=True, exist_ok=True)

    def _sql(self, query: str, key: int):
        from sqlalchemy import text

        return self._con.execute(text(query), {"k": key}).scalar()

    def lock(self, name: str) -> None:
        """Wait for a lock shared by every run on this course (preparing the gradebook)."""
        if self._con is not None:
            self._sql("select pg_advisory_lock(:k)", _lock_key(self.course, f"lock:{name}"))
        else:
            f = open(self.course.state / "claims" / f".{name}.lock", "a")
            fcntl.flock(f, fcntl.LOCK_EX)
            self.held[f".{name}"] = f

    def unlock(self, name: str) -> None:
        if self._con is not None:
            self._sql("select pg_advisory_unlock(:k)", _lock_key(self.course, f"lock:{name}"))
        else:
            f = self.held.pop(f".{name}", None)
            if f is not None:
                f.close()

    def claim(self, student: str) -> bool:
        if self._con is not None:
            got = bool(self._sql("select pg_try_advisory_lock(:k)", _lock_key(self.course, f"student:{student}")))
            if got:
                self.held[student] = True
            return got
        f = open(self.course.state / "claims" / f"{student}.lock", "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            return False
        self.held[student] = f
        return True

    def release(self, student: str) -> None:
        held = self.held.pop(student, None)
        if held is None:
            return
        if self._con is not None:
            self._sql("select pg_advisory_unlock(:k)", _lock_key(self.course, f"student:{student}"))
        else:
            held.close()

    def close(self) -> None:
        for s in list(self.held):
            if not s.startswith("."):
                try:
                    self.release(s)
                except Exception:  # noqa: BLE001 - closing the connection releases them anyway
                    pass
        for f in [v for k, v in self.held.items() if k.startswith(".")]:
            f.close()
        self.held.clear()
        if self._con is not None:
            self._con.close()
            self._engine.dispose()
            self._con = None


# ------------------------------------------------------------------------------ where grading runs
class LocalGraders:
    """N students at once in threads of this process (``--jobs N``)."""

    def __init__(self, jobs: int, work: Path, sandbox: bool, cell_timeout: int | None):
        self.jobs, self.work, self.sandbox, self.cell_timeout = jobs, work, sandbox, cell_timeout
        self.pool = cf.ThreadPoolExecutor(max_workers=jobs)
        self.threads = max(1, (os.cpu_count() or 1) // jobs)
        _STOPPING.clear()

    def describe(self) -> str:
        return f"{self.jobs} at a time"

    def capacity(self) -> int:
        return self.jobs

    def submit(self, job: Job, pack: Pack):
        return self.pool.submit(grade_job, job, pack, threads=self.threads, sandbox=self.sandbox,
                                cell_timeout=self.cell_timeout, work=self.work, stop=_STOPPING.is_set)

    def result(self, fut) -> StudentResult:
        return fut.result()

    def infrastructure_error(self, e: BaseException) -> bool:
        return isinstance(e, Stopped)

    def stop(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        _stop_all()

    def close(self) -> None:
        self.pool.shutdown(wait=True)


class DaskGraders:
    """Each student a task on the workers of a running Dask cluster (``--scheduler ADDRESS``)."""

    def __init__(self, address: str, sandbox: bool, cell_timeout: int | None, log=print):
        from distributed import Client, Event

        self.client = Client(address, timeout="30s")
        self.sandbox, self.cell_timeout = sandbox, cell_timeout
        self.event_name = f"wt-stop-{uuid.uuid4().hex}"
        self.event = Event(self.event_name, client=self.client)
        info = self.client.scheduler_info()
        log(f"autograde: Dask scheduler {address}, {len(info.get('workers', {}))} worker(s) with "
            f"{self.capacity()} task slot(s); dashboard: {self.client.dashboard_link}")

    def describe(self) -> str:
        return f"on the Dask cluster ({self.capacity()} task slots now)"

    def capacity(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def submit(self, job: Job, pack: Pack):
        return self.client.submit(grade_on_dask_worker, job, pack, self.sandbox, self.cell_timeout, self.event_name,
                                  key=f"grade-{job.student}-{uuid.uuid4().hex[:8]}", pure=False)

    def result(self, fut) -> StudentResult:
        return fut.result()

    def infrastructure_error(self, e: BaseException) -> bool:
        import distributed

        return isinstance(e, (Stopped, distributed.client.FutureCancelledError, distributed.scheduler.KilledWorker,
                              cf.CancelledError, OSError, TimeoutError)) or type(e).__module__.startswith("distributed")

    def stop(self) -> None:
        try:
            self.event.set()  # graders on the workers kill their nbgrader runs within 2 s
            time.sleep(2.5)
        except Exception:  # noqa: BLE001 - the scheduler may be gone
            pass
        self.close()

    def close(self) -> None:
        try:
            self.client.close(timeout=10)
        except Exception:  # noqa: BLE001
            pass


class Progress:
    """Students done, running and left, with the rate: a tqdm bar on a terminal, else a plain line
    on stderr every 15 s."""

    def __init__(self, total: int, enabled: bool = True):
        from tqdm import tqdm

        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()
        self.enabled = enabled and total > 0
        self.last = 0.0
        self.bar = tqdm(total=total, unit="student", file=sys.stderr, disable=not (self.enabled and self.tty),
                        bar_format="autograde {bar:20} {desc}", dynamic_ncols=True)
        self.total = total

    def update(self, done: int, running: int, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or not (force or self.tty or now - self.last >= 15):
            return
        self.last = now
        minutes = (now - self.t0) / 60
        rate = done / minutes if minutes > 0 and done else 0.0
        left = self.total - done - running
        eta = f", about {(self.total - done) / rate:.0f} min to go" if rate and done < self.total else ""
        text = f"{done}/{self.total} done · {running} running · {left} left · {rate:.1f} students/min{eta}"
        if self.tty:
            self.bar.n = done
            self.bar.set_description_str(text)
        else:
            print(f"autograde: {text}", file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.tty:
            self.bar.clear()

    def close(self) -> None:
        self.bar.close()


def _work_root(course: Course) -> Path:
    """This run's work folder; those of dead runs of this host are removed."""
    base = course.state / "work"
    host = socket.gethostname()
    if base.is_dir():
        for d in base.iterdir():
            h, _, pid = d.name.rpartition("-")
            if h == host and pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)
            elif not pid.isdigit():
                shutil.rmtree(d, ignore_errors=True)  # left by an older version of this runner
    return base / f"{host}-{os.getpid()}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_done(course: Course, student: str, template: Template) -> bool:
    rec = load_record(course, student)
    return (rec is not None and rec["fingerprint"] == fingerprint(course, student, template)
            and (course.autograde / student / ASSIGNMENT).exists() == any(
                v["status"] == GRADED for v in rec["notebooks"].values()))


def _failed_result(job: Job, template: Template, e: BaseException) -> StudentResult:
    result = StudentResult(job.student, job.fingerprint, {}, list(job.findings))
    for name in template.notebooks:
        why = f"the autograder failed on this student: {type(e).__name__}: {e}"
        result.notebooks[name] = NotebookResult(FAILED, why)
        result.notebooks[name].cells = {g: {"status": FAILED, "reason": result.notebooks[name].reason}
                                        for g, _ in template.grade_cells[name]}
    return result


def autograde(course: Course, jobs: int = 1, *, force: bool = False, students: list[str] | None = None,
              no_sandbox: bool = False, cell_timeout: int | None = None, scheduler: str | None = None,
              progress: bool | None = None, log=print) -> ClassRun:
    """Grade every student of submitted/ (or those given) who is not graded yet; see module doc.

    ``scheduler``: the address of a Dask scheduler (``tcp://host:8786``) to grade on its workers;
    else ``jobs`` students at once here. Ctrl-C stops cleanly: students merged so far stay graded."""
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
    work = _work_root(course)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    claims = Claims(course)
    graders = None
    bar = None
    graded: list[str] = []
    where: list[str] = []
    elsewhere: list[str] = []
    left: list[str] = []
    try:
        t_prep = time.monotonic()
        claims.lock("assignment")  # one run at a time prepares the gradebook and the assignment
        try:
            template = build_template(course, work, log)
        finally:
            claims.unlock("assignment")
        pack = make_pack(course, template)
        where_db = "gradebook.db" if course.sqlite else redact(course.db_url)
        log(f"autograde: assignment ready in {time.monotonic() - t_prep:.1f} s; gradebook {where_db}")

        todo, skipped = [], []
        for s in sorted(everyone, key=lambda s: -len([p for p in submission_files(course.submitted / s)
                                                       if p.suffix == ".ipynb"])):
            (skipped if is_done(course, s, template) and not force else todo).append(s)
        graders = (DaskGraders(scheduler, sandbox, cell_timeout, log) if scheduler
                   else LocalGraders(jobs, work, sandbox, cell_timeout))
        log(f"autograde: {len(todo)} to grade, {len(skipped)} already graded, {graders.describe()} "
            f"({'sandboxed with bubblewrap' if sandbox else 'NO SANDBOX'})")
        bar = Progress(len(todo), enabled=progress if progress is not None else True)
        gb = open_gradebook(course)
        staging = work / "staging"
        queue = list(todo)  # the biggest submissions first, so that the last ones to finish are short
        running: dict[object, Job] = {}
        try:
            while queue or running:
                while queue and len(running) < graders.capacity():
                    s = queue.pop(0)
                    if not claims.claim(s):
                        elsewhere.append(s)  # another run is grading this student now
                        continue
                    if not force and is_done(course, s, template):
                        claims.release(s)  # graded by another run since this one started
                        skipped.append(s)
                        continue
                    job = make_job(course, s, template)
                    running[graders.submit(job, pack)] = job
                finished = [f for f in running if f.done()]
                if not finished:
                    bar.update(len(graded), len(running))
                    time.sleep(0.2)
                    continue
                for fut in finished:
                    job = running.pop(fut)
                    try:
                        result = graders.result(fut)
                    except SandboxMissing:
                        raise
                    except BaseException as e:  # noqa: BLE001 - sorted below
                        if isinstance(e, KeyboardInterrupt):
                            raise
                        if graders.infrastructure_error(e):
                            log(f"{job.student}: not graded ({type(e).__name__}: {e}); left for the next run")
                            left.append(job.student)
                            claims.release(job.student)
                            continue
                        result = _failed_result(job, template, e)  # a grader bug must not stop the class
                    merge(course, result, template, gb, staging)
                    claims.release(job.student)
                    graded.append(job.student)
                    where.append(result.worker)
                    bar.clear()
                    log(summary_line(course, job.student, result.record(), gb, template))
                bar.update(len(graded), len(running), force=not running)
        except BaseException:
            # Ctrl-C or an error: stop the graders now; students merged so far stay graded
            bar.close()
            left = [s for s in todo if s not in set(graded) | set(elsewhere) | set(skipped)]
            log(f"autograde: stopping: {len(graded)} graded in this run, {len(left)} left (run it again to "
                "grade who is left)")
            graders.stop()
            graders = None
            raise
        finally:
            gb.close()
        bar.close()
    finally:
        if graders is not None:
            graders.close()
        claims.close()
        shutil.rmtree(work, ignore_errors=True)
    report = write_integrity_report(course, course.students())
    seconds = time.monotonic() - t0
    records = {s: load_record(course, s) or {} for s in course.students()}
    total_findings = sum(len(r.get("findings", [])) for r in records.values())
    log(f"autograde: graded {len(graded)}, skipped {len(skipped)} already graded, in {seconds:.1f} s "
        f"({60 * len(graded) / max(seconds, 1e-9):.1f} students/min); {total_findings} finding(s) in {report.name}")
    if elsewhere:
        log(f"autograde: {len(elsewhere)} student(s) were being graded by another run: {', '.join(elsewhere)}")
    if left:
        log(f"autograde: {len(left)} student(s) left for the next run: {', '.join(left)}")
    look = []
    for s, r in records.items():
        bad = [f"{n[:2]} {v['status']}" for n, v in r.get("notebooks", {}).items() if v["status"] == FAILED]
        nf = len(r.get("findings", []))
        if bad or nf:
            look.append(f"{s} ({', '.join(bad + ([f'{nf} finding(s)'] if nf else []))})")
    if look:
        log(f"to look at ({len(look)}): " + "; ".join(look))
    return ClassRun(graded, skipped, seconds, report, elsewhere, left, where)


__all__ = ["autograde", "grade_job", "merge", "SandboxMissing", "INSTALL_HINT", "GRADED", "FAILED", "MISSING"]
