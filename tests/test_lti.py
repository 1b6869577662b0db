"""The course inside an LMS (issue 44), against a real LTI 1.3 platform on 127.0.0.1 (tests/lti_platform.py,
built with ``lti1p3platform``), started and stopped by these tests on a free port.

The instructor's set-up (course.toml's [lti], make lti-key, make lti-config, each wrong value named); the
tool's side of a launch (a signed launch accepted and put into the roster; a bad signature, another audience,
a replayed nonce, an unknown deployment and a missing role refused, each with its message); and the
passback (each student's score, late penalty included, reaches the platform's line item as canvas-grades.csv
has it; the platform stopped during a post keeps the score in the outbox, listed by make term, sent once the
platform is back; nothing sent twice; a lower regrade sent as lower; a token refused is kept too).
"""

from __future__ import annotations

import csv
import json
import shutil
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import jwt
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from lti_platform import CLIENT_ID, INSTRUCTOR, LEARNER, Platform, rsa_pem
from simclass.built import copy_course
from simclass.minicourse import NAME, make_course, mini_notebook, require_sandbox

from whole_transformer.course.__main__ import main
from whole_transformer.course.answers import check_data
from whole_transformer.course.layout import ASSIGNMENT, Course
from whole_transformer.course.lti.launch import STUDENT_TEXT, LaunchRefused, NonceStore, validate
from whole_transformer.course.lti.roster_link import enrol
from whole_transformer.course.lti.settings import read_lti
from whole_transformer.course.publish.release import release
from whole_transformer.course.term.names import roster
from whole_transformer.course.term.roster import import_roster
from whole_transformer.course.term.settings import load

REPO = Path(__file__).resolve().parents[1]
NBS = ["01-whole-machine", "02-microscope", "03-one-word-at-a-time", "04-how-it-learned"]
ROSTER = """id,first_name,last_name,email,lms_user_id
ada,Ada,Lovelace,ada@example.org,
bo,Bo,Diddley,bo@example.org,lms-bo
cy,Cy,Twombly,cy@example.org,lms-cy
dan,Dan,Flavin,dan@example.org,lms-dan-typo
"""
pytestmark = pytest.mark.slow  # each test builds and releases a course first (seconds): not in make quick
TERM = '[assignment]\ndue = "2026-10-16 23:59"\n[late]\npolicy = "per_day"\npenalty = 10\n'


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    root = make_course(tmp_path_factory.mktemp("lti") / "course", {n: mini_notebook() for n in NBS})
    course = Course(root)
    qdata = root.parent / "questions.json"  # this course's answer keys (not the package's)
    shutil.copy(check_data.QUESTIONS_DATA, qdata)
    release(course, log=lambda *a: None, questions_data=qdata)
    roster_csv = root.parent / "students.csv"
    roster_csv.write_text(ROSTER)
    import_roster(course, roster_csv, log=lambda *a: None)
    return root


@pytest.fixture
def platform():
    p = Platform()
    yield p
    p.stop()


@pytest.fixture
def course(released, tmp_path, platform):
    """The course, registered in the platform: course.toml's [lti] copied from it, the tool's key made with make
    lti-key and its public key pasted into the platform."""
    root = tmp_path / "course"
    shutil.copytree(released, root)
    (root / "course.toml").write_text(TERM + platform.lti_table())
    assert main(["--root", str(root), "lti-key"]) == 0
    platform.registration.set_tool_key_set(json.loads((root / "lti-tool-jwks.json").read_text()))
    return Course(root)


def _lti(course):
    return read_lti(load(course))


