"""Solo times: the median of the runs, and a cache file that keeps every run (an older one-run file counts as one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab import solo
from lab.observed import PodObs
from lab.schedule import Job
from lab.solo import Solo, _store, load, load_runs, median_solo
from policy.labworld import RealNodeShape


@pytest.mark.parametrize("seconds, median", [([10.0], 10.0), ([10.0, 12.0, 30.0], 12.0), ([9.0, 11.0], 10.0),
                                             ([30.0, 10.0, 12.0], 12.0)])
def test_the_solo_time_is_the_median_of_the_runs(seconds, median) -> None:
    assert median_solo([Solo(s, 2 * s) for s in seconds]) == Solo(median, 2 * median)


def test_a_cache_file_keeps_every_run_and_an_old_one_is_one_run(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"seconds": 14.0, "cpu_m": 990.0, "node": "rn-large"}))
    assert load_runs(old) == [Solo(14.0, 990.0)]
    new = tmp_path / "new.json"
    runs = [Solo(10.0, 900.0), Solo(13.0, 950.0), Solo(11.0, 1000.0)]
    assert _store(new, runs, node="rn-large", argv=["cpu"], image_digest="d") == Solo(11.0, 950.0)
    assert load_runs(new) == runs and load(new) == Solo(11.0, 950.0)
    assert json.loads(new.read_text())["seconds"] == 11.0  # what a one-run reader sees: the median
    (tmp_path / "bad.json").write_text("{")
    assert load_runs(tmp_path / "bad.json") == [] and load(tmp_path / "missing.json") is None


class _FakeLab:
    """Each submitted pod runs to completion on the next poll, except where ``full`` says its node has no room:
    there it stays Pending and unschedulable, as the scheduler leaves a pod whose request no node can hold."""

    def __init__(self, full: set[tuple[str, str]]) -> None:
        self.full, self.pods, self.deleted = full, {}, []

    def submit(self, job, *, run_id, image, scheduler, expected_s, node) -> str:
        self.pods[run_id] = (job, node)
        return f"{run_id}-{job.job}"

    def observe(self, run_id):
        job, node = self.pods[run_id]
        if (job.template, node) in self.full:
            return [PodObs(name=run_id, job=job.job, uid="u", node=None, phase="Pending", started=None,
                           finished=None, exit_code=None, unschedulable=True)]
        return [PodObs(name=run_id, job=job.job, uid="u", node=node, phase="Succeeded", started=100.0,
                       finished=112.0, exit_code=0)]

    def progress(self, run_id, job):
        return None

    def pod_cpu_seconds(self, node, uid):
        return None

    def delete_run(self, run_id) -> None:
        self.deleted.append(run_id)


def _job(template: str, request_m: int) -> Job:
    return Job(job="j000", template=template, kind="cpu", submit_s=0.0, units=100, cpu_use_m=request_m,
               mem_use_mi=32, cpu_request_m=request_m, mem_request_mi=64, net_mbit=0.0, io_mbps=0.0)


def test_a_job_no_node_has_room_for_is_skipped_there_and_measured_elsewhere(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(solo, "lab_dir", lambda: tmp_path)
    monkeypatch.setattr(solo, "UNSCHEDULABLE_S", 0.0)
    monkeypatch.setattr(solo.time, "sleep", lambda _s: None)
    shapes = (RealNodeShape("rn-small", "small", 100, 768), RealNodeShape("rn-large", "large", 400, 3072))
    big, small = _job("cpu-250m", 100), _job("cpu-125m", 50)
    lab = _FakeLab(full={("cpu-250m", "rn-small")})
    lines: list[str] = []
    out = solo.measure(lab, [big, small], shapes=shapes, image="img", image_digest="d", progress=lines.append,
                       runs=3, parallel=2, timeout_s=5.0)  # without the skip: RunError after 5 s
    assert set(out) == {("cpu-250m", 100, "large"), ("cpu-125m", 100, "large"), ("cpu-125m", 100, "small")}
    assert out[("cpu-125m", 100, "small")] == Solo(12.0, 0.0)
    skipped = [line for line in lines if "does not fit" in line]
    assert len(skipped) == 1 and "cpu-250m" in skipped[0] and "rn-small" in skipped[0]  # once, not 3 times
    assert len(lab.deleted) == 3 + 3 + 3 + 1  # every pod, the unschedulable one too, is deleted
