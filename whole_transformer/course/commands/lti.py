"""The commands of the course inside an LMS (LTI 1.3, ``lti/``): the tool's key pair, the configuration an
LMS admin pastes, and the scores posted to the LMS's gradebook (a preview first with ``--dry-run``).

Each reads course.toml's ``[lti]`` (``lti/settings.py``) and stops with the key and the fix if a value is
missing or wrong. ``make autograde`` and ``make grades`` call ``lti/after_grading.after_grades`` last: with
``[lti] post_after_grading`` set, the scores are sent to the LMS.
"""

from __future__ import annotations

from ..layout import Course
from ..lti.keys import load_key, make_key
from ..lti.settings import read_key_file, read_lti, read_tool_url
from ..lti.tool_config import describe
from ..term.settings import load
from .declare import arg, command


@command(
    "lti-key",
    "make the tool's own key pair for the LMS (private key kept out of git, public key set written)",
    arg("--replace", action="store_true", help="replace the key the LMS already has (make lti-key REPLACE=1)"),
    make="REPLACE=1 makes a new one (then paste its public key into the LMS again)",
)
def cmd_lti_key(course: Course, args) -> int:
    private, jwks = make_key(course.root, read_key_file(load(course)), replace=args.replace)
    print(f"lti-key: wrote {private.name} (the private key: never commit or share it) and {jwks.name} (public)")
    print(jwks.read_text(encoding="utf-8").rstrip())
    print("lti-key: make lti-config prints what the LMS admin pastes")
    return 0


@command("lti-config", "print the tool configuration an LMS admin pastes (Canvas developer key, Moodle tool)", make="")
def cmd_lti_config(course: Course, args) -> int:
    settings = load(course)
    notebooks = sorted(p.name for p in course.source.glob("*.ipynb")) or ["01-whole-machine.ipynb"]  # release/'s too
    print(describe(read_tool_url(settings), load_key(course.root, read_key_file(settings)), notebooks))
    return 0


def _preview(course: Course, again: bool) -> None:
    from ..lti.passback import NOTHING, plan  # lazy: nbgrader (the scores are in the gradebook)

    rows = plan(course, again)
    print(f"lti-post: {sum(p.action == 'post' for p in rows)} of {len(rows)} student(s) would be sent a score")
    for p in rows:
        score = "" if p.action == NOTHING else f"{p.score:g}/{p.maximum:g}"
        print(f"  {p.student:<16} {p.user_id or '-':<24} {score:>10}  {p.action}{f': {p.why}' if p.why else ''}")


@command(
    "lti-post",
    "send each student's score (late penalty included) to the LMS's gradebook; retry what did not arrive",
    arg("--dry-run", action="store_true", help="only show who would get which score (make lti-post DRY_RUN=1)"),
    arg("--again", action="store_true", help="send every score, also those the LMS has (make lti-post AGAIN=1)"),
    make="DRY_RUN=1 shows who gets which score and sends nothing; AGAIN=1 sends the whole class again",
)
def cmd_lti_post(course: Course, args) -> int:
    from ..lti.passback import post  # lazy: nbgrader (the scores are in the gradebook)

    lti = read_lti(load(course))
    if args.dry_run:
        _preview(course, args.again)
        return 0
    done = post(course, lti, again=args.again)
    return 1 if done["kept"] else 0


def term_lines(course: Course, log=print) -> None:
    """``make term``'s lines on the LMS: each score that has not reached it, and why."""
    from ..lti.passback import outbox_lines  # lazy: keeps jwt and cryptography out of make term's other lines

    for line in outbox_lines(course):
        log(f"term: LMS: {line}")


@command("lti-hub", "print the jupyterhub_config.py lines that sign students in from the LMS (LTI 1.3)", make="")
def cmd_lti_hub(course: Course, args) -> int:
    from ..lti.hub import hub_config  # lazy: jupyterhub and its LTI authenticator (a second to import)

    print(hub_config(read_lti(load(course)), course.root))
    return 0