# ------------------------------------------------------------------------------ the instructor's set-up
def test_make_lti_key_keeps_the_private_key_private_and_lti_config_prints_what_the_lms_takes(course, capsys):
    key = course.root / "lti-tool-key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    jwks = json.loads((course.root / "lti-tool-jwks.json").read_text())
    assert [k["alg"] for k in jwks["keys"]] == ["RS256"] and "d" not in jwks["keys"][0]  # public half only
    for name in ("lti-tool-key.pem", "lti-passback.json", "lti-launches.json", "lti-nonces.json"):
        ignored = subprocess.run(["git", "check-ignore", "-q", name], cwd=REPO)
        assert ignored.returncode == 0, f"{name} is not git-ignored"
    capsys.readouterr()
    assert main(["--root", str(course.root), "lti-key"]) == 1  # the LMS has this key: not replaced by accident
    assert "run make lti-key REPLACE=1" in capsys.readouterr().err
    assert main(["--root", str(course.root), "lti-config"]) == 0
    out = capsys.readouterr().out
    canvas = json.loads(out[out.index("{") : out.index("\n}\n") + 2])
    # Canvas's developer key JSON: its required keys (title, description, oidc_initiation_url, target_link_uri,
    # an extension's privacy_level, public_jwk or public_jwk_url), as its "Anatomy of a JSON configuration" lists them
    assert {"title", "description", "oidc_initiation_url", "target_link_uri", "public_jwk"} <= set(canvas)
    assert canvas["public_jwk"] == jwks["keys"][0]
    assert canvas["oidc_initiation_url"] == "http://127.0.0.1:9/hub/lti13/oauth_login"
    notebook = "http://127.0.0.1:9/hub/user-redirect/lab/tree/whole-transformer/01-whole-machine.ipynb"
    assert canvas["target_link_uri"] == notebook  # where the launch ends: the student's notebook, not the callback
    (extension,) = canvas["extensions"]
    assert extension["platform"] == "canvas.instructure.com" and extension["privacy_level"] == "public"
    assert extension["settings"]["placements"] == [
        {
            "placement": "assignment_selection",
            "message_type": "LtiResourceLinkRequest",
            "target_link_uri": notebook,
            "text": "The whole Transformer",
        }
    ]
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in canvas["scopes"]
    assert "Redirect URIs: http://127.0.0.1:9/hub/lti13/oauth_callback" in out
    # Moodle's "configure a tool manually" fields, by the names its form gives them
    assert f"Tool URL:                 {notebook}" in out
    assert "Initiate login URL:       http://127.0.0.1:9/hub/lti13/oauth_login" in out
    assert "Redirection URI(s):       http://127.0.0.1:9/hub/lti13/oauth_callback" in out
    assert "Public key type:          RSA key" in out and "LTI version:              LTI 1.3" in out
    assert notebook.replace("01-whole-machine", "02-microscope") in out  # a link may open another notebook
    assert "-----BEGIN PUBLIC KEY-----" in out and "PRIVATE" not in out


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda t: t.replace('client_id = "wt-tool-10001"\n', ""), "course.toml, [lti] client_id: missing; set it to"),
        (
            lambda t: t.replace('jwks_url = "http://127.0.0.1', 'jwks_url = "http://lms.example.edu'),
            "[lti] jwks_url: 'http://lms.example.edu",
        ),
        (lambda t: t + 'secret = "x"\n', "[lti]: unknown key(s) secret; the keys are issuer, client_id"),
        (lambda t: t + 'key_file = "tool.key"\n', "[lti] key_file: expected a file name ending in .pem"),
        (lambda t: t + 'post_after_grading = "yes"\n', "[lti] post_after_grading: expected true or false, got 'yes'"),
        (
            lambda t: t.replace('deployment_id = "deployment-1"', "deployment_id = []"),
            "[lti] deployment_id: an empty list; give at least one deployment id",
        ),
        (lambda t: t.replace('token_url = "', 'token_url = "127.0.0.1/'), "[lti] token_url: '127.0.0.1/"),
        (lambda t: t.split("[lti]")[0], "has no [lti] table: add one with issuer, client_id, deployment_id"),
    ],
)
def test_a_wrong_or_missing_lti_value_stops_with_its_key_and_the_fix(course, capsys, change, said):
    path = course.root / "course.toml"
    path.write_text(change(path.read_text()))
    capsys.readouterr()
    assert main(["--root", str(course.root), "lti-post", "--dry-run"]) == 1
    assert said in capsys.readouterr().err


