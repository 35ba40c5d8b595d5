"""The extender's watch path per pod event, and a scheduled pod's whole cycle, in-process: their CPU.

Why it exists: in the scheduler benchmark the extender's watch threads held 36 % of its GIL time
(``results/bench/profiles/``), on the moments kube-scheduler's next filter is waiting. This times that path
alone, as ``extender.service`` wires it: an ``IndexingWatcher`` feeding the cluster cache, the pod index and
the recording observer (shadow mode and outcomes; the decision log off), on ``--nodes`` KWOK nodes (500),
with the events a scheduled pod makes in ``bench/bench_scheduler.py`` (ADDED pending; MODIFIED bound, with
its PodScheduled condition; MODIFIED Running, as KWOK writes it; DELETED), shaped as kube-apiserver sends them
(managedFields, defaults, the token volume). Reported per event, CPU (``time.process_time``), median over
``--rounds``: decoding the event line as the checkout's pod watch does (``pod_watch``: ``extender.kube``'s
``unmarshal_event``, from ``str``) and applying it, event after event.

``--cycle`` times what the extender does per scheduled pod instead (``one_cycle``), pod after pod on one
cache, so each request sees the binds before it: the pod's ADDED event; filter naming every node and
prioritize naming those that passed, as kube-scheduler asks at percentageOfNodesToScore 100 (names mode,
the fast path's bytes in and out, the model served); its bound and Running events (kube-scheduler binds:
the shipped configs leave ``bindVerb`` unset); and the KWOK node heartbeats that fall between two pods
(``--heartbeat-s`` per node, KWOK's 32.5 s on average, at ``--pod-rate`` pods/s), each read from an HTTP
chunked stream on a local socket by urllib3, the client's ``Watch.stream`` and the checkout's own watch class,
as ``KubeWatcher`` reads it (``NodeStream``).
``--usage`` gives every node a usage sample, so some are hot and fail filter (default none, as
``bench_scheduler.py`` runs). Thread CPU per scheduled pod, per part, and per heartbeat event with what the
heartbeats of ``--nodes`` nodes cost a second whether pods are scheduled or not. No HTTP on the request side:
what the served extender adds to this is uvicorn's work per request, the pod watch's socket reads and TLS.

``--baseline-tree DIR`` times another checkout (``git archive <commit> | tar -x -C DIR``) the same way, each
round in its own process, alternating with this checkout's (ABAB..., which goes first alternating too), and
prints the ratio per round, its median and range: a change measured against its baseline in the same run.
With ``--cycle`` it also says whether every pass gave the same replies (a digest of every filter and
prioritize answer): a change that only saves work must leave them equal. ``--profile FILE``: cProfile of one
pass of this checkout instead.

    PYTHONPATH=. python bench/bench_watch.py --pods 2000 --rounds 5 --baseline-tree /tmp/base
    PYTHONPATH=. python bench/bench_watch.py --cycle --pods 500 --rounds 9 --baseline-tree /tmp/base
    PYTHONPATH=. python bench/bench_watch.py --cycle --nodes 5000 --usage --pods 150 --baseline-tree /tmp/base
    PYTHONPATH=. python bench/bench_watch.py --cycle --nodes 5000 --profile /tmp/cycle.prof

Prints figures and writes ``results/bench/runs/watch-<UTC start>.json`` (``cycle-<UTC start>.json`` with
``--cycle``; ``--results ''``: none); asserts nothing. On a shared machine run it pinned and niced
(``taskset -c 0 nice -n 19``): CPU time still grows with the load, which the alternation spreads over both.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODES = 500


def _fields(*keys: str) -> dict:
    return {".": {}, **{f"f:{k}": {} for k in keys}}


def _managed(manager: str, time: str, fields: dict, **extra) -> dict:
    return {"manager": manager, "operation": "Update", "apiVersion": "v1", "time": time, "fieldsType": "FieldsV1",
            "fieldsV1": fields, **extra}


def _condition_fields(*types: str) -> dict:
    return {".": {}, **{f'k:{{"type":"{t}"}}': _fields("lastProbeTime", "lastTransitionTime", "status", "type")
                        for t in types}}


_CREATED_FIELDS = {"f:spec": {
    "f:containers": {'k:{"name":"main"}': {**_fields("image", "imagePullPolicy", "name", "terminationMessagePath",
                                                      "terminationMessagePolicy"),
                                           "f:resources": {".": {}, "f:requests": _fields("cpu", "memory")}}},
    **{f"f:{k}": {} for k in ("dnsPolicy", "enableServiceLinks", "restartPolicy", "schedulerName", "securityContext",
                              "terminationGracePeriodSeconds", "tolerations")}}}
_KWOK_FIELDS = {"f:status": {
    "f:conditions": _condition_fields("ContainersReady", "Initialized", "Ready"),
    "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {},
    "f:startTime": {}}}


def pod_steps(i: int, node: str) -> list[tuple[str, dict]]:
    """A scheduled pod's four watch events (ADDED pending; MODIFIED bound to ``node``, with its PodScheduled
    condition; MODIFIED Running, as KWOK's pod-ready stage writes its status; DELETED), shaped as kube-apiserver
    sends them for ``harness.objects.small_pod``: defaulted spec, the service account's token volume, each
    writer's managedFields (2.3-3.9 KiB of JSON an event)."""
    created = "2026-12-04T17:00:00Z"
    pod = {
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": f"p-{i:05d}", "namespace": "bench", "uid": f"5d2c8f0e-0000-4000-8000-{i:012d}",
                     "resourceVersion": str(200_000 + 4 * i), "creationTimestamp": created,
                     "managedFields": [_managed("OpenAPI-Generator", created, _CREATED_FIELDS)]},
        "spec": {"volumes": [{"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                     {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                     {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                     {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                         "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}],
                 "containers": [{"name": "main", "image": "fake", "imagePullPolicy": "Always",
                                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                 "volumeMounts": [{"name": "kube-api-access-x7k2p", "readOnly": True,
                                                   "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                                 "terminationMessagePath": "/dev/termination-log",
                                 "terminationMessagePolicy": "File"}],
                 "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                 "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
                 "schedulerName": "drsched",
                 # the KWOK node's own taint tolerated, as a pod kube-scheduler places on KWOK nodes must be:
                 # without it every candidate lies outside the pod's pool (``kube.pool``) and prioritize takes
                 # the from-scratch path that served clusters do not
                 "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"},
                                 {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300},
                                 {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                  "effect": "NoExecute", "tolerationSeconds": 300}],
                 "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority"},
        "status": {"phase": "Pending", "qosClass": "Burstable"},
    }
    steps = [("ADDED", copy.deepcopy(pod))]
    bound = "2026-12-04T17:00:01Z"
    pod["metadata"]["resourceVersion"] = str(200_001 + 4 * i)
    pod["metadata"]["managedFields"].append(
        _managed("kube-scheduler", bound, {"f:status": {"f:conditions": _condition_fields("PodScheduled")}},
                 subresource="status"))
    pod["spec"]["nodeName"] = node
    pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                    "lastTransitionTime": bound}]
    steps.append(("MODIFIED", copy.deepcopy(pod)))
    started, ip = "2026-12-04T17:00:02Z", f"10.0.{i // 250 % 250}.{i % 250 + 1}"
    pod["metadata"]["resourceVersion"] = str(200_002 + 4 * i)
    pod["metadata"]["managedFields"].append(_managed("kwok", started, _KWOK_FIELDS, subresource="status"))
    pod["status"] = {
        "phase": "Running",
        "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": started}
                       for t in ("Initialized", "Ready", "ContainersReady")] + pod["status"]["conditions"],
        "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}], "podIP": ip, "podIPs": [{"ip": ip}],
        "startTime": started,
        "containerStatuses": [{"name": "main", "state": {"running": {"startedAt": started}}, "lastState": {},
                               "ready": True, "restartCount": 0, "image": "fake", "imageID": "", "started": True}],
        "qosClass": "Burstable"}
    steps.append(("MODIFIED", copy.deepcopy(pod)))
    pod["metadata"]["resourceVersion"] = str(200_003 + 4 * i)
    pod["metadata"]["deletionTimestamp"] = "2026-12-04T17:01:00Z"
    pod["metadata"]["deletionGracePeriodSeconds"] = 0
    steps.append(("DELETED", copy.deepcopy(pod)))
    return steps


