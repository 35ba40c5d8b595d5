"""``ClusterCache`` keeps its view across changes no node row reads (a pending pod, a status-only update, a
node heartbeat), and the view it keeps is always the one it would build afresh.

The property test drives random event sequences, repeats and no-ops included, and after each compares the
view the cache hands out with the rows of a cache built from scratch from the same nodes, samples and pods.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kube.cache import ClusterCache, NodeUsage, PodRecord
from kube.objects import NodeInfo

CAPS = ((4.0, 16.0, 1250.0, 500.0), (8.0, 32.0, 125.0, 200.0))
ROWS = ("capacity", "requested", "pods", "max_pods", "ready", "usage", "usage_ts", "assumed")


class World:
    def __init__(self) -> None:
        self.t = 1000.0
        self.cache = ClusterCache(clock=lambda: self.t, assume_grace_s=5.0)
        self.nodes: dict[str, NodeInfo] = {}
        self.samples: dict[str, NodeUsage] = {}
        for i in range(4):
            self.node(i, 0, True)

    def node(self, i: int, cap: int, ready: bool) -> None:
        info = NodeInfo(name=f"n{i}", capacity=CAPS[cap % 2], max_pods=3.0, ready=ready)
        self.nodes[info.name] = info
        self.cache.upsert_node(info)

    def pod(self, k: int, node: str | None, *, cpu: float = 0.5, terminated: bool = False) -> None:
        self.cache.upsert_pod(PodRecord(namespace="ns", name=f"p{k}", uid=f"u{k}", node=node,
                                        requests=np.array([cpu, 1.0]), demand=np.array([cpu, 1.0, 5.0, 0.0]),
                                        terminated=terminated, bound_at=self.t if node else 0.0))

    def apply(self, event: tuple) -> None:
        kind, a, b = event
        node = f"n{a % 6}" if a % 6 < 4 or f"n{a % 6}" in self.nodes else None
        if kind == "pending":
            self.pod(b, None)
        elif kind == "bind":
            self.pod(b, node)
        elif kind == "running":  # the same record again: a status-only update
            rec = self.cache.pod("ns", f"p{b}")
            if rec is not None:
                self.pod(b, rec.node, cpu=float(rec.requests[0]))
        elif kind == "resize":
            rec = self.cache.pod("ns", f"p{b}")
            if rec is not None:
                self.pod(b, rec.node, cpu=1.5)
        elif kind == "terminate":
            rec = self.cache.pod("ns", f"p{b}")
            if rec is not None:
                self.pod(b, rec.node, terminated=True)
        elif kind == "delete_pod":
            self.cache.delete_pod(f"u{b}")
        elif kind == "heartbeat" and node in self.nodes:
            self.cache.upsert_node(self.nodes[node])
        elif kind == "update_node":
            self.node(a % 6, b, b % 3 != 0)
        elif kind == "delete_node" and node in self.nodes and len(self.nodes) > 1:
            del self.nodes[node]
            self.samples.pop(node, None)
            self.cache.delete_node(node)
        elif kind == "usage" and node in self.nodes:
            sample = NodeUsage(cpu=b / 10, mem=1.0, net=0.0, disk=0.0, timestamp=self.t - b % 3)
            if node not in self.samples or sample.timestamp >= self.samples[node].timestamp:
                self.samples[node] = sample
            self.cache.apply_usage({node: sample})
        elif kind == "tick":
            self.t += 1.0

    def fresh(self) -> dict[str, np.ndarray]:
        """The rows of a cache built from scratch from what this one holds, in this one's node order."""
        other = ClusterCache(clock=lambda: self.t, assume_grace_s=5.0)
        names = self.cache.view().names
        for name in names:
            other.upsert_node(self.nodes[name])
        other.apply_usage({n: s for n, s in self.samples.items() if n in self.nodes})
        for rec in list(self.cache._pods.values()):
            other.upsert_pod(PodRecord(namespace=rec.namespace, name=rec.name, uid=rec.uid, node=rec.node,
                                       requests=rec.requests, demand=rec.demand, terminated=rec.terminated,
                                       bound_at=rec.bound_at))
        view = other.view()
        assert view.names == names
        return {f: getattr(view, f) for f in ROWS}


EVENTS = st.tuples(st.sampled_from(("pending", "bind", "bind", "running", "running", "resize", "terminate",
                                    "delete_pod", "heartbeat", "heartbeat", "update_node", "delete_node",
                                    "usage", "tick")),
                   st.integers(0, 10), st.integers(0, 6))


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(EVENTS, min_size=1, max_size=40))
def test_the_view_handed_out_is_always_the_one_built_afresh(steps):
    world = World()
    for event in steps:
        world.apply(event)
        view = world.cache.view()
        for field, want in world.fresh().items():
            assert getattr(view, field).tobytes() == want.tobytes(), (event, field)


def test_changes_no_row_reads_keep_the_view_and_the_others_do_not():
    world = World()
    world.apply(("bind", 0, 1))
    view = world.cache.view()
    for event in (("pending", 0, 2), ("running", 0, 1), ("heartbeat", 1, 0), ("delete_pod", 0, 2),
                  ("update_node", 1, 4)):  # n1 as it was: capacity CAPS[0], ready
        world.apply(event)
        assert world.cache.view() is view, event
    for event in (("bind", 2, 3), ("resize", 0, 1), ("terminate", 0, 3), ("delete_pod", 0, 1),
                  ("update_node", 1, 1), ("usage", 2, 4)):
        world.apply(event)
        assert world.cache.view() is not view, event
        view = world.cache.view()


def test_a_change_no_row_reads_still_counts_as_activity():
    world = World()
    before = world.cache.last_change
    world.t += 5.0
    world.apply(("pending", 0, 1))
    assert world.cache.last_change == before + 5.0
