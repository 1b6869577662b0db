"""``make handout``: the students' repository, built from the course, holding no answer.

``handout/`` gets exactly what a student needs to run the course on their own machine:

    release/whole-transformer/*.ipynb   the released notebooks (answers replaced by stubs, no hidden tests)
    whole_transformer/                  the package the notebooks import, without ``course/`` (reference
                                        solutions, the mistake catalogue, hidden tests, grading, sandbox)
    Makefile, pyproject.toml,           ``make lab`` sets up .venv and opens the course; the same pins as
    environment.yml                     the course, without the instructor's tools (nbgrader's instructor
                                        extensions are turned off in that .venv: a student sees Validate only)
    nbgrader_config.py                  what Validate says above the checks that are not right yet (``make lab``
                                        puts it in .venv, so ``nbgrader validate`` says it from any folder)
    jupyter_server_config.py            JupyterLab's terminal gets .venv/bin first on its PATH
    README.md, .gitignore               the student guide (``docs/student.md``), handing in included

Nothing of ``source/``, ``tests/``, ``notebooks/`` (the lecture edition has the answers written in),
the gradebook or the submissions. The JupyterHub route installs the same package for students.

The folder is rebuilt whole each time; its ``.git`` (if the instructor publishes it with git) is
kept. A ``handout/`` that this command did not make is never overwritten.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import whole_transformer

from ..layout import ASSIGNMENT, Course

MARK = ".whole-transformer-handout"
TEMPLATE = Path(__file__).with_name("templates") / "handout"
#: the line of environment.yml after which its instructor-only packages are listed
INSTRUCTOR_PART = "  # the instructor's side (pyproject's [instructor] extra)"
#: What of the package stays with the instructor.
PRIVATE = ("course",)
#: The student guide, which the handout's README is made from.
STUDENT_GUIDE = Path("docs") / "student.md"


def _student_dependencies(course: Course) -> list[str]:
    """The package's own dependencies: the instructor's are its [instructor] extra, so none is here."""
    return tomllib.loads((course.root / "pyproject.toml").read_text())["project"]["dependencies"]


def _environment_yml(course: Course) -> str:
    """environment.yml without its instructor part (from INSTRUCTOR_PART up to the pip section)."""
    lines = (course.root / "environment.yml").read_text().splitlines()
    if INSTRUCTOR_PART not in lines:
        raise RuntimeError(f"environment.yml has no line {INSTRUCTOR_PART!r} before the instructor's packages")
    start = lines.index(INSTRUCTOR_PART)
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "- pip:")
    return "\n".join(lines[:start] + lines[end:]) + "\n"


def _pyproject(course: Course) -> str:
    deps = "\n".join(f'    "{d}",' for d in _student_dependencies(course))
    return (TEMPLATE / "pyproject.toml.in").read_text().replace("@DEPENDENCIES@", deps)


def _student_guide(course: Course) -> str:
    """The handout's README: its own quick start, then ``docs/student.md`` whole, one heading level down."""
    guide_file = course.root / STUDENT_GUIDE
    if not guide_file.is_file():
        raise RuntimeError(f"{guide_file} is missing: the handout's README is made from the student guide")
    guide = guide_file.read_text(encoding="utf-8")
    if not guide.startswith("# "):
        raise RuntimeError(f"{guide_file} must start with its title, a '# ' heading")
    guide = re.sub(r"^(#+) ", r"#\1 ", guide, flags=re.M)  # headings outside code blocks: the guide has none
    return (TEMPLATE / "README.md").read_text().replace("@STUDENT_GUIDE@", guide.strip())


def _clear(dest: Path) -> None:
    """Empty a handout folder made by this command (its .git stays); refuse any other folder."""
    if not dest.exists():
        return
    if not dest.is_dir() or (any(dest.iterdir()) and not (dest / MARK).exists()):
        raise RuntimeError(
            f"{dest} exists and was not made by `make handout`: move it away or choose "
            "another folder (--dest); nothing was changed"
        )
    for child in dest.iterdir():
        if child.name == ".git":
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def handout(course: Course, dest: Path | None = None, log=print) -> Path:
    """Build the students' repository in ``dest`` (default ``handout/`` in the course folder)."""
    dest = (dest or course.root / "handout").resolve()
    release = course.release
    names = sorted(p.name for p in release.glob("*.ipynb"))
    if not names:
        raise RuntimeError(f"{release} holds no notebook: run `make release` first")
    _clear(dest)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / MARK).write_text("made by `make handout` from the course; rebuilt whole by it\n")
    shutil.copytree(
        release,
        dest / "release" / ASSIGNMENT,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "*.pyc", "__pycache__"),
    )
    package = Path(whole_transformer.__file__).resolve().parent
    shutil.copytree(
        package,
        dest / "whole_transformer",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", *[p for p in PRIVATE]),
    )
    for private in PRIVATE:  # ignore_patterns matches names anywhere: make sure only the top one went
        if (dest / "whole_transformer" / private).exists():
            raise RuntimeError(f"whole_transformer/{private} was copied into the handout")
    shutil.copy2(TEMPLATE / "Makefile", dest / "Makefile")
    shutil.copy2(TEMPLATE / "gitignore", dest / ".gitignore")
    shutil.copy2(TEMPLATE / "nbgrader_config.py", dest / "nbgrader_config.py")
    shutil.copy2(TEMPLATE / "jupyter_server_config.py", dest / "jupyter_server_config.py")
    (dest / "pyproject.toml").write_text(_pyproject(course))
    (dest / "environment.yml").write_text(_environment_yml(course))
    (dest / "README.md").write_text(_student_guide(course))
    log(f"wrote {dest}: {len(names)} notebooks and the whole_transformer package (no course/, no answers)")
    return dest