def events(pods: int) -> list[bytes]:
    """Four watch event lines per pod, as kube-apiserver sends them to the extender during the benchmark."""
    return [json.dumps({"type": t, "object": o}).encode()
            for i in range(pods) for t, o in pod_steps(i, f"bench-{i % NODES:04d}")]


_CONDITIONS = (("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
               ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
               ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
               ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
               ("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"))


def kwok_node(name: str, beat: int) -> dict:
    """A KWOK node as the watch sends it (3.8 KiB of JSON): created as ``harness.objects.fake_node`` makes it,
    its status as KWOK's node-initialize and node-heartbeat stages write it, with both writers'
    managedFields. ``beat`` stamps the heartbeat: a later beat moves only ``lastHeartbeatTime``, the
    resourceVersion and KWOK's managedFields time, as a KWOK heartbeat does (nothing the cache reads)."""
    i = int(name.rsplit("-", 1)[1])
    cpu, stamp = (8, 16, 32)[i % 3], f"2026-12-04T17:{beat // 60 % 60:02d}:{beat % 60:02d}Z"
    resources = {"cpu": str(cpu), "memory": f"{cpu * 4}Gi", "pods": "110"}
    created = {"f:metadata": {"f:annotations": _fields("kwok.x-k8s.io/node"),
                              "f:labels": _fields("kubernetes.io/arch", "kubernetes.io/hostname", "kubernetes.io/os",
                                                  "type")},
               "f:status": {"f:allocatable": _fields("cpu", "memory", "pods"),
                            "f:capacity": _fields("cpu", "memory", "pods")}}
    kwok = {"f:status": {
        "f:addresses": {".": {}, **{f'k:{{"type":"{t}"}}': _fields("address", "type") for t in ("Hostname",
                                                                                              "InternalIP")}},
        "f:conditions": {".": {}, **{f'k:{{"type":"{t}"}}': _fields("lastHeartbeatTime", "lastTransitionTime",
                                                                     "message", "reason", "status", "type")
                                     for t, *_ in _CONDITIONS}},
        "f:daemonEndpoints": {"f:kubeletEndpoint": {"f:Port": {}}},
        "f:nodeInfo": {f"f:{k}": {} for k in ("architecture", "bootID", "containerRuntimeVersion", "kernelVersion",
                                              "kubeProxyVersion", "kubeletVersion", "machineID", "operatingSystem",
                                              "osImage", "systemUUID")},
        "f:phase": {}}}
    writers = (("OpenAPI-Generator", "2026-12-04T16:00:00Z", created, {}),
               ("kwok", stamp, kwok, {"subresource": "status"}))
    managed = [{"manager": m, "operation": "Update", "apiVersion": "v1", "time": t, "fieldsType": "FieldsV1",
                "fieldsV1": f, **extra} for m, t, f, extra in writers]
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": name, "uid": f"7f1c2a4e-0000-4000-8000-{i:012d}",
                         "resourceVersion": str(100_000 + beat), "creationTimestamp": "2026-12-04T16:00:00Z",
                         "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name,
                                    "kubernetes.io/os": "linux", "type": "kwok"},
                         "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                         "managedFields": managed},
            "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}]},
            "status": {"capacity": dict(resources), "allocatable": resources,
                       "conditions": [{"type": t, "status": st, "lastHeartbeatTime": stamp,
                                       "lastTransitionTime": "2026-12-04T16:00:00Z", "reason": r, "message": m}
                                      for t, st, r, m in _CONDITIONS],
                       "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 250}.{i % 250 + 1}"},
                                     {"type": "Hostname", "address": name}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                       "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "kwok-v0.8.0",
                                    "osImage": "", "containerRuntimeVersion": "kwok-v0.8.0",
                                    "kubeletVersion": "kwok-v0.8.0", "kubeProxyVersion": "kwok-v0.8.0",
                                    "operatingSystem": "linux", "architecture": "amd64"},
                       "phase": "Running"}}


