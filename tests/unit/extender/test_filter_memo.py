"""FilterMemo: the kept reasons are what ``filter_reasons`` writes from scratch, in the same order, and only the
failing rows whose inputs moved are written again; ``in_order`` is the request-order FailedNodes and passing names.

The property test drives the row cache's random event sequences (``test_row_cache.World``: binds, pod deletions,
usage samples, nodes added, removed, changed, tainted or cordoned, time passing across the staleness threshold)
through a real ``ClusterCache`` and filters after every event both ways, for several pods and hot-filter modes,
on the whole view and on a subset of candidates.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extender.decide import Thresholds, filter_reasons
from extender.filter_memo import FilterMemo
from tests.unit.extender.test_row_cache import EVENTS, MAX_AGE, PODS, World

THRESHOLDS = (Thresholds(cpu=0.3, mem=0.5), Thresholds(cpu=0.3, mem=0.5, net=0.2, mode="prefer-fit"),
              Thresholds(cpu=0.4, mode="strict"), Thresholds(mode="off"), Thresholds())


class Filters:
    def __init__(self, world: World) -> None:
        self.world, self.memo = world, FilterMemo(max_entries=3)

    def check(self, pod_k: int, subset: int) -> None:
        view = self.world.cache.view()
        pod, thresholds = PODS[pod_k % len(PODS)], THRESHOLDS[(pod_k + subset) % len(THRESHOLDS)]
        n = len(view.names)
        rows = np.random.default_rng(subset).permutation(n)[: max(1, n - subset % 3)] if subset % 4 else np.arange(n)
        for snap in (view.snapshot(self.world.t), view.snapshot(self.world.t, rows)):
            got = self.memo.reasons(snap, pod, thresholds, MAX_AGE)
            want = filter_reasons(snap, pod, thresholds, MAX_AGE)
            assert list(got.items()) == list(want.items())
        names = [view.names[i] for i in np.random.default_rng(subset).permutation(n).tolist()]
        idx = view.lookup(names)
        reasons = self.memo.reasons(view.snapshot(self.world.t), pod, thresholds, MAX_AGE)
        failed, passed = self.memo.in_order(reasons, names, idx)
        assert list(failed.items()) == [(name, reasons[i]) for name, i in zip(names, idx.tolist(), strict=True)
                                        if i in reasons]
        assert passed == [name for name, i in zip(names, idx.tolist(), strict=True) if i not in reasons]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_nodes=st.integers(1, 12), steps=st.lists(st.tuples(EVENTS, st.integers(0, 7), st.integers(0, 20)),
                                                  min_size=1, max_size=40))
def test_kept_reasons_match_the_reasons_written_from_scratch(n_nodes, steps):
    filters = Filters(World(n_nodes, "demand-aware"))
    filters.check(0, 0)
    for event, pod_k, subset in steps:
        filters.world.apply(event)
        filters.check(pod_k, subset)


def test_a_bind_writes_only_the_bound_nodes_reason_again():
    world = World(40, "demand-aware")
    for i in range(40):  # every node sampled, half of them hot on cpu for a 0.3 threshold
        world.apply(("usage", i, 5 if i % 2 else 1))
    memo, pod, thresholds = FilterMemo(), PODS[0], THRESHOLDS[0]
    first = memo.reasons(world.cache.view().snapshot(world.t), pod, thresholds, MAX_AGE)
    assert memo.written == len(first) > 0
    assert memo.reasons(world.cache.view().snapshot(world.t), pod, thresholds, MAX_AGE) is first, "nothing moved"
    hot = world.cache.view().names[next(iter(first))]
    world.apply(("bind", world.cache.view().index[hot], 0))  # a failing node's sums move: its reason alone
    again = memo.reasons(world.cache.view().snapshot(world.t), pod, thresholds, MAX_AGE)
    assert memo.written == len(first) + 1 and again.keys() == first.keys()
    cool = next(name for i, name in enumerate(world.cache.view().names) if i not in first)
    world.apply(("bind", world.cache.view().index[cool], 1))  # a passing node stays passing: nothing written
    before = memo.written
    memo.reasons(world.cache.view().snapshot(world.t), pod, thresholds, MAX_AGE)
    assert memo.written - before <= 1
