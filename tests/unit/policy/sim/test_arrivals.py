"""Arrival processes and the load definition."""

import numpy as np
import pytest

from policy.sim.arrivals import bursty_times, offered_work, poisson_times, rescale_to_load, with_arrivals
from policy.sim.errors import ConfigError
from policy.sim.jobs import JobSpec

CAP = (16.0, 64.0, 500.0, 800.0)  # four standard nodes


@pytest.mark.parametrize("demand,work,expected", [
    ((2.0, 1.0, 1.0, 2.0), 60.0, 60 * 2 / 16),      # cpu dominant
    ((0.5, 1.0, 60.0, 0.5), 60.0, 60 * 60 / 500),   # net dominant
    ((1.0, 1.0, 0.5, 80.0), 30.0, 30 * 80 / 800),   # disk dominant
    ((0.1, 32.0, 0.0, 0.0), 10.0, 10 * 32 / 64),    # memory dominant
])
def test_offered_work_uses_the_dominant_share(demand, work, expected):
    assert offered_work([JobSpec("x", work, (0.5, 0.5), demand)], CAP) == pytest.approx(expected)


@pytest.mark.parametrize("kind", ["poisson", "bursty"])
@pytest.mark.parametrize("load", [0.6, 1.5])
def test_arrival_rate_realises_the_load(kind, load):
    jobs = [JobSpec("cpu", 60.0, (0.5, 0.5), (2.0, 1.0, 1.0, 2.0))] * 3000
    out = with_arrivals(jobs, kind, load, CAP, np.random.default_rng(0))
    realised = offered_work(out, CAP) * len(out) / out[-1].submit
    assert realised == pytest.approx(load, rel=0.15 if kind == "bursty" else 0.05)
    assert all(a.submit <= b.submit for a, b in zip(out[:-1], out[1:], strict=True))


def test_bursty_is_burstier_than_poisson():
    rng = np.random.default_rng(0)
    cv = [np.std(np.diff(t)) / np.mean(np.diff(t))
          for t in (poisson_times(5000, 1.0, rng), bursty_times(5000, 1.0, rng))]
    assert cv[0] == pytest.approx(1.0, abs=0.1) and cv[1] > 1.5


def test_rescale_to_load_compresses_time():
    jobs = [JobSpec("cpu", 60.0, (0.5, 0.5), (2.0, 1.0, 1.0, 2.0), submit=float(t)) for t in range(0, 1000, 10)]
    out = rescale_to_load(jobs, 0.9, CAP)
    span = out[-1].submit - out[0].submit
    assert offered_work(out, CAP) * len(out) / span == pytest.approx(0.9)
    assert out[0].submit == 0.0


@pytest.mark.parametrize("kind,load", [("uniform", 0.9), ("poisson", 0.0), ("poisson", -1.0)])
def test_bad_arrival_config(kind, load):
    with pytest.raises(ConfigError):
        with_arrivals([JobSpec("x", 1.0, (0, 0), (1, 1, 1, 1))], kind, load, CAP, np.random.default_rng(0))


def test_at_once_submits_every_job_at_zero():
    jobs = [JobSpec("cpu", 60.0, (0.5, 0.5), (1.0, 1.0, 0.0, 0.0))] * 3
    out = with_arrivals(jobs, "at-once", 0.9, (4.0, 16.0, 125.0, 200.0), np.random.default_rng(0))
    assert [j.submit for j in out] == [0.0, 0.0, 0.0]
