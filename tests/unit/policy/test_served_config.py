"""The chosen extender weight and mapping are the default everywhere they are configured.

The scheduler configs are YAML that cannot import ``policy.served``; this is the one check that their
``weight`` is ``DEFAULT_WEIGHT``. Everything in Python takes the numbers from ``policy.served`` itself."""

import json
from pathlib import Path

import pytest
import yaml

from policy.evaluate import parse_args
from policy.served import DEFAULT_MAPPING, DEFAULT_WEIGHT

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = sorted([*ROOT.glob("kube-scheduler-config/*.yaml"), *ROOT.glob("manifests/**/drsched-scheduler*.yaml")])


def test_the_configs_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in CONFIGS}
    assert {"kube-scheduler-config/drsched-scheduler.yaml", "manifests/scheduler/drsched-scheduler.yaml"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_shipped_scheduler_config_uses_the_chosen_weight(path):
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    configs = [d for d in docs if d.get("kind") == "KubeSchedulerConfiguration"]
    if not configs:  # a ConfigMap wrapping the configuration
        configs = [yaml.safe_load(v) for d in docs for v in (d.get("data") or {}).values()]
    extenders = [e for c in configs for e in c.get("extenders", [])]
    assert extenders and all(e["weight"] == DEFAULT_WEIGHT for e in extenders)
    assert isinstance(DEFAULT_WEIGHT, int) and 1 <= DEFAULT_WEIGHT <= 10


def test_evaluate_served_defaults_are_the_chosen_ones():
    args = parse_args(["--served"])
    assert args.served == DEFAULT_WEIGHT and args.mapping == DEFAULT_MAPPING
    assert parse_args([]).served is None
    assert parse_args(["--served", "3", "--mapping", "band:0.1"]).mapping.band == 0.1


def test_a_served_evaluation_records_its_setting_and_an_argmax_one_none(tmp_path):
    from policy.evaluate import main

    common = ["--policies", "default-k8s,lookahead", "--scenarios", "base", "--loads", "0.9", "--seeds", "1",
              "--jobs", "8", "--no-plots", "-q"]
    assert main([*common, "--served", "--mapping", "band:0.1", "--out", str(tmp_path / "s")]) == 0
    assert json.loads((tmp_path / "s" / "served.json").read_text()) == {
        "weight": DEFAULT_WEIGHT, "mapping": "band:0.1", "hot_filter": "prefer-cool", "hot_thresholds": "0.65,0.95"}
    assert main([*common, "--out", str(tmp_path / "a")]) == 0
    assert not (tmp_path / "a" / "served.json").exists()
