"""kill -9 of a real ``python -m migration`` at every protocol step: no job lost, none duplicated.

Each life of the controller gets ``--test-pause-at=<point>``, a fault point it honours only when the flag is
set: it stops for good once a record at that step is stored (before the step's effect) or, for a point ending
in ``:after-effect``, once the effect is done, and logs ``paused for a test``. The test waits for that line,
checks that the window shows the intended step, and kills the process there, so every kill lands where it is
meant to however loaded the machine is. The points follow the protocol, so each life resumes the window the
previous one left (one migration in flight at a time). After every kill the invariants are checked; a
watchdog checks them between the kills too.
"""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from tests.helpers import wait_for

from .helpers import job_pod, live

pytestmark = pytest.mark.e2e

POINTS = ("reserved", "evicting", "evicting:after-effect", "source-gone", "placing", "placing:after-effect",
          "running", "released", "released:after-effect")
"""One migration, killed at each point in protocol order (the window is gone after the last)."""
ROUNDS = 3
JOBS = 6


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
    ctl = mig.controller("--max-per-node=50", "--max-concurrent=1", "--max-per-job=1")
    with Watchdog(mig, jobs) as watchdog:
        killed = Counter()
        for _ in range(ROUNDS):
            for point in POINTS:
                _kill_at(mig, ctl, point, dump)
                killed[point.partition(":")[0]] += 1
                _check_invariants(mig, jobs, f"after kill {sum(killed.values())} at {point}", dump)
    assert not watchdog.violations, "\n".join(watchdog.violations[:5]) + "\n" + dump()
    assert watchdog.checks > sum(killed.values()), "the watchdog kept checking"

    def all_moved() -> bool:
        copies = mig.live_copies()
        return (not _steps(mig) and all(copies.get(j) == [f"{j}-m1"] for j in jobs)
                and all(p.status.phase == "Running" for p in mig.pods()))

    ctl.start()  # the last life: resume and move everything to the end
    wait_for(all_moved, timeout=120, every=0.2, what="every job moved and running once, every window released",
             on_timeout=dump)
    _check_invariants(mig, jobs, "at the end", dump)
    copies = mig.live_copies()
    for job in jobs:
        (name,) = copies[job]
        pod = next(p for p in mig.pods() if p.metadata.name == name)
        assert pod.spec.node_name in targets, dump()
        assert pod.metadata.annotations["drsched.io/migrated-from"] == job
    print(f"\nkill -9 results: {sum(killed.values())} kills {dict(killed)}, controller starts {ctl.starts}, "
          f"{len(jobs)} jobs moved, {watchdog.checks} watchdog checks, none lost or duplicated")


def _kill_at(mig, ctl, point: str, dump) -> None:
    """One life: start with the fault point, wait until the controller stops there, check where, kill -9."""
    ctl.start(f"--test-pause-at={point}")
    line = wait_for(lambda: next((ln for ln in ctl.life_log().splitlines() if f"paused for a test at={point} " in ln),
                                 None), timeout=90, every=0.1, what=f"the controller to pause at {point}",
                    on_timeout=dump)
    ctl.kill9()
    job = line.rpartition(" job=")[2].strip().split("/", 1)[1]
    step, _, after = point.partition(":")
    windows = _steps(mig)
    if point == "released:after-effect":
        assert job not in windows, f"{point}: the window of {job} is still there\n{dump()}"
    else:
        assert windows.get(job) == step, f"killed at {point}, but the window of {job} shows {windows}\n{dump()}"
    pods = {p.metadata.name: p for p in mig.jobs().get(job, [])}
    if step == "evicting":  # before the effect nothing has stopped the source; after it, it is stopping or gone
        stopping = job not in pods or pods[job].metadata.deletion_timestamp is not None
        assert stopping == bool(after), f"{point}: source {job} stopping={stopping}\n{dump()}"
    if step == "placing":  # before the effect no successor exists; after it, it does
        assert (f"{job}-m1" in pods) == bool(after), f"{point}: successor of {job}: {sorted(pods)}\n{dump()}"
