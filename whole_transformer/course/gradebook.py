"""The gradebooks: the course's, which only merging writes, and the private one of each grading course.

- the course gradebook (``gradebook.db``, or the database ``DB_URL`` names): ``gradebook_exists``,
  ``prepare_database`` (nbgrader's schema created or migrated), ``ensure_course_gradebook`` (the
  assignment in it as source/ defines it, from the run's template gradebook), ``stamp_gradebook`` (a record
  that it is so, which lets the next run start from a copy of it) and ``open_gradebook``;
- a private course (the template's, a student's grading, the service's feedback): its
  ``private_course_config`` always writes its own SQLite gradebook, so a grader never touches the
  course gradebook (``autograder/store.py`` does);
- ``grade_cells_of``: the points of every test cell a gradebook holds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .layout import ASSIGNMENT, COURSE_ID, Course, digest_files, redact, run_nbgrader, sqlite_url, write_json


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
    import nbgrader  # lazy: nbgrader, only for its version (the reports that import this module need none)

    files = sorted(course.source.glob("*.ipynb"))
    return f"nbgrader {nbgrader.__version__}:" + digest_files(files, course.root)


def stamp_gradebook(course: Course) -> None:
    """Record that the course gradebook holds the assignment as source/ defines it now."""
    write_json(course.state / "assignment.json", {"source": source_digest(course), "db": redact(course.db_url)})


def gradebook_exists(course: Course) -> bool:
    """The course gradebook exists (a SQLite file, or a database with nbgrader's tables)."""
    if course.sqlite:
        return course.gradebook.exists()
    from sqlalchemy import create_engine, inspect  # lazy: sqlalchemy, only for a server gradebook

    engine = create_engine(course.db_url)
    try:
        return "assignment" in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def alembic_head() -> str:
    """What nbgrader's ``api.get_alembic_version`` returns, the head of its gradebook's schema migrations (stamped
    into each new gradebook), read from its migrations folder in this process: nbgrader starts ``alembic heads`` for
    it, a new Python of about 2 s of CPU, each time a gradebook is made."""
    # lazy: alembic and nbgrader, where a gradebook is made or migrated
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    head = ScriptDirectory(ALEMBIC_DIR).get_current_head()
    if head is None:
        raise RuntimeError(f"nbgrader's schema migrations in {ALEMBIC_DIR} have no head revision: reinstall nbgrader")
    return head


def nbgrader_api():
    """``nbgrader.api``, its ``get_alembic_version`` made ``alembic_head``: each Gradebook this process makes is
    stamped with the same head, without the new Python nbgrader would start for it."""
    from nbgrader import api  # lazy: nbgrader and sqlalchemy, where a gradebook is made

    api.get_alembic_version = alembic_head
    return api


def prepare_database(course: Course, log=print) -> None:
    """A server gradebook: nbgrader's schema created (first use) or migrated to nbgrader's version
    with its own migrations (``nbgrader db upgrade``). Nothing to do for SQLite."""
    if course.sqlite:
        return
    from sqlalchemy import create_engine, inspect, text  # lazy: for a server gradebook only

    api = nbgrader_api()  # the schema made and stamped in this process; `db upgrade` runs with nbgrader_env's PATH
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
        api.Gradebook(course.db_url, course_id=COURSE_ID).close()  # nbgrader creates the schema
        log(f"created nbgrader's tables in {redact(course.db_url)}")
    elif version != (head := alembic_head()):
        done = run_nbgrader(["db", "upgrade"], course.root)
        if done.returncode != 0:
            raise RuntimeError(
                f"nbgrader db upgrade failed on {redact(course.db_url)}:\n"
                f"{(done.stdout or '')[-2000:]}{(done.stderr or '')[-2000:]}"
            )
        log(f"migrated {redact(course.db_url)} from nbgrader schema {version} to {head}")


def grade_cells_of(db_url: str) -> dict[str, list[tuple[str, float]]]:
    """The assignment's test cells in a gradebook, notebook by notebook: [(grade_id, max_score)]."""
    from nbgrader.api import Gradebook  # lazy: nbgrader (and sqlalchemy) only where a gradebook is read

    out: dict[str, list[tuple[str, float]]] = {}
    with Gradebook(db_url) as gb:
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            out[nb.name] = [(g.name, float(g.max_score)) for g in nb.grade_cells]
    return out


def ensure_course_gradebook(
    course: Course, db: Path, grade_cells: dict[str, list[tuple[str, float]]], folder: Path, log
) -> None:
    """The course gradebook knows the assignment as source/ defines it (created if needed): as the gradebook
    ``db`` that was generated from source/ knows it, with these ``grade_cells``; ``folder`` for nbgrader's work."""
    from nbgrader.api import Gradebook, MissingEntry  # lazy: nbgrader (and sqlalchemy) only where a gradebook is read

    if course.sqlite and not course.gradebook.exists():
        shutil.copy2(db, course.gradebook)
        log(f"created {course.gradebook.name} from source/")
        return
    prepare_database(course, log)
    try:
        same = grade_cells_of(course.db_url) == grade_cells
    except MissingEntry:
        same = False
    if same:
        with Gradebook(course.db_url) as gb:  # also the source of every cell (hidden tests)
            nb_src = {
                (nb.name, c.name): c.checksum
                for nb in gb.find_assignment(ASSIGNMENT).notebooks
                for c in nb.source_cells
            }
        with Gradebook(sqlite_url(db)) as gb:
            tp_src = {
                (nb.name, c.name): c.checksum
                for nb in gb.find_assignment(ASSIGNMENT).notebooks
                for c in nb.source_cells
            }
        if nb_src == tp_src:
            return
    tmp = folder / "release-for-course"
    done = run_nbgrader(
        ["generate_assignment", ASSIGNMENT, "--force", f"--CourseDirectory.release_directory={tmp}"],
        course.root,
        log=folder / "nbgrader.log",
    )
    if done.returncode != 0:
        raise RuntimeError(f"could not update the assignment in {redact(course.db_url)}: see {folder}/nbgrader.log")
    log(f"updated the assignment in {course.gradebook.name if course.sqlite else redact(course.db_url)} from source/")


def open_gradebook(course: Course):
    """The course gradebook (nbgrader's ``Gradebook``; a context manager)."""
    from nbgrader.api import Gradebook  # lazy: nbgrader (and sqlalchemy) only where a gradebook is read

    return Gradebook(course.db_url)
