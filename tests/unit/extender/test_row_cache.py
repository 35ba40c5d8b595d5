"""RowCache: the incremental path answers bitwise what the from-scratch path answers, and re-encodes only
the rows whose inputs changed.

The property test drives random event sequences (binds, pod deletions, usage samples, nodes added, removed,
changed, tainted or cordoned, time passing across the staleness threshold, policy swaps, different pods and
tolerations) through a real ``ClusterCache`` and scores after every event both ways, for the model, a second model
and every heuristic: the cached way over the pod's context (``extender.context``), the plain way over the nodes
whose taints the pod tolerates, and its candidates, picked node by node.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.context import context_of
from extender.decide import ServedPolicy, heuristic_policy, model_policy, score
from extender.row_cache import RowCache
from kube.cache import ClusterCache, NodeUsage, PodRecord
from kube.objects import UNSCHEDULABLE_TAINT, NodeInfo, tolerates
from policy.baselines import SCORERS, make_scorer
from policy.features import EST_UTIL, MEAN_UTIL, N_NODE, STD_UTIL, cluster_row, mean_capacity
from policy.model import N_INPUTS, ModelScorer, QModel, load_model
from policy.state import PodView

MAX_AGE = 60.0
PODS = (
    PodView(requests=[0.5, 1.0], demand=[1.0, 2.0, 100.0, 20.0], demand_source="annotation"),
    PodView(requests=[2.0, 4.0], demand=[2.0, 4.0, 0.0, 0.0], demand_source="requests"),
    PodView(requests=[0.1, 0.25], demand=[0.05, 0.2, 300.0, 5.0], demand_source="learned"),
    PodView(requests=[0.5, 1.0], demand=[1.0, 2.0, 100.0, 20.0], demand_source="requests"),  # same key as 0
)
TOLERATIONS = ([], [{"key": "dedicated", "operator": "Exists"}], [{"operator": "Exists"}],
               [{"key": UNSCHEDULABLE_TAINT[0], "operator": "Exists", "effect": "NoSchedule"}],
               [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}])
"""A pod's ``spec.tolerations``: none, one taint's, every taint's, a cordon's, and a default one that matches none."""
TAINTS = ((), (("dedicated", "sys", "NoSchedule"),), (("gpu", "", "NoExecute"),), (UNSCHEDULABLE_TAINT,),
          (("dedicated", "sys", "NoSchedule"), UNSCHEDULABLE_TAINT))
CAPS = ((4.0, 16.0, 1250.0, 500.0), (8.0, 32.0, 125.0, 200.0), (32.0, 64.0, 3125.0, 2000.0), (2.0, 4.0, 1250.0, 500.0))
_DEFAULT = load_model("policy/models/default.npz")


def _random_model(seed: int) -> QModel:
    rng = np.random.default_rng(seed)
    sizes = (N_INPUTS, 16, 8, 1)
    weights = tuple(rng.normal(0, 0.5, (a, b)).astype(np.float32) for a, b in zip(sizes, sizes[1:], strict=False))
    biases = tuple(rng.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:])
    return QModel(weights=weights, biases=biases, activation="relu", meta={"version": f"random-{seed}"})


POLICY_NAMES = ("model", "model-b", *sorted(SCORERS))


def _policy(name: str) -> ServedPolicy:
    """A fresh policy object (a swap gives the cache a new one); stateful heuristics start from seed 0."""
    if name == "model":
        return model_policy(_DEFAULT)
    if name == "model-b":
        return model_policy(_random_model(7))
    return heuristic_policy(make_scorer(name, seed=0, max_usage_age=MAX_AGE))


class World:
    """A ClusterCache with a clock, and the two scoring paths side by side."""

    def __init__(self, n_nodes: int, policy: str, *, max_entries: int = 3, partial_min_nodes: int = 0) -> None:
        self.t = 1_000.0
        self.cache = ClusterCache(clock=lambda: self.t, assume_grace_s=5.0)
        self.rows = RowCache(max_entries=max_entries, partial_min_nodes=partial_min_nodes)
        self.next_node = 0
        self.next_pod = 0
        for i in range(n_nodes):
            self.add_node(CAPS[i % len(CAPS)], ready=i % 9 != 8)
        self.swap(policy)

    def add_node(self, cap, *, ready: bool = True) -> None:
        name = f"n{self.next_node}"
        self.next_node += 1
        self.cache.upsert_node(NodeInfo(name=name, capacity=cap, max_pods=6.0, ready=ready))

    def swap(self, name: str) -> None:
        self.policy_name = name
        self.cached_policy, self.full_policy = _policy(name), _policy(name)

    def node(self, k: int) -> str | None:
        names = self.cache.node_names
        return names[k % len(names)] if names else None

    def apply(self, event: tuple) -> None:
        kind, a, b = event
        if kind == "bind" and self.node(a) is not None:
            pod = PODS[b % len(PODS)]
            self.next_pod += 1
            self.cache.upsert_pod(PodRecord(namespace="ns", name=f"p{self.next_pod}", uid=f"u{self.next_pod}",
                                            node=self.node(a), requests=pod.requests, demand=pod.demand,
                                            demand_source=pod.demand_source, bound_at=self.t))
        elif kind == "delete_pod" and self.next_pod:
            self.cache.delete_pod(f"u{1 + a % self.next_pod}")
        elif kind == "usage" and self.node(a) is not None:
            cap = self.cache.view().capacity[self.cache.view().index[self.node(a)]]
            frac = (b % 11) / 10.0
            self.cache.apply_usage({self.node(a): NodeUsage(cpu=cap[0] * frac, mem=cap[1] * (1 - frac / 2),
                                                            net=cap[2] * frac / 3, disk=0.0,
                                                            timestamp=self.t - (b % 4) * 20.0)})
        elif kind == "add_node":
            self.add_node(CAPS[a % len(CAPS)], ready=b % 5 != 0)
        elif kind == "delete_node" and self.node(a) is not None and len(self.cache.node_names) > 1:
            self.cache.delete_node(self.node(a))
        elif kind == "update_node" and self.node(a) is not None:
            self.cache.upsert_node(NodeInfo(name=self.node(a), capacity=CAPS[b % len(CAPS)], max_pods=6.0,
                                            ready=b % 3 != 0))
        elif kind == "taint" and self.node(a) is not None:  # a taint set, replaced, removed, or a cordon
            view = self.cache.view()
            i = view.index[self.node(a)]
            taints = TAINTS[b % len(TAINTS)]
            self.cache.upsert_node(NodeInfo(name=self.node(a), capacity=tuple(view.capacity[i].tolist()), max_pods=6.0,
                                            ready=bool(view.ready[i]) and UNSCHEDULABLE_TAINT not in taints,
                                            taints=taints))
        elif kind == "tick":
            self.t += (0.0, 0.25, 5.0, 30.0, 59.9, 61.0, 300.0)[a % 7]
        elif kind == "swap":
            self.swap(POLICY_NAMES[a % len(POLICY_NAMES)])

    def check(self, pod_k: int, subset: int) -> None:
        """Score ``PODS[pod_k]`` with ``TOLERATIONS[pod_k]``, then with the next ones (another pool on the same
        view), on some candidates both ways (mostly inside its pool, sometimes anywhere); every output must be
        bitwise equal."""
        self._check(pod_k, subset)
        self._check(pod_k, subset, tolerations=pod_k + 1)

    def _check(self, pod_k: int, subset: int, *, tolerations: int | None = None) -> None:
        view = self.cache.view()
        n = len(view.names)
        obj = {"spec": {"tolerations": TOLERATIONS[(pod_k if tolerations is None else tolerations) % len(TOLERATIONS)]}}
        inside = np.array([tolerates(obj, view.taints.get(name, ())) for name in view.names], dtype=bool)
        pick = np.flatnonzero(inside) if subset % 5 and inside.any() else np.arange(n)
        rng = np.random.default_rng(subset)
        rows = pick[rng.permutation(pick.size)[: max(1, pick.size - subset % 3)]] if subset % 4 else pick
        pod = PODS[pod_k % len(PODS)]
        ctx = context_of(view, obj, rows, self.t)
        cached = score(None, pod, self.cached_policy, max_usage_age=MAX_AGE, context=ctx.snap, rows=ctx.rows,
                       cache=self.rows if ctx.group is not None else None, group=ctx.group)
        inside[rows] = True  # the plain context: the nodes it tolerates, and its candidates
        plain = np.flatnonzero(inside)
        assert ctx.snap.names == tuple(view.names[i] for i in plain)
        full = score(None, pod, self.full_policy, max_usage_age=MAX_AGE, context=view.snapshot(self.t, plain),
                     rows=np.searchsorted(plain, rows))
        for field in ("nodes", "pod", "cluster", "mask", "mean_cap"):
            got, want = getattr(cached.enc, field), getattr(full.enc, field)
            assert got.dtype == want.dtype and got.shape == want.shape, field
            assert got.tobytes() == want.tobytes(), f"{field} differs ({self.policy_name})"
        assert cached.raw.tobytes() == full.raw.tobytes(), f"raw values differ ({self.policy_name})"
        # the decision log's inputs take the mean capacity from the Encoded: it is the context's own
        assert cached.enc.mean_cap.tobytes() == mean_capacity(ctx.snap).tobytes()
        assert cached.scores.tolist() == full.scores.tolist()
        assert cached.stale.tolist() == full.stale.tolist()


EVENTS = st.tuples(st.sampled_from(("bind", "bind", "delete_pod", "usage", "usage", "add_node", "delete_node",
                                    "update_node", "taint", "tick", "tick", "swap")),
                   st.integers(0, 50), st.integers(0, 50))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_nodes=st.integers(1, 12), policy=st.sampled_from(POLICY_NAMES), partial_min_nodes=st.sampled_from((0, 6)),
       steps=st.lists(st.tuples(EVENTS, st.integers(0, 7), st.integers(0, 20)), min_size=1, max_size=40))
def test_incremental_scoring_matches_the_full_recompute(n_nodes, policy, partial_min_nodes, steps):
    world = World(n_nodes, policy, partial_min_nodes=partial_min_nodes)
    world.check(0, 0)
    for event, pod_k, subset in steps:
        world.apply(event)
        world.check(pod_k, subset)


def test_a_long_seeded_sequence_on_a_larger_cluster_matches_too():
    """More nodes than the hypothesis cases (several BLAS blocks in the Q-network), every event kind."""
    rng = np.random.default_rng(26)
    world = World(300, "model", max_entries=2)
    kinds = ("bind", "bind", "bind", "delete_pod", "usage", "usage", "add_node", "delete_node", "update_node",
             "taint", "tick", "tick", "swap")
    for _ in range(300):
        world.apply((str(rng.choice(kinds)), int(rng.integers(0, 400)), int(rng.integers(0, 50))))
        world.check(int(rng.integers(0, 8)), int(rng.integers(0, 20)))


# -- what is re-encoded ---------------------------------------------------------------------------------
def _encoded_after(world: World, change) -> int:
    """Rows re-encoded by the request that follows ``change`` (the cache was up to date before it)."""
    world.check(0, 0)
    before = world.rows.reencoded
    change()
    world.check(0, 0)
    return world.rows.reencoded - before


def test_only_the_rows_whose_inputs_changed_are_encoded_again():
    world = World(40, "demand-aware")
    for i in range(40):  # every node has a fresh sample, 0 s old, and one in ten 40 s old
        world.apply(("usage", i, 2 if i % 10 == 0 else 0))
    assert _encoded_after(world, lambda: None) == 0
    assert _encoded_after(world, lambda: world.apply(("bind", 3, 0))) == 1
    assert _encoded_after(world, lambda: world.apply(("usage", 5, 12))) == 1  # a newer sample
    assert _encoded_after(world, lambda: world.apply(("tick", 1, 0))) == 0  # 0.25 s: nobody goes stale
    stale_before = int((~world.rows._entries[next(iter(world.rows._entries))].fresh).sum())
    # 30 s more: the samples that were 40 s old cross 60 s, and exactly those rows change
    crossed = _encoded_after(world, lambda: world.apply(("tick", 3, 0)))
    entry = world.rows._entries[next(iter(world.rows._entries))]
    assert crossed == int((~entry.fresh).sum()) - stale_before == 4
    # a poll with a sample for every node: past 1/8 of the rows, one pass over all of them
    assert _encoded_after(world, lambda: [world.apply(("usage", i, 12)) for i in range(40)]) == 40
    assert _encoded_after(world, lambda: world.apply(("update_node", 2, 1))) == 40  # the mean capacity moved
    assert _encoded_after(world, lambda: world.apply(("add_node", 0, 1))) == 41  # a node came: all rows


def test_a_small_cluster_encodes_every_row_on_a_new_view_and_none_on_the_same_one():
    world = World(40, "demand-aware", partial_min_nodes=41)
    assert _encoded_after(world, lambda: None) == 0
    assert _encoded_after(world, lambda: world.apply(("tick", 1, 0))) == 0  # same view, clock moved
    assert _encoded_after(world, lambda: world.apply(("bind", 3, 0))) == 40


def test_a_new_pod_key_encodes_every_row_and_an_evicted_key_does_again():
    world = World(10, "model", max_entries=2)
    assert _encoded_after(world, lambda: None) == 0
    for k, expected in ((1, 10), (2, 10), (1, 0), (0, 10)):  # 0 was evicted by 1 and 2
        before = world.rows.reencoded
        world.check(k, 0)
        assert world.rows.reencoded - before == expected, k
    before = world.rows.reencoded
    world.check(3, 0)  # PODS[3] has PODS[0]'s demand and requests: the same rows
    assert world.rows.reencoded == before


def test_the_common_pool_is_kept_across_requests_and_a_wider_pool_keeps_its_own_entry():
    world = World(40, "demand-aware")
    world.apply(("taint", 0, 1))  # n0: a NoSchedule taint
    world.apply(("taint", 1, 3))  # n1: cordoned
    for i in range(40):
        world.apply(("usage", i, 0))

    def encoded(tolerations: int) -> int:
        before = world.rows.reencoded
        world._check(0, 1, tolerations=tolerations)
        return world.rows.reencoded - before

    assert (encoded(0), encoded(0), encoded(4)) == (38, 0, 0)  # a default toleration: the same common pool
    assert (encoded(1), encoded(1), encoded(0)) == (39, 0, 0)  # tolerates n0's taint: an entry of its own
    world.apply(("bind", 5, 0))
    assert (encoded(0), encoded(1)) == (1, 1)  # a bind: that row alone, in each pool's entry
    assert encoded(2) == 40  # tolerates everything: every node


# -- when the Q-network runs ----------------------------------------------------------------------------
class CountingModel(ModelScorer):
    def __init__(self, model: QModel) -> None:
        super().__init__(model)
        self.calls = 0

    def score_encoded(self, enc):
        self.calls += 1
        return super().score_encoded(enc)


def test_the_model_runs_again_only_when_its_input_moved():
    world = World(8, "model")
    counting = CountingModel(_DEFAULT)
    world.cached_policy = ServedPolicy(counting, version="counting")
    world.check(0, 0)
    world.check(0, 1)  # nothing changed (another candidate subset): the last raw values serve
    assert counting.calls == 1
    world.apply(("usage", 2, 3))  # a node now has a sample: its row changed
    world.check(0, 0)
    assert counting.calls == 2
    world.apply(("tick", 1, 0))  # the clock moved: that node's usage_age moved
    world.check(0, 0)
    assert counting.calls == 3
    world.check(1, 0)  # another pod
    assert counting.calls == 4
    world.cached_policy = ServedPolicy(counting, version="swapped")  # a new model object: never the old values
    world.check(1, 0)
    assert counting.calls == 5


def test_arrays_handed_out_are_not_written_by_later_requests():
    world = World(6, "model")
    view = world.cache.view()
    first = world.rows.whole(view.snapshot(world.t), PODS[0], world.cached_policy, max_usage_age=MAX_AGE)[0]
    kept = first.nodes.copy(), first.mask.copy()
    world.apply(("usage", 1, 4))
    world.apply(("bind", 2, 1))
    world.apply(("tick", 2, 0))
    world.check(0, 0)
    assert first.nodes.tobytes() == kept[0].tobytes() and first.mask.tobytes() == kept[1].tobytes()
    assert first.nodes.shape == (6, N_NODE)


# -- the summary the cache recomputes after every change --------------------------------------------------
def test_cluster_row_gives_numpys_mean_and_std_of_the_feasible_est_columns_bitwise():
    """``cluster_row`` sums along contiguous rows; the encoder used to take ``est[:, mask].mean(axis=1)`` /
    ``.std(axis=1)`` on numpy's node-major layout of that array. Same bits, or the model's inputs moved."""
    rng = np.random.default_rng(11)
    for trial in range(600):
        n = int(rng.choice([1, 2, 3, 7, 8, 9, 17, 100, 129, 1000, 5000])) if trial % 2 else int(rng.integers(1, 3000))
        kind = trial % 4
        if kind == 0:
            est = rng.uniform(0, 4, (n, 4))
        elif kind == 1:
            est = rng.choice([0.0, 0.1, 0.5, 1 / 3, 4.0], (n, 4))
        elif kind == 2:
            est = rng.exponential(0.3, (n, 4)).clip(0, 4)
        else:  # nearly equal values: the std is all rounding
            est = np.full((n, 4), rng.uniform(0, 4)) + rng.normal(0, 1e-6, (n, 4))
        nodes = np.zeros((n, N_NODE), dtype=np.float32)
        nodes[:, EST_UTIL] = est
        mask = rng.random(n) < rng.uniform(0.05, 1.0)
        got = cluster_row(nodes, mask)
        if not mask.any():
            assert not got[MEAN_UTIL].any() and not got[STD_UTIL].any()
            continue
        # what encode reduced: its (4, N) C-ordered block of est columns, masked, cast (laid out node-major)
        layout = np.ascontiguousarray(est.T)[:, mask].astype(np.float32)
        assert got[MEAN_UTIL].tobytes() == layout.mean(axis=1).tobytes(), (trial, n)
        assert got[STD_UTIL].tobytes() == layout.std(axis=1).tobytes(), (trial, n)