def served(policy: str, nodes: int = NODES):
    """(runtime, watcher) wired as ``extender.service`` wires them, without HTTP and without an apiserver: the
    cluster cache, the learned-profile store, the pod index and the recording observer (shadow mode and
    outcomes; the decision log off), on ``nodes`` KWOK nodes; no usage provider, as in
    ``bench/bench_scheduler.py``."""
    from extender.kube_index import IndexingWatcher
    from extender.pod_index import PodIndex
    from extender.profile_store import LearnedProfileStore
    from extender.recording import Recording
    from extender.runtime import Runtime, load_policy, thresholds_of
    from extender.settings import build_settings
    from extender.telemetry import Telemetry
    from kube.cache import ClusterCache
    from kube.selectors import parse_selector

    s = build_settings(None, policy=policy, log_level="WARNING")
    telemetry = Telemetry()
    cache = ClusterCache(assume_grace_s=s.assume_grace_s)
    profiles = LearnedProfileStore(min_samples=s.profile_min_samples, half_life_s=s.profile_half_life_s,
                                   workload_labels=s.workload_labels, ttl_s=s.profile_ttl_s,
                                   max_profiles=s.profile_max)
    served_policy, _ = load_policy(s, telemetry)
    recording = Recording(s, cache=cache, policy=served_policy, telemetry=telemetry, thresholds=thresholds_of(s))
    recording.start()
    index = PodIndex(selector=parse_selector(s.monitor_selector), port=s.monitor_port,
                     namespace=s.monitor_namespace, workload_of=profiles.workload_of)
    watcher = IndexingWatcher(None, cache, s, store=profiles, telemetry=telemetry, index=index,
                              observer=recording.observe_pod)
    for i in range(nodes):
        watcher._apply("nodes", "ADDED", kwok_node(f"bench-{i:04d}", 0))
    rt = Runtime(settings=s, cache=cache, telemetry=telemetry, policy=served_policy, profiles=profiles,
                 recording=recording)
    return rt, watcher


