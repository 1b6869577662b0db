"""Instructor commands: ``python -m whole_transformer.course <command>`` (the Makefile calls these).

    release                     release/whole-transformer/ from source/ (nbgrader generate_assignment)
    lecture                     notebooks/ (run, widget state saved) and notebooks/html/ (offline HTML)
    autograde [--jobs N]        grade submitted/<student>/whole-transformer/ in the sandbox
              [--scheduler tcp://HOST:8786]   ... on the workers of a Dask cluster instead
              [--force] [--student ID ...] [--no-sandbox]
    workers [--workers N]       a local Dask scheduler and N worker processes (Ctrl-C stops them)
    feedback                    feedback/<student>/whole-transformer/*.html, hidden tests removed
    grades                      grades.csv (nbgrader export) and grades-detail.csv
    insights                    insights.html and insights.csv: what the class got wrong, for the next lecture
    handout [--dest DIR]        handout/: the students' repository (no answers, no hidden tests)
    hidden-tests [--write] [--discard]   are source/'s hidden tests up to date? (--write: make them so;
                                a hand-edited test cell is refused unless --discard)
    check-data [--write]        is the visible checks' data (hashes of right and typical wrong results) up to date?
    in-step                     is everything release brings in step (points, hidden tests, checks' data) so?
    roster [FILE]               import the class list (id, first_name, last_name, email, lms_user_id) into the
                                gradebook; without FILE: list the roster and who has handed in
    collect-zip FILE [--replace]   merge a Canvas or Moodle submissions zip into submitted/ (newer files
                                replace older ones, the rest kept; --replace: whole hand-ins replaced)
    serve [--exchange DIR] [--port N] [--scheduler ADDRESS] [--once]   grade each submission to nbgrader's
                                exchange at once and release its feedback (course.toml [service])
    term                        the term as course.toml has it: due date, late policy, each student's hand-in
    mistake-table [--write]     is what each catalogued mistake returns on the hidden inputs up to date?

The term's settings (due date, late policy, extensions, points) are in course.toml.

The gradebook is gradebook.db, or the database DB_URL names (e.g. postgresql://grader@host/course).
Each command is one function below, ``cmd_<name>(course, args) -> exit status``; ``COMMANDS`` lists them
with their arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import cli_args
from .layout import Course, python_first_on_path
from .venv import instructor_python


def cmd_release(course: Course, args) -> int:
    from .publish.release import release

    release(course)
    return 0


def cmd_lecture(course: Course, args) -> int:
    from .publish.lecture import lecture

    lecture(course, execute=not args.no_execute)
    return 0


def cmd_autograde(course: Course, args) -> int:
    from .autograder.autograde import autograde
    from .sandbox.bubblewrap import SandboxMissing

    try:
        autograde(
            course,
            jobs=args.jobs,
            force=args.force,
            students=args.student,
            no_sandbox=args.no_sandbox,
            scheduler=args.scheduler,
        )
    except SandboxMissing as e:
        print(f"make autograde refused to run.\n{e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("autograde stopped (Ctrl-C); run it again to grade who is left", file=sys.stderr)
        return 130
    return 0


def cmd_workers(course: Course, args) -> int:
    from .autograder.cluster import serve

    serve(args.workers, port=args.port, host=args.host, dashboard=args.dashboard)
    return 0


def cmd_feedback(course: Course, args) -> int:
    from .reports.feedback import feedback

    feedback(course)
    return 0


def cmd_grades(course: Course, args) -> int:
    from .reports.grades import grades

    grades(course)
    return 0


def cmd_insights(course: Course, args) -> int:
    from .reports.insights import insights

    insights(course)
    return 0


def cmd_mistake_table(course: Course, args) -> int:
    from .answers import diagnose

    if args.write:
        print(f"wrote {diagnose.write()}")
        return 0
    if diagnose.is_current():
        print(f"{diagnose.TABLE_FILE.name} is up to date")
        return 0
    print(
        f"{diagnose.TABLE_FILE} is out of date: run python -m whole_transformer.course mistake-table --write",
        file=sys.stderr,
    )
    return 1


def cmd_handout(course: Course, args) -> int:
    from .publish.handout import handout

    handout(course, Path(args.dest) if args.dest else None)
    return 0


def cmd_hidden_tests(course: Course, args) -> int:
    from .answers import hidden_cells

    if args.write:
        print("rewrote:", ", ".join(hidden_cells.write(course.source, discard=args.discard)) or "nothing")
        return 0
    edited = hidden_cells.hand_edited(course.source)
    for nb, gid, home in edited:
        print(f"edited by hand: {gid} in {nb}; edit {home} instead")
    stale = hidden_cells.out_of_sync(course.source)
    print("out of date:", ", ".join(stale) if stale else "none")
    return 1 if stale or edited else 0


def cmd_check_data(course: Course, args) -> int:
    from .answers import check_data

    if args.write:
        print(f"wrote {check_data.write()}")
        return 0
    if not check_data.is_current():
        print(f"out of date: {check_data.DATA}; run python -m whole_transformer.course check-data --write")
        return 1
    print(f"up to date: {check_data.DATA}")
    return 0


def cmd_in_step(course: Course, args) -> int:
    from .publish.release import out_of_step

    problems = out_of_step(course)
    for line in problems:
        print(f"out of step: {line}")
    print(
        "in step: make release has nothing to bring in step"
        if not problems
        else f"{len(problems)} thing(s) out of step: run make release"
    )
    return 1 if problems else 0


def cmd_roster(course: Course, args) -> int:
    from .term.roster import import_roster, list_roster

    if args.file:
        import_roster(course, Path(args.file))
    else:
        list_roster(course)
    return 0


def cmd_collect_zip(course: Course, args) -> int:
    from .autograder.collect_zip import collect_zip

    collect_zip(course, Path(args.file), replace=args.replace)
    return 0


def cmd_term(course: Course, args) -> int:
    from .term.late import student_lateness
    from .term.names import say_problems
    from .term.settings import load

    s = load(course)
    where = s.path.name if s.path else "no course.toml"
    due = f"{s.due:%Y-%m-%d %H:%M} {s.timezone}" if s.due else "none"
    print(f"term ({where}): due {due}; {s.late.describe()}; {len(s.extensions)} extension(s)")
    for student in course.students():
        late = student_lateness(course, s, student)
        when = f"{late.handin.describe()}: " if late.handin and late.handin.used else ""
        print(f"  {student:<24} {when}{late.describe()}")
        if late.handin and late.handin.finding:  # term/handin_time.py: a claim its evidence contradicts
            print(f"  INTEGRITY {student}: {late.handin.finding}")
    say_problems(course, print, "term", s)
    return 0


def cmd_serve(course: Course, args) -> int:
    from .sandbox.bubblewrap import SandboxMissing
    from .service.serve import serve

    try:
        return serve(
            course,
            args.exchange,
            port=args.port,
            jobs=args.jobs,
            scheduler=args.scheduler,
            once=args.once,
            poll=args.poll,
            no_sandbox=args.no_sandbox,
        )
    except SandboxMissing as e:
        print(f"serve refused to run.\n{e}", file=sys.stderr)
        return 2


#: name: (function, one-line help, adds its arguments)
COMMANDS = {
    "release": (cmd_release, "build release/ from source/", None),
    "lecture": (cmd_lecture, "build notebooks/ and notebooks/html/ from source/", cli_args.lecture),
    "autograde": (cmd_autograde, "grade every submission", cli_args.autograde),
    "workers": (cmd_workers, "run a local Dask scheduler and N workers until Ctrl-C", cli_args.workers),
    "feedback": (cmd_feedback, "write feedback HTML (no hidden tests)", None),
    "grades": (cmd_grades, "write grades.csv and grades-detail.csv", None),
    "insights": (cmd_insights, "write insights.html and insights.csv (what the class got wrong)", None),
    "handout": (cmd_handout, "build handout/, the students' repository", cli_args.handout),
    "hidden-tests": (cmd_hidden_tests, "check (or --write) the hidden tests of source/", cli_args.hidden_tests),
    "check-data": (cmd_check_data, "check (or --write) the visible checks' data file", cli_args.write("rewrite it")),
    "in-step": (cmd_in_step, "is everything make release brings in step so? (exit 1 if not)", None),
    "roster": (
        cmd_roster,
        "import the class list from a CSV into the gradebook",
        cli_args.one(
            "file",
            metavar="FILE",
            nargs="?",
            help="CSV with id, first_name, last_name, email, lms_user_id (none: list the roster and who handed in)",
        ),
    ),
    "collect-zip": (
        cmd_collect_zip,
        "sort a Canvas or Moodle submissions zip into submitted/",
        cli_args.collect_zip,
    ),
    "serve": (
        cmd_serve,
        "grade each submission to nbgrader's exchange at once and release its feedback",
        cli_args.serve,
    ),
    "term": (cmd_term, "show the due date, late policy and each student's hand-in", None),
    "mistake-table": (
        cmd_mistake_table,
        "check (or --write) what each catalogued mistake returns on the hidden inputs",
        cli_args.write("work it out again"),
    ),
}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m whole_transformer.course",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--root", help="the course folder (default: the current folder)")
    sub = p.add_subparsers(dest="command", required=True)
    for name, (_, help_, add_args) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_)
        if add_args:
            add_args(sp)
    return p


def main(argv: list[str] | None = None) -> int:
    # nbgrader runs `alembic` from this environment when it creates a gradebook
    os.environ["PATH"] = python_first_on_path(os.environ.get("PATH", ""))
    args = parser().parse_args(argv)
    instructor_python(sys.argv[1:] if argv is None else argv, args.root)  # venv.py: .venv's Python if need be
    try:
        return COMMANDS[args.command][0](Course.here(args.root), args)
    except (ValueError, RuntimeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
