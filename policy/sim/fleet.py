"""The mutable state of the nodes and the jobs running on them, kept incrementally for speed.

Why it exists: the engine decides *when* things happen; this module keeps *what is running where* and
re-derives a node's progress rates whenever its set of jobs or its capacity changes. Per-event work is
O(jobs on that node): a node's jobs are advanced lazily (``remaining -= rate·dt`` since the node's last
change), their rates recomputed by ``policy.sim.contention``, and completions whose time moved are pushed
again onto the engine's heap with a bumped version (stale heap entries are skipped by version).

Restarts (migration, node failure) resume from the newest checkpoint (``policy.sim.checkpoint``): the work
done since it is lost and redone. A restarted job first *restores* for ``restore_cost`` seconds on its new
node: it holds its requests and a pod slot there but is not in the node's contention set (rate 0, no usage).

Reserved requests (``Nodes.reserved``, ``Nodes.daemon_pods``): what pods that are always on a node and no job
(a DaemonSet's) request there. A node starts with them in ``requested`` and ``pods`` and its free allocatable
short by them, and an empty node returns to them; they have no demand, so they share nothing.

Pinned pods (``pin``): pods placed on a node outside the scheduler, such as the ``tenants`` scenario's
long-running tenants (``policy.tenants``). They hold their requests and a pod slot, share the node by the
contention model like any job, show in its usage, never complete and are no job: no id, no JCT, nothing in
``running`` or the excess integral. Their demand may change (``repin``). A node failure leaves them in place.

State owned: per node the job-id list (running) and restoring set, last-update time, straggler factor,
requests, pod count, readiness, true usage, Σ(1 − rate)/work and its pinned pods' demands and requests; per job
the remaining work, rate, version and node.
"""

from __future__ import annotations

import heapq

import numpy as np

from policy.sim.checkpoint import checkpointed
from policy.sim.cluster import Nodes
from policy.sim.contention import fair_rates, node_usage, scaled_capacity
from policy.sim.jobs import JobSpec
from policy.sim.sharing import ORIGINAL, ContentionParams, shared_rates

COMPLETE = 0  # heap priority: completions first at equal times, so freed resources are seen at once


