"""The decision log's schema, described once as data, and its reader. Pure apart from reading files.

Why it exists: drsched learns from what it did and what happened (shadow comparisons, offline evaluation,
fitting the contention model), and all of that reads one log that the extender writes. The extender's
writer (``extender.decision_log``) builds its rows with ``decision_row`` / ``outcome_row`` here, and every
reader goes through ``read_log``, so the two cannot drift apart. It owns no state.

Format: JSON lines, one row per line, in segment files ``decisions-<UTC start>.jsonl`` that the writer
creates exclusively (never appends to an old file) and rotates by size. Why JSON lines and not Parquet:
an append of one line is crash-safe (a ``kill -9`` can tear at most the last line, which the reader
recognises and skips, and the rows before it stay readable, where a Parquet file without its footer is
lost whole); the serving path has no pyarrow; rows vary (a shadow row has fields a serving row lacks);
and ``jq``/``grep`` read it. A row is small (names, numbers), so the size cost over columnar is fine.

Rows, schema version ``SCHEMA_VERSION`` (field ``v``; a reader reads ``READ_VERSIONS`` and refuses any other
with a ``LogSchemaError`` naming the row):

    kind=decision   one per scoring decision: mode serve (prioritize) or shadow (a binding by another
                    scheduler, with the actual node, drsched's own choice and the predicted slowdowns)
    kind=outcome    one per pod that ended after a decision: phase, node and times (``jct_s``)
    kind=filter     one per filter that left the pod at most one node: kube-scheduler then binds without
                    calling prioritize, so no decision row is written, and this row says why (``passed``)

The log is append-only, so an outcome cannot be written into its decision's row: ``LogContents.joined``
joins them by pod UID when read. Rows hold names and resource figures only -- never env, args, images,
annotations or secrets.

What a decision keeps for learning (schema 2, issue #23's warm start): the *inputs* of
``policy.features.encode`` for the nodes the row keeps, not the features it made, so that an encoder of a
later ``FEATURE_VERSION`` can still learn from an old log. A node's row of features depends on that node's
own ``ClusterSnapshot`` fields, the pod, the cluster's mean capacity and the usage age limit
(``features.node_rows``); the pod row on the pod and the mean capacity; the cluster row on every node of
the cluster. So a row records, per kept node, its snapshot fields (``INPUT_NODE_FIELDS``); the pod's
requests, demand and demand source, exactly (schema 1 rounded them to 6 decimals); and of the whole
cluster what its kept nodes cannot give (``INPUT_FIELDS``): size, feasible count, mean capacity, and the
mean and std of estimated utilisation over the feasible nodes. Those last two are the one derived figure
stored (the raw inputs of every node would make a row O(cluster)); an encoder that changes how they are
computed cannot re-derive them from an old log. Floats are written exactly (JSON's shortest round-trip
form), so ``policy.logged.encoding`` rebuilds bitwise the rows the policy scored. Inputs are recorded for a
bounded set of the row's nodes (``inputs.at``): with ``decision_log_input_nodes`` = K (default 32) the best K by
score and the chosen and actual ones, whatever the cluster's size, while the score vector keeps every node
(``decision_log_nodes`` 0, the default) as shadow mode's full comparison needs; inputs for every node would make
a row at 1,000 nodes ~230 KB (~24 KB in schema 1). The warm start therefore learns to rank among the best
candidates by drsched's own score and the node actually chosen, not across the whole cluster.

Schema 3 adds one input per kept node, ``inputs.daemon_pods``: how many of its ``pods`` a DaemonSet owns (the
extender's cache counts them by owner reference). The contention model splits a node among its jobs, not its
DaemonSet pods (``policy.predicted``); a schema 2 row lacks the count, so its readers ask for one
(``policy.offline --daemon-pods``). Schema 2 rows are read as written (``Row.version``); nothing else changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from policy.features import MEAN_UTIL, STD_UTIL, feasible_mask, mean_capacity
from policy.state import ClusterSnapshot, PodView

SCHEMA_VERSION = 3
READ_VERSIONS = (2, 3)
"""Schema versions ``read_log`` reads: this one, and schema 2 (its decision inputs without ``daemon_pods``)."""
SEGMENT_GLOB = "decisions-*.jsonl"
MODES = ("serve", "shadow")

_NUM = (int, float)
_OPT_NUM = (int, float, type(None))
_OPT_STR = (str, type(None))
COMMON_FIELDS: dict[str, tuple[type, ...]] = {"v": (int,), "kind": (str,), "ts": _NUM, "replica": (str,)}
"""Every row: schema version, row kind, epoch seconds written, the extender replica that wrote it."""
DECISION_FIELDS: dict[str, tuple[type, ...]] = {
    "mode": (str,), "namespace": (str,), "name": (str,), "uid": (str,), "requests": (list,), "demand": (list,),
    "demand_source": (str,), "policy": (str,), "model_version": (str,), "nodes": (list,), "scores": (list,),
    "raw": (list,), "nodes_total": (int,), "chosen": _OPT_STR, "propensity": _NUM, "explored": (list, type(None)),
    "actual": _OPT_STR, "scheduler": _OPT_STR, "slowdown": (dict, type(None)), "predicted_gain": _OPT_NUM,
    "inputs": (dict, type(None)),
}
"""A decision: the pod (names and resource figures only), the policy, the full score vector over ``nodes``
(``scores`` 0-10 as served, ``raw`` the policy's values, null where refused; with ``decision_log_nodes`` only
the best nodes and the chosen and actual ones, of ``nodes_total``), drsched's ``chosen`` node and
the probability it had of being chosen (``propensity``, 1 unless exploring; ``explored``: the near-tied nodes
it was drawn from). Shadow rows add the ``actual`` node the other ``scheduler`` bound, the predicted
slowdown of the pod on both nodes (node -> slowdown, 1 = as fast as alone) and ``predicted_gain`` (slowdown
on the actual node minus on drsched's; > 0: drsched's choice predicted better). ``inputs``: what the encoder
read (``INPUT_FIELDS``), null only from a writer that had no snapshot (a tool, a test)."""
DECISION_OPTIONAL: dict[str, tuple[type, ...]] = {"workload": _OPT_STR}
"""Decision fields a row of this schema may lack (written since they were added; a reader of an older row
sees None, ``Row.get``): ``workload``, the key of the pod's workload (``PodView.workload``), so that a fit of
the contention model from outcomes can tell pods of one workload apart (``policy.calibrate log``)."""
INPUT_NODE_FIELDS: dict[str, tuple[type, ...]] = {
    "capacity": (list,), "requested": (list,), "usage": (list,), "usage_age": (list,), "assumed": (list,),
    "pods": (list,), "max_pods": (list,), "ready": (list,),
}
"""Per node of ``inputs.at`` (positions in the row's ``nodes``), in that order (null at a node the extender's
cache did not know, which it did not score): the ``ClusterSnapshot`` fields of that node -- allocatable
``capacity`` (4), ``requested`` (cpu, mem), measured ``usage`` (4, null where no sample) and its ``usage_age``
(seconds, null where none), ``assumed`` demand since the sample (4), ``pods``, ``max_pods``, ``ready`` (false
also where a shadow row's pod does not tolerate the node's taints or its node selector or required affinity does
not allow the node's labels, ``DecisionInputs.blocked``: a node it could not go to, though the features,
``n_feasible`` among them, counted it as the serving path does)."""
INPUT_FIELDS: dict[str, tuple[type, ...]] = {
    "at": (list,), "max_usage_age": _NUM, "n_nodes": (int,), "n_feasible": (int,), "mean_capacity": (list,),
    "est_util_mean": (list,), "est_util_std": (list,), **INPUT_NODE_FIELDS,
}
"""A decision's ``inputs``: which of the row's nodes they describe (``at``; with ``decision_log_input_nodes`` = K the
best K by score and the chosen and actual ones, so a row's inputs stay bounded while its score vector may hold every
node), the node fields above, and the figures of the whole cluster the features were computed over (in names mode the
pod's context, ``DecisionInputs.snap``; logs written before it held every cached node there, tainted ones included,
and are re-encoded with what they logged, or over their kept nodes alone, ``policy.logged``'s ``kept`` context) that
the kept nodes alone cannot give -- the usage age limit, the cluster's size and how many of its nodes the pod fits
(``n_feasible``), its ``mean_capacity`` (4) and the mean and std over its feasible nodes of estimated usage /
capacity (4 each, the float32 values the policy saw)."""
INPUT_FIELDS_SINCE: dict[int, dict[str, tuple[type, ...]]] = {3: {"daemon_pods": (list,)}}
"""``inputs`` fields a row has from the schema version given (older rows lack them): ``daemon_pods``, per node of
``inputs.at``, how many of its ``pods`` a DaemonSet owns (null where the writer did not count them)."""
OUTCOME_FIELDS: dict[str, tuple[type, ...]] = {
    "namespace": (str,), "name": (str,), "uid": (str,), "node": _OPT_STR, "phase": (str,),
    "created": _OPT_NUM, "started": _OPT_NUM, "finished": _OPT_NUM, "jct_s": _OPT_NUM, "run_s": _OPT_NUM,
}
"""An outcome: how the pod ended (Succeeded, Failed, or deleted before it ended) and its epoch-second times;
``jct_s`` = finished - created (what a user waits for), ``run_s`` = finished - started."""
FILTER_FIELDS: dict[str, tuple[type, ...]] = {
    "namespace": (str,), "name": (str,), "uid": (str,), "passed": (int,), "nodes_total": (int,),
}
"""A filter that left the pod ``passed`` (0 or 1) of the ``nodes_total`` candidates it was asked about."""
KINDS = {"decision": DECISION_FIELDS, "outcome": OUTCOME_FIELDS, "filter": FILTER_FIELDS}


class LogError(ValueError):
    """A log that cannot be read as written by this schema: names the file, the row (1-based line) and field."""

    def __init__(self, path: Path | str, row: int, field_name: str, problem: str) -> None:
        super().__init__(f"{path}:{row}: {field_name}: {problem}")
        self.path, self.row, self.field, self.problem = str(path), row, field_name, problem


class LogSchemaError(LogError):
    """A well-formed row of another schema version (read it with the drsched that wrote it)."""


def _round(x: float) -> float | None:
    x = float(x)
    return round(x, 6) if x == x and abs(x) != float("inf") else None


def _floats(values: Sequence[float] | np.ndarray) -> list[float | None]:
    """Rounded to 6 decimals, None where not finite; in numpy (a shadow row has one value per node)."""
    a = np.round(np.asarray(values, dtype=np.float64), 6)
    out = a.tolist()
    for i in np.flatnonzero(~np.isfinite(a)).tolist():
        out[i] = None
    return out


def decision_row(*, ts: float, replica: str, mode: str, pod: tuple[str, str, str], requests: Sequence[float],
                 demand: Sequence[float], demand_source: str, policy: str, model_version: str,
                 nodes: Sequence[str], scores: Sequence[int], raw: Sequence[float], chosen: str | None,
                 propensity: float = 1.0, explored: Sequence[str] | None = None, actual: str | None = None,
                 scheduler: str | None = None, slowdown: dict[str, float] | None = None,
                 predicted_gain: float | None = None, keep: int = 0,
                 inputs: DecisionInputs | None = None, keep_inputs: int = 0,
                 workload: str | None = None) -> dict[str, Any]:
    """One decision row (see ``DECISION_FIELDS``), plain JSON values only. ``keep`` > 0: the score vector
    holds only the ``keep`` best nodes (by score, then raw value) and the chosen and actual nodes; ``inputs``
    are recorded for the ``keep_inputs`` best of those and the chosen and actual ones (0: for all of them;
    ``inputs_of``)."""
    total = len(nodes)
    kept = range(total)
    if 0 < keep < total:
        nodes, scores, raw, kept = _best(nodes, scores, raw, keep=keep, also=(chosen, actual))
    if 0 < keep_inputs < len(nodes):
        at = _best_positions(nodes, np.asarray(scores, dtype=np.float64), np.asarray(raw, dtype=np.float64),
                             keep=keep_inputs, also=(chosen, actual))
    else:
        at = list(range(len(nodes)))
    requests, demand = [float(x) for x in requests], [float(x) for x in demand]
    return {"v": SCHEMA_VERSION, "kind": "decision", "ts": round(ts, 6), "replica": replica, "mode": mode,
            "namespace": pod[0], "name": pod[1], "uid": pod[2], "requests": requests,
            "demand": demand, "demand_source": demand_source, "workload": workload, "policy": policy,
            "model_version": model_version, "nodes": list(nodes),
            "scores": np.asarray(scores, dtype=np.int64).tolist(), "raw": _floats(raw), "nodes_total": total,
            "chosen": chosen, "propensity": round(float(propensity), 9),
            "explored": None if explored is None else list(explored), "actual": actual, "scheduler": scheduler,
            "slowdown": None if slowdown is None else {k: _round(v) for k, v in slowdown.items()},
            "predicted_gain": None if predicted_gain is None else _round(predicted_gain),
            "inputs": None if inputs is None else inputs_of(inputs, [kept[i] for i in at], at, PodView(
                requests=requests, demand=demand, demand_source=demand_source))}


@dataclass(frozen=True, slots=True, eq=False)
class DecisionInputs:
    """What the encoder read for one decision, by reference: the request path hands it over as is, and the
    row's ``inputs`` are built from it on the log's writer thread (``inputs_of``). The snapshot's arrays
    are the cache view's own copies, never changed after."""

    snap: ClusterSnapshot
    """the snapshot the features were computed over (in names mode the pod's context: the cached nodes its taints and
    cordons leave it, ``extender.context``)"""
    cluster: np.ndarray
    """the ``Encoded.cluster`` row the policy saw"""
    max_usage_age: float
    rows: np.ndarray | None = None
    """the snapshot row of each of the decision's nodes, -1 where unknown (None: the snapshot's own order)"""
    blocked: np.ndarray | None = None
    """(N,) snapshot rows the pod could not go to (taints it does not tolerate, labels its node selector or required
    affinity do not allow: ``extender.shadow``), recorded as not ``ready``"""
    daemon_pods: np.ndarray | None = None
    """(N,) how many of each snapshot row's ``pods`` a DaemonSet owns (None: not counted, written as null)"""
    feasible: np.ndarray | None = None
    """(N,) the encoder's feasibility of ``snap``'s rows (``Encoded.mask`` over the whole snapshot), when the caller
    has it: ``n_feasible`` is then counted from it, not recomputed (None: ``feasible_mask`` here)"""
    mean_cap: np.ndarray | None = None
    """(4,) ``snap``'s mean capacity as the encoder computed it (``Encoded.mean_cap``; None: ``mean_capacity`` here)"""


def inputs_of(inputs: DecisionInputs, picked: Sequence[int], at: Sequence[int], pod: PodView) -> dict[str, Any]:
    """A row's ``inputs`` (``INPUT_FIELDS``) for the decision's nodes at ``picked`` (positions in the request's
    node list), which are the row's ``nodes`` at ``at``."""
    snap = inputs.snap
    picked = np.asarray(picked, dtype=np.int64)
    rows = picked if inputs.rows is None else np.asarray(inputs.rows, dtype=np.int64)[picked]
    known = None if inputs.rows is None or (rows >= 0).all() else rows >= 0  # None: every node known
    idx = rows if known is None else rows[known]
    cluster = np.asarray(inputs.cluster, dtype=np.float32)
    feasible = feasible_mask(snap, pod) if inputs.feasible is None else inputs.feasible
    mean_cap = mean_capacity(snap) if inputs.mean_cap is None else inputs.mean_cap
    # only the kept nodes' values are gathered (``take``: a few dozen rows of arrays of every node)
    fields = {name: getattr(snap, name).take(idx, axis=0) for name in INPUT_NODE_FIELDS}
    if inputs.blocked is not None:
        fields["ready"] = fields["ready"] & ~inputs.blocked.take(idx)
    return {"at": [int(i) for i in at], "max_usage_age": float(inputs.max_usage_age), "n_nodes": snap.n_nodes,
            "n_feasible": int(np.count_nonzero(feasible)), "mean_capacity": mean_cap.tolist(),
            "est_util_mean": cluster[MEAN_UTIL].tolist(), "est_util_std": cluster[STD_UTIL].tolist(),
            **{name: _per_node(values, known) for name, values in fields.items()},
            "daemon_pods": [None] * len(rows) if inputs.daemon_pods is None else
            _per_node(inputs.daemon_pods.take(idx).astype(np.int64), known)}


def _finite_or_none(v: Any) -> Any:
    if isinstance(v, list):
        return [_finite_or_none(x) for x in v]
    return v if not isinstance(v, float) or (v == v and abs(v) != float("inf")) else None


def _per_node(values: np.ndarray, known: np.ndarray | None) -> list:
    """``values`` (one entry per known node) as exact JSON values in the decision's node order: None at a
    node not known (``known`` None: every node is), and for NaN / inf (no usage sample)."""
    out = values.tolist()
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        out = [_finite_or_none(v) for v in out]
    if known is None:
        return out
    it = iter(out)
    return [next(it) if k else None for k in known.tolist()]


def _best(nodes: Sequence[str], scores, raw, *, keep: int,
          also: Sequence[str | None]) -> tuple[list, np.ndarray, np.ndarray, list[int]]:
    """The ``keep`` best entries (score, then raw value) and those named in ``also``, in their original order,
    and their positions."""
    s, r = np.asarray(scores, dtype=np.float64), np.asarray(raw, dtype=np.float64)
    idx = _best_positions(nodes, s, r, keep=keep, also=also)
    return [nodes[i] for i in idx], s[idx].astype(np.int64), r[idx], idx


def _best_positions(nodes: Sequence[str], scores: np.ndarray, raw: np.ndarray, *, keep: int,
                    also: Sequence[str | None]) -> list[int]:
    """``_best``'s positions alone."""
    rows = set(top_positions(scores, raw, keep))
    for n in also:  # one scan of the names each (``in`` then ``index`` scanned twice)
        if n is not None:
            try:
                rows.add(nodes.index(n))
            except ValueError:
                pass
    return sorted(rows)


def top_positions(scores: np.ndarray, raw: np.ndarray, keep: int) -> list[int]:
    """Positions of the ``keep`` best entries, ascending: by score, then raw value (NaN last), then position --
    the first ``keep`` of ``np.lexsort((-raw, -scores))`` (a stable sort), found by two partitions instead of
    a sort (19 vs 27 us at 1,000 nodes; ``tests/unit/policy/test_decisionlog.py`` checks the sets equal on random
    vectors full of ties)."""
    n = scores.shape[0]
    if keep >= n:
        return list(range(n))
    if keep <= 0:
        return []
    r = raw
    if not np.isfinite(r).all():  # the usual raw vector has none: skip nan_to_num's passes over it
        r = np.nan_to_num(r, nan=-np.inf)
    s_k = np.partition(scores, n - keep)[n - keep]  # the keep-th best score: all better ones are in
    better = scores > s_k
    tied = np.flatnonzero(scores == s_k)
    want = keep - int(np.count_nonzero(better))  # of the tied scores, the best by raw value, then position
    if want < tied.size:
        rt = r[tied]
        r_k = np.partition(rt, tied.size - want)[tied.size - want]
        over = rt > r_k
        level = np.flatnonzero(rt == r_k)[:want - int(np.count_nonzero(over))]
        over[level] = True
        better[tied[over]] = True
    else:
        better[tied] = True
    return np.flatnonzero(better).tolist()


def outcome_row(*, ts: float, replica: str, pod: tuple[str, str, str], node: str | None, phase: str,
                created: float | None, started: float | None, finished: float | None) -> dict[str, Any]:
    """One outcome row (see ``OUTCOME_FIELDS``)."""
    jct = finished - created if finished is not None and created is not None else None
    run = finished - started if finished is not None and started is not None else None
    return {"v": SCHEMA_VERSION, "kind": "outcome", "ts": round(ts, 6), "replica": replica, "namespace": pod[0],
            "name": pod[1], "uid": pod[2], "node": node, "phase": phase, "created": created, "started": started,
            "finished": finished, "jct_s": None if jct is None else round(jct, 3),
            "run_s": None if run is None else round(run, 3)}


def filter_row(*, ts: float, replica: str, pod: tuple[str, str, str], passed: int, nodes_total: int) -> dict[str, Any]:
    """One filter row (see ``FILTER_FIELDS``)."""
    return {"v": SCHEMA_VERSION, "kind": "filter", "ts": round(ts, 6), "replica": replica, "namespace": pod[0],
            "name": pod[1], "uid": pod[2], "passed": int(passed), "nodes_total": int(nodes_total)}


@dataclass(frozen=True, slots=True)
class Row:
    """One row as read, with where it came from (for messages)."""

    path: str
    line: int
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str) -> Any:
        """A field a row may lack (``DECISION_OPTIONAL``): None where it does."""
        return self.data.get(key)

    @property
    def version(self) -> int:
        """The row's schema version (one of ``READ_VERSIONS``)."""
        return self.data["v"]


