"""The course gradebook and the assignment in it, as the grading pipeline needs them.

- ``build_template``: the assignment as nbgrader knows it (a gradebook that holds it, the released
  notebooks, the points of every test cell), built once per run from source/; the course gradebook
  is brought up to date from it (created, migrated to nbgrader's schema, the assignment updated).
- ``make_pack``: the same as data (bytes and text), shipped with every student's grading task, so
  that a grader on another machine needs no course folder.
- ``private_course_config``: the nbgrader_config.py of a private course, which always writes its
  own SQLite gradebook (a grader never touches the course gradebook; ``merge.py`` does).
- ``stamp_gradebook``: record that the course gradebook holds the assignment as source/ is now,
  so that the next run can start from a copy of it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from whole_transformer.course.answers.diagnose import partial_credit_settings

from ..layout import ASSIGNMENT, COURSE_ID, Course, digest_files, redact, run_nbgrader, sqlite_url, write_json


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
    kernels: dict | None  # warm_kernels.prestart's settings from that config; None: no warm kernels
    history: dict[str, list[str]] = field(default_factory=dict)  # notebook → earlier releases kept (oldest first)
    partial_credit: dict = field(default_factory=dict)  # course.toml's [partial_credit] (diagnose.py)


def make_pack(course: Course, template: Template) -> Pack:
    from whole_transformer.course.publish.release import release_history

    config = course.root / "nbgrader_config.py"
    history: dict[str, list[str]] = {}
    for kept in release_history(course):
        for n, text in kept.items():
            history.setdefault(n, []).append(text)
    return Pack(
        template.db.read_bytes(),
        {n: (template.release / f"{n}.ipynb").read_text(encoding="utf-8") for n in template.notebooks},
        list(template.notebooks),
        template.grade_cells,
        config.read_text(encoding="utf-8"),
        kernel_settings(config),
        history,
        partial_credit_settings(course.root),
    )


def kernel_settings(config: Path) -> dict | None:
    """What the course's nbgrader config gives the sandboxed kernels (``SandboxExecute``), as
    ``warm_kernels.prestart``'s settings, or None if it turns warm kernels off: read once here, so that
    a grader can start their fork server before nbgrader has read the config (``run.py``)."""
    from traitlets.config.loader import PyFileConfigLoader

    from ..plugins.execute import SandboxExecute

    ex = SandboxExecute(config=PyFileConfigLoader(config.name, path=str(config.parent)).load_config())
    if not ex.warm_kernels:
        return None
    return {"memory": ex.memory_limit, "file_size": ex.file_size_limit, "headless": ex.headless_labs}


def private_course_config(root: Path, main_config: Path, extra: str = "") -> None:
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


def assignment_fingerprint(course: Course, release: Path, names: list[str]) -> str:
    """What a grade depends on: the grading config (nbgrader_config.py) for every notebook, and each
    notebook's source and release (its tests, expected values and points): ``config|name=digest;…``,
    so that a change to one notebook regrades only those who handed that notebook in
    (``changed_notebooks``)."""
    config = [p for p in (course.root / "nbgrader_config.py",) if p.is_file()]
    per = {
        n: digest_files([course.source / f"{n}.ipynb", release / f"{n}.ipynb"], course.root)[:20] for n in sorted(names)
    }
    return f"{digest_files(config, course.root)[:20]}|" + ";".join(f"{n}={d}" for n, d in per.items())


def changed_notebooks(old: str, new: str) -> set[str] | None:
    """The notebooks whose grading differs between two fingerprints; None: all of them (the grading
    config changed, or a fingerprint of an older form)."""

    def parts(fp: str):
        common, sep, rest = fp.partition("|")
        if not sep:
            return None
        return common, dict(item.split("=", 1) for item in rest.split(";") if "=" in item)

    a, b = parts(old), parts(new)
    if a is None or b is None or a[0] != b[0]:
        return None
    return {n for n in set(a[1]) | set(b[1]) if a[1].get(n) != b[1].get(n)}


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
        Gradebook(course.db_url, course_id=COURSE_ID).close()  # nbgrader creates the schema
        log(f"created nbgrader's tables in {redact(course.db_url)}")
    elif version != get_alembic_version():
        done = run_nbgrader(["db", "upgrade"], course.root)
        if done.returncode != 0:
            raise RuntimeError(
                f"nbgrader db upgrade failed on {redact(course.db_url)}:\n"
                f"{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}"
            )
        log(f"migrated {redact(course.db_url)} from nbgrader schema {version} to {get_alembic_version()}")


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
            return Template(
                folder, db, course.release, names, assignment_fingerprint(course, course.release, names), cells
            )
    (folder / "source").mkdir(parents=True)
    shutil.copytree(course.source, folder / "source" / ASSIGNMENT, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    private_course_config(folder, course.root / "nbgrader_config.py")
    done = run_nbgrader(["generate_assignment", ASSIGNMENT, "--force"], folder, log=folder / "nbgrader.log")
    db = folder / "gradebook.db"
    if done.returncode != 0 or not db.exists():
        tail = (folder / "nbgrader.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"nbgrader generate_assignment failed on source/:\n{tail}")
    release = course.release if complete_release else folder / "release" / ASSIGNMENT
    template = Template(
        folder, db, release, names, assignment_fingerprint(course, release, names), grade_cells_of(sqlite_url(db))
    )
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
            nb_src = {
                (nb.name, c.name): c.checksum
                for nb in gb.find_assignment(ASSIGNMENT).notebooks
                for c in nb.source_cells
            }
        with Gradebook(sqlite_url(template.db)) as gb:
            tp_src = {
                (nb.name, c.name): c.checksum
                for nb in gb.find_assignment(ASSIGNMENT).notebooks
                for c in nb.source_cells
            }
        if nb_src == tp_src:
            return
    tmp = template.folder / "release-for-course"
    done = run_nbgrader(
        ["generate_assignment", ASSIGNMENT, "--force", f"--CourseDirectory.release_directory={tmp}"],
        course.root,
        log=template.folder / "nbgrader.log",
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"could not update the assignment in {redact(course.db_url)}: see {template.folder}/nbgrader.log"
        )
    log(f"updated the assignment in {course.gradebook.name if course.sqlite else redact(course.db_url)} from source/")


def open_gradebook(course: Course):
    """The course gradebook (nbgrader's ``Gradebook``; a context manager)."""
    from nbgrader.api import Gradebook

    return Gradebook(course.db_url)
