"""The contention parameters: the original rule is reachable and exact, the others divide as documented."""

from __future__ import annotations

import numpy as np
import pytest

from policy.sim import SimConfig, Simulator, run
from policy.sim.calibration import DEFAULT_PATH, ENV, REFERENCE_SETS, default_params, params_of, read
from policy.sim.contention import fair_rates
from policy.sim.episode import first_feasible
from policy.sim.errors import ConfigError
from policy.sim.sharing import ORIGINAL, ContentionParams, shared_rates

CPU = (1.0, 0.0, 0.0, 0.0)


def test_original_params_give_fair_rates_exactly() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = int(rng.integers(1, 6))
        dem = [tuple(rng.uniform(0, 2, 4)) for _ in range(k)]
        cap = tuple(rng.uniform(0.5, 4, 4))
        assert shared_rates(dem, [(0.5, 0.5)] * k, cap, ORIGINAL) == fair_rates(dem, cap)


def test_general_algorithm_with_rate_shares_is_progressive_filling() -> None:
    """A set that only differs by a no-op (mem_exponent on a node with spare memory) takes the general
    path; with 'rate' shares it must agree with fair_rates."""
    same_rule = ContentionParams(mem_exponent=2.0)
    assert not same_rule.is_original
    rng = np.random.default_rng(4)
    for _ in range(300):
        k = int(rng.integers(1, 7))
        dem = [tuple(rng.uniform(0, 2, 4) * (rng.random(4) < 0.8)) for _ in range(k)]
        cap = (rng.uniform(0.5, 4), 1e6, rng.uniform(0.5, 4), rng.uniform(0.5, 4))
        np.testing.assert_allclose(shared_rates(dem, [(0.5, 0.5)] * k, cap, same_rule), fair_rates(dem, cap),
                                   atol=1e-9)


@pytest.mark.parametrize(("params", "demands", "requests", "expected"), [
    (ContentionParams(cpu_share="equal"), [CPU, CPU], [(0.1, 0), (0.3, 0)], [0.5, 0.5]),
    (ContentionParams(cpu_share="requests"), [CPU, CPU], [(0.1, 0), (0.3, 0)], [0.25, 0.75]),
    (ContentionParams(cpu_share="requests", request_exponent=0.5), [CPU, CPU], [(0.1, 0), (0.4, 0)], [1 / 3, 2 / 3]),
    (ContentionParams(cpu_share="requests", request_exponent=0.0), [CPU, CPU], [(0.1, 0), (0.4, 0)], [0.5, 0.5]),
    # equal cores: the small job gets all it wants, the big one the rest; original: equal rates 2/3
    (ContentionParams(cpu_share="equal"), [CPU, (0.5, 0, 0, 0)], [(0.1, 0), (0.1, 0)], [0.5, 1.0]),
    (ORIGINAL, [CPU, (0.5, 0, 0, 0)], [(0.1, 0), (0.1, 0)], [2 / 3, 2 / 3]),
    # a request share is capped at what the job can use; the rest goes to the other job
    (ContentionParams(cpu_share="requests"), [CPU, (0.2, 0, 0, 0)], [(0.1, 0), (0.9, 0)], [0.8, 1.0]),
    (ContentionParams(cpu_efficiency=0.8, cpu_share="equal"), [CPU, CPU], [(0.1, 0)] * 2, [0.4, 0.4]),
    (ContentionParams(interference=0.25), [(0.1, 0, 0, 0)] * 3, [(0.1, 0)] * 3, [2 / 3] * 3),
    (ContentionParams(mem_exponent=2.0), [(0.1, 1.0, 0, 0)] * 2, [(0.1, 0)] * 2, [0.25, 0.25]),
    (ContentionParams(net_share="equal"), [(0, 0, 1.0, 0), (0, 0, 0.25, 0)], [(0.1, 0)] * 2, [0.75, 1.0]),
    # no sharing loss: each job as if alone, so only a demand above the node's capacity slows it
    (ContentionParams(cpu_share="none"), [CPU, CPU, CPU], [(0.1, 0)] * 3, [1.0, 1.0, 1.0]),
    (ContentionParams(cpu_share="none"), [(2.0, 0, 0, 0), CPU], [(0.1, 0)] * 2, [0.5, 1.0]),
    (ContentionParams(cpu_share="none", net_share="none"), [(0.5, 0, 4.0, 0), (0.5, 0, 0.5, 0)], [(0.1, 0)] * 2,
     [0.25, 1.0]),
    # ... with interference still applied per co-located job
    (ContentionParams(cpu_share="none", interference=0.5), [CPU, CPU], [(0.1, 0)] * 2, [2 / 3, 2 / 3]),
])
def test_shares(params, demands, requests, expected) -> None:
    np.testing.assert_allclose(shared_rates(demands, requests, (1.0, 1.0, 1.0, 1.0), params), expected)