@dataclass(slots=True)
class LogContents:
    """Every row of a log, in file then line order; ``torn``: (file, line) of torn last lines skipped."""

    decisions: list[Row] = field(default_factory=list)
    outcomes: dict[str, Row] = field(default_factory=dict)   # pod uid -> its (first) outcome
    filters: list[Row] = field(default_factory=list)          # filters that left a pod at most one node
    torn: list[tuple[str, int]] = field(default_factory=list)

    def joined(self) -> list[tuple[Row, Row | None]]:
        """Each decision with its pod's outcome (None while the pod has not ended, or it ended unseen)."""
        return [(d, self.outcomes.get(d["uid"])) for d in self.decisions]


def check_row(data: Any, *, path: Path | str, line: int) -> dict[str, Any]:
    """``data`` if it is a row of this schema; else ``LogError`` / ``LogSchemaError`` naming the field."""
    if not isinstance(data, dict):
        raise LogError(path, line, "<row>", f"a row is a JSON object, got {type(data).__name__}")
    if "v" not in data:
        raise LogError(path, line, "v", "missing: not a drsched decision log row")
    if data["v"] not in READ_VERSIONS or isinstance(data["v"], bool):
        raise LogSchemaError(path, line, "v", f"schema version {data['v']!r}; this reader reads "
                                              f"{' and '.join(map(str, READ_VERSIONS))}")
    kind = data.get("kind")
    if kind not in KINDS:
        raise LogError(path, line, "kind", f"{kind!r} is not one of {', '.join(KINDS)}")
    for name, types in {**COMMON_FIELDS, **KINDS[kind]}.items():
        if name not in data:
            raise LogError(path, line, name, "missing")
        value = data[name]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise LogError(path, line, name, f"expected {' or '.join(t.__name__ for t in types)}, "
                                             f"got {type(value).__name__}")
    if kind == "decision":
        for name, types in DECISION_OPTIONAL.items():
            if name in data and not isinstance(data[name], types):
                raise LogError(path, line, name, f"expected {' or '.join(t.__name__ for t in types)}, "
                                                 f"got {type(data[name]).__name__}")
        if data["mode"] not in MODES:
            raise LogError(path, line, "mode", f"{data['mode']!r} is not one of {', '.join(MODES)}")
        n = len(data["nodes"])
        for name in ("scores", "raw"):
            if len(data[name]) != n:
                raise LogError(path, line, name, f"{len(data[name])} values for {n} nodes")
        if data["inputs"] is not None:
            _check_inputs(data["inputs"], n, version=data["v"], path=path, line=line)
    return data


