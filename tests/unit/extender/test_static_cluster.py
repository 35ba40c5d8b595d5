"""The static-cluster loader: the shipped example loads; every mistake names file, line and field."""

import pickle
from pathlib import Path

import pytest

from extender.errors import StaticClusterError
from extender.settings import build_settings
from extender.static_cluster import load_static_cluster, load_usage
from kube.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "static-cluster.yaml"


def test_example_loads():
    c = load_static_cluster(EXAMPLE)
    assert [n.name for n in c.nodes] == ["node-a", "node-b", "node-c", "node-d", "node-e"]
    assert c.nodes[2].capacity == pytest.approx((16, 64, 1250, 1000))
    assert c.usage["node-d"][1] == 300 and "node-e" not in c.usage
    pods = {p.name: p for p in c.pods}
    assert pods["web-1"].demand_source == "learned" and pods["etl-1"].demand_source == "annotation"
    assert pods["batch-7"].node is None and pods["batch-7"].namespace == "jobs"


@pytest.mark.parametrize("text, line, field, problem", [
    ("nodes:\n- name: a\n  cpu: 2\n  memory: 3GB\n", 4, "nodes[0].memory", "cannot parse quantity"),
    ("nodes:\n- name: a\n  memory: 1Gi\n", 2, "nodes[0].cpu", "required"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  colour: red\n", 5, "nodes[0].colour", "unknown field"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi}\n- {name: a, cpu: 1, memory: 1Gi}\n", 3, "nodes[1].name", "duplicate"),
    ("nodes: {}\n", 1, "nodes", "must be a list"),
    ("pods: []\n", 1, "nodes", "required"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, ready: maybe}\n", 2, "nodes[0].ready", "true or false"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, usage: {cpu: 1}}\n", 2, "nodes[0].usage.memory", "required"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, usage: {cpu: 1, memory: 1, age_s: -3}}\n", 2,
     "nodes[0].usage.age_s", ">= 0"),
    ("nodes:\n- {name: a, cpu: 0, memory: 1Gi}\n", 2, "nodes[0].cpu", "> 0"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi}\npods:\n- {name: p, node: b}\n", 4, "pods[0].node", "unknown node"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi}\npods:\n- {name: p, profile: 'cpu=x'}\n", 4, "pods[0].profile",
     "not a number"),
    ("nodes: [\n", 2, "", "not valid YAML"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, labels: [x]}\n", 2, "nodes[0].labels", "must be a mapping"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  labels:\n    drsched: on\n", 6, "nodes[0].labels.drsched",
     "must be a string, got True (quote it"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, labels: {tier: 3}}\n", 2, "nodes[0].labels.tier", "got 3"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, labels: {Bad_/x: y}}\n", 2, "nodes[0].labels.Bad_/x",
     "DNS subdomain"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, labels: {-x: y}}\n", 2, "nodes[0].labels.-x", "1-63"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi}\npods:\n- {name: p, labels: {app: 'a b'}}\n", 4,
     "pods[0].labels.app", "value 'a b'"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi}\npods:\n- {name: p, labels: {app: " + "v" * 64 + "}}\n", 4,
     "pods[0].labels.app", "at most 63"),
])
def test_errors_name_file_line_field(tmp_path, text, line, field, problem):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(StaticClusterError) as info:
        load_static_cluster(path)
    err = info.value
    assert (err.line, err.field) == (line, field) and problem in err.problem
    assert str(err).startswith(f"{path}:{line}: ")
    again = pickle.loads(pickle.dumps(err))  # the server parses the file in a child process
    assert type(again) is StaticClusterError and str(again) == str(err) and again.line == err.line


def test_nodes_and_pods_carry_labels_into_the_cache(tmp_path):
    from kube.cache import ClusterCache

    c = load_static_cluster(EXAMPLE)
    assert {n.name: n.labels for n in c.nodes}["node-c"] == {"topology.kubernetes.io/zone": "zone-b", "disktype": "ssd"}
    assert c.pod_labels[("jobs", "batch-7")] == {"drsched": "on"} and c.pod_labels[("default", "web-1")] == {}
    cache = ClusterCache()
    cache.replace_nodes(c.nodes)
    assert cache.view().labels["node-b"] == {"topology.kubernetes.io/zone": "zone-a"}  # what shadow mode reads
    path = tmp_path / "c.yaml"
    path.write_text("nodes:\n- {name: a, cpu: 1, memory: 1Gi, labels: {example.com/x: '', k: 'true'}}\n"
                    "pods:\n- {name: p, namespace: n}\n")
    c = load_static_cluster(path)
    assert c.nodes[0].labels == {"example.com/x": "", "k": "true"} and c.pod_labels == {("n", "p"): {}}


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(StaticClusterError, match="cannot read"):
        load_static_cluster(tmp_path / "nope.yaml")
    (tmp_path / "e.yaml").write_text("")
    with pytest.raises(StaticClusterError, match="empty"):
        load_static_cluster(tmp_path / "e.yaml")


def test_usage_only_file(tmp_path):
    path = tmp_path / "u.yaml"
    path.write_text("usage:\n  a: {cpu: 500m, memory: 1Gi, net: 10M, age_s: 4}\n")
    u, age = load_usage(path)["a"]
    assert u.tolist() == [0.5, 1.0, 10.0, 0.0] and age == 4


@pytest.mark.parametrize("kwargs, match", [
    ({"policy": "nope"}, "neither 'model' nor a heuristic"),
    ({"fallback_heuristic": "round-robin"}, "round-robin"),
    ({"static_cluster": "a.yaml", "kubeconfig": "k"}, "exclusive"),
    ({"usage_provider": "static"}, "needs usage_file"),
    ({"usage_provider": "none", "usage_timeout_s": 20}, "shorter than"),
    ({"usage_provider": "none", "url_prefix": "x"}, "start with '/'"),
    ({"usage_provider": "none", "port": 0}, "port"),
])
def test_settings_refuse_bad_combinations(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        build_settings(**kwargs)


def test_settings_file_env_and_flags(tmp_path, monkeypatch):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("port: 9000\nhot-cpu: 0.5\nusage_provider: none\n")
    monkeypatch.setenv("DRSCHED_PORT", "9100")
    s = build_settings(cfg, hot_mem=0.8)
    assert (s.port, s.hot_cpu, s.hot_mem) == (9100, 0.5, 0.8)
    cfg.write_text("bogus: 1\n")
    with pytest.raises(ConfigError, match="unknown option"):
        build_settings(cfg)