@pytest.mark.parametrize("bad", [dict(cpu_share="fifo"), dict(cpu_efficiency=0.0), dict(net_efficiency=1.5),
                                 dict(interference=-0.1), dict(mem_exponent=-1.0), dict(request_exponent=-1)])
def test_bad_params_are_refused(bad) -> None:
    with pytest.raises(ConfigError):
        ContentionParams(**bad)


def test_shipped_calibration_runs_the_real_node_fit_and_keeps_the_original_rule(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    doc = read(DEFAULT_PATH)
    assert doc["active"] == "fitted-lab"
    assert params_of(doc, "original") == ORIGINAL
    assert default_params() == params_of(doc) == params_of(doc, "fitted-lab") != ORIGINAL


def test_every_shipped_set_is_valid_and_has_its_fit_record() -> None:
    doc = read(DEFAULT_PATH)
    for name in doc["sets"]:
        params_of(doc, name)
        if name not in REFERENCE_SETS:
            fit = doc["fits"][name]
            assert set(fit["fit_seeds"]).isdisjoint(fit["held_out_seeds"]) and fit["errors"]


def test_no_sharing_set_runs_every_job_as_alone() -> None:
    none = params_of(read(DEFAULT_PATH), "no-sharing")
    assert shared_rates([CPU, CPU], [(0.1, 0)] * 2, (1.0, 1.0, 1.0, 1.0), none) == [1.0, 1.0]
    assert shared_rates([(0, 0, 2.0, 0)], [(0.1, 0)], (1.0, 1.0, 1.0, 1.0), none) == [0.5]  # a slow link stays slow


def test_env_names_another_calibration_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text("version: 1\nactive: cfs\nsets:\n  cfs: {cpu_share: requests, interference: 0.1}\n")
    monkeypatch.setenv(ENV, str(path))
    assert default_params() == ContentionParams(cpu_share="requests", interference=0.1)


@pytest.mark.parametrize("text", ["version: 2\nactive: a\nsets: {a: {}}\n", "version: 1\nactive: b\nsets: {a: {}}\n",
                                  "[unclosed", "version: 1\nactive: a\nsets: {a: {cpu_shares: rate}}\n"])
def test_bad_calibration_file_is_a_config_error(tmp_path, text) -> None:
    path = tmp_path / "cal.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="calibration"):
        params_of(read(path))


def test_simulator_uses_the_file_by_default_and_a_config_can_override(monkeypatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    base = SimConfig(n_jobs=60, load=1.2)
    default = run(Simulator(base, seed=5), first_feasible).summary()
    active = run(Simulator(SimConfig(n_jobs=60, load=1.2, contention=default_params()), seed=5),
                 first_feasible).summary()
    original = run(Simulator(SimConfig(n_jobs=60, load=1.2, contention=ORIGINAL), seed=5), first_feasible).summary()
    other = run(Simulator(SimConfig(n_jobs=60, load=1.2, contention=ContentionParams(interference=0.3)), seed=5),
                first_feasible).summary()
    assert default == active
    assert other["mean_slowdown"] > original["mean_slowdown"]
