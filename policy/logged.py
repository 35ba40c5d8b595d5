"""Logged decisions as training data: each decision row's encoding, rebuilt, and the pick to imitate.

Why it exists: issue #23's warm start learns from the scheduler's logged decisions, and it must see each
decision as the policy saw it. ``encoding`` rebuilds, from a row's ``inputs`` (``policy.decisionlog``), the
snapshot of the nodes it kept and the pod, and encodes them with the one encoder (``policy.features``):
``node_rows`` over the kept nodes with the logged mean capacity (a node's row depends only on its own
fields, the pod and that mean, so these are bitwise the rows those nodes had in the whole cluster), their
``feasible_mask``, the ``pod_row``, and the cluster row from the logged figures (``cluster_summary``).
Numpy only, no torch: ``policy.warmstart`` does the fitting.

Which cluster a decision is re-encoded over (``CONTEXTS``, ``encoding``'s ``context``): ``logged``, the one the
server encoded over, by the figures it logged (above: bitwise what was served); or ``kept``, the row's kept nodes
alone (those among ``nodes`` when given), every figure computed from their logged rows by the one encoder
(``policy.features.encode``: the mean capacity, the cluster's size and feasible count, the utilisation mean and
std). ``kept`` is what today's extender computes when those nodes are the pod's pool (``kube.pool``): a log
written before the extender encoded over the pool logged figures that counted every cached node, the lab's
tainted control-plane node among them, and ``kept`` with ``nodes`` naming the pool re-scores it as the extender
now would. It needs the inputs of every such node the row scored (a row written with ``decision_log_nodes`` or
``decision_log_input_nodes`` below the cluster's size does not have them: ``LogError``). A serve row keeps only the
nodes kube-scheduler's filters passed, so there ``kept`` is those nodes, not the whole pool.

Which pick is imitated (``target``): a serve row's ``chosen`` (drsched's own, possibly explored), a shadow
row's ``actual`` (the node the other scheduler bound: DL2's case, learning the incumbent first).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from policy.decisionlog import INPUT_NODE_FIELDS, LogContents, LogError, Row
from policy.features import (
    MEAN_UTIL,
    N_CLUSTER,
    STD_UTIL,
    Encoded,
    cluster_summary,
    encode,
    feasible_mask,
    node_rows,
    pod_row,
    stack,
)
from policy.state import ClusterSnapshot, PodView

CONTEXTS = ("logged", "kept")
"""The clusters a logged decision can be re-encoded over (module doc): the one the server logged, or the kept nodes."""

SKIP_REASONS = ("no_inputs", "no_target", "target_not_kept", "target_infeasible", "one_candidate")
"""Why a decision row gives no imitation example: no ``inputs`` (a writer without a snapshot), no pick to
imitate (nothing was allowed), the pick not among the recorded nodes, the pick infeasible by the encoder's
own mask, or a single feasible candidate (nothing to choose)."""


@dataclass(frozen=True, slots=True, eq=False)
class LoggedDecision:
    """One decision as the policy saw it: the kept nodes the extender knew, in the row's order."""

    names: tuple[str, ...]
    snap: ClusterSnapshot
    pod: PodView
    enc: Encoded
    daemon_pods: np.ndarray | None = None
    """(N,) each kept node's DaemonSet pods as the row recorded them, NaN where it did not count them (None: a
    schema 2 row, which never does)"""

    def daemons(self, fallback: int) -> np.ndarray:
        """(N,) each kept node's DaemonSet pods: as recorded, else ``fallback`` (``policy.offline --daemon-pods``,
        the operator's count for a log written before rows counted them)."""
        if self.daemon_pods is None:
            return np.full(len(self.names), float(fallback))
        return np.where(np.isnan(self.daemon_pods), float(fallback), self.daemon_pods)


def _arr(values: list, *shape: int) -> np.ndarray:
    """float64 array of JSON values (None -> NaN, as numpy converts it)."""
    return np.array(values, dtype=np.float64).reshape(shape)


def encoding(row: Row, *, context: str = "logged", nodes: frozenset[str] | None = None) -> LoggedDecision:
    """Rebuild the encoding of ``row`` (a decision read by ``read_log``) over ``context`` (``CONTEXTS``, module
    doc): ``logged``, the one the policy scored; ``kept``, its kept nodes among ``nodes`` (None: all of them)
    alone. ``LogError`` naming the row and field when it has no ``inputs`` or lacks what ``kept`` needs."""
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(CONTEXTS)}, got {context!r}")
    inputs = row["inputs"]
    if inputs is None:
        raise LogError(row.path, row.line, "inputs", "null: this decision was logged without its inputs")
    if context == "kept":
        _check_kept(row, inputs, nodes)
    try:
        dec = _encoding(row, inputs)
        return dec if context == "logged" else _kept(dec, inputs, nodes)
    except (ValueError, TypeError) as exc:  # SnapshotError and numpy's shape errors: values check_row cannot see
        raise LogError(row.path, row.line, "inputs", f"cannot rebuild the snapshot: {exc}") from None


