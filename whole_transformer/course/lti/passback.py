"""Scores back to the LMS's gradebook through LTI Assignment and Grade Services (``make lti-post``).

Each student's score is the total ``make grades`` writes into canvas-grades.csv and moodle-grades.csv
(``reports/totals.py``: the tests' score less the late penalty course.toml sets), out of the maximum.
``plan`` says, before anything is sent, who gets which score, and who does not and why:

- ``post``: the score differs from the last one the LMS accepted for them (or none was), so it is sent;
- ``unchanged``: the LMS already has exactly this score (``again`` sends it anyway);
- ``no LMS id``: the student was never launched from the LMS and the roster has no LMS id for them;
- ``nothing handed in``: no score to send (an empty hand-in is not a zero the course gives).

``post`` gets one access token per run (the client-credentials grant, its JWT assertion signed RS256
with the tool's key, as the IMS security framework asks) and POSTs each score to the line item's
``/scores`` endpoint (``application/vnd.ims.lis.v1.score+json``). The LMS's user id is the one the
student's launch carried, else the roster's LMS id. What the LMS accepted is kept per student
(``lti-passback.json``, git-ignored); a score that did not reach it (the LMS did not answer, the token
was refused, the LMS does not know the student) stays in the same file's outbox with the reason, and
the next post sends the student's score as it is then. So the LMS is never sent two different scores
for one grading, a student is sent again only when their score changed, and a lower regrade is sent
as the lower score it is.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode, urlsplit, urlunsplit
from urllib.request import Request, urlopen

import jwt

from ..layout import Course
from ..term.toml_values import SettingsError, where
from .keys import load_key, private_pem, public_jwk
from .roster_link import launches
from .settings import LtiSettings
from .tool_config import SCORE_SCOPE

STATE = "lti-passback.json"
LOCK = "lti-passback.lock"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
POST, UNCHANGED, NO_ID, NOTHING = "post", "unchanged", "no LMS id", "nothing handed in"


@dataclass(frozen=True)
class Planned:
    """One student's score and what the next post does with it."""

    student: str
    user_id: str  # the LMS's id for them ("" if none)
    score: float  # with the late penalty
    maximum: float
    action: str  # POST, UNCHANGED, NO_ID or NOTHING
    why: str = ""  # why it is sent (first post, changed from ..., retried after ...)


class PostFailed(Exception):
    """A score (or the token) the LMS did not take; the message is the reason kept in the outbox."""


def read_state(course: Course) -> dict:
    path = Path(course.root) / STATE
    state = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return {"posted": state.get("posted", {}), "outbox": state.get("outbox", {})}


def _write_state(course: Course, state: dict) -> None:
    path = Path(course.root) / STATE
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def lineitem(course: Course, lti: LtiSettings) -> str:
    """The line item the scores go to: [lti] lineitem, else the one the latest launch named."""
    if lti.lineitem:
        return lti.lineitem
    named = sorted((v["at"], v["lineitem"]) for v in launches(course).values() if v.get("lineitem"))
    if not named:
        raise SettingsError(
            f"{where(lti.path, '[lti] lineitem')}: not set, and no launch has named the assignment's line item yet; "
            "set it to the line item's URL (the AGS claim of a launch has it, as lineitem; Canvas: "
            "https://<canvas>/api/lti/courses/<course>/line_items/<n>)"
        )
    return named[-1][1]


def _score_key(score: float, maximum: float) -> tuple[float, float]:
    return round(score, 6), round(maximum, 6)


def plan(course: Course, again: bool = False) -> list[Planned]:
    """Every student's score and what the next post does with it (nothing is sent)."""
    from ..reports.totals import totals  # lazy: nbgrader (seconds to import); make term reads only the outbox

    state = read_state(course)
    by_student = {v["student"]: uid for uid, v in sorted(launches(course).items(), key=lambda kv: kv[1]["at"])}
    out = []
    for t in totals(course):
        user_id = by_student.get(t.student) or t.lms_user_id
        score, maximum = _score_key(t.final, t.max_score)
        if t.lateness is None:
            out.append(Planned(t.student, user_id, score, maximum, NOTHING))
            continue
        if not user_id:
            out.append(Planned(t.student, "", score, maximum, NO_ID, "never launched, and no LMS id in the roster"))
            continue
        last = state["posted"].get(t.student)
        kept = state["outbox"].get(t.student)
        same = last and last["user_id"] == user_id and _score_key(last["score"], last["max"]) == (score, maximum)
        if same and not again:
            out.append(Planned(t.student, user_id, score, maximum, UNCHANGED))
            continue
        why = (
            f"retried: {kept['reason']}"
            if kept
            else "first post"
            if not last
            else "sent again"
            if same
            else (f"changed from {last['score']:g}/{last['max']:g}")
        )
        out.append(Planned(t.student, user_id, score, maximum, POST, why))
    return out


