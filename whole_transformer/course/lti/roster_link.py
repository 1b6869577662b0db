"""A student's accepted launch put into the course's roster: matched, added, or refused, never mixed up.

``enrol(course, launch, username)`` finds who the launch is, in this order: the student an earlier
launch of the same LTI user id was (``lti-launches.json``), the roster's student with that LMS id,
then the roster's student with that email. A student found by email gets the LMS id if the roster
had none. A student found nowhere is added to the roster (``username``, the hub's name for them, as
their id: in the gradebook and on the class list ``term.names.keep_roster_ids`` keeps) and the message
says so. A launch whose LMS id and email point at two different students,
or whose email belongs to a student with another LMS id, or whose new id is taken by someone else, is
refused (``LaunchRefused``), naming them in the log only. Instructors are not students: nothing is
written for them.

``lti-launches.json`` (git-ignored) keeps, per LTI user id, the student and the last launch's line
item: the passback posts to the LMS by that id (``passback.py``).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from ..gradebook import prepare_database
from ..layout import Course
from ..term.names import keep_roster_ids, roster
from .launch import Launch, LaunchRefused

LAUNCHES = "lti-launches.json"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]*$")


def launches(course: Course) -> dict[str, dict]:
    """Every LTI user id launched so far: ``{"student", "lineitem", "at"}`` each."""
    path = Path(course.root) / LAUNCHES
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _remember(course: Course, launch: Launch, student: str) -> None:
    seen = launches(course)
    seen[launch.lms_user_id] = {"student": student, "lineitem": launch.lineitem, "at": time.time()}
    path = Path(course.root) / LAUNCHES
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(seen, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _match(course: Course, launch: Launch, people: dict[str, dict[str, str]]) -> str | None:
    """The roster's student this launch is, or None if nobody; ``LaunchRefused`` on a conflict."""
    by_launch = launches(course).get(launch.lms_user_id, {}).get("student")
    by_id = by_launch or next((s for s, p in people.items() if p["lms_user_id"] == launch.lms_user_id), None)
    email = launch.email.lower()
    by_email = next((s for s, p in people.items() if email and p["email"].lower() == email), None)
    if by_id and by_email and by_id != by_email:
        raise LaunchRefused(
            f"roster conflict: LMS user {launch.lms_user_id!r} is student {by_id!r}, but their email {launch.email!r} "
            f"belongs to student {by_email!r}; fix the roster (make roster FILE=...) before they launch again"
        )
    if by_id:
        return by_id
    if by_email:
        other = people[by_email]["lms_user_id"]
        if other and other != launch.lms_user_id:
            raise LaunchRefused(
                f"roster conflict: the email {launch.email!r} belongs to student {by_email!r}, whose LMS id is "
                f"{other!r}, not {launch.lms_user_id!r}; fix the roster's LMS id before they launch again"
            )
        return by_email
    return None


def enrol(course: Course, launch: Launch, username: str, log=print) -> str | None:
    """The student id of the launch's student (added to the roster if new); None for an instructor."""
    from nbgrader.api import Gradebook  # lazy: nbgrader takes seconds to import; the rest of lti/ needs none

    if launch.role != "student":
        return None
    people = roster(course)
    found = _match(course, launch, people)
    if found is None:
        if not _ID.match(username):
            raise LaunchRefused(
                f"the name {username!r} the hub gave LMS user {launch.lms_user_id!r} cannot be a "
                "student id (letters, digits and . _ @ + - only)"
            )
        if username in people:
            raise LaunchRefused(
                f"roster conflict: LMS user {launch.lms_user_id!r} ({launch.email or 'no email'}) would be student "
                f"{username!r}, but the roster's {username!r} is someone else (LMS id "
                f"{people[username]['lms_user_id'] or 'none'}, {people[username]['email'] or 'no email'})"
            )
        found = username
    prepare_database(course, lambda *a: None)
    with Gradebook(course.db_url) as gb:
        p = people.get(found)
        fields = {"lms_user_id": p["lms_user_id"] if p and p["lms_user_id"] else launch.lms_user_id}
        for key, value in (
            ("email", launch.email),
            ("first_name", launch.given_name),
            ("last_name", launch.family_name),
        ):
            if value and not (p and p[key]):
                fields[key] = value
        gb.update_or_create_student(found, **fields)
    if p is None:
        keep_roster_ids(course, [found])  # the roster is the class list kept beside the gradebook, not the gradebook
        log(
            f"lti: {found} added to the roster by their first launch (LMS user {launch.lms_user_id}, "
            f"{launch.email or 'no email'})"
        )
    elif fields.get("lms_user_id") != p["lms_user_id"]:
        log(f"lti: {found}'s LMS id {launch.lms_user_id} added to the roster from their launch")
    _remember(course, launch, found)
    return found
