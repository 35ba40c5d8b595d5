"""Pod selection (shadow mode, canary) and the settings that configure it, refused when they cannot work."""

import pytest

from extender.selection import PodSelector
from extender.settings import build_settings, replica_ordinal
from kube.errors import ConfigError


def pod(namespace="team", labels=None, scheduler=None):
    spec = {} if scheduler is None else {"schedulerName": scheduler}
    return {"metadata": {"namespace": namespace, "labels": labels or {}}, "spec": spec}


@pytest.mark.parametrize(("selector", "subject", "expected"), [
    (PodSelector.of(), pod(), True),
    (PodSelector.of(namespaces=["team"]), pod("team"), True),
    (PodSelector.of(namespaces=["team"]), pod("other"), False),
    (PodSelector.of(namespaces=["default"]), {"metadata": {}}, True),       # no namespace: default
    (PodSelector.of(selector="app=web,tier=1"), pod(labels={"app": "web", "tier": "1", "x": "y"}), True),
    (PodSelector.of(selector="app=web,tier=1"), pod(labels={"app": "web"}), False),
    (PodSelector.of(scheduler_names=["default-scheduler"]), pod(), True),    # unset: the default scheduler
    (PodSelector.of(scheduler_names=["default-scheduler"]), pod(scheduler="drsched"), False),
    (PodSelector.of(namespaces=["team"], selector="app=web"), pod("team", {"app": "db"}), False),  # all parts
])
def test_selector_table(selector, subject, expected):
    assert selector.matches(subject) is expected


@pytest.mark.parametrize(("hostname", "ordinal"), [("drsched-extender-2", 2), ("extender-0", 0),
                                                   ("drsched-extender-7d9f8-x2x", None), ("plain", None), ("", None)])
def test_replica_ordinal_of_a_statefulset_pod_name(hostname, ordinal):
    assert replica_ordinal(hostname) == ordinal


def test_the_shadow_replica_index_comes_from_the_statefulset_ordinal(monkeypatch):
    monkeypatch.setenv("HOSTNAME", "drsched-extender-1")
    assert build_settings(shadow=True, shadow_replicas=3).shadow_replica_index == 1
    monkeypatch.setenv("HOSTNAME", "drsched-extender-5f7c-abcde")
    with pytest.raises(ConfigError, match="shadow_replica_index must be in 0..2"):
        build_settings(shadow=True, shadow_replicas=3)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"shadow": True, "static_cluster": "examples/static-cluster.yaml"}, "shadow needs a cluster"),
    ({"shadow": True, "shadow_scheduler_names": ""}, "shadow needs shadow_scheduler_names"),
    ({"shadow_selector": "app!=web"}, "shadow_selector: selector term"),
    ({"canary_selector": "nolabel"}, "canary_selector: selector term 'nolabel' is not key=value"),
    ({"shadow_replicas": 2, "shadow_replica_index": 2}, "shadow_replica_index must be in 0..1"),
    ({"decision_log_max_bytes": 8192, "decision_log_max_file_bytes": 16384}, "at least decision_log_max_file"),
    ({"explore_margin": -1}, "explore_margin"),
])
def test_settings_refuse_what_cannot_work(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        build_settings(**kwargs)


def test_the_shadow_manifest_runs_one_recreated_replica_with_valid_shadow_settings():
    import yaml

    from extender.__main__ import build_parser
    from tests.helpers import REPO

    doc = yaml.safe_load((REPO / "manifests" / "extender" / "shadow.yaml").read_text())
    assert doc["spec"]["replicas"] == 1 and doc["spec"]["strategy"]["type"] == "Recreate"
    args = vars(build_parser().parse_args(doc["spec"]["template"]["spec"]["containers"][0]["args"]))
    settings = build_settings(args.pop("config"), **args)
    assert settings.shadow and settings.shadow_replicas == 1 and settings.decision_log_dir is not None
