"""The summary's placement table: compute jobs per node, smallest node first, with their share of the JCT."""

from __future__ import annotations

from lab.report import placement_lines

NODES = {"big": {"node": "big", "cpu_quota_m": "1000"}, "tiny": {"node": "tiny", "cpu_quota_m": "250"}}


def _job(arm: str, kind: str, node: str, jct: float) -> dict:
    return {"variant": "under", "arm": arm, "kind": kind, "node": node, "jct_s": str(jct)}


def test_counts_compute_jobs_per_node_and_their_share_of_the_jct() -> None:
    jobs = [_job("default", "cpu", "big", 10), _job("default", "train", "big", 10),
            _job("model", "cpu", "tiny", 30), _job("model", "cpu", "big", 10),
            _job("model", "io", "tiny", 99)]  # io and net jobs are not compute jobs: left out
    lines = placement_lines(jobs, NODES)
    assert "| variant | arm | jobs | tiny (250 m) | big (1000 m) |" in lines
    assert "| under | default | 2 | 0 (0.00) | 2 (1.00) |" in lines
    assert "| under | model | 2 | 1 (0.75) | 1 (0.25) |" in lines


def test_no_compute_jobs_no_table() -> None:
    assert placement_lines([_job("model", "net", "big", 5)], NODES) == []
