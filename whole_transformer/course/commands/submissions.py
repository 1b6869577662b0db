"""The commands of the term: take in what the class hands in (roster, LMS zips), grade it (at once, on
Dask workers, or as it arrives), and report on it (feedback, grades, insights, each student's hand-in).

A command whose subsystem loads nbgrader, nbformat or dask imports it when it runs, so that ``--help``
and the other commands start without them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..autograder.cluster import serve as serve_workers
from ..autograder.collect_zip import collect_zip
from ..layout import Course
from ..lti.after_grading import after_grades
from ..term.handin_time import CLAIM, UNCHECKED, rezoned
from ..term.late import student_lateness
from ..term.roster import import_roster, list_roster
from ..term.settings import load
from .declare import arg, command, grading
from .lti import term_lines as lti_term_lines


@command(
    "roster",
    "import the class list (id, names, email, LMS id); with no file, list who has handed in",
    arg(
        "file",
        metavar="FILE",
        nargs="?",
        help="CSV with id, first_name, last_name, email, lms_user_id (none: list the roster and who handed in)",
    ),
    make="FILE=students.csv",
)
def cmd_roster(course: Course, args) -> int:
    if args.file:
        import_roster(course, Path(args.file))
    else:
        list_roster(course)
    return 0


@command(
    "collect-zip",
    "merge a Canvas or Moodle submissions zip into submitted/",
    arg("file", metavar="FILE", help="the zip downloaded from Canvas or Moodle"),
    arg(
        "--replace",
        action="store_true",
        help="replace each student's whole hand-in by what the zip holds (the old one is set aside in "
        "downloaded/; make collect-zip REPLACE=1); without it, files are merged, a newer one replacing an older one",
    ),
    arg(
        "--worksheet",
        metavar="CSV",
        help="Moodle's grading worksheet of the assignment (its Identifier column gives each participant id); "
        "default: the one beside the zip, else the participant ids kept from before (make WORKSHEET=...)",
    ),
    arg(
        "--times",
        metavar="CSV",
        help="hand-in times you supply (columns student, submitted) for a download that gives none (make TIMES=...)",
    ),
    make="FILE=subs.zip; a newer file replaces an older one, the rest is kept (REPLACE=1: whole hand-ins); "
    "WORKSHEET=moodle.csv the Moodle grading worksheet; TIMES=times.csv hand-in times for a download without",
)
def cmd_collect_zip(course: Course, args) -> int:
    worksheet = Path(args.worksheet) if args.worksheet else None
    collect_zip(course, Path(args.file), replace=args.replace, worksheet=worksheet, times=args.times)
    return 0


@command("term", "the due date, late policy and each student's hand-in (course.toml)", make="")
def cmd_term(course: Course, args) -> int:
    from ..term.names import say_problems  # lazy: nbformat (1.4 s to import)

    s = load(course)
    where = s.path.name if s.path else "no course.toml"
    due = f"{s.due:%Y-%m-%d %H:%M} {s.timezone}" if s.due else "none"
    print(f"term ({where}): due {due}; {s.late.describe()}; {len(s.extensions)} extension(s)")
    flag_only, unchecked = [], []
    for student in course.students():
        late = student_lateness(course, s, student)
        when = f"{late.handin.describe()}: " if late.handin and late.handin.used else ""
        print(f"  {student:<24} {when}{late.describe()}")
        if late.handin and late.handin.finding:  # term/handin_time.py: a claim its evidence contradicts
            print(f"  INTEGRITY {student}: {late.handin.finding}")
        if late.handin and late.handin.flag_only:
            flag_only.append(student)
        if late.handin and (late.handin.source == CLAIM or late.handin.unchecked):
            unchecked.append(student)
    if flag_only:
        print(
            f"term: the LMS's late flag only, no hand-in time (its download gave none): {', '.join(flag_only)}; "
            f"a late flag costs the first step of the late policy; to judge by times, make collect-zip TIMES=..."
        )
    if unchecked:
        print(f"term: {UNCHECKED} (copied into submitted/ by hand, its timestamp.txt alone): {', '.join(unchecked)}")
    moved = rezoned(course, s.timezone)
    if moved:
        print(
            f"term: zip times read again in {s.timezone} (course.toml's timezone now), not in the zone they were "
            f"collected under: {', '.join(moved)}"
        )
    say_problems(course, print, "term", s)
    lti_term_lines(course)  # lti/passback.py: each score that has not reached the LMS, and why
    return 0


@command(
    "autograde",
    "grade every hand-in in submitted/, each student's kernel in the sandbox",
    *grading("students"),
    arg("--force", action="store_true", help="grade again students already graded (make FORCE=1)"),
    arg("--student", action="append", help="grade only this student (repeatable; make STUDENT=id)"),
    make="JOBS=N at once, or SCHEDULER=tcp://HOST:8786 on a Dask cluster; FORCE=1 grades everyone again; "
    "STUDENT=id (or STUDENT='a b') only them; NO_SANDBOX=1 without the sandbox; "
    "DB_URL=postgresql://... a PostgreSQL gradebook",
)
def cmd_autograde(course: Course, args) -> int:
    # lazy: nbgrader, dask; jupyter_client (sandbox/bubblewrap.py)
    from ..autograder.autograde import autograde
    from ..sandbox.bubblewrap import SandboxMissing

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
    after_grades(course)  # course.toml [lti] post_after_grading: the scores sent to the LMS (lti/)
    return 0


@command(
    "workers",
    "a local Dask scheduler and N worker processes (Ctrl-C stops them)",
    arg("--workers", type=int, default=2, help="worker processes (default 2), one task slot each"),
    arg("--port", type=int, default=8786, help="scheduler port (default 8786)"),
    arg("--dashboard", default=":8787", help="dashboard address (default :8787)"),
    arg(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; 0.0.0.0 to let other machines' workers in)",
    ),
    make="WORKERS=N (default 2)",
)
def cmd_workers(course: Course, args) -> int:
    serve_workers(args.workers, port=args.port, host=args.host, dashboard=args.dashboard)
    return 0


@command(
    "serve",
    "grade each submission to nbgrader's exchange at once and release its feedback",
    arg(
        "--exchange",
        metavar="DIR",
        help="nbgrader's exchange folder (default: c.Exchange.root of nbgrader_config.py, else "
        "/srv/nbgrader/exchange; make EXCHANGE=DIR)",
    ),
    arg("--port", type=int, help="serve the status page on 127.0.0.1:PORT (0: any free port; make SERVE_PORT=N)"),
    arg("--once", action="store_true", help="grade what is waiting, then stop (else: until Ctrl-C)"),
    arg("--poll", type=float, default=2.0, help="seconds between looks at the exchange (default 2)"),
    *grading("submissions"),
    make="(course.toml [service]) EXCHANGE=DIR, SERVE_PORT=N its status page, JOBS, SCHEDULER and NO_SANDBOX "
    "as for autograde; Ctrl-C stops it",
)
def cmd_serve(course: Course, args) -> int:
    # lazy: nbgrader, dask; jupyter_client (sandbox/bubblewrap.py)
    from ..sandbox.bubblewrap import SandboxMissing
    from ..service.serve import serve

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


@command("feedback", "write feedback HTML for every graded student, and one page each in feedback-pages/", make="")
def cmd_feedback(course: Course, args) -> int:
    from ..reports.feedback import feedback  # lazy: nbgrader, nbformat

    feedback(course)
    return 0


@command("grades", "write grades.csv, grades-detail.csv, canvas-grades.csv and moodle-grades.csv", make="")
def cmd_grades(course: Course, args) -> int:
    from ..reports.grades import grades  # lazy: nbgrader, nbformat

    grades(course)
    after_grades(course)  # course.toml [lti] post_after_grading: the scores sent to the LMS (lti/)
    return 0


@command("insights", "write insights.html and insights.csv: what the class got wrong", make="")
def cmd_insights(course: Course, args) -> int:
    from ..reports.insights import insights  # lazy: nbgrader, nbformat

    insights(course)
    return 0