def _check_inputs(inputs: dict[str, Any], n: int, *, version: int, path: Path | str, line: int) -> None:
    """A decision's ``inputs``: each field of its schema ``version`` present and typed, each per-node list one
    entry per node."""
    since = {k: t for v, fields in INPUT_FIELDS_SINCE.items() if version >= v for k, t in fields.items()}
    for name, types in {**INPUT_FIELDS, **since}.items():
        where = f"inputs.{name}"
        if name not in inputs:
            raise LogError(path, line, where, "missing")
        value = inputs[name]
        if not isinstance(value, types) or isinstance(value, bool):
            raise LogError(path, line, where, f"expected {' or '.join(t.__name__ for t in types)}, "
                                              f"got {type(value).__name__}")
        if name == "at" and not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in value):
            raise LogError(path, line, where, f"positions in the row's {n} nodes expected")
        if (name in INPUT_NODE_FIELDS or name in since) and len(value) != len(inputs["at"]):
            raise LogError(path, line, where, f"{len(value)} values for {len(inputs['at'])} nodes (inputs.at)")
        if name == "daemon_pods" and not all(
                x is None or (isinstance(x, int) and not isinstance(x, bool) and x >= 0) for x in value):
            raise LogError(path, line, where, "a count >= 0 or null per node expected")


