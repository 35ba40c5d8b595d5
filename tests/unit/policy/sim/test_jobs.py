"""Job classes, mixes and expected-demand profiles."""

import numpy as np
import pytest

from policy.sim.errors import ConfigError, UnknownClassError
from policy.sim.jobs import JOB_CLASSES, JobSpec, parse_mix, sample_mix, with_profiles


def test_drs_classes_request_less_than_they_use():
    for name in ("cpu", "net", "io"):
        job = JOB_CLASSES[name].sample(np.random.default_rng(0), 1)[0]
        assert job.requests == (0.5, 0.5)
        assert job.kind == name
    cpu = JOB_CLASSES["cpu"].sample(np.random.default_rng(1), 500)
    assert np.median([j.demand[0] for j in cpu]) == pytest.approx(2.0, rel=0.1)


@pytest.mark.parametrize("mix,expected", [
    ("drs", {"cpu": 1 / 3, "net": 1 / 3, "io": 1 / 3}), ("batch", {"batch": 1.0}),
    ("cpu:3,io:1", {"cpu": 0.75, "io": 0.25}),
])
def test_parse_mix(mix, expected):
    assert parse_mix(mix) == pytest.approx(expected)


@pytest.mark.parametrize("mix,error", [("gpu:1", UnknownClassError), ("cpu:x", ConfigError), ("cpu:0", ConfigError)])
def test_bad_mix(mix, error):
    with pytest.raises(error):
        parse_mix(mix)


def test_unknown_class_error_names_the_class():
    with pytest.raises(UnknownClassError, match="'gpu'") as info:
        parse_mix("cpu:1,gpu:1")
    assert info.value.name == "gpu"


def test_sample_mix_follows_weights():
    jobs = sample_mix(parse_mix("cpu:3,io:1"), 2000, np.random.default_rng(0))
    assert sum(j.kind == "cpu" for j in jobs) / 2000 == pytest.approx(0.75, abs=0.04)


JOBS = [JobSpec("cpu", 60.0, (0.5, 0.5), (2.0, 1.0, 1.0, 2.0)), JobSpec("cpu", 60.0, (0.5, 0.5), (4.0, 1.0, 1.0, 2.0)),
        JobSpec("io", 60.0, (0.5, 0.5), (1.0, 1.0, 0.5, 80.0))]


@pytest.mark.parametrize("profile,error,expected", [
    ("noisy", 0.0, [(2.0, 1.0, 1.0, 2.0), (4.0, 1.0, 1.0, 2.0), (1.0, 1.0, 0.5, 80.0)]),
    ("class", 0.0, [(3.0, 1.0, 1.0, 2.0), (3.0, 1.0, 1.0, 2.0), (1.0, 1.0, 0.5, 80.0)]),
    ("requests", 0.7, [(0.5, 0.5, 0.0, 0.0)] * 3),
])
def test_profiles(profile, error, expected):
    out = with_profiles(JOBS, profile, error, np.random.default_rng(0))
    assert [j.expected for j in out] == [pytest.approx(e) for e in expected]


def test_profile_error_is_multiplicative_lognormal():
    jobs = [JOBS[0]] * 4000
    out = with_profiles(jobs, "noisy", 0.3, np.random.default_rng(0))
    logs = np.log(np.array([j.expected for j in out]) / np.array(JOBS[0].demand))
    assert logs.std() == pytest.approx(0.3, rel=0.05)
    assert abs(logs.mean()) < 0.02


@pytest.mark.parametrize("profile,error,exc", [("oracle", 0.0, UnknownClassError), ("noisy", -1.0, ConfigError)])
def test_bad_profiles(profile, error, exc):
    with pytest.raises(exc):
        with_profiles(JOBS, profile, error, np.random.default_rng(0))
