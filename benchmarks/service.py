"""The ``service`` group: grading on submission (``python -m whole_transformer.course serve``).

Three measures, on a temp copy of the course built from source/, with a local nbgrader exchange:

- idle: one complete submission handed in with nbgrader's real ``submit`` while the service runs
  idle, to its feedback file present where ``nbgrader fetch_feedback`` looks for it;
- CPU per complete submission, side by side in rounds: today's way (``course autograde --jobs 1``
  on one student, process start and preparation included) and the running service grading one
  submission; the CPU of each one's process tree (service_rig.CpuMeter: a cgroup of its own);
- a burst: submissions from distinct students (complete and typical wrong ones) arriving within
  one minute, submit → feedback available, with 2 local workers and with 2 Dask workers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.checkout import class_generator
from benchmarks.figures import median
from benchmarks.machine import machine_busy
from benchmarks.rows import Bench, Group, Row
from benchmarks.service_rig import CpuMeter, Service, feedback_files, new_course, submit, today, wait_feedback
from whole_transformer.course.layout import ASSIGNMENT, COURSE_ID

IDLE_TARGET_S = 20.0
BURST, BURST_SECONDS = 30, 60.0
QUICK_BURST, QUICK_BURST_SECONDS = 2, 6.0


def bench_service(b: Bench) -> None:
    """--quick: one idle submission (one round against the baseline), a burst of 2 each way."""
    with tempfile.TemporaryDirectory(prefix="wt-bench-service-") as t:
        tmp = Path(t)
        course, exchange = new_course(tmp, "course")
        _, Notebooks, write_submission, roster = class_generator()
        nbs = Notebooks(course)
        solved = {n: nbs.solved(n) for n in nbs.names}
        idle_and_cpu(b, tmp, course, exchange, solved, write_submission)
        students = burst_students(nbs, roster, course, b.quick)
        for way in ("2 local workers", "2 Dask workers"):
            burst(b, tmp, way, students)


def idle_and_cpu(b, tmp: Path, course: Path, exchange: Path, solved: dict, write_submission) -> None:
    """Rounds of: today's way (autograde --jobs 1, one student) then one submission to the running service."""
    one = tmp / "one"
    shutil.copytree(course, one, symlinks=True)
    write_submission(one, "full", solved)
    homes = tmp / "homes"
    rounds = b.runs(3, 1)
    latency, cpu_now, cpu_service, machine, warm = [], [], [], [], None
    meters = CpuMeter("today"), CpuMeter("service")
    svc = Service(course, exchange, meter=meters[1])
    try:
        if not b.quick:  # the service's first grading (its imports): measured, not counted
            t0 = time.monotonic()
            warm = wait_feedback(feedback_files(exchange, submit(homes, "warm-up", solved, exchange)), svc.proc) - t0
        for r in range(rounds):
            m0 = machine_busy()
            cpu_now.append(today(one, meters[0], force=r > 0))
            m1 = machine_busy()
            t0 = time.monotonic()
            attempt = submit(homes, f"idle-{r}", solved, exchange)
            c0, m2 = meters[1].seconds(), machine_busy()
            done = wait_feedback(feedback_files(exchange, attempt), svc.proc)
            cpu_service.append(meters[1].seconds() - c0)
            machine.append((m1 - m0, machine_busy() - m2))
            latency.append(done - t0)
    finally:
        svc.close()
        for m in meters:
            m.close()
    add_idle_rows(b, latency, cpu_now, cpu_service, warm, machine, meters[0].how)


def add_idle_rows(b: Bench, latency, cpu_now, cpu_service, warm, machine, how) -> None:
    lat = median(latency)
    b.add(
        Row(
            group="service",
            item="idle: one complete submission, nbgrader submit → feedback available",
            value=lat,
            unit="s",
            runs=len(latency),
            target=f"≤ {IDLE_TARGET_S:.0f} s",
            ok=lat <= IDLE_TARGET_S,
            note="the service running idle (`serve`, default poll 2 s, 1 at a time); from the start of "
            "`nbgrader submit` to every notebook's feedback file where `nbgrader fetch_feedback` looks; each run "
            + ", ".join(f"{x:.1f} s" for x in latency)
            + (f"; the service's first grading after its start (not counted) {warm:.1f} s" if warm else ""),
        )
    )
    now, svc = median(cpu_now), median(cpu_service)
    ratio = svc / now
    b.facts["service_cpu_ratio"] = ratio
    b.add(
        Row(
            group="service",
            item="CPU per complete submission, today's way: autograde --jobs 1 on one student (baseline)",
            value=now,
            unit="s",
            runs=len(cpu_now),
            baseline="1.00× (the baseline)",
            note="`python -m whole_transformer.course autograde --jobs 1` in a temp course, process start and the "
            f"assignment's preparation included; {how}; each run "
            + ", ".join(f"{x:.1f} s" for x in cpu_now)
            + "; the machine's CPU meanwhile (/proc/stat, others' work included) "
            + ", ".join(f"{x:.1f} s" for x, _ in machine),
        )
    )
    b.add(
        Row(
            group="service",
            item="CPU per complete submission, graded by the running service",
            value=svc,
            unit="s",
            runs=len(cpu_service),
            target="≤ 0.5× today's way",
            ok=ratio <= 0.5,
            baseline=f"{ratio:.2f}× today's way",
            note=f"the service's CPU from the end of `nbgrader submit` to the feedback available, the service warm "
            f"({how}); "
            "rounds taking turns with the baseline; each run "
            + ", ".join(f"{x:.1f} s" for x in cpu_service)
            + "; the machine's CPU meanwhile "
            + ", ".join(f"{y:.1f} s" for _, y in machine),
        )
    )