class Fleet:
    """Nodes and running jobs. Job ids index ``jobs``; node ids index ``nodes``."""

    def __init__(self, nodes: Nodes, jobs: list[JobSpec], checkpoint_interval: float | None = None,
                 contention: ContentionParams = ORIGINAL) -> None:
        n = nodes.n
        self.contention = contention
        self._original = contention.is_original
        self.checkpoint_interval = checkpoint_interval
        self.restoring: list[set[int]] = [set() for _ in range(n)]
        self.capacity = nodes.capacity
        self._max_pods = [float(m) for m in nodes.max_pods]
        self._cap = [tuple(map(float, row)) for row in nodes.capacity]
        self._eff = list(self._cap)
        self.factor = [1.0] * n
        self._stragglers = [0] * n
        self.on_node: list[list[int]] = [[] for _ in range(n)]
        self.pinned: list[list[tuple[float, ...]]] = [[] for _ in range(n)]  # demands of each node's pinned pods
        self._pinned_req: list[list[tuple[float, float]]] = [[] for _ in range(n)]
        self._last = [0.0] * n
        self._excess = [0.0] * n
        self.excess_rate = 0.0  # Σ over running jobs of (1 - rate) / work
        self._reserved = np.zeros((n, 2)) if nodes.reserved is None else np.array(nodes.reserved, dtype=np.float64)
        self._daemons = np.zeros(n) if nodes.daemon_pods is None else np.array(nodes.daemon_pods, dtype=np.float64)
        self.requested = self._reserved.copy()
        self.pods = self._daemons.copy()
        self.ready = np.ones(n, dtype=bool)
        self.usage = np.zeros((n, 4))
        # What kube-scheduler's filter needs, kept ready for one vectorised mask per decision: free allocatable
        # (with a 1e-9 tolerance so a pod that exactly fills a node fits) and "ready with a pod slot free".
        self.free_cpu = nodes.capacity[:, 0] - self._reserved[:, 0] + 1e-9
        self.free_mem = nodes.capacity[:, 1] - self._reserved[:, 1] + 1e-9
        self.open = self.pods < np.asarray(nodes.max_pods)
        self.closed = np.zeros(n, dtype=bool)  # tainted NoSchedule (the taint baseline): no new pod, no move there
        self.demand = [j.demand for j in jobs]
        self.requests = [j.requests for j in jobs]
        self.work = [j.work for j in jobs]
        self.inv_work = [1.0 / j.work for j in jobs]
        self.remaining = list(self.work)
        self.rate = [0.0] * len(jobs)
        self.version = [0] * len(jobs)
        self.node = [-1] * len(jobs)
        self.running = 0
        self._seq = 0

    def _advance(self, i: int, now: float) -> None:
        dt = now - self._last[i]
        if dt > 0.0:
            rem, rate = self.remaining, self.rate
            for j in self.on_node[i]:
                rem[j] -= rate[j] * dt
        self._last[i] = now

    def _recompute(self, i: int, now: float, heap: list) -> None:
        js = self.on_node[i]
        dem = [self.demand[j] for j in js]
        pinned = self.pinned[i]
        if pinned:  # they share the node after the jobs; their rates only count in its usage
            dem += pinned
        if self._original:  # the training hot path: skip building the requests list
            rates = fair_rates(dem, self._eff[i])
        else:
            rates = shared_rates(dem, [*(self.requests[j] for j in js), *self._pinned_req[i]], self._eff[i],
                                 self.contention)
        rate, rem, inv, ver = self.rate, self.remaining, self.inv_work, self.version
        total = 0.0
        for j, x in zip(js, rates[: len(js)] if pinned else rates, strict=True):
            total += (1.0 - x) * inv[j]
            if x != rate[j]:
                rate[j] = x
                ver[j] += 1
                if x > 0.0:
                    self._seq += 1
                    heapq.heappush(heap, (now + max(rem[j], 0.0) / x, COMPLETE, self._seq, j, ver[j]))
        self.excess_rate += total - self._excess[i]
        self._excess[i] = total
        self.usage[i] = node_usage(dem, rates, self._cap[i], self.factor[i]) if dem else (0.0, 0.0, 0.0, 0.0)

    def pin(self, i: int, requests: tuple[float, float], demand: tuple[float, ...], now: float, heap: list) -> int:
        """Place a pinned pod (module doc) on node ``i`` with ``requests`` and ``demand``, whether or not its
        requests fit (it bypassed the scheduler, as a pod bound by name does); returns its index on the node."""
        self._advance(i, now)
        self.pinned[i].append(tuple(demand))
        self._pinned_req[i].append(tuple(requests))
        self.requested[i] += requests
        self.free_cpu[i] -= requests[0]
        self.free_mem[i] -= requests[1]
        self.pods[i] += 1
        self.open[i] = self.ready[i] and self.pods[i] < self._max_pods[i]
        self._recompute(i, now, heap)
        return len(self.pinned[i]) - 1

    def repin(self, i: int, k: int, demand: tuple[float, ...], now: float, heap: list) -> None:
        """Node ``i``'s pinned pod ``k`` uses ``demand`` from ``now`` on; the node's jobs are re-rated."""
        self._advance(i, now)
        self.pinned[i][k] = tuple(demand)
        self._recompute(i, now, heap)

    def add(self, j: int, i: int, now: float, heap: list) -> None:
        """Start job ``j`` on node ``i`` (feasibility is the caller's check)."""
        self._hold(j, i)
        self._join(j, i, now, heap)

    def reserve(self, j: int, i: int) -> int:
        """Hold node ``i``'s resources for job ``j`` while it restores (no progress); returns its version."""
        self._hold(j, i)
        self.restoring[i].add(j)
        self.version[j] += 1
        return self.version[j]

    def activate(self, j: int, now: float, heap: list) -> None:
        """End job ``j``'s restore: it joins its node's contention set and progresses."""
        i = self.node[j]
        self.restoring[i].discard(j)
        self._join(j, i, now, heap)

    def _join(self, j: int, i: int, now: float, heap: list) -> None:
        self._advance(i, now)
        self.on_node[i].append(j)
        self.rate[j] = -1.0  # forces a completion push in _recompute
        self._recompute(i, now, heap)

    def _hold(self, j: int, i: int) -> None:
        self.node[j] = i
        req = self.requests[j]
        self.requested[i, 0] += req[0]
        self.requested[i, 1] += req[1]
        self.free_cpu[i] -= req[0]
        self.free_mem[i] -= req[1]
        self.pods[i] += 1
        self.open[i] = self.pods[i] < self._max_pods[i]
        self.running += 1

    def complete(self, j: int, now: float, heap: list) -> int:
        """Finish job ``j`` now; returns its node."""
        i = self.node[j]
        self._advance(i, now)
        self.remaining[j] = 0.0
        self.on_node[i].remove(j)
        self._release(j, i)
        self._recompute(i, now, heap)
        return i

    def _release(self, j: int, i: int) -> None:
        req = self.requests[j]
        self.requested[i, 0] -= req[0]
        self.requested[i, 1] -= req[1]
        self.free_cpu[i] += req[0]
        self.free_mem[i] += req[1]
        self.pods[i] -= 1
        self.open[i] = self.ready[i]
        if self.pods[i] == self._daemons[i]:  # wipe float residue so an empty node is exactly empty
            self.requested[i] = self._reserved[i]
            self.free_cpu[i] = self.capacity[i, 0] - self._reserved[i, 0] + 1e-9
            self.free_mem[i] = self.capacity[i, 1] - self._reserved[i, 1] + 1e-9
        self.node[j] = -1
        self.rate[j] = 0.0
        self.version[j] += 1
        self.running -= 1

    def done(self, j: int, now: float) -> float:
        """Work job ``j`` has done by ``now`` (without advancing its node)."""
        i = self.node[j]
        rem = self.remaining[j]
        if i >= 0 and j not in self.restoring[i]:
            rem -= self.rate[j] * (now - self._last[i])
        return self.work[j] - max(rem, 0.0)

    def _rollback(self, j: int) -> float:
        """Rewind running job ``j`` (its node advanced) to its newest checkpoint; returns the work lost."""
        done = self.work[j] - max(self.remaining[j], 0.0)
        kept = checkpointed(done, self.checkpoint_interval)
        self.remaining[j] = self.work[j] - kept
        return done - kept

    def evict(self, j: int, now: float, heap: list) -> float:
        """Stop running job ``j`` (a migration's first half): it rewinds to its checkpoint and frees its node.
        Returns the work lost."""
        i = self.node[j]
        self._advance(i, now)
        lost = self._rollback(j)
        self.on_node[i].remove(j)
        self._release(j, i)
        self._recompute(i, now, heap)
        return lost

    def fail(self, i: int, now: float) -> list[tuple[int, float]]:
        """Take node ``i`` down; its jobs (running or restoring) go back to their newest checkpoint.
        Returns (job, lost work seconds) per job."""
        self._advance(i, now)
        lost = []
        for j in self.on_node[i]:
            lost.append((j, self._rollback(j)))
            self._release(j, i)
        for j in sorted(self.restoring[i]):
            lost.append((j, 0.0))  # already at its checkpoint
            self._release(j, i)
        self.on_node[i] = []
        self.restoring[i] = set()
        self.ready[i] = False
        self.open[i] = False
        self.excess_rate -= self._excess[i]
        self._excess[i] = 0.0
        self.usage[i] = 0.0
        return lost

    def recover(self, i: int, now: float) -> None:
        """Bring node ``i`` back, empty."""
        self.ready[i] = True
        self.open[i] = True
        self._last[i] = now

    def slow(self, i: int, factor: float, now: float, heap: list, *, end: bool = False) -> None:
        """Start (or, with ``end``, stop) a straggler of ``factor`` on node ``i`` and re-rate its jobs."""
        self._advance(i, now)
        self._stragglers[i] += -1 if end else 1
        if self._stragglers[i] == 0:
            self.factor[i] = 1.0
        else:
            self.factor[i] = self.factor[i] / factor if end else self.factor[i] * factor
        self._eff[i] = scaled_capacity(self._cap[i], self.factor[i])
        self._recompute(i, now, heap)

    def fits(self, j: int, i: int) -> bool:
        """Whether job ``j``'s requests fit node ``i`` now (ready, pod slot free, cpu and memory allocatable)."""
        req = self.requests[j]
        return bool(self.open[i] and not self.closed[i] and self.free_cpu[i] >= req[0] and self.free_mem[i] >= req[1])

    def mask(self, j: int) -> np.ndarray:
        """(N,) bool: the nodes job ``j`` fits now."""
        req = self.requests[j]
        return (self.free_cpu >= req[0]) & (self.free_mem >= req[1]) & self.open & ~self.closed

    def pod_usage(self, j: int) -> tuple[float, float, float, float]:
        """What a monitor reads for running job ``j``'s pod: rate × demand of cpu, net and disk (/ the node's
        straggler factor, as ``node_usage``), its memory."""
        d, x = self.demand[j], self.rate[j] / self.factor[self.node[j]]
        return (x * d[0], d[1], x * d[2], x * d[3])

    def effective_capacity(self, i: int) -> tuple[float, ...]:
        """Node ``i``'s capacity as its jobs see it now (scaled down while it straggles)."""
        return self._eff[i]

    def last_change(self, i: int) -> float:
        """When node ``i``'s jobs were last advanced: ``remaining`` of its jobs is as of this time."""
        return self._last[i]

    def recompute_excess(self) -> None:
        """Re-add the per-node sums from scratch (bounds float drift of the incremental total)."""
        self.excess_rate = sum(self._excess)
