"""The service's warm nbgrader (whole_transformer/course/autograder/warm_nbgrader.py): two students graded one after
the other by one running service, both nbgrader runs forked from the same warm process and both students'
kernels from the one kernel zygote, and the second student's code sees nothing of the first's, nor of the
course (each kernel in its own student's sandbox, as before)."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta

import nbformat
import pytest
from simclass.minicourse import NAME, require_sandbox
from simclass.notebooks import set_answer
from test_service import course_with_exchange, hand_in

from whole_transformer.course.autograder import warm_nbgrader as warm
from whole_transformer.course.layout import ASSIGNMENT
from whole_transformer.course.sandbox import zygote
from whole_transformer.course.service.serve import serve

PROBE = """def double(x):
    return 2 * x


import os
seen = {{}}
for p in {paths!r}:
    try:
        seen[p] = os.listdir(p) if os.path.isdir(p) else open(p).read()[:40]
    except Exception as e:
        seen[p] = type(e).__name__
open("mine-{me}.txt", "w").write("{me}'s work")
open("/tmp/{me}.txt", "w").write("{me}'s tmp")
print("PROBE", {{"seen": seen, "cwd": sorted(os.listdir(".")), "tmp": sorted(os.listdir("/tmp")), "pid": os.getpid(),
       "ppid": os.getppid()}})
"""


def _probe(course, me: str, paths: list[str]):
    nb = nbformat.read(course.release / f"{NAME}.ipynb", as_version=4)
    return set_answer(set_answer(nb, "answer_q", "answer_q = 8"), "double", PROBE.format(paths=paths, me=me))


def _probed(course, student: str) -> dict:
    nb = nbformat.read(course.root / "autograde" / student / ASSIGNMENT / f"{NAME}.ipynb", as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if "PROBE" in o.get("text", ""))
    assert text, f"{student}'s probe printed nothing"
    return ast.literal_eval(text.split("PROBE", 1)[1].strip())


@pytest.mark.slow
def test_two_students_one_after_the_other_on_the_warm_service_see_nothing_of_each_other(
    tmp_path, monkeypatch, released_mini
):
    require_sandbox()
    course, exchange = course_with_exchange(tmp_path, "[service]\nenabled = true\n", released=released_mini)
    forked = []
    real = warm.WarmProcess.__init__

    def counted(self, process):
        forked.append(process.pid)
        real(self, process)

    monkeypatch.setattr(warm.WarmProcess, "__init__", counted)
    zygotes = []  # how many kernel zygotes ran, counted as the service stops them (it leaves none behind)
    close_all = zygote.close_all

    def counted_close():
        zygotes.append(len(zygote._running))
        close_all()

    monkeypatch.setattr(zygote, "close_all", counted_close)
    secret = course.root / "source" / ASSIGNMENT / f"{NAME}.ipynb"
    work = course.state / "service" / "work"
    ada_paths = [str(secret), str(course.root / "gradebook.db"), str(work), str(exchange)]
    bob_paths = ada_paths + ["/submission/mine-ada.txt", "mine-ada.txt", "/tmp/ada.txt"]
    now = datetime.now(UTC)
    hand_in(
        exchange,
        "ada",
        {f"{NAME}.ipynb": nbformat.writes(_probe(course, "ada", ada_paths))},
        now - timedelta(minutes=2),
    )
    hand_in(
        exchange,
        "bob",
        {f"{NAME}.ipynb": nbformat.writes(_probe(course, "bob", bob_paths))},
        now - timedelta(minutes=1),
    )
    lines = []
    assert serve(course, str(exchange), once=True, echo=lines.append) == 0
    assert len(forked) == 2 and "\n".join(lines).count("GRADED") == 2, lines  # both on the one warm process
    # and both kernels forked by the one kernel zygote into each student's sandbox (their parent, the
    # zygote's joiner, is outside the sandbox's PID namespace: 0), not by a fork server of their own
    assert zygotes[:1] == [1] and not zygote._running  # one zygote while it graded, none once stopped
    assert [_probed(course, s)["ppid"] for s in ("ada", "bob")] == [0, 0]
    ada, bob = _probed(course, "ada"), _probed(course, "bob")
    assert "mine-ada.txt" in ada["cwd"] and "ada.txt" in ada["tmp"]  # ada's files were there, in ada's sandbox
    for p in ada_paths:
        assert ada["seen"][p] == "FileNotFoundError", (p, ada["seen"][p])
    for p in bob_paths:  # neither the course nor anything ada left
        assert bob["seen"][p] == "FileNotFoundError", (p, bob["seen"][p])
    assert not any("ada" in f for f in bob["cwd"] + bob["tmp"]), bob
    assert "mine-bob.txt" in bob["cwd"] and "bob.txt" in bob["tmp"]


@pytest.mark.slow
def test_on_dask_workers_each_students_kernel_comes_from_the_workers_zygote_into_their_own_sandbox(
    tmp_path, released_mini
):
    require_sandbox()
    from whole_transformer.course.autograder.cluster import local_cluster

    course, exchange = course_with_exchange(tmp_path, "[service]\nenabled = true\n", released=released_mini)
    secret = course.root / "source" / ASSIGNMENT / f"{NAME}.ipynb"
    paths = [str(secret), str(course.root / "gradebook.db"), str(exchange), "/tmp/ada.txt", "/tmp/bob.txt"]
    now = datetime.now(UTC)
    for i, me in enumerate(("ada", "bob")):
        notebook = nbformat.writes(_probe(course, me, paths))
        hand_in(exchange, me, {f"{NAME}.ipynb": notebook}, now - timedelta(minutes=2 - i))
    lines = []
    with local_cluster(2) as cluster:
        assert serve(course, str(exchange), scheduler=cluster.scheduler_address, once=True, echo=lines.append) == 0
    assert "\n".join(lines).count("GRADED") == 2, lines
    for me in ("ada", "bob"):
        seen = _probed(course, me)
        assert seen["ppid"] == 0, seen  # forked by the worker's zygote, from outside the sandbox's PID namespace
        assert f"mine-{me}.txt" in seen["cwd"] and not any("ada" in f and me == "bob" for f in seen["cwd"])
        others = {p: v for p, v in seen["seen"].items() if p != f"/tmp/{me}.txt"}
        assert set(others.values()) == {"FileNotFoundError"}, seen["seen"]
