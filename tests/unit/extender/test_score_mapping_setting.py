"""The extender's score_mapping setting: the chosen default, refusals at start, and the mapping reaching the scores."""

from pathlib import Path

import numpy as np
import pytest

from extender.decide import heuristic_policy, score
from extender.runtime import load_policy
from extender.settings import build_settings
from extender.telemetry import Telemetry
from kube.errors import ConfigError
from policy.baselines import make_scorer
from policy.served import DEFAULT_MAPPING, ScoreMapping
from policy.state import ClusterSnapshot, PodView


def _settings(**kw):
    return build_settings(usage_provider="none", **kw)


def test_the_default_is_policy_serveds_chosen_mapping():
    assert _settings().mapping == DEFAULT_MAPPING and _settings().score_mapping == str(DEFAULT_MAPPING)


@pytest.mark.parametrize("text", ["minmax", "band:0.05", "linear:0.02"])
def test_a_mapping_is_read_from_flags_env_and_file(text, monkeypatch, tmp_path):
    assert _settings(score_mapping=text).mapping == ScoreMapping.parse(text)
    monkeypatch.setenv("DRSCHED_SCORE_MAPPING", text)
    assert _settings().mapping == ScoreMapping.parse(text)
    monkeypatch.delenv("DRSCHED_SCORE_MAPPING")
    path = Path(tmp_path / "c.yaml")
    path.write_text(f"score_mapping: '{text}'\n")
    assert build_settings(path, usage_provider="none").mapping == ScoreMapping.parse(text)


@pytest.mark.parametrize("text,message", [("cubic:1", "must be one of minmax, band, linear"),
                                          ("linear", "needs a band > 0"), ("band:x", "band must be a number")])
def test_bad_mappings_are_refused_in_one_line_naming_the_field(text, message):
    with pytest.raises(ConfigError, match=f"score_mapping: .*{message}") as err:
        _settings(score_mapping=text)
    assert "\n" not in str(err.value)


def test_the_served_policy_scores_with_the_configured_mapping():
    policy, degraded = load_policy(_settings(policy="demand-aware", score_mapping="linear:0.1"), Telemetry())
    assert degraded is None and policy.mapping == ScoreMapping("linear", 0.1)
    n = 3
    snap = ClusterSnapshot(names=("a", "b", "c"), capacity=np.tile([8.0, 32.0, 1000.0, 500.0], (n, 1)),
                           requested=np.zeros((n, 2)), usage=np.array([[0.8, 0, 0, 0], [1.1, 0, 0, 0],
                                                                       [6.2, 0, 0, 0]]),
                           usage_age=np.zeros(n), assumed=np.zeros((n, 4)), pods=np.zeros(n),
                           max_pods=np.full(n, 110.0), ready=np.ones(n, bool))
    pod = PodView.from_requests(1.0, 2.0, name="p")
    # demand-aware: -(cpu after) = -0.225, -0.2625, -0.9: 0.0375 below the best is under half a point of 0.1
    assert score(snap, pod, policy, max_usage_age=60).scores.tolist() == [10, 10, 3]
    minmax = heuristic_policy(make_scorer("demand-aware"), ScoreMapping("minmax"))
    assert score(snap, pod, minmax, max_usage_age=60).scores.tolist() == [10, 9, 0]