def _check_kept(row: Row, inputs: dict, nodes: frozenset[str] | None) -> None:
    """``LogError`` unless ``row`` holds the inputs of every node ``kept`` encodes over (module doc)."""
    names = row["nodes"]
    if len(names) < row["nodes_total"]:
        raise LogError(row.path, row.line, "nodes", f"the kept context needs every node the decision scored; the "
                       f"row keeps {len(names)} of {row['nodes_total']} (decision_log_nodes)")
    wanted = [i for i, name in enumerate(names) if nodes is None or name in nodes]
    missing = sorted(set(wanted) - set(inputs["at"]))
    if missing:
        raise LogError(row.path, row.line, "inputs.at", f"the kept context needs the inputs of every node it "
                       f"encodes over; none for {', '.join(names[i] for i in missing)} (decision_log_input_nodes)")
    if not any(inputs["capacity"][inputs["at"].index(i)] is not None for i in wanted):
        raise LogError(row.path, row.line, "inputs.capacity", "the kept context has no node to encode over: none "
                       "of the row's nodes " + ("" if nodes is None else "among the nodes given ") + "is known")


def _kept(dec: LoggedDecision, inputs: dict, nodes: frozenset[str] | None) -> LoggedDecision:
    """``dec``'s kept nodes among ``nodes``, encoded alone (module doc)."""
    at = np.array([i for i, name in enumerate(dec.names) if nodes is None or name in nodes], dtype=np.int64)
    snap = dec.snap.subset(at)
    return LoggedDecision(names=snap.names, snap=snap, pod=dec.pod,
                          enc=encode(snap, dec.pod, max_usage_age=inputs["max_usage_age"]),
                          daemon_pods=None if dec.daemon_pods is None else dec.daemon_pods[at])


def _encoding(row: Row, inputs: dict) -> LoggedDecision:
    known = [i for i, c in enumerate(inputs["capacity"]) if c is not None]
    node = {name: [inputs[name][i] for i in known] for name in INPUT_NODE_FIELDS}
    n = len(known)
    names = tuple(row["nodes"][inputs["at"][i]] for i in known)
    usage_age = _arr(node["usage_age"], n)
    snap = ClusterSnapshot(
        names=names, capacity=_arr(node["capacity"], n, 4),
        requested=_arr(node["requested"], n, 2), usage=_arr(node["usage"], n, 4),
        usage_age=np.where(np.isnan(usage_age), np.inf, usage_age), assumed=_arr(node["assumed"], n, 4),
        pods=_arr(node["pods"], n), max_pods=_arr(node["max_pods"], n),
        ready=np.array(node["ready"], dtype=bool).reshape(n))
    pod = PodView(requests=row["requests"], demand=row["demand"], demand_source=row["demand_source"],
                  name=row["name"])
    mean_cap = np.array(inputs["mean_capacity"], dtype=np.float64)
    cluster = np.zeros(N_CLUSTER, dtype=np.float32)
    cluster[MEAN_UTIL] = inputs["est_util_mean"]
    cluster[STD_UTIL] = inputs["est_util_std"]
    enc = Encoded(nodes=node_rows(snap, pod, mean_cap=mean_cap, max_usage_age=inputs["max_usage_age"]),
                  pod=pod_row(pod, mean_cap),
                  cluster=cluster_summary(cluster, n_feasible=inputs["n_feasible"], n_nodes=inputs["n_nodes"]),
                  mask=feasible_mask(snap, pod))
    daemons = inputs.get("daemon_pods")
    return LoggedDecision(names=snap.names, snap=snap, pod=pod, enc=enc,
                          daemon_pods=None if daemons is None else _arr([daemons[i] for i in known], n))


def target(row: Row) -> str | None:
    """The node to imitate: a serve row's ``chosen``, a shadow row's ``actual`` (module doc)."""
    return row["chosen"] if row["mode"] == "serve" else row["actual"]


@dataclass(frozen=True, slots=True, eq=False)
class Examples:
    """Imitation examples: example ``i``'s candidate rows are ``rows[offsets[i]:offsets[i + 1]]`` (the
    ``policy.features.stack`` rows of its feasible kept nodes), its pick ``rows[offsets[i] + picks[i]]``."""

    rows: np.ndarray     # (sum of candidates, N_INPUTS) float32
    offsets: np.ndarray  # (examples + 1,) int64
    picks: np.ndarray    # (examples,) int64, index within the example's candidates
    skipped: Counter     # SKIP_REASONS -> rows

    def __len__(self) -> int:
        return len(self.picks)

    def subset(self, index: np.ndarray) -> Examples:
        """The examples at ``index``, in that order."""
        parts = [self.rows[self.offsets[i]:self.offsets[i + 1]] for i in index.tolist()]
        sizes = [len(p) for p in parts]
        return Examples(rows=np.concatenate(parts) if parts else self.rows[:0],
                        offsets=np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]),
                        picks=self.picks[index], skipped=Counter())


def examples(log: LogContents) -> Examples:
    """Every decision of ``log`` that gives an example (see ``SKIP_REASONS`` for those that do not)."""
    parts, picks, sizes, skipped = [], [], [], Counter()
    for row in log.decisions:
        want = target(row)
        if row["inputs"] is None:
            skipped["no_inputs"] += 1
            continue
        if want is None:
            skipped["no_target"] += 1
            continue
        dec = encoding(row)
        if want not in dec.names:
            skipped["target_not_kept"] += 1
            continue
        mask = dec.enc.mask
        at = dec.names.index(want)
        if not mask[at]:
            skipped["target_infeasible"] += 1
            continue
        if np.count_nonzero(mask) < 2:
            skipped["one_candidate"] += 1
            continue
        parts.append(stack(dec.enc)[mask])
        picks.append(int(np.count_nonzero(mask[:at])))
        sizes.append(parts[-1].shape[0])
    rows = np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, 0), np.float32)
    return Examples(rows=rows, offsets=np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)]),
                    picks=np.array(picks, dtype=np.int64), skipped=skipped)
