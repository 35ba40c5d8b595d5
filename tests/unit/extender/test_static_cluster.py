"""The static-cluster loader: the shipped example loads; every mistake names file, line and field."""

import pickle
from pathlib import Path

import pytest

from extender.errors import StaticClusterError
from extender.settings import build_settings
from extender.static_cluster import load_static_cluster, load_usage
from kube.errors import ConfigError
from kube.objects import UNSCHEDULABLE_TAINT

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
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - key: gpu\n    effect: NoScheduled\n", 7,
     "nodes[0].taints[0].effect", "must be one of NoSchedule, PreferNoSchedule, NoExecute, got 'NoScheduled'"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {key: gpu}\n", 6, "nodes[0].taints[0].effect",
     "required"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {effect: NoSchedule}\n", 6,
     "nodes[0].taints[0].key", "required"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {key: Bad_/gpu, effect: NoSchedule}\n", 6,
     "nodes[0].taints[0].key", "DNS subdomain"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {key: gpu, value: true, effect: NoSchedule}\n", 6,
     "nodes[0].taints[0].value", "must be a string, got True"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {key: gpu, value: 'a b', effect: NoSchedule}\n", 6,
     "nodes[0].taints[0].value", "value 'a b'"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {key: gpu, effect: NoSchedule, for: 3}\n", 6,
     "nodes[0].taints[0].for", "unknown field"),
    ("nodes:\n- name: a\n  cpu: 1\n  memory: 1Gi\n  taints:\n  - {key: gpu, value: x, effect: NoSchedule}\n"
     "  - {key: gpu, value: y, effect: NoSchedule}\n", 7, "nodes[0].taints[1]", "gpu:NoSchedule given twice"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, taints: {key: gpu}}\n", 2, "nodes[0].taints", "must be a list"),
    ("nodes:\n- {name: a, cpu: 1, memory: 1Gi, unschedulable: yes please}\n", 2, "nodes[0].unschedulable",
     "true or false"),
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


TAINTED = """\
nodes:
- {name: plain, cpu: 4, memory: 8Gi}
- name: gpu
  cpu: 4
  memory: 8Gi
  taints:
  - {key: example.com/gpu, value: a100, effect: NoExecute}
  - {key: spot, effect: PreferNoSchedule}
- {name: cordoned, cpu: 4, memory: 8Gi, unschedulable: true}
- {name: preferred, cpu: 4, memory: 8Gi, taints: [{key: spot, effect: PreferNoSchedule}]}
"""


def tolerating(*tolerations) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"tolerations": list(tolerations)}}


def pool_names(view, pod) -> list[str]:
    pool = view.pool_of(pod)
    return sorted(view.names if pool.rows is None else pool.names)


def test_static_taints_and_cordons_keep_pods_that_do_not_tolerate_them_out_of_the_pool(tmp_path):
    from kube.cache import ClusterCache

    path = tmp_path / "c.yaml"
    path.write_text(TAINTED)
    c = load_static_cluster(path)
    cache = ClusterCache()
    cache.replace_nodes(c.nodes)
    view = cache.view()
    gpu = {"key": "example.com/gpu", "operator": "Equal", "value": "a100", "effect": "NoExecute"}
    cordon = {"key": UNSCHEDULABLE_TAINT[0], "operator": "Exists", "effect": "NoSchedule"}
    # PreferNoSchedule only steers kube-scheduler: "preferred" stays in every pool
    assert pool_names(view, tolerating()) == ["plain", "preferred"]
    assert pool_names(view, tolerating(gpu)) == ["gpu", "plain", "preferred"]
    assert pool_names(view, tolerating({**gpu, "value": "h100"})) == ["plain", "preferred"]  # Equal: the value too
    assert pool_names(view, tolerating(cordon)) == ["cordoned", "plain", "preferred"]
    assert pool_names(view, tolerating(gpu, cordon)) == ["cordoned", "gpu", "plain", "preferred"]
    assert {n.name: n.ready for n in c.nodes} == {"plain": True, "gpu": True, "cordoned": False, "preferred": True}


def test_a_static_node_reads_as_the_same_v1_node_watched(tmp_path):
    # the static schema's taints and cordon are a v1.Node's spec.taints and spec.unschedulable, read the same way
    from kube.objects import node_info

    path = tmp_path / "c.yaml"
    path.write_text(TAINTED)
    static = {n.name: n for n in load_static_cluster(path, default_net_mbps=100, default_disk_mbps=50).nodes}
    watched = {
        "gpu": {"taints": [{"key": "example.com/gpu", "value": "a100", "effect": "NoExecute"},
                           {"key": "spot", "effect": "PreferNoSchedule"}]},
        "cordoned": {"unschedulable": True},
        "preferred": {"taints": [{"key": "spot", "effect": "PreferNoSchedule"}]},
    }
    for name, spec in watched.items():
        node = {"metadata": {"name": name}, "spec": spec,
                "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
        live = node_info(node, net_annotation="n", disk_annotation="d", default_net_mbps=100, default_disk_mbps=50)
        assert static[name] == live, name


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
