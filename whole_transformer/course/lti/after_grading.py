"""The scores sent to the LMS as grading ends, when course.toml's ``[lti] post_after_grading`` is true.

Two moments: ``after_grades``, the last step of ``make autograde`` and ``make grades`` (the whole class), and
``after_attempt``, the grading service's step once an attempt that counts is merged into the gradebook (that
student, and whoever waits in the outbox). Both post through ``passback.py``: a score is sent only when it
differs from what the LMS has, and one that does not arrive waits in the outbox, with its reason (``make term``
lists it), for the next post. What is graded stands whatever the LMS does: a wrong ``[lti]`` or a missing key
is said, never raised. A course without ``[lti]``, or not posting, loads nothing of the passback (no jwt, no
nbgrader): the students' environment of a hub may have neither.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from ..layout import Course
from ..term.settings import Settings, load
from ..term.toml_values import SettingsError
from .settings import read_lti


def posting(course: Course) -> Settings | None:
    """course.toml as read, if its ``[lti] post_after_grading`` is true; None if the course does not post."""
    settings = load(course)
    table = settings.raw.get("lti")
    return settings if isinstance(table, dict) and table.get("post_after_grading") is True else None


def _send(course: Course, settings: Settings, students: set[str] | None, log: Callable[[str], None], err) -> None:
    """One post (``passback.post``); a value the post cannot use (``[lti]``, the tool's key) is said to ``err``."""
    from .passback import post  # lazy: jwt and nbgrader, only for a course that posts

    try:
        post(course, read_lti(settings), log=log, students=students)
    except ValueError as e:  # SettingsError, KeyError_: the grading stands, the scores wait for make lti-post
        err(f"lti-post: the scores were not sent to the LMS: {e}")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


def after_grades(course: Course, log: Callable[[str], None] = print) -> None:
    """``make autograde``'s and ``make grades``' last step: every score the LMS does not have yet, sent."""
    try:
        settings = posting(course)
    except SettingsError as e:
        _stderr(f"lti-post: the scores were not sent to the LMS: {e}")
        return
    if settings is not None:
        _send(course, settings, None, log, _stderr)


def after_attempt(course: Course, student: str, log: Callable[[str], None]) -> threading.Thread | None:
    """The grading service's step once ``student``'s attempt is merged: their score (and any the outbox keeps)
    sent in a thread of its own, so that the student's feedback never waits for the LMS; the thread, or None when
    the course does not post."""
    try:
        settings = posting(course)
    except SettingsError as e:  # the service reads course.toml again each pass, and says so there too
        log(f"lti-post: {student}'s score was not sent to the LMS: {e}")
        return None
    if settings is None:
        return None

    def send() -> None:
        try:
            _send(course, settings, {student}, log, log)
        except Exception as e:  # noqa: BLE001 - a thread's failure would be lost: it is said in the service's log
            log(f"lti-post: {student}'s score was not sent ({type(e).__name__}: {e}); make lti-post sends it")

    thread = threading.Thread(target=send, name=f"lti-post-{student}", daemon=True)
    thread.start()
    return thread