def _request(url: str, data: bytes, headers: dict[str, str]) -> bytes:
    try:
        with urlopen(Request(url, data=data, headers=headers, method="POST"), timeout=15) as r:
            return r.read()
    except HTTPError as e:
        body = e.read()[:300].decode("utf-8", "replace")
        raise PostFailed(f"HTTP {e.code} from {url}: {body.strip() or e.reason}") from None
    except (URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise PostFailed(f"the LMS did not answer at {url} ({reason})") from None


def access_token(lti: LtiSettings, key) -> str:
    """An AGS access token from the LMS's token URL, for the score scope (client credentials, JWT assertion)."""
    now = int(time.time())
    claims = {
        "iss": lti.client_id,
        "sub": lti.client_id,
        "aud": lti.token_url,
        "iat": now,
        "exp": now + 300,
        "jti": str(uuid.uuid4()),
    }
    assertion = jwt.encode(claims, private_pem(key), algorithm="RS256", headers={"kid": public_jwk(key)["kid"]})
    form = {
        "grant_type": "client_credentials",
        "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        "client_assertion": assertion,
        "scope": SCORE_SCOPE,
    }
    try:
        body = _request(lti.token_url, urlencode(form).encode(), {"Content-Type": "application/x-www-form-urlencoded"})
    except PostFailed as e:
        raise PostFailed(f"token refused: {e}" if str(e).startswith("HTTP") else str(e)) from None
    try:
        return str(json.loads(body)["access_token"])
    except (ValueError, KeyError):
        raise PostFailed(f"token refused: {lti.token_url} answered without an access_token: {body[:200]!r}") from None


def scores_url(item: str) -> str:
    """The scores endpoint of a line item: its path with ``/scores`` added, its query kept."""
    parts = urlsplit(item)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))


def send_score(token: str, item: str, p: Planned) -> None:
    body = {
        "userId": p.user_id,
        "scoreGiven": p.score,
        "scoreMaximum": p.maximum,
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
    }
    headers = {"Content-Type": SCORE_TYPE, "Authorization": f"Bearer {token}"}
    _request(scores_url(item), json.dumps(body).encode(), headers)


def post(
    course: Course, lti: LtiSettings, again: bool = False, log=print, students: set[str] | None = None
) -> dict[str, list[str]]:
    """Send every score that should reach the LMS (``plan``); {"posted": [...], "kept": [...]} by student. With
    ``students``, only theirs and those kept in the outbox (the grading service, after one attempt). One post at
    a time per course (a lock file): make grades, make lti-post and the service at once never send a score twice."""
    with open(Path(course.root) / LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _post(course, lti, again, log, students)


def _post(course: Course, lti: LtiSettings, again: bool, log, students: set[str] | None) -> dict[str, list[str]]:
    state = read_state(course)
    wanted = None if students is None else set(students) | set(state["outbox"])
    todo = [p for p in plan(course, again) if p.action == POST and (wanted is None or p.student in wanted)]
    done: dict[str, list[str]] = {"posted": [], "kept": []}
    if not todo:
        log("lti-post: nothing to send: the LMS has every score as it is")
        return done
    key, item = load_key(course.root, lti.key_file), lineitem(course, lti)
    try:
        token: str | None = access_token(lti, key)
        failed = ""
    except PostFailed as e:
        token, failed = None, str(e)
    for p in todo:
        try:
            if token is None:
                raise PostFailed(failed)
            send_score(token, item, p)
        except PostFailed as e:
            since = state["outbox"].get(p.student, {}).get("since", time.time())
            state["outbox"][p.student] = {
                "user_id": p.user_id,
                "score": p.score,
                "max": p.maximum,
                "reason": str(e),
                "since": since,
            }
            done["kept"].append(p.student)
            log(f"lti-post: {p.student}: {p.score:g}/{p.maximum:g} NOT sent, kept in the outbox: {e}")
        else:
            state["posted"][p.student] = {"user_id": p.user_id, "score": p.score, "max": p.maximum, "at": time.time()}
            state["outbox"].pop(p.student, None)
            done["posted"].append(p.student)
            log(f"lti-post: {p.student}: {p.score:g}/{p.maximum:g} sent to the LMS (user {p.user_id}; {p.why})")
        _write_state(course, state)  # after each student: a stop halfway loses nothing sent
    log(f"lti-post: {len(done['posted'])} score(s) sent, {len(done['kept'])} kept in the outbox for the next post")
    return done


def outbox_lines(course: Course) -> list[str]:
    """One line per score that has not reached the LMS, with why (``make term`` prints them)."""
    lines = []
    for student, kept in sorted(read_state(course)["outbox"].items()):
        since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(kept["since"]))
        lines.append(
            f"{student}: {kept['score']:g}/{kept['max']:g} has not reached the LMS (since {since}): {kept['reason']}; "
            "make lti-post sends it again"
        )
    return lines