# ------------------------------------------------------------------------------ the launch
def _users(platform):
    platform.users.update(
        {
            "lms-ada": {"id": "lms-ada", "roles": [LEARNER], "email": "ada@example.org", "name": "Ada Lovelace"},
            "lms-bo": {"id": "lms-bo", "roles": [LEARNER], "email": "bo@example.org"},
            "lms-cy": {"id": "lms-cy", "roles": [LEARNER], "email": "cy@example.org"},
            "lms-eve": {"id": "lms-eve", "roles": [LEARNER], "email": "eve@example.org", "name": "Eve New"},
            "lms-prof": {"id": "lms-prof", "roles": [INSTRUCTOR], "email": "prof@example.org"},
            "lms-mix": {"id": "lms-mix", "roles": [LEARNER], "email": "bo@example.org"},
            "lms-norole": {"id": "lms-norole", "roles": [], "email": "x@example.org"},
        }
    )


def test_a_signed_launch_is_accepted_and_each_student_lands_on_their_own_roster_row(course, platform, capsys):
    _users(platform)
    lti, nonces = _lti(course), NonceStore(course.root)
    said: list[str] = []
    who = {}
    for user, name in (("lms-ada", "ada.l"), ("lms-bo", "bo"), ("lms-eve", "eve"), ("lms-prof", "prof")):
        launch = validate(lti, platform.launch(user)["id_token"], nonces)
        assert launch.lineitem == platform.lineitem
        who[user] = (launch.role, enrol(course, launch, name, log=said.append))
    # ada by her email (the roster had no LMS id: now it has), bo by his LMS id, eve added and said so
    assert who == {
        "lms-ada": ("student", "ada"),
        "lms-bo": ("student", "bo"),
        "lms-eve": ("student", "eve"),
        "lms-prof": ("instructor", None),
    }
    people = roster(course)
    assert people["ada"]["lms_user_id"] == "lms-ada" and people["eve"]["email"] == "eve@example.org"
    assert "prof" not in people
    assert said == [
        "lti: ada's LMS id lms-ada added to the roster from their launch",
        "lti: eve added to the roster by their first launch (LMS user lms-eve, eve@example.org)",
    ]
    # bo's email under another LMS user: refused and named, never bo's row
    with pytest.raises(LaunchRefused) as e:
        enrol(course, validate(lti, platform.launch("lms-mix")["id_token"], nonces), "mix")
    print("REFUSED roster conflict:", e.value.log)
    assert (
        "roster conflict: the email 'bo@example.org' belongs to student 'bo', whose LMS id is 'lms-bo'" in e.value.log
    )
    assert roster(course)["bo"]["lms_user_id"] == "lms-bo" and "mix" not in roster(course)


def _resign(platform, token: str, key_pem: str | None = None, **changes) -> str:
    """The launch's claims changed and signed again: by the platform's key (a token the LMS made otherwise), or by
    another key under the platform's key id (a forgery)."""
    claims = {**jwt.decode(token, options={"verify_signature": False}), **changes}
    kid = jwt.get_unverified_header(token)["kid"]
    return jwt.encode(claims, key_pem or platform.private_pem, algorithm="RS256", headers={"kid": kid})


