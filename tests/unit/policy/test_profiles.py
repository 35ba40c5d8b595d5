"""The profile learning rule (policy.profiles) and the simulator serving learned profiles as a deployment does."""

from collections import Counter

import numpy as np
import pytest

from policy.profiles import MIN_SAMPLES, served_demand, update
from policy.sim import SimConfig, Simulator


def _fold(xs, dt=10.0, half_life_s=600.0):
    p = None
    for k, x in enumerate(xs):
        p = update(p, np.asarray(x, dtype=float), at=k * dt, half_life_s=half_life_s)
    return p


def test_first_samples_are_a_plain_mean_then_time_weighted():
    p = _fold([[1, 1, 1, 1], [3, 3, 3, 3]])  # alpha = max(1 - 2**(-10/600), 1/2) = 1/2
    assert p.demand == pytest.approx((2, 2, 2, 2)) and p.samples == (2, 2, 2, 2)
    q = update(p, np.array([6.0, 6, 6, 6]), at=10 + 600.0, half_life_s=600.0)  # one half-life later: 1/2
    assert q.demand[0] == pytest.approx(4.0)


def test_unmeasured_readings_are_skipped_per_resource():
    p = _fold([[1, 2, np.nan, 4], [1, 2, -1, 4]])
    assert p.samples == (2, 2, 0, 2) and np.isnan(p.demand[2])


def test_served_only_once_cpu_and_memory_have_enough_samples():
    few = _fold([[1, 2, 3, 4]] * (MIN_SAMPLES - 1))
    assert served_demand(few) is None and served_demand(None) is None
    enough = _fold([[1, 2, np.nan, 4]] * MIN_SAMPLES)
    assert served_demand(enough).tolist() == pytest.approx([1, 2, 0, 4])  # net never measured: served as 0


def _sources(cfg, seed=3):
    sim = Simulator(cfg, seed=seed)
    seen = []
    while (p := sim.next_decision()) is not None:
        seen.append((sim.now, p.pod.demand_source, p.pod.demand.copy(), p.pod.requests.copy()))
        sim.place(int(sim.feasible_mask().argmax()))
    return seen


def test_learned_profiles_start_unknown_and_are_served_once_trusted():
    seen = _sources(SimConfig(cluster="standard:8", profile="learned", n_jobs=150, load=0.6, sample_interval=10.0))
    first_learned = min(t for t, src, _, _ in seen if src == "learned")
    assert first_learned >= MIN_SAMPLES * 10.0 - 10.0  # a minute of 10 s polls before any profile is trusted
    early = [(d, r) for t, src, d, r in seen if t < MIN_SAMPLES * 10.0 - 10.0]
    assert early and all(d.tolist() == [r[0], r[1], 0, 0] for d, r in early)  # scored from requests
    assert Counter(src for _, src, _, _ in seen)["learned"] > 100


def test_a_share_of_pods_has_no_profile_and_the_rest_of_the_episode_is_unchanged():
    cfg = SimConfig(cluster="standard:8", n_jobs=400, profile_error=0.2)
    plain, some = _sources(cfg), _sources(SimConfig(cluster="standard:8", n_jobs=400, profile_error=0.2,
                                                     unprofiled=0.3))
    share = np.mean([src == "requests" for _, src, _, _ in some])
    assert 0.2 < share < 0.4
    assert [t for t, *_ in plain[:20]] == [t for t, *_ in some[:20]]  # same arrivals
    assert all(np.array_equal(a[3], b[3]) for a, b in zip(plain, some, strict=True))  # same pods