def segments(path: Path | str) -> list[Path]:
    """The log's segment files: ``path`` itself if a file, else its ``decisions-*.jsonl`` in name (= time) order."""
    p = Path(path)
    if p.is_dir():
        return sorted(p.glob(SEGMENT_GLOB))
    if not p.exists():
        raise LogError(p, 0, "<file>", "no such file or directory")
    return [p]


def read_log(paths: Path | str | Iterable[Path | str], *, strict: bool = False) -> LogContents:
    """Read a log (a directory of segments, one segment, or several) into ``LogContents``.

    A last line without its newline that does not parse is the tear a ``kill -9`` leaves: skipped and listed
    in ``torn`` (``strict``: an error). Any other bad line is a ``LogError`` naming file, line and field.
    Reading never writes."""
    files = [s for p in ([paths] if isinstance(paths, str | Path) else paths) for s in segments(p)]
    out = LogContents()
    for path in files:
        try:
            text = path.read_bytes()
        except OSError as exc:
            raise LogError(path, 0, "<file>", f"cannot read: {exc.strerror}") from None
        lines = text.split(b"\n")
        complete = text.endswith(b"\n") or not text
        last = len(lines) - (1 if complete else 0)  # lines[-1] is '' after a final newline
        for i, raw in enumerate(lines[:last], start=1):
            if not raw.strip():
                continue
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                if i == last and not complete and not strict:
                    out.torn.append((str(path), i))
                    continue
                what = "truncated row" if i == last and not complete else "not JSON (truncated or foreign file?)"
                raise LogError(path, i, "<row>", f"{what}: {exc}") from None
            row = Row(path=str(path), line=i, data=check_row(data, path=path, line=i))
            if data["kind"] == "decision":
                out.decisions.append(row)
            elif data["kind"] == "filter":
                out.filters.append(row)
            else:
                out.outcomes.setdefault(data["uid"], row)
    return out