def pod_watch():
    """The checkout's pod watch as ``KubeWatcher._loop`` makes it: its ``unmarshal_event`` decodes a line as the
    served extender does (from ``str``, as the client's ``iter_resp_lines`` hands it over)."""
    import inspect

    from extender.kube import dict_watch_class

    # a checkout from before extender.node_events has one DictWatch for both kinds
    kinds = ("pods",) if "kind" in inspect.signature(dict_watch_class).parameters else ()
    return dict_watch_class(*kinds)()


def one_pass(pods: int, nodes: int = NODES) -> dict[str, float]:
    """Decode and apply every event once on a fresh cache of ``nodes`` nodes, event after event, as the watch thread
    does (no decoded event outlives its apply): CPU us per event of each."""
    _, watcher = served("demand-aware", nodes)  # no request is scored: the policy takes no part
    watch = pod_watch()
    lines = [line.decode() for line in events(pods)]
    clock = time.process_time
    decode = apply = 0.0
    for line in lines:
        t0 = clock()
        event = watch.unmarshal_event(line, None)
        t1 = clock()
        watcher._apply("pods", event["type"], event["raw_object"])
        t2 = clock()
        decode += t1 - t0
        apply += t2 - t1
    if watcher.cache.pod("bench", f"p-{pods - 1:05d}") is not None:
        raise RuntimeError("a pod is still in the cache after its DELETED event")
    return {"decode_us": 1e6 * decode / len(lines), "apply_us": 1e6 * apply / len(lines),
            "event_us": 1e6 * (decode + apply) / len(lines), "events": len(lines)}


class NodeStream:
    """The node watch's event stream as ``extender.kube.KubeWatcher._loop`` reads it: an HTTP/1.1 chunked
    response on a local socket (one chunk per event, as kube-apiserver flushes; no TLS), read by urllib3 and the
    client's ``Watch.stream`` with the checkout's ``dict_watch_class``. ``beat`` sends one KWOK heartbeat (the
    sending is the apiserver's work, outside the timed part), ``next_event`` reads it back. ``close`` ends it."""

    def __init__(self) -> None:
        import inspect
        import socket
        import threading

        import urllib3

        from extender.kube import dict_watch_class

        server = socket.create_server(("127.0.0.1", 0))
        accepted: list[socket.socket] = []

        def accept() -> None:  # answer the one watch request with a chunked response's head
            conn, _ = server.accept()
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            accepted.append(conn)

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        self._pool = urllib3.PoolManager()
        response = self._pool.request("GET", f"http://127.0.0.1:{server.getsockname()[1]}/api/v1/nodes?watch=1",
                                      preload_content=False)
        thread.join()
        server.close()
        self._conn = accepted[0]

        def list_node(**kwargs):
            """:return: V1NodeList"""
            return response

        # a checkout from before extender.node_events has one DictWatch for both kinds
        kinds = ("nodes",) if "kind" in inspect.signature(dict_watch_class).parameters else ()
        self.watch = dict_watch_class(*kinds)()
        self._events = self.watch.stream(list_node, resource_version="1", allow_watch_bookmarks=True,
                                         timeout_seconds=30)

    def beat(self, node: dict) -> None:
        import orjson

        line = orjson.dumps({"type": "MODIFIED", "object": node}) + b"\n"
        self._conn.sendall(b"%x\r\n%s\r\n" % (len(line), line))

    def next_event(self) -> dict:
        return next(self._events)

    def close(self) -> None:
        self._conn.close()
        self._events.close()
        self._pool.clear()