def test_forged_and_wrong_launches_are_refused_each_with_its_reason(course, platform):
    _users(platform)
    lti, nonces = _lti(course), NonceStore(course.root)
    claim = "https://purl.imsglobal.org/spec/lti/claim/"
    forger, _ = rsa_pem()
    cases = {
        "bad signature": _resign(platform, platform.launch("lms-ada")["id_token"], forger),
        "another audience": _resign(platform, platform.launch("lms-ada")["id_token"], aud="another-tool-77"),
        "unknown deployment": _resign(
            platform, platform.launch("lms-ada")["id_token"], **{claim + "deployment_id": "deployment-9"}
        ),
        "expired": _resign(platform, platform.launch("lms-ada")["id_token"], exp=int(time.time()) - 600),
        "missing role": platform.launch("lms-norole")["id_token"],
    }
    messages = {}
    for why, token in cases.items():
        with pytest.raises(LaunchRefused) as e:
            validate(lti, token, nonces)
        assert e.value.student == STUDENT_TEXT and "lms-" not in e.value.student
        messages[why] = e.value.log
    token = platform.launch("lms-ada")["id_token"]
    assert validate(lti, token, nonces).lms_user_id == "lms-ada"
    with pytest.raises(LaunchRefused) as e:
        validate(lti, token, nonces)  # the same launch sent again
    messages["replayed nonce"] = e.value.log
    for why, log in messages.items():
        print(f"REFUSED {why}: {log}")
    assert messages["bad signature"].startswith("bad signature: the id_token does not verify with the platform's key")
    assert messages["another audience"] == (
        f"another audience: the id_token is for 'another-tool-77', not for this tool's client id '{CLIENT_ID}' "
        "(course.toml [lti] client_id)"
    )
    assert messages["unknown deployment"].startswith(
        "unknown deployment: 'deployment-9' is not among course.toml's [lti] deployment_id (deployment-1)"
    )
    assert messages["expired"].startswith("the id_token has expired")
    assert messages["missing role"].startswith("no role: the launch of user 'lms-norole' names no role")
    assert messages["replayed nonce"].startswith("replayed nonce: ")
    print("STUDENT PAGE:", STUDENT_TEXT)


# ------------------------------------------------------------------------------ the passback
def _hand_in(course: Course, student: str, when: datetime) -> None:
    folder = course.submitted / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    for name in NBS:
        shutil.copy(course.release / f"{name}.ipynb", folder / f"{name}.ipynb")
    (folder / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))


