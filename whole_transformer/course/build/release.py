"""``make release``: what students get.

``release`` runs ``nbgrader generate_assignment`` on ``source/whole-transformer/``: solutions
become stubs, hidden tests are removed, protected cells are locked, and the gradebook learns
the assignment. The result, ``release/whole-transformer/``, is committed.
"""

from __future__ import annotations

from pathlib import Path

from ..grading.gradebook import prepare_database, stamp_gradebook
from ..layout import ASSIGNMENT, Course, run_nbgrader


def release(course: Course, dest: Path | None = None, log=print) -> Path:
    """nbgrader generate_assignment; into ``dest`` (a folder) instead of release/ if given."""
    args = ["generate_assignment", ASSIGNMENT, "--force"]
    if dest is None:  # a database server gets nbgrader's schema (or its migrations) first
        prepare_database(course, log)
    if dest is not None:
        args.append(f"--CourseDirectory.release_directory={Path(dest).resolve()}")
    done = run_nbgrader(args, course.root)
    out = (Path(dest).resolve() if dest is not None else course.root / "release") / ASSIGNMENT
    if done.returncode != 0 or not out.is_dir():
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{(done.stdout or '')[-3000:]}"
                           f"{(done.stderr or '')[-3000:]}")
    if dest is None:  # the course gradebook now holds the assignment as source/ defines it
        stamp_gradebook(course)
    log(f"released {len(list(out.glob('*.ipynb')))} notebooks to {out}")
    return out