CYCLE_WARMUP = 50
"""Pods scheduled before the clock starts (first requests build the memos and the row cache)."""
KWOK_HEARTBEAT_S = 32.5
"""Seconds between two heartbeats of one KWOK node, on average: KWOK's node-heartbeat stage waits 20 s plus a
jitter of up to 25 s (``kustomize/stage/node/heartbeat``)."""
POD_RATE = 16.7
"""Pods scheduled per second: drsched's rate at 5,000 KWOK nodes (issue #26), which sets how many heartbeats
fall between two pods."""


def _usage(rt, nodes: int) -> None:
    """A usage sample per node, as ``bench/bench_extender.py``'s cluster has: some nodes are hot and fail filter."""
    import numpy as np

    from kube.cache import NodeUsage

    rng = np.random.default_rng(0)
    now = time.time()
    samples = {}
    for i in range(nodes):
        cpu = (8, 16, 32)[i % 3]
        samples[f"bench-{i:04d}"] = NodeUsage(cpu=rng.uniform(0, 0.8) * cpu, mem=rng.uniform(0.1, 0.9) * cpu * 4,
                                              net=rng.uniform(0, 1000), disk=rng.uniform(0, 400), timestamp=now)
    rt.cache.apply_usage(samples)


def one_cycle(pods: int, policy: str, *, nodes: int = NODES, usage: bool = False,
              heartbeat_s: float = KWOK_HEARTBEAT_S, pod_rate: float = POD_RATE) -> dict:
    """Schedule ``pods`` pods one after the other, each as kube-scheduler does with percentageOfNodesToScore
    100: its ADDED event, filter naming every node (names mode, in kube-scheduler's node order, not the
    cache's), prioritize naming those that passed, its bound and Running events (bound to the first node
    with the top score), and the KWOK heartbeats that fall between two pods (``nodes / heartbeat_s /
    pod_rate``, through ``NodeStream``). Thread CPU (``time.thread_time``) per scheduled pod, in us, of each
    part: ``pod_events_us`` (decode + apply of the pod's 3 events), ``heartbeats_us``, ``filter_us`` and
    ``prioritize_us`` (from the body's bytes to the reply's, ``extender.fastwire.answer``); ``pod_us`` their
    sum. ``heartbeat_event_us``: per heartbeat event; ``heartbeat_cpu_ms_per_s``: what the heartbeats of
    ``nodes`` nodes cost a second, scheduling or not. ``decisions`` is a digest of every reply: equal across
    checkouts when no decision changed.
    """
    import hashlib
    import random

    import orjson

    from extender.fastwire import answer, parse_args

    rt, watcher = served(policy, nodes)
    if usage:
        _usage(rt, nodes)
    stream, watch = NodeStream(), pod_watch()
    names = [f"bench-{i:04d}" for i in range(nodes)]
    random.Random(0).shuffle(names)
    digest = hashlib.sha256()
    parts = dict.fromkeys(("pod_events_us", "heartbeats_us", "filter_us", "prioritize_us"), 0.0)
    per_pod, owed, beat, beats = nodes / heartbeat_s / pod_rate, 0.0, 0, 0
    clock = time.thread_time
    for i in range(pods + CYCLE_WARMUP):
        timed = i >= CYCLE_WARMUP
        added = orjson.dumps({"type": "ADDED", "object": pod_steps(i, "")[0][1]})
        pod = orjson.loads(added)["object"]
        del pod["metadata"]["managedFields"]  # kube-scheduler's informer drops them before it sends the pod
        body = orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": names})
        added = added.decode()  # as the client's line reader hands it to the watch
        t0 = clock()
        event = watch.unmarshal_event(added, None)
        watcher._apply("pods", event["type"], event["raw_object"])
        t1 = clock()
        _, status, filtered = answer(rt, "filter", parse_args(body))
        t2 = clock()
        filtered = bytes(filtered)
        passed = orjson.loads(filtered)["NodeNames"] if status == 200 else None
        body = orjson.dumps({"Pod": pod, "Nodes": None, "NodeNames": passed})
        t2b = clock()
        _, status2, scores = answer(rt, "prioritize", parse_args(body))
        t3 = clock()
        if status != 200 or status2 != 200 or not passed:
            raise RuntimeError(f"pod {i}: filter {status}, prioritize {status2}, {len(passed or ())} nodes passed")
        scores = bytes(scores)
        digest.update(filtered)
        digest.update(scores)
        node = max(orjson.loads(scores), key=lambda h: h["Score"])["Host"]  # the first of the best: max keeps it
        later = [orjson.dumps({"type": t, "object": o}).decode() for t, o in pod_steps(i, node)[1:3]]
        owed += per_pod
        due = int(owed)
        owed -= due
        for _ in range(due):
            beat += 1
            stream.beat(kwok_node(names[beat % nodes], 1 + beat // nodes))
        t4 = clock()
        for line in later:
            event = watch.unmarshal_event(line, None)
            watcher._apply("pods", event["type"], event["raw_object"])
        t5 = clock()
        for _ in range(due):  # as KubeWatcher._loop: the client's stream, then the event applied
            event = stream.next_event()
            watcher._apply("nodes", event.get("type", ""), event.get("raw_object") or {})
        t6 = clock()
        if timed:
            beats += due
            for key, dt in (("pod_events_us", t1 - t0 + t5 - t4), ("heartbeats_us", t6 - t5),
                            ("filter_us", t2 - t1), ("prioritize_us", t3 - t2b)):
                parts[key] += dt
    stream.close()
    out = {key: 1e6 * v / pods for key, v in parts.items()}
    out["pod_us"] = sum(out.values())
    out["heartbeat_event_us"] = 1e6 * parts["heartbeats_us"] / max(beats, 1)
    out["heartbeat_cpu_ms_per_s"] = out["heartbeat_event_us"] * nodes / heartbeat_s / 1000
    out["heartbeats_per_pod"] = beats / pods
    out["policy"] = rt.policy.name
    out["decisions"] = digest.hexdigest()[:16]
    return out


KEYS = {"events": ("decode_us", "apply_us", "event_us"),
        "cycle": ("pod_events_us", "heartbeats_us", "filter_us", "prioritize_us", "heartbeat_event_us",
                  "heartbeat_cpu_ms_per_s", "pod_us")}
"""The figures of each mode; the last is the one a change is judged by."""


def _pass_args(args: argparse.Namespace) -> list[str]:
    extra = ["--nodes", str(args.nodes)]
    if args.cycle:
        extra += ["--cycle", "--policy", args.policy, "--heartbeat-s", str(args.heartbeat_s), "--pod-rate",
                  str(args.pod_rate), "--usage" if args.usage else "--no-usage"]
    return ["--pods", str(args.pods), *extra]


def _one(args: argparse.Namespace) -> dict:
    if not args.cycle:
        return one_pass(args.pods, args.nodes)
    return one_cycle(args.pods, args.policy, nodes=args.nodes, usage=args.usage, heartbeat_s=args.heartbeat_s,
                     pod_rate=args.pod_rate)


def in_tree(tree: Path, args: argparse.Namespace) -> dict:
    """``one_pass`` (or ``one_cycle`` with ``--cycle``) in a fresh process whose ``extender`` and ``kube`` come
    from ``tree``, pinned to the CPUs this process may use."""
    env = dict(os.environ, PYTHONPATH=str(tree), OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, __file__, "--one-pass", *_pass_args(args)], env=env,
                         cwd=tree, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"bench_watch: the pass in {tree} failed:\n{out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(f: dict, keys: tuple[str, ...]) -> str:
    return "  ".join(f"{k.removesuffix('_us')} {f[k]:7.1f}" for k in keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--pods", type=int, default=2000, help="pods, 4 events each (default 2000)")
    parser.add_argument("--nodes", type=int, default=NODES, help=f"KWOK nodes in the cache (default {NODES})")
    parser.add_argument("--rounds", type=int, default=5, help="passes per checkout, alternating (default 5)")
    parser.add_argument("--baseline-tree", type=Path, help="also time this checkout, alternating with this one")
    parser.add_argument("--cycle", action="store_true",
                        help="a scheduled pod's whole cycle: its events, filter and prioritize (one_cycle)")
    parser.add_argument("--policy", default="model", help="with --cycle: the policy served (default model)")
    parser.add_argument("--usage", action=argparse.BooleanOptionalAction, default=False,
                        help="with --cycle: a usage sample per node, some nodes hot (default: none, as "
                             "bench_scheduler.py runs)")
    parser.add_argument("--heartbeat-s", type=float, default=KWOK_HEARTBEAT_S,
                        help=f"with --cycle: seconds between two heartbeats of a node "
                             f"(default {KWOK_HEARTBEAT_S}, KWOK's)")
    parser.add_argument("--pod-rate", type=float, default=POD_RATE,
                        help=f"with --cycle: pods scheduled a second, which sets the heartbeats per pod "
                             f"(default {POD_RATE})")
    parser.add_argument("--profile", help="cProfile one pass of this checkout to this file; no record")
    parser.add_argument("--results", default=None,
                        help="write the figures here ('' = do not; default results/bench/runs/watch-<UTC>.json)")
    parser.add_argument("--one-pass", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pods < 1 or args.rounds < 1 or args.nodes < 1 or args.heartbeat_s <= 0 or args.pod_rate <= 0:
        parser.error("--pods, --rounds and --nodes must be at least 1; --heartbeat-s and --pod-rate above 0")
    if args.one_pass:
        print(json.dumps(_one(args)))
        return 0
    if args.profile:
        import cProfile

        cProfile.runctx("_one(args)", globals(), {"args": args}, args.profile)
        print(f"profile: {args.profile}")
        return 0
    if args.baseline_tree is not None and not (args.baseline_tree / "extender" / "kube_index.py").is_file():
        parser.error(f"--baseline-tree {args.baseline_tree}: not a drsched checkout (no extender/kube_index.py)")
    sys.path.insert(0, str(ROOT / "bench"))
    import record

    mode = "cycle" if args.cycle else "events"
    keys = KEYS[mode]
    path = record.run_path("cycle" if args.cycle else "watch") if args.results is None else (args.results or None)
    record.refuse_existing(path)
    load = record.load_average()
    trees = {"this": ROOT} | ({"baseline": args.baseline_tree.resolve()} if args.baseline_tree else {})
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    what = (f"a scheduled pod's cycle ({args.policy}, usage {'on' if args.usage else 'off'}, a heartbeat per node "
            f"every {args.heartbeat_s} s at {args.pod_rate} pods/s), {args.pods} pods" if args.cycle
            else f"watch path, {args.pods} pods x 4 events")
    print(f"{what} on {args.nodes} nodes, {args.rounds} rounds, CPUs {sorted(os.sched_getaffinity(0))}; "
          f"load {load:.2f}")
    for r in range(1, args.rounds + 1):
        # the checkouts alternate, and which goes first too, so the machine's load drifts over both alike
        for name in (list(trees) if r % 2 else list(trees)[::-1]):
            runs[name].append(in_tree(trees[name], args))
            print(f"  round {r} {name:8s} {_line(runs[name][-1], keys)}", flush=True)
    figures: dict = {"mode": mode, "pods": args.pods, "nodes": args.nodes, "rounds": runs,
                     "cpus": sorted(os.sched_getaffinity(0)), "commit": record.commit_of(ROOT)}
    if args.cycle:
        figures.update(policy=args.policy, usage=args.usage, heartbeat_s=args.heartbeat_s, pod_rate=args.pod_rate)
    for name in trees:
        med = {k: statistics.median(f[k] for f in runs[name]) for k in keys}
        figures.update({f"{name}_{k}_median": v for k, v in med.items()})
        print(f"  {name:8s} median: {_line(med, keys)}")
    if "baseline" in trees:
        figures["baseline_tree"] = str(args.baseline_tree)
        figures["baseline_commit"] = record.commit_of(trees["baseline"])
        for k in keys:
            ratios = [a[k] / b[k] for a, b in zip(runs["this"], runs["baseline"], strict=True)]
            figures[f"{k.removesuffix('_us')}_ratio_per_round"] = ratios
            figures[f"{k.removesuffix('_us')}_ratio_median"] = statistics.median(ratios)
            print(f"  {k.removesuffix('_us')}, this / baseline per round: {', '.join(f'{x:.2f}' for x in ratios)}; "
                  f"median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
        if args.cycle:
            same = {f["decisions"] for name in trees for f in runs[name]}
            figures["decisions_equal"] = len(same) == 1
            print(f"  decisions: {'the same in every pass' if len(same) == 1 else 'DIFFER: ' + ', '.join(same)}")
    return record.finish(path, figures, load_before=load)


if __name__ == "__main__":
    sys.exit(main())