def _grade(course: Course, student: str, scores: dict[str, float]) -> None:
    """The student's graded cells as autograde leaves them in the gradebook: ``scores`` by grade_id, per notebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.db_url) as gb:
        try:
            sub = gb.find_submission(ASSIGNMENT, student)
        except MissingEntry:
            sub = gb.add_submission(ASSIGNMENT, student)
        for nb in sub.notebooks:
            for g in nb.grades:
                g.auto_score = scores.get(g.name, 0.0)
        gb.db.commit()


def _canvas_totals(course: Course) -> dict[str, float]:
    with open(course.root / "canvas-grades.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["Student"] != "Points Possible"]
    return {r["ID"]: float(r["The whole Transformer (total)"]) for r in rows if r["ID"]}


def _grades_csv(course: Course) -> dict[str, float]:
    with open(course.root / "grades.csv", newline="") as f:
        return {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(f)}


def _last(platform) -> dict[str, tuple[float, float]]:
    return {u: (h[-1]["scoreGiven"], h[-1]["scoreMaximum"]) for u, h in platform.scores.items()}


def _post(course: Course, capsys, *more: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--root", str(course.root), "lti-post", *more])
    return code, capsys.readouterr().out


def _term(course: Course, capsys) -> list[str]:
    capsys.readouterr()
    assert main(["--root", str(course.root), "term"]) == 0
    return [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("term: LMS: ")]


def test_each_score_reaches_the_lms_once_as_canvas_grades_has_it_and_what_did_not_is_kept(course, platform, capsys):
    _users(platform)
    lti = _lti(course)
    enrol(course, validate(lti, platform.launch("lms-ada")["id_token"], NonceStore(course.root)), "ada")
    on_time, late = datetime(2026, 10, 16, 20, 0, tzinfo=UTC), datetime(2026, 10, 18, 9, 0, tzinfo=UTC)
    for student, when, right in (("ada", on_time, 3), ("bo", late, 2), ("cy", on_time, 2), ("dan", on_time, 1)):
        _hand_in(course, student, when)
        _grade(course, student, dict.fromkeys(["test_answer_q", "test_double_small", "test_double_neg"][:right], 1.0))
    # before the first post: who gets which score, and nothing sent
    code, out = _post(course, capsys, "--dry-run")
    with capsys.disabled():
        print("\n" + out)
    assert code == 0 and platform.scores == {} and platform.tokens_issued == 0
    assert "4 of 4 student(s) would be sent a score" in out
    assert "  bo               lms-bo                       6.4/12  post: first post" in out
    # make grades, with [lti] post_after_grading, sends the class
    (course.root / "course.toml").write_text((course.root / "course.toml").read_text() + "post_after_grading = true\n")
    assert main(["--root", str(course.root), "grades"]) == 0
    canvas, raw = _canvas_totals(course), _grades_csv(course)
    with capsys.disabled():  # the table the closing note shows: the platform's scores beside the grade files
        print(f"\n{'student':<8} {'LMS user':<14} {'platform':>9} {'canvas total':>13} {'grades.csv raw':>15}")
        for sid, uid in (("ada", "lms-ada"), ("bo", "lms-bo"), ("cy", "lms-cy"), ("dan", "lms-dan-typo")):
            got = "{:g}/{:g}".format(*_last(platform)[uid]) if uid in platform.scores else "(kept)"
            print(f"{sid:<8} {uid:<14} {got:>9} {canvas.get(uid, 0):>13g} {raw[sid]:>15g}")
    assert _last(platform) == {"lms-ada": (12.0, 12.0), "lms-bo": (6.4, 12.0), "lms-cy": (8.0, 12.0)}
    assert {u: s for u, (s, _) in _last(platform).items()} == {u: canvas[u] for u in ("lms-ada", "lms-bo", "lms-cy")}
    assert raw["bo"] == 8.0 and raw["ada"] == 12.0  # bo's late penalty (20 %) is in what the LMS got
    assert platform.scores["lms-ada"][0]["activityProgress"] == "Completed"
    assert platform.scores["lms-ada"][0]["gradingProgress"] == "FullyGraded"
    # dan's LMS id is one the LMS does not know: kept, and make term says why
    (dan,) = _term(course, capsys)
    assert dan.startswith("term: LMS: dan: 4/12 has not reached the LMS (since ") and "HTTP 403" in dan
    # the LMS down during a regrade: cy's lower score kept, listed, then sent once it is back
    platform.stop()
    _grade(course, "cy", {"test_answer_q": 1.0})
    code, out = _post(course, capsys)
    assert code == 1 and "cy: 4/12 NOT sent, kept in the outbox: the LMS did not answer at" in out
    assert [ln.split(" has not")[0] for ln in _term(course, capsys)] == ["term: LMS: cy: 4/12", "term: LMS: dan: 4/12"]
    platform.start()
    code, out = _post(course, capsys)
    assert "cy: 4/12 sent to the LMS (user lms-cy; retried: the LMS did not answer at" in out
    assert [s["scoreGiven"] for s in platform.scores["lms-cy"]] == [8.0, 4.0]  # the lower regrade, as it is
    assert {u: len(h) for u, h in platform.scores.items()} == {"lms-ada": 1, "lms-bo": 1, "lms-cy": 2}
    assert [ln.split(":")[2] for ln in _term(course, capsys)] == [" dan"]
    # nothing changed: nothing sent again (dan, whom the LMS does not know, is tried again)
    code, out = _post(course, capsys)
    assert {u: len(h) for u, h in platform.scores.items()} == {"lms-ada": 1, "lms-bo": 1, "lms-cy": 2}
    # a new tool key the LMS was not given: the token is refused, the score kept until the key is pasted
    assert main(["--root", str(course.root), "lti-key", "--replace"]) == 0
    _grade(course, "bo", dict.fromkeys(["test_answer_q", "test_double_small", "test_double_neg"], 1.0))
    code, out = _post(course, capsys)
    assert code == 1 and "bo: 9.6/12 NOT sent, kept in the outbox: token refused: HTTP 401" in out
    platform.registration.set_tool_key_set(json.loads((course.root / "lti-tool-jwks.json").read_text()))
    code, out = _post(course, capsys)
    assert [s["scoreGiven"] for s in platform.scores["lms-bo"]] == [6.4, 9.6]
    with capsys.disabled():
        print(
            "every score the platform accepted, in order:",
            {u: [s["scoreGiven"] for s in h] for u, h in platform.scores.items()},
        )


# ------------------------------------------------------------------------------ the hub's sign-in (no hub started)
def test_the_hubs_lti_authenticator_signs_students_in_and_refuses_what_the_course_does_not_accept(course, platform):
    import asyncio
    import concurrent.futures

    from ltiauthenticator.lti13.validator import LTI13LaunchValidator
    from tornado import web

    from whole_transformer.course.lti.hub import CourseLTI13Authenticator, hub_config

    _users(platform)
    lti = _lti(course)
    auth = CourseLTI13Authenticator(
        course_root=str(course.root), issuer=lti.issuer, client_id={CLIENT_ID}, jwks_endpoint=lti.jwks_url
    )
    checks = LTI13LaunchValidator()  # what the authenticator's callback handler checks before authenticate

    def signed_in(token: str) -> dict:
        claims = checks.verify_and_decode_jwt(token, lti.issuer, auth.client_id, lti.jwks_url, ["RS256"])
        checks.validate_id_token(claims)

        # a fresh loop of its own, in a thread: an earlier test of the same worker (the hub's, tornado's,
        # playwright's) may have left a loop running or set in this one, where asyncio.run refuses to start
        def run() -> dict:
            loop = asyncio.new_event_loop()
            try:
                return loop.run_until_complete(auth.authenticate(None, claims))
            finally:
                loop.close()

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(run).result()

    ada = signed_in(platform.launch("lms-ada")["id_token"])
    assert ada == {
        "name": "ada",
        "admin": False,
        "auth_state": {"lms_user_id": "lms-ada", "role": "student", "lineitem": platform.lineitem},
    }
    assert roster(course)["ada"]["lms_user_id"] == "lms-ada"
    prof = signed_in(platform.launch("lms-prof")["id_token"])
    assert prof["admin"] is True and prof["name"] == "prof@example.org" and "prof@example.org" not in roster(course)
    forger, _ = rsa_pem()
    with pytest.raises(Exception, match="Signature verification failed"):  # the package's own check
        signed_in(_resign(platform, platform.launch("lms-ada")["id_token"], forger))
    claim = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
    for token, why in (
        (_resign(platform, platform.launch("lms-ada")["id_token"], **{claim: "deployment-9"}), "unknown deployment: "),
        (platform.launch("lms-norole")["id_token"], "no role: "),
    ):
        with pytest.raises(web.HTTPError) as e:  # the course's checks, after the package's
            signed_in(token)
        assert e.value.status_code == 403 and e.value.jupyterhub_message == STUDENT_TEXT  # type: ignore[attr-defined]
        assert (e.value.log_message % e.value.args).startswith("LTI 1.3 launch refused: " + why)
    config = hub_config(lti, course.root)
    assert f'c.CourseLTI13Authenticator.client_id = ["{CLIENT_ID}"]'.replace('"', "'") in config
    assert 'c.JupyterHub.authenticator_class = "whole_transformer.course.lti.hub.CourseLTI13Authenticator"' in config
    assert "c.Spawner.pre_spawn_hook = fetch_assignment" in config and "enable_auth_state" not in config
    # a hub of Linux accounts: new students' names start with the prefix; instructors share the course's account
    auth.name_prefix, auth.instructor_name = "wtc-", "wtc-instructor"
    eve = signed_in(platform.launch("lms-eve")["id_token"])
    assert eve["name"] == "wtc-eve" and roster(course)["wtc-eve"]["email"] == "eve@example.org"
    assert signed_in(platform.launch("lms-prof")["id_token"])["name"] == "wtc-instructor"
    with pytest.raises(web.HTTPError) as e:  # ada is on the roster as "ada": not a name this hub gives
        signed_in(platform.launch("lms-ada")["id_token"])
    assert (e.value.log_message % e.value.args).startswith(
        "LTI 1.3 launch refused: the roster's student 'ada' (LMS user 'lms-ada') cannot sign in on this hub: its names "
        "start with 'wtc-'"
    )
    linux = hub_config(lti, course.root, linux_accounts=Path("/srv/room/home"), name_prefix="wtc-")
    assert "c.LocalAuthenticator.create_system_users = True" in linux and "/srv/room/home/USERNAME" in linux
    assert "whole_transformer.course.lti.hub.LinuxAccountsLTI13Authenticator" in linux


def test_the_package_refusals_are_said_as_the_course_says_its_own(course, platform):
    """What jupyterhub-ltiauthenticator's callback handler refuses (a state or nonce not this browser's, a bad
    signature) reaches the hub's log with the course's reason (``explain``); the page says only to launch again."""
    from ltiauthenticator.lti13.error import TokenError
    from tornado import web

    from whole_transformer.course.lti.hub import CourseLTI13Authenticator

    _users(platform)
    lti = _lti(course)
    auth = CourseLTI13Authenticator(course_root=str(course.root), issuer=lti.issuer, client_id={CLIENT_ID})
    forger, _ = rsa_pem()
    forged = _resign(platform, platform.launch("lms-ada")["id_token"], forger)
    said = {
        "bad signature": auth.explain(TokenError("Signature verification failed"), forged),
        "state": auth.explain(web.HTTPError(400, "OAuth state missing from cookies"), forged),
        "nonce": auth.explain(web.HTTPError(400, "OAuth nonce mismatch"), ""),
    }
    for why, line in said.items():
        print(f"REFUSED {why}: {line}")
    assert said["bad signature"].startswith("bad signature: the id_token does not verify with the platform's key")
    assert said["state"].startswith("the launch does not answer a login this browser started (OAuth state missing")
    assert said["nonce"].startswith("the id_token's nonce is not the one this browser's login asked for")


def test_lti_key_needs_no_lms_value_and_lti_config_only_where_the_hub_is(course, capsys):
    path = course.root / "course.toml"
    path.write_text(TERM)  # before the LMS has given anything
    (course.root / "lti-tool-key.pem").unlink()
    assert main(["--root", str(course.root), "lti-key"]) == 0
    capsys.readouterr()
    assert main(["--root", str(course.root), "lti-config"]) == 1
    assert "has no [lti] table: add one with tool_url" in capsys.readouterr().err
    path.write_text(TERM + '[lti]\ntool_url = "https://hub.example.edu/"\n')
    assert main(["--root", str(course.root), "lti-config"]) == 0
    said = capsys.readouterr().out
    assert "Tool URL:                 https://hub.example.edu/hub/user-redirect/lab/tree/whole-transformer/01-" in said


def test_the_line_item_is_asked_for_until_known_and_again_sends_the_same_score_once_more(course, platform, capsys):
    _users(platform)
    _hand_in(course, "bo", datetime(2026, 10, 16, 20, 0, tzinfo=UTC))
    _grade(course, "bo", {"test_answer_q": 1.0})
    capsys.readouterr()
    assert main(["--root", str(course.root), "lti-post"]) == 1  # no launch yet, and [lti] names no line item
    assert "course.toml, [lti] lineitem: not set, and no launch has named the assignment's line item yet" in (
        capsys.readouterr().err
    )
    assert platform.scores == {}
    path = course.root / "course.toml"
    path.write_text(path.read_text() + f'lineitem = "{platform.lineitem}"\n')
    code, out = _post(course, capsys)
    assert code == 0 and "bo: 4/12 sent to the LMS (user lms-bo; first post)" in out
    code, out = _post(course, capsys, "--again")
    assert "bo: 4/12 sent to the LMS (user lms-bo; sent again)" in out
    assert [s["scoreGiven"] for s in platform.scores["lms-bo"]] == [4.0, 4.0]


def test_the_grading_services_step_sends_that_students_score_and_what_waits_in_the_outbox(course, platform, capsys):
    """``after_attempt``, what the grading service runs once an attempt that counts is merged (service/attempt.py):
    nothing for a course that does not post; then that student's score in a thread of its own, kept in the outbox
    while the LMS is down, and sent with the next student's once it is back."""
    from whole_transformer.course.lti.after_grading import after_attempt

    _users(platform)
    path = course.root / "course.toml"
    path.write_text(path.read_text() + f'lineitem = "{platform.lineitem}"\n')
    on_time = datetime(2026, 10, 16, 20, 0, tzinfo=UTC)
    for student, right in (("bo", 1), ("cy", 2)):
        _hand_in(course, student, on_time)
        _grade(course, student, dict.fromkeys(["test_answer_q", "test_double_small"][:right], 1.0))
    said: list[str] = []
    assert after_attempt(course, "bo", said.append) is None and platform.tokens_issued == 0  # not posting
    path.write_text(path.read_text() + "post_after_grading = true\n")
    platform.stop()
    after_attempt(course, "bo", said.append).join(timeout=60)
    assert platform.scores == {} and any(s.startswith("lti-post: bo: 4/12 NOT sent, kept in the outbox") for s in said)
    assert [ln.split(" has not")[0] for ln in _term(course, capsys)] == ["term: LMS: bo: 4/12"]
    platform.start()
    said.clear()
    after_attempt(course, "cy", said.append).join(timeout=60)
    assert _last(platform) == {"lms-bo": (4.0, 12.0), "lms-cy": (8.0, 12.0)}, said
    assert "lti-post: bo: 4/12 sent to the LMS (user lms-bo; retried: the LMS did not answer at" in "\n".join(said)
    assert _term(course, capsys) == []


