"""The arm loop against a scripted stand-in for the cluster: a job whose pod the migration controller deletes
mid-run ends when its successor succeeds, not at the arm's timeout."""

from __future__ import annotations

from lab import runner
from lab.observed import PodObs
from lab.schedule import make_schedule


class ScriptedLab:
    """Answers observe() from a list of pod listings, one per poll (the last one repeats)."""

    def __init__(self, listings: list[list[PodObs]]):
        self.listings = listings
        self.polls = 0
        self.submitted: list[str] = []

    def submit(self, job, **_):
        self.submitted.append(job.job)

    def observe(self, run_id):
        listing = self.listings[min(self.polls, len(self.listings) - 1)]
        self.polls += 1
        return listing

    def usage(self, uids):
        return {}

    def progress(self, run_id, job):
        return None


def test_a_pod_deleted_while_running_counts_as_ended_and_the_successor_finishes_the_job(monkeypatch) -> None:
    monkeypatch.setattr(runner, "POLL_S", 0.0)
    (job,) = make_schedule(seed=1, jobs=1)
    first = PodObs("r-j000", job.job, "u1", "rn-small", "Running", 100.0, None, None)
    successor = PodObs("r-j000-m1", job.job, "u2", "rn-large", "Succeeded", 120.0, 130.0, 0)
    lab = ScriptedLab([[first], [first], [], [successor]])
    result = runner.run_arm(lab, [job], run_id="r", image="img", scheduler=None, expected_s=lambda j: 10.0,
                            timeout_s=30.0)
    assert not result.timed_out
    assert lab.submitted == [job.job]
    gone, last = result.job_pods(job.job)
    assert (gone.phase, last.phase) == ("Gone", "Succeeded")
    assert gone.finished is not None


def test_an_evicted_pod_that_exits_0_is_not_the_jobs_finish(monkeypatch) -> None:
    # SIGTERM: the job checkpoints and exits 0, so the pod reads Succeeded while it is deleted.
    monkeypatch.setattr(runner, "POLL_S", 0.0)
    (job,) = make_schedule(seed=1, jobs=1)
    first = PodObs("r-j000", job.job, "u1", "rn-large", "Running", 100.0, None, None)
    stopping = PodObs("r-j000", job.job, "u1", "rn-large", "Succeeded", 100.0, 110.0, 0, deleting=True)
    successor = PodObs("r-j000-m1", job.job, "u2", "rn-small", "Running", 115.0, None, None)
    done = PodObs("r-j000-m1", job.job, "u2", "rn-small", "Succeeded", 115.0, 140.0, 0)
    lab = ScriptedLab([[first], [stopping], [stopping], [], [successor], [successor], [done]])
    result = runner.run_arm(lab, [job], run_id="r", image="img", scheduler=None, expected_s=lambda j: 10.0,
                            timeout_s=30.0)
    assert not result.timed_out and lab.polls == 7
    gone, last = result.job_pods(job.job)
    assert (gone.phase, gone.finished, last.phase, last.finished) == ("Gone", 110.0, "Succeeded", 140.0)


def test_an_arm_that_never_ends_times_out(monkeypatch) -> None:
    monkeypatch.setattr(runner, "POLL_S", 0.0)
    (job,) = make_schedule(seed=1, jobs=1)
    stuck = PodObs("r-j000", job.job, "u1", None, "Pending", None, None, None)
    result = runner.run_arm(ScriptedLab([[stuck]]), [job], run_id="r", image="img", scheduler=None,
                            expected_s=lambda j: 10.0, timeout_s=0.2)
    assert result.timed_out
    assert result.job_pods(job.job)[0].phase == "Pending"


def test_a_job_that_failed_for_good_ends_the_arm_after_a_quiet_period(monkeypatch) -> None:
    monkeypatch.setattr(runner, "POLL_S", 0.0)
    clock = iter(range(0, 10_000, 5))
    monkeypatch.setattr(runner.time, "monotonic", lambda: float(next(clock)))
    (job,) = make_schedule(seed=1, jobs=1)
    failed = PodObs("r-j000", job.job, "u1", "rn-small", "Failed", 100.0, 101.0, 1)
    result = runner.run_arm(ScriptedLab([[failed]]), [job], run_id="r", image="img", scheduler=None,
                            expected_s=lambda j: 10.0, timeout_s=1000.0)
    assert not result.timed_out
