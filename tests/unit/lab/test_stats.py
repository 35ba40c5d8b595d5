"""The lab's metrics, ratios to the default scheduler and intervals, on small hand-made runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lab import stats

NODES = {"a": {"cpu_quota_m": "1000", "mem_mi": "1000", "net_mbit": "10"},
         "b": {"cpu_quota_m": "500", "mem_mi": "1000", "net_mbit": "10"}}


def _job(submit, finish, solo):
    return {"submit_s": submit, "finish_s": finish, "jct_s": finish - submit, "slowdown": (finish - submit) / solo}


def _use(t, node, cpu, mem=0.0):
    return {"t_s": t, "node": node, "cpu_m": cpu, "mem_mi": mem, "net_mbit": 0, "io_mbps": 0}


def test_run_metrics_jct_makespan_slowdown() -> None:
    jobs = [_job(0, 10, 5), _job(5, 25, 10), {"submit_s": 7, "finish_s": "", "jct_s": "", "slowdown": ""}]
    m = stats.run_metrics(jobs, [], NODES)
    assert m["mean_jct_s"] == pytest.approx(15.0)
    assert m["p95_jct_s"] == pytest.approx(np.percentile([10, 20], 95))
    assert m["makespan_s"] == pytest.approx(25.0)
    assert m["mean_slowdown"] == pytest.approx(2.0)
    assert math.isnan(m["utilisation"])
    assert math.isnan(m["mean_best_slowdown"])  # a file from before best_slowdown: no value, not zero


def test_mean_best_slowdown_reads_its_column() -> None:
    jobs = [{**_job(0, 10, 10), "best_slowdown": 2.0}, {**_job(0, 10, 10), "best_slowdown": 4.0},
            {**_job(0, 10, 10), "best_slowdown": ""}]
    assert stats.run_metrics(jobs, [], NODES)["mean_best_slowdown"] == pytest.approx(3.0)


def test_utilisation_and_imbalance_from_complete_samples_only() -> None:
    usage = [_use(1, "a", 500), _use(1, "b", 500, mem=100),   # a at 0.5, b at 1.0 cpu; b 0.1 mem
             _use(3, "a", 1000),                               # incomplete sample: ignored
             _use(5, "a", 0), _use(5, "b", 0)]                 # nothing running: ignored
    m = stats.usage_metrics(usage, NODES)
    assert m["utilisation"] == pytest.approx(0.75)
    assert m["imbalance"] == pytest.approx(np.std([0.5, 1.0]) + np.std([0.0, 0.1]))


def test_ratios_are_per_seed_then_averaged_with_an_interval() -> None:
    runs = {(1, "default"): {"mean_jct_s": 10.0}, (1, "model"): {"mean_jct_s": 8.0},
            (2, "default"): {"mean_jct_s": 20.0}, (2, "model"): {"mean_jct_s": 12.0},
            (3, "model"): {"mean_jct_s": 1.0}}  # no default on seed 3: left out
    mean, ci, n = stats.ratios(runs)["model"]["mean_jct_s"]
    assert (mean, n) == (pytest.approx(0.7), 2)
    assert ci == pytest.approx(12.706 * np.std([0.8, 0.6], ddof=1) / np.sqrt(2))
    assert stats.ratios(runs)["default"]["mean_jct_s"][0] == pytest.approx(1.0)


def test_one_seed_has_no_interval() -> None:
    mean, ci, n = stats.ratios({(1, "default"): {"makespan_s": 4.0}, (1, "model"): {"makespan_s": 3.0}})["model"][
        "makespan_s"]
    assert (mean, n) == (pytest.approx(0.75), 1) and math.isnan(ci)