# ------------------------------------------------------------------------------ after a real grading
def test_make_autograde_sends_each_graded_score_and_make_grades_then_has_nothing_new(
    tmp_path, platform, capsys, released_mini
):
    """Two students graded for real (nbgrader, the sandbox), bo late: make autograde sends both scores as it ends."""
    import nbformat

    require_sandbox()
    course = copy_course(released_mini, tmp_path / "course")
    root = course.root
    (tmp_path / "students.csv").write_text(ROSTER)
    import_roster(course, tmp_path / "students.csv", log=lambda *a: None)
    (root / "course.toml").write_text(
        TERM + platform.lti_table() + f'lineitem = "{platform.lineitem}"\npost_after_grading = true\n'
    )
    assert main(["--root", str(root), "lti-key"]) == 0
    platform.registration.set_tool_key_set(json.loads((root / "lti-tool-jwks.json").read_text()))
    _users(platform)
    released_nb = nbformat.read(root / "release" / ASSIGNMENT / f"{NAME}.ipynb", as_version=4)
    answers = {"answer_q": "answer_q = 8", "double": "def double(x):\n    return 2 * x"}
    for student, when, answer_q in (
        ("bo", datetime(2026, 10, 18, 9, 0, tzinfo=UTC), "answer_q = 7"),
        ("cy", datetime(2026, 10, 16, 20, 0, tzinfo=UTC), "answer_q = 8"),
    ):
        nb = nbformat.from_dict(json.loads(nbformat.writes(released_nb)))
        for c in nb.cells:
            grade_id = c.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in answers:
                c.source = answer_q if grade_id == "answer_q" else answers[grade_id]
        folder = course.submitted / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{NAME}.ipynb")
        (folder / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    assert main(["--root", str(root), "autograde"]) == 0
    out = capsys.readouterr().out
    assert "lti-post: 2 score(s) sent, 0 kept in the outbox" in out, out[-3000:]
    assert _last(platform) == {"lms-bo": (1.6, 3.0), "lms-cy": (3.0, 3.0)}  # bo: 2 of 3, less 20 % for 2 days late
    assert main(["--root", str(root), "grades"]) == 0
    assert "lti-post: nothing to send: the LMS has every score as it is" in capsys.readouterr().out
    assert {u: s for u, (s, _) in _last(platform).items()} == {
        u: _canvas_totals(course)[u] for u in ("lms-bo", "lms-cy")
    }
    assert {u: len(h) for u, h in platform.scores.items()} == {"lms-bo": 1, "lms-cy": 1}