def burst_students(nbs, roster, course: Path, quick: bool) -> list[tuple[str, dict]]:
    """Distinct students, complete and typical wrong submissions (tests/simclass/students.py), cycled."""
    typical = [
        s
        for s in roster(nbs, course)
        if s.name.startswith(("full", "partial", "impl-")) and s.folder == ASSIGNMENT and not s.raw
    ]
    n = QUICK_BURST if quick else BURST
    return [(f"b{i:02d}-{typical[i % len(typical)].name}", typical[i % len(typical)].notebooks) for i in range(n)]


def burst(b: Bench, tmp: Path, way: str, students: list[tuple[str, dict]]) -> None:
    """The students' attempts (made by nbgrader submit beforehand, untimed) arrive in the exchange's inbound
    within the window, evenly spread; submit → feedback available for each."""
    window = QUICK_BURST_SECONDS if b.quick else BURST_SECONDS
    name = "dask" if "Dask" in way else "local"
    course, exchange = new_course(tmp, f"burst-{name}")
    staging = tmp / f"staging-{name}"
    (staging / COURSE_ID / "inbound").mkdir(parents=True, mode=0o777)
    shutil.copytree(exchange / COURSE_ID / "outbound", staging / COURSE_ID / "outbound")  # submit checks it
    with ThreadPoolExecutor(2) as pool:
        made = list(pool.map(lambda s: submit(tmp / f"homes-{name}", s[0], s[1], staging), students))
    inbound = exchange / COURSE_ID / "inbound"
    cluster = None
    try:
        if name == "dask":
            from whole_transformer.course.autograder.cluster import local_cluster  # lazy: dask

            cluster = local_cluster(2)
            svc = Service(course, exchange, "--scheduler", cluster.scheduler_address)
        else:
            svc = Service(course, exchange, "--jobs", "2")
        try:
            c0 = machine_busy()
            lat = arrive_and_wait(made, inbound, exchange, window, svc)
            cpu = (machine_busy() - c0) / len(made)
        finally:
            svc.close()
    finally:
        if cluster is not None:
            cluster.close()
    add_burst_rows(b, way, lat, window, cpu)


def arrive_and_wait(made: list[Path], inbound: Path, exchange: Path, window: float, svc: Service) -> list[float]:
    """Each attempt moved into the inbound folder at its time; watched for its feedback meanwhile and after."""
    step, t0 = window / len(made), time.monotonic()
    arrived, files, done = {}, {}, {}
    deadline = t0 + window + 1800
    while len(done) < len(made) and time.monotonic() < deadline:
        while len(arrived) < len(made) and time.monotonic() >= t0 + len(arrived) * step:
            dest = inbound / made[len(arrived)].name
            os.rename(made[len(arrived)], dest)  # atomic: the attempt appears whole, as nbgrader's submit leaves it
            arrived[dest] = time.monotonic()
            files[dest] = feedback_files(exchange, dest)
        for dest, fs in files.items():
            if dest not in done and all(f.exists() for f in fs):
                done[dest] = time.monotonic()
        if svc.proc.poll() is not None:
            raise RuntimeError(f"the service exited: {svc.tail()}")
        time.sleep(0.1)
    if len(done) < len(made):
        raise RuntimeError(f"{len(made) - len(done)} of {len(made)} attempts had no feedback after 30 min")
    return [done[d] - arrived[d] for d in arrived]


def add_burst_rows(b: Bench, way: str, lat: list[float], window: float, cpu: float) -> None:
    s = sorted(lat)

    def pct(q: float) -> float:
        return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]

    what = f"burst of {len(s)} in {window:.0f} s, {way}"
    for label, value in (("p50", pct(0.5)), ("p95", pct(0.95)), ("max", s[-1])):
        b.add(
            Row(
                group="service",
                item=f"{what}: submit → feedback available, {label}",
                value=value,
                unit="s",
                runs=len(s),
                note=f"{len(s)} distinct students (complete, partial, each correct and wrong implementation; "
                "tests/simclass/students.py), handed in with nbgrader submit beforehand and arriving in the "
                f"exchange evenly over {window:.0f} s; from arrival to every notebook's feedback file; "
                f"machine CPU {cpu:.1f} s per submission over the burst",
            )
        )


GROUP = Group(
    "service",
    "grading on submission: idle latency; CPU per submission vs autograde; a burst (local, Dask)",
    bench_service,
)
