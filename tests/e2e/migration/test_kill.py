"""kill -9 of a real ``python -m migration`` at every protocol step: no job lost, none duplicated.

The controller runs with ``--step-delay-s`` (it pauses after storing each step, before that step's effect),
so the test can see a window at a given step and kill the process there; a seeded extra wait before some
kills lands them during or after the effect instead. After every kill the invariants are checked, then
the controller is restarted and resumes from the window Leases.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter

import pytest

from tests.helpers import wait_for

from .helpers import job_pod, live

pytestmark = pytest.mark.e2e

STEPS = ("reserved", "evicting", "source-gone", "placing", "running", "released")
KILLS_PER_STEP = 4
JOBS = 12


def _steps(mig) -> dict[str, str]:
    out = {}
    for lease in mig.windows():
        record = json.loads((lease.metadata.annotations or {})["drsched.io/migration"])
        out[record["job"].split("/", 1)[1]] = record["step"]
    return out


def _check_invariants(mig, jobs: list[str], where: str, dump) -> None:
    """At most one pod object per job (a terminating source counts), and every job has a pod or a window."""
    by_job = mig.jobs()
    windows = _steps(mig)
    for job in jobs:
        pods = by_job.get(job, [])
        assert len(pods) <= 1, f"{where}: job {job} has {len(pods)} pods {[p.metadata.name for p in pods]}\n{dump()}"
        assert any(live(p) for p in pods) or job in windows, f"{where}: job {job} is lost\n{dump()}"


class Watchdog:
    """Checks the invariants every 0.1 s for the whole test, between the kills too."""

    def __init__(self, mig, jobs: list[str]) -> None:
        self.mig, self.jobs = mig, jobs
        self.violations: list[str] = []
        self.checks = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                _check_invariants(self.mig, self.jobs, "watchdog", lambda: "")
                self.checks += 1
            except AssertionError as exc:
                self.violations.append(str(exc))
            except Exception:  # an API hiccup: check again
                pass
            self._stop.wait(0.1)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)


def test_kill9_at_every_step_loses_and_duplicates_nothing(mig, dump):
    src = mig.node("src", cpu="16")
    targets = {mig.node("big1", cpu="32"), mig.node("big2", cpu="32")}
    jobs = [f"job{i}" for i in range(JOBS)]
    for job in jobs:
        mig.core.create_namespaced_pod(mig.namespace, job_pod(job, node=src))
    mig.start_fake_jobs(resume_delay_s=1.0)
    ctl = mig.controller("--step-delay-s=0.5", "--max-per-node=50", "--max-concurrent=2", "--max-per-job=1")
    with Watchdog(mig, jobs) as watchdog:
        total, killed = _kill_loop(mig, ctl, jobs, dump)
    assert not watchdog.violations, "\n".join(watchdog.violations[:5]) + "\n" + dump()
    assert watchdog.checks > 100
    assert total >= 20 and all(killed[s] >= 1 for s in STEPS), f"kills per step: {dict(killed)}\n{dump()}"

    ctl.start()  # the last life: resume everything to the end
    wait_for(lambda: not _steps(mig) and all(len(mig.live_copies().get(j, [])) == 1 for j in jobs)
             and all(p.status.phase == "Running" for p in mig.pods()), timeout=90,
             what="every window released and every job running once", on_timeout=dump)
    _check_invariants(mig, jobs, "at the end", dump)
    copies = mig.live_copies()
    for job in jobs:
        (name,) = copies[job]
        pod = next(p for p in mig.pods() if p.metadata.name == name)
        if name != job:  # moved: the successor runs on a target, with its lineage
            assert name == f"{job}-m1" and pod.spec.node_name in targets, dump()
            assert pod.metadata.annotations["drsched.io/migrated-from"] == job
    moved = sum(1 for job in jobs if copies[job] != [job])
    print(f"\nkill -9 results: {total} kills {dict(killed)}, controller starts {ctl.starts}, "
          f"{moved}/{len(jobs)} jobs moved, {watchdog.checks} watchdog checks, none lost or duplicated")
    assert moved >= len(jobs) - 2, dump()


def _kill_loop(mig, ctl, jobs: list[str], dump) -> tuple[int, Counter[str]]:
    rng = random.Random(7)
    killed: Counter[str] = Counter()
    started = time.monotonic()
    while sum(killed.values()) < KILLS_PER_STEP * len(STEPS) and time.monotonic() - started < 240:
        ctl.start()
        want = {s for s in STEPS if killed[s] < KILLS_PER_STEP}
        try:
            step = wait_for(lambda want=want: next((s for s in _steps(mig).values() if s in want), None), timeout=20,
                            period=0.05, what=f"a window at one of {sorted(want)}")
        except TimeoutError:
            ctl.kill9()
            if not _steps(mig) and all(any(live(p) and p.metadata.name != j for p in mig.jobs().get(j, []))
                                       for j in jobs):
                break  # every job moved: nothing left to kill
            continue
        time.sleep(rng.choice((0.0, 0.0, 0.2, 0.45, 0.7)))
        ctl.kill9()
        killed[step] += 1
        _check_invariants(mig, jobs, f"after kill {sum(killed.values())} at {step}", dump)

    return sum(killed.values()), killed
