"""The commands that build and check what the course hands out: release/, the lecture edition, the
handout, and what ``make release`` keeps in step (hidden tests, the visible checks' data, the mistakes'
table).

A command whose subsystem loads nbgrader, nbconvert or torch imports it when it runs, so that ``--help``
and the other commands start without them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..answers import diagnose
from ..layout import Course
from ..publish.handout import handout
from .declare import arg, command, write


@command("release", "build release/ (what students get) from source/", make="")
def cmd_release(course: Course, args) -> int:
    from ..publish.release import release  # lazy: nbgrader

    release(course)
    return 0


@command(
    "lecture",
    "build notebooks/ (lecture edition, run, widgets saved, HTML export)",
    arg("--no-execute", action="store_true", help="do not run the notebooks (quick check)"),
    make="",
)
def cmd_lecture(course: Course, args) -> int:
    from ..publish.lecture import lecture  # lazy: nbformat, nbconvert

    lecture(course, execute=not args.no_execute)
    return 0


@command(
    "handout",
    "build handout/, the students' repository (no answers, no hidden tests)",
    arg("--dest", help="where to write it (default: handout/ in the course folder)"),
    make="",
)
def cmd_handout(course: Course, args) -> int:
    handout(course, Path(args.dest) if args.dest else None)
    return 0


@command(
    "hidden-tests",
    "are source/'s hidden tests up to date? (--write: make them so)",
    write("rewrite the test cells that are out of date"),
    arg("--discard", action="store_true", help="with --write: overwrite test cells edited by hand too"),
)
def cmd_hidden_tests(course: Course, args) -> int:
    from ..answers import hidden_cells  # lazy: nbgrader (plugins/verdict.py), torch (answers/reference.py)

    if args.write:
        print("rewrote:", ", ".join(hidden_cells.write(course.source, discard=args.discard)) or "nothing")
        return 0
    edited = hidden_cells.hand_edited(course.source)
    for nb, gid, home in edited:
        print(f"edited by hand: {gid} in {nb}; edit {home} instead")
    stale = hidden_cells.out_of_sync(course.source)
    print("out of date:", ", ".join(stale) if stale else "none")
    return 1 if stale or edited else 0


@command(
    "check-data",
    "is the visible checks' data (hashes of right and typical wrong results) up to date? (--write: make it so)",
    write("rewrite it"),
)
def cmd_check_data(course: Course, args) -> int:
    from ..answers import check_data  # lazy: torch (answers/reference.py)

    if args.write:
        print(f"wrote {check_data.write()}")
        return 0
    if not check_data.is_current():
        print(f"out of date: {check_data.DATA}; run python -m whole_transformer.course check-data --write")
        return 1
    print(f"up to date: {check_data.DATA}")
    return 0


@command("in-step", "is everything make release brings in step so? (exit 1 if not)")
def cmd_in_step(course: Course, args) -> int:
    from ..publish.release import out_of_step  # lazy: nbgrader, torch

    problems = out_of_step(course)
    for line in problems:
        print(f"out of step: {line}")
    print(
        "in step: make release has nothing to bring in step"
        if not problems
        else f"{len(problems)} thing(s) out of step: run make release"
    )
    return 1 if problems else 0


@command(
    "mistake-table",
    "is what each catalogued mistake returns on the hidden inputs up to date? (--write: make it so)",
    write("work it out again"),
)
def cmd_mistake_table(course: Course, args) -> int:
    if args.write:
        print(f"wrote {diagnose.write(course.source)}")
        return 0
    if diagnose.is_current(course.source):
        print(f"{diagnose.TABLE_FILE.name} is up to date")
        return 0
    print(
        f"{diagnose.TABLE_FILE} is out of date: run python -m whole_transformer.course mistake-table --write",
        file=sys.stderr,
    )
    return 1
