"""Write the replay corpus: a fixed cluster, a seeded sequence of extender requests, and the answers.

The request path is rewritten for speed from time to time; a decision must never change with it. This
script records what the extender answers to ~300 kube-scheduler-shaped requests in both payload modes
(``NodeNames`` with nodeCacheCapable, full ``Nodes`` without), interleaved with binds (which move
allocations and assumed demand) and malformed bodies (400s, ``Error`` fields), for the model and a
heuristic. ``test_replay.py`` replays the same sequence and requires the same status and body, byte for
byte for prioritize. Re-record only when a decision is meant to change, and say why in the commit.

    python tests/integration/extender/replay/make_corpus.py            # rewrites corpus.json.gz here
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.json.gz"
NOW = 1_800_000_000.0
"""The frozen clock of a replay (epoch seconds); usage sample times are NOW minus their age."""
POLICIES = ("model", "demand-aware")
_CPU = (2, 4, 8, 16, 32, 64)


def make_cluster(rng: np.random.Generator, n: int = 400) -> dict:
    """Nodes (some not ready, some nearly full, usage fresh / stale / missing) and their pods, as JSON."""
    nodes, usage, pods = [], {}, []
    for i in range(n):
        name = f"n{i:04d}" if i % 7 else f"node-{i}.rack{i % 5}.example"
        cpu = int(rng.choice(_CPU))
        mem = cpu * int(rng.choice([2, 4, 8]))
        net, disk = float(rng.choice([1250, 125, 3125])), float(rng.choice([500, 200, 2000]))
        max_pods = 110.0 if rng.random() > 0.05 else 3.0
        nodes.append({"name": name, "capacity": [cpu, mem, net, disk], "max_pods": max_pods,
                      "ready": bool(rng.random() > 0.03)})
        kind = rng.random()
        if kind < 0.8:
            age = float(rng.choice([0.0, rng.uniform(0, 55), 59.999]))
        elif kind < 0.9:
            age = float(rng.uniform(61, 600))
        else:
            continue  # no sample: scored from requests
        hot = rng.random() < 0.1
        frac = rng.uniform(0.6, 1.1, 4) if hot else rng.uniform(0.0, 0.7, 4)
        usage[name] = {"usage": (frac * [cpu, mem, net, disk]).round(4).tolist(), "age": age}
        for k in range(int(rng.integers(0, 5))):
            req = [float(rng.choice([0.1, 0.25, 0.5, 1, 2])), float(rng.choice([0.125, 0.5, 1, 4]))]
            demand = [req[0] * rng.uniform(0.3, 1.5), req[1] * rng.uniform(0.5, 1.2), float(rng.uniform(0, 80)),
                      float(rng.uniform(0, 40))]
            recent = rng.random() < 0.3
            pods.append({"namespace": "ns", "name": f"{name}-p{k}", "uid": f"uid-{name}-{k}", "node": name,
                         "requests": req, "demand": [round(x, 4) for x in demand], "demand_source": "learned",
                         "terminated": bool(rng.random() < 0.05),
                         "bound_at": NOW - age - (0.0 if recent else 3600.0) + (10.0 if recent else 0.0)})
    return {"nodes": nodes, "usage": usage, "pods": pods}


def v1_pod(rng: np.random.Generator, i: int) -> dict:
    """A v1.Pod as kube-scheduler embeds it, in one of several shapes (profiles, init containers, ...)."""
    cpu = str(rng.choice(["100m", "250m", "500m", "1", "2", "3500m", "48"]))
    mem = str(rng.choice(["64Mi", "256Mi", "1Gi", "4Gi", "30Gi", "300Gi"]))
    pod = {"metadata": {"name": f"pod-{i}", "namespace": str(rng.choice(["default", "jobs"])), "uid": f"u-{i}",
                        "labels": {"app": f"a{i % 4}"}, "annotations": {}},
           "spec": {"containers": [{"name": "main", "image": "busybox",
                                    "resources": {"requests": {"cpu": cpu, "memory": mem}}}],
                    "schedulerName": "drsched"},
           "status": {"phase": "Pending"}}
    shape = rng.random()
    ann = pod["metadata"]["annotations"]
    if shape < 0.25:
        ann["drsched.io/profile"] = (f"cpu={rng.uniform(0.1, 4):.3f},mem={rng.uniform(0.1, 8):.3f},"
                                     f"net={rng.uniform(0, 400):.1f},disk={rng.uniform(0, 200):.1f}")
    elif shape < 0.4:
        ann["drsched.io/profile"] = json.dumps({"cpu": "1500m", "memory": "3Gi",
                                                "net": f"{int(rng.integers(1, 900))}M"})
    elif shape < 0.45:
        ann["drsched.io/profile"] = "cpu=lots"  # malformed: a fallback to requests, not an error
    elif shape < 0.55:
        pod["spec"]["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}},
                                         {"name": "side", "restartPolicy": "Always",
                                          "resources": {"requests": {"cpu": "200m", "memory": "128Mi"}}}]
    elif shape < 0.6:
        pod["spec"]["containers"][0].pop("resources")  # best effort: no requests at all
    elif shape < 0.65:
        pod["spec"]["overhead"] = {"cpu": "250m", "memory": "120Mi"}
    return pod


def v1_node(node: dict, rng: np.random.Generator) -> dict:
    """The v1.Node of a cached node (sometimes with other allocatable, as after an update the cache missed)."""
    cpu, mem, net, disk = node["capacity"]
    if rng.random() < 0.1:
        cpu = cpu * 2
    conds = [{"type": "MemoryPressure", "status": "False"},
             {"type": "Ready", "status": "True" if node["ready"] else "False", "reason": "KubeletReady"}]
    out = {"metadata": {"name": node["name"], "uid": f"uid-{node['name']}", "labels": {"kubernetes.io/os": "linux"},
                        "annotations": {"drsched.io/net-mbps": f"{int(net)}", "drsched.io/disk-mbps": f"{int(disk)}"}},
           "spec": {},
           "status": {"allocatable": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": str(int(node["max_pods"]))},
                      "capacity": {"cpu": str(cpu), "memory": f"{mem}Gi", "pods": "110"}, "conditions": conds}}
    if rng.random() < 0.05:
        out["spec"]["unschedulable"] = True
    return out


def make_ops(rng: np.random.Generator, cluster: dict) -> list[dict]:
    """The request sequence: {"verb", "body"} with ``body`` the exact bytes (as text) sent."""
    names = [n["name"] for n in cluster["nodes"]]
    by_name = {n["name"]: n for n in cluster["nodes"]}
    ops: list[dict] = []

    def add(verb: str, body) -> None:
        ops.append({"verb": verb, "body": body if isinstance(body, str) else json.dumps(body, separators=(",", ":"))})

    for i in range(120):
        pod = v1_pod(rng, i)
        shape = rng.random()
        if shape < 0.3:
            cand = list(names)
        elif shape < 0.8:
            k = int(rng.integers(1, len(names)))
            cand = [names[j] for j in rng.permutation(len(names))[:k]]
        else:
            cand = [names[j] for j in rng.permutation(len(names))[:50]] + ["ghost-1", "ghost-2"]
            rng.shuffle(cand)
        key = "NodeNames" if rng.random() > 0.1 else "nodenames"  # kube-scheduler's casing is not guaranteed
        body = {"Pod": pod, "Nodes": None, key: cand}
        add("filter", body)
        add("prioritize", body)
        if i % 3 == 0 and cand and cand[0] in by_name:
            add("bind", {"PodName": pod["metadata"]["name"], "PodNamespace": pod["metadata"]["namespace"],
                         "PodUID": pod["metadata"]["uid"], "Node": cand[0]})
    for i in range(120, 160):
        pod = v1_pod(rng, i)
        k = int(rng.integers(1, 120))
        items = [v1_node(by_name[names[j]], rng) for j in rng.permutation(len(names))[:k]]
        if rng.random() < 0.2:
            items.append({"metadata": {"name": f"new-{i}"}, "status": {"allocatable": {"cpu": "8", "memory": "16Gi"}}})
        body = {"Pod": pod, "Nodes": {"metadata": {}, "items": items}, "NodeNames": None}
        add("filter", body)
        add("prioritize", body)
    pod = v1_pod(rng, 999)
    bad_node = {"metadata": {"name": "bad"}, "status": {"allocatable": {"cpu": "lots"}}}
    bad_pod = {"metadata": {"name": "bad"}, "spec": {"containers": [{"resources": {"requests": {"cpu": "x"}}}]}}
    for verb in ("filter", "prioritize"):
        add(verb, "not json")
        add(verb, "[1, 2]")
        add(verb, {"Pod": pod, "NodeNames": [1, 2]})
        add(verb, {"Pod": pod, "Nodes": {"items": "x"}})
        add(verb, {"Pod": None, "NodeNames": names[:3]})
        add(verb, {"Pod": pod})
        add(verb, {"Pod": pod, "NodeNames": []})
        add(verb, {"Pod": bad_pod, "NodeNames": names[:3]})
        add(verb, {"Pod": pod, "Nodes": {"items": [bad_node]}})
        add(verb, {"Pod": pod, "Nodes": {"items": [{"metadata": {}}]}})
        add(verb, '{"Pod": {"metadata": {"name": "nan"}}, "NodeNames": ["' + names[0] + '"], "X": NaN}')
        add(verb, {"pod": pod, "NODENAMES": names[:5], "Pod": pod, "Extra": 1})
    return ops


def load_into(cache, cluster: dict) -> None:
    """Fill a ``kube.cache.ClusterCache`` with the corpus cluster (usage stamped against ``NOW``)."""
    from kube.cache import NodeUsage, PodRecord
    from kube.objects import NodeInfo

    cache.replace_nodes(NodeInfo(name=n["name"], capacity=tuple(n["capacity"]), max_pods=n["max_pods"],
                                 ready=n["ready"]) for n in cluster["nodes"])
    cache.apply_usage({name: NodeUsage(*u["usage"], timestamp=NOW - u["age"]) for name, u in cluster["usage"].items()})
    cache.replace_pods(PodRecord(namespace=p["namespace"], name=p["name"], uid=p["uid"], node=p["node"],
                                 requests=np.array(p["requests"]), demand=np.array(p["demand"]),
                                 demand_source=p["demand_source"], terminated=p["terminated"],
                                 bound_at=p["bound_at"]) for p in cluster["pods"])


def replay(cluster: dict, ops: list[dict], policy: str, tmp: Path) -> list[dict]:
    """Serve ``cluster`` with ``policy`` in-process (clock frozen at NOW) and answer every op in order."""
    import time
    from unittest import mock

    from fastapi.testclient import TestClient

    from extender.service import create_app
    from extender.settings import build_settings
    from extender.static_cluster import StaticCluster

    # The corpus binds between requests (a bind changes what later requests see); bind is off by default and
    # needs a client CA, so this in-process replay turns it on the way only local tests may.
    # The corpus was recorded with the minmax score mapping; the request path is what it checks (the mappings have
    # their own table tests), so it stays pinned when the served default changes.
    settings = build_settings(static_cluster=str(tmp / "unused.yaml"), usage_provider="none", policy=policy,
                              log_level="ERROR", bind_enabled=True, insecure_bind_without_client_ca=True,
                              score_mapping="minmax")
    out = []
    with mock.patch.object(time, "time", lambda: NOW):
        app = create_app(settings, cluster=StaticCluster(nodes=[], pods=[], usage={}))
        with TestClient(app) as client:
            load_into(app.state.runtime.cache, cluster)
            for op in ops:
                resp = client.post(f"/{op['verb']}", content=op["body"].encode(),
                                   headers={"Content-Type": "application/json"})
                out.append({"status": resp.status_code, "body": resp.text})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CORPUS, help="where to write the corpus (json.gz)")
    parser.add_argument("--seed", type=int, default=15, help="seed of the cluster and the request sequence")
    args = parser.parse_args(argv)
    import tempfile

    rng = np.random.default_rng(args.seed)
    cluster = make_cluster(rng)
    ops = make_ops(rng, cluster)
    with tempfile.TemporaryDirectory() as tmp:
        expected = {p: replay(cluster, ops, p, Path(tmp)) for p in POLICIES}
    doc = {"seed": args.seed, "now": NOW, "cluster": cluster, "ops": ops, "expected": expected}
    with gzip.open(args.out, "wt", encoding="utf-8") as fh:
        json.dump(doc, fh, separators=(",", ":"))
    print(f"{args.out}: {len(ops)} requests x {len(POLICIES)} policies", file=sys.stderr)  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
