"""One-step lookahead on the simulator's own contention model: place where the predicted added excess is least.

The DQN is trained on ``policy.sim.contention`` (through the shaped reward); this rule applies the same
formula directly (its rate rule, ``policy.fairshare``, so the extender never loads the simulator), so it
is the fair hand-written competitor. It reads exactly what ``demand-aware`` reads:
each node's estimated usage (measured + assumed, requests when stale), its pod count and the pod's expected
demand profile. True demands are never seen.

Per node, the pods already there are one aggregate job whose demand is the estimated usage (``k`` identical
pods get the same max-min fair rate as their sum, so the split does not matter), and the incoming pod is a
second job. With ``fair_rates`` giving the aggregate's rate before (``x_b``) and after (``x_e``) the pod
arrives, and the pod's own rate ``x_p``:

    pod's own excess        (1 - x_p) / x_p          its slowdown - 1 if the rates hold for its whole stay
    added to the k pods     k * (x_b - x_e) / x_p    progress they lose during that stay, per unit of work
    cost                    the sum;  score = -cost - 1e-6 * (max_r after_r + 1e-3 * mean_r after_r)

The second term assumes the pods already there outlast the newcomer and have the same work (the snapshot
knows neither). Nodes where nothing saturates cost 0; the tiny tie term then prefers the one left with the
lowest bottleneck utilisation (``demand-aware``'s rule), keeping headroom for later pods. Unlike
``demand-aware``, the rule counts how many pods a placement slows and ignores resources the pod does not
compete for.
"""

from __future__ import annotations

import math

import numpy as np

from policy.fairshare import fair_rates
from policy.features import DEFAULT_MAX_USAGE_AGE, estimated_usage
from policy.state import ClusterSnapshot, PodView

TIE_WEIGHT = 1e-6
_RATE_FLOOR = 1e-9


def marginal_excess(est, capacity, demand, pods: float) -> float:
    """Predicted excess slowdown a pod of expected ``demand`` adds on a node (module doc), all plain floats."""
    (x_b,) = fair_rates([tuple(est)], tuple(capacity))
    x_e, x_p = fair_rates([tuple(est), tuple(demand)], tuple(capacity))
    x_p = max(x_p, _RATE_FLOOR)
    return (1.0 - x_p) / x_p + pods * max(x_b - x_e, 0.0) / x_p


class Lookahead:
    name = "lookahead"

    def __init__(self, max_usage_age: float = DEFAULT_MAX_USAGE_AGE) -> None:
        self.max_usage_age = max_usage_age

    def costs(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        """(N,) predicted marginal excess slowdown of placing ``pod`` on each node."""
        return self._costs(snap, pod, estimated_usage(snap, self.max_usage_age))

    def score(self, snap: ClusterSnapshot, pod: PodView) -> np.ndarray:
        est = estimated_usage(snap, self.max_usage_age)
        after = (est + pod.demand) / snap.capacity
        return -self._costs(snap, pod, est) - TIE_WEIGHT * (after.max(axis=1) + 1e-3 * after.mean(axis=1))

    @staticmethod
    def _costs(snap: ClusterSnapshot, pod: PodView, est: np.ndarray) -> np.ndarray:
        cap = snap.capacity
        out = np.zeros(snap.n_nodes)
        # Nothing saturates after placing: every rate stays 1 and the cost is exactly 0 (the common case,
        # settled in numpy so a large cluster pays the pure-Python model only on its contended nodes).
        contended = np.flatnonzero(((est + pod.demand) > cap * (1.0 + 1e-12)).any(axis=1))
        demand = tuple(pod.demand.tolist())
        for i in contended:
            out[i] = marginal_excess(est[i].tolist(), cap[i].tolist(), demand, float(snap.pods[i]))
        return out


def timed_marginal_excess(est, capacity, demand, pods: int, duration: float, time_left, work) -> float:
    """``marginal_excess`` knowing how long the pods already there will stay and how long the newcomer runs
    (``LookaheadTime``'s module doc). ``time_left``/``work``: one entry per pod known (NaN = not known);
    the other ``pods - len(time_left)`` pods, and any whose time left is NaN, are taken to outlast the newcomer,
    as ``marginal_excess`` takes them all. ``work`` NaN: the newcomer's ``duration``."""
    if not (pods >= 1 and math.isfinite(duration) and duration > 0):
        return marginal_excess(est, capacity, demand, float(pods))
    left = [t for t in time_left if not math.isnan(t)]
    works = [w if math.isfinite(w) and w > 0 else duration for t, w in zip(time_left, work, strict=True)
             if not math.isnan(t)]
    unknown = max(pods - len(left), 0)
    # (departure time, work) per pod, the unknown ones never departing; departures in time order
    stay = sorted(zip(left, works, strict=True)) + [(math.inf, duration)] * unknown
    n = len(stay)
    share = [e / n for e in est]
    cap = tuple(capacity)
    demand = tuple(demand)
    t, rem, cost, first = 0.0, duration, 0.0, 0  # stay[first:] are still there
    while rem > 0:
        m = n - first
        if m == 0:
            (x_p,) = fair_rates([demand], cap)
            t += rem / max(x_p, _RATE_FLOOR)
            break
        agg = tuple(s * m for s in share)
        (x_b,) = fair_rates([agg], cap)
        x_e, x_p = fair_rates([agg, demand], cap)
        x_p = max(x_p, _RATE_FLOOR)
        span = min(stay[first][0] - t, rem / x_p)
        loss = max(x_b - x_e, 0.0) * span
        for _, w in stay[first:]:
            cost += loss / w
        rem -= x_p * span
        t += span
        while first < n and stay[first][0] <= t and rem > 1e-12:
            first += 1
        if rem <= 1e-12 * duration:
            break
    return cost + t / duration - 1.0


class LookaheadTime(Lookahead):
    """``lookahead`` that also knows how long things run (issue #22, deliverable 1): the running pods' time
    left from their progress reports (``ClusterSnapshot.progress``) and the incoming pod's expected run time
    (``PodView.expected_duration``).

    ``lookahead`` assumes the pods already on a node outlast the newcomer and have its work. This rule walks the
    newcomer's stay instead: the node's pods are ``pods`` equal shares of its estimated usage; between two
    departures (in order of the reported time left; pods without a usable report never depart) the
    newcomer progresses at its max-min fair rate beside those still there, and each of them loses
    ``x_b - x_e`` of progress per second, counted against its own expected run time (the newcomer's where
    unknown). Cost = the newcomer's excess (its finish time over its run time, minus 1) + the losses. With
    nothing known it is exactly ``lookahead``'s cost. First order: the pods' own delays do not move their
    departures.
    """

    name = "lookahead-time"

    def _costs(self, snap: ClusterSnapshot, pod: PodView, est: np.ndarray) -> np.ndarray:
        progress, duration = snap.progress, pod.expected_duration
        if progress is None or math.isnan(duration):
            return Lookahead._costs(snap, pod, est)
        cap = snap.capacity
        out = np.zeros(snap.n_nodes)
        contended = np.flatnonzero(((est + pod.demand) > cap * (1.0 + 1e-12)).any(axis=1))
        demand = tuple(pod.demand.tolist())
        for i in contended:
            left, work = progress.on(int(i))
            out[i] = timed_marginal_excess(est[i].tolist(), cap[i].tolist(), demand, int(snap.pods[i]), duration,
                                           left.tolist(), work.tolist())
        return out
