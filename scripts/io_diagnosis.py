"""Why the learned policy loses on io-heavy work: outcomes per job kind, and decisions compared one by one.

Issue #22: the shipped student loses on the test split's io-heavy family. This script builds the diagnosis on
validation seeds only (``policy.splits.seeds("validation", n, offset)``) and on configurations it names here
(``CONFIGS``: the validation families and io-rich mixes built from training's clusters), never on test episodes.

Subcommands (each writes one CSV under ``--out`` and prints its summary):

``outcomes``   every (config, load, seed) x policy, as served (band:0.02 at weight 5, prefer-cool) or as an
               argmax (``@argmax``): excess slowdown overall and per job kind (cpu, net, io).
``decisions``  the model's own served trajectory, decision by decision: at each pod, on the same snapshot, the
               node the model picks as served and as an argmax, the node ``demand-aware`` and ``lookahead`` pick
               as served, ``lookahead``'s predicted added excess (``Lookahead.costs``) at each of them, the disk
               utilisation after placing, the node types, and the Q-values' spread (how many nodes the band ties).
``sensitivity`` how much the model's Q of a node moves when one input column of that node moves (finite
               differences on the decisions' encodings), per job kind: does it read the disk columns?

Run from the repository root with ``PYTHONPATH=.``; every figure in ``results/policy/io-diagnosis/README.md``
names its command.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from policy.baselines import make_scorer, pick
from policy.comparison import ARGMAX as ARGMAX_SCORING
from policy.comparison import (
    DQN,
    HEURISTICS,
    case_ratio,
    cell,
    comparison,
    excess_by_case,
    geometric_mean,
    ratio_to_best,
    ratios,
    read_summary,
)
from policy.comparison import served_setting as served_setting_of
from policy.features import AFTER_UTIL, NODE_FEATURES, encode
from policy.model import ModelScorer, load_model
from policy.served import DEFAULT_MAPPING, DEFAULT_WEIGHT, ScoreMapping, Served
from policy.sim.config import SimConfig
from policy.sim.engine import Simulator
from policy.sim.episode import run, run_episode, scorer_choice, scorer_from_spec
from policy.splits import LOADS, VALIDATION, seeds

MODEL = "policy/models/default.npz"
KINDS = ("cpu", "net", "io")
IO_RICH = {
    # io-rich mixes on training's own clusters (standard 4-12, mixed 4-16), profiles and staleness inside
    # training's ranges: the mix is the one axis that leaves training, as in the test split's io-heavy family,
    # but neither its cluster (mixed:12) nor its mix (io 3 : net 1) is copied.
    "io-cpu-standard": dict(cluster="standard:8", workload="io:2,cpu:1", profile_error=0.1, sample_interval=10.0),
    "io-net-mixed": dict(cluster="mixed:16", workload="io:2,net:1,cpu:1", profile_error=0.25, sample_interval=30.0),
    "io-only-mixed": dict(cluster="mixed:8", workload="io:1", profile_error=0.1, sample_interval=10.0),
}
REGIME = {
    # two io-rich mixes with their input quality swapped, to test whether the student's lead over lookahead follows
    # the inputs (stale usage, noisy profiles) rather than the mix (README, item 5)
    "io-net-mixed-clean": {**IO_RICH["io-net-mixed"], "profile_error": 0.1, "sample_interval": 10.0},
    "io-only-mixed-noisy": {**IO_RICH["io-only-mixed"], "profile_error": 0.5, "sample_interval": 60.0},
}
DEFAULT_CONFIGS = {**{k: f.config for k, f in VALIDATION.items()}, **IO_RICH}
CONFIGS = {**DEFAULT_CONFIGS, **REGIME}
ARGMAX = "@argmax"
COMPARED = ("est_util_cpu", "est_util_disk", "est_util_net", "after_util_max", "req_frac_cpu", "pods_frac",
            "cap_rel_cpu", "cap_rel_disk", "stale")
"""Input columns the ``decisions`` rows keep for the model's served pick and lookahead's (``input_table``)."""


def kind_of(pod_name: str) -> str:
    """The job kind of a simulated pod (``<kind>-<job id>``)."""
    return pod_name.rsplit("-", 1)[0]


def node_type(name: str) -> str:
    """The node type of a simulated node (``<type>-<index>``)."""
    return name.rsplit("-", 1)[0]


def excess_by_kind(slowdown: np.ndarray, kinds: Sequence[str]) -> dict[str, float]:
    """Mean slowdown - 1 of the finished jobs of each kind in ``KINDS`` (NaN where none finished), and ``all``."""
    s, k = np.asarray(slowdown, dtype=float), np.asarray(kinds)
    out = {kind: float(s[k == kind].mean() - 1.0) if (k == kind).any() else math.nan for kind in KINDS}
    out["all"] = float(s.mean() - 1.0) if len(s) else math.nan
    return out


def served_setting(spec: str) -> tuple[str, tuple | None]:
    """``NAME`` -> (NAME, the shipped setting: weight 5, band:0.02, prefer-cool); ``NAME@argmax`` -> (NAME, None),
    a pure argmax; ``NAME@W/MAPPING/HOT`` -> (NAME, (W, MAPPING, HOT)), served in that setting."""
    name, sep, tail = spec.rpartition("@")
    if not sep:
        return spec, (DEFAULT_WEIGHT, DEFAULT_MAPPING, "prefer-cool")
    if tail == ARGMAX[1:]:
        return name, None
    w, mapping, hot = tail.split("/")
    return name, (float(w), ScoreMapping.parse(mapping), hot)


def scorer(spec: str, seed: int):
    """``spec`` (``served_setting``) as a scorer; default-k8s is always plain kube-scheduler."""
    name, setting = served_setting(spec)
    base = scorer_from_spec(name, seed=seed)
    if setting is None or name == "default-k8s":
        return base
    w, mapping, hot = setting
    return Served(base, w, mapping=mapping, mode=hot)


def cases(configs: Iterable[str], loads: Sequence[float], n: int, offset: int, progress: str = "none"):
    for name in configs:
        for load in loads:
            for seed in seeds("validation", n, offset):
                yield name, load, seed, SimConfig(load=load, n_jobs=200, progress_shown=progress, **CONFIGS[name])


def outcomes(args) -> list[dict]:
    rows = []
    for name, load, seed, cfg in cases(args.configs, args.loads, args.seeds, args.offset, args.progress):
        for spec in args.policies:
            res = run_episode(cfg, seed, scorer(spec, seed))
            ex = excess_by_kind(res.slowdown, res.kinds)
            rows.append({"config": name, "load": load, "seed": seed, "policy": spec, "unfinished": res.unfinished,
                         **{f"excess_{k}": v for k, v in ex.items()}})
    return rows


def decisions(args) -> list[dict]:
    """Walk the model's served trajectory; score every other rule on the same snapshots."""
    model = ModelScorer(load_model(args.model), name="model")
    la, da = make_scorer("lookahead"), make_scorer("demand-aware")
    served_la, served_da = Served(la), Served(da)
    rows = []
    for name, load, seed, cfg in cases(args.configs, args.loads, args.seeds, args.offset):
        served_model = Served(model)
        inner = scorer_choice(served_model, np.random.default_rng(seed))
        sim = Simulator(cfg, seed=seed)

        def choose(snap, pod, mask, *, _name=name, _load=load, _seed=seed, _inner=inner):
            node = _inner(snap, pod, mask)
            if node is None or mask.sum() < 2:
                return node
            enc = encode(snap, pod)
            q = model.score_encoded(enc)
            served = Served(model).score(snap, pod)
            allowed = np.isfinite(served)
            arg = pick(q, mask)
            cost = la.costs(snap, pod)
            la_pick = pick(served_la.score(snap, pod), mask)
            da_pick = pick(served_da.score(snap, pod), mask)
            la_arg, da_arg = pick(la.score(snap, pod), mask), pick(da.score(snap, pod), mask)
            best_q = q[allowed].max()
            tied = allowed & (q >= best_q - DEFAULT_MAPPING.band)
            disk = enc.nodes[:, AFTER_UTIL][:, 3]
            rows.append({
                "config": _name, "load": _load, "seed": _seed, "kind": kind_of(pod.name),
                "feasible": int(mask.sum()), "allowed": int(allowed.sum()),
                "band_tied": int(tied.sum()), "argmax_allowed": int(allowed[arg]), "pick_tied": int(tied[node]),
                "lookahead_argmax_allowed": int(allowed[la_arg]), "demand_aware_argmax_allowed": int(allowed[da_arg]),
                "pick": node, "argmax": arg, "lookahead": la_pick, "demand_aware": da_pick,
                "pick_type": node_type(snap.names[node]), "argmax_type": node_type(snap.names[arg]),
                "lookahead_type": node_type(snap.names[la_pick]),
                "cost_pick": cost[node], "cost_argmax": cost[arg], "cost_lookahead": cost[la_pick],
                "cost_demand_aware": cost[da_pick], "cost_min": cost[allowed].min(),
                "disk_pick": disk[node], "disk_lookahead": disk[la_pick], "disk_min": disk[allowed].min(),
                "q_gap_lookahead": best_q - q[la_pick],
                **{f"{c}_{w}": round(float(enc.nodes[i, NODE_FEATURES.index(c)]), 4)  # 4 places: the file stays small
                   for w, i in (("pick", node), ("lookahead", la_pick)) for c in COMPARED},
            })
            return node

        run(sim, choose)
    return rows


def sensitivity(args) -> list[dict]:
    """d Q(node) / d column, by central differences of ``--step`` on every feasible node of every decision of the
    model's served trajectory, mean |dQ| and mean dQ per (kind, column)."""
    model = load_model(args.model)
    scorer_ = Served(ModelScorer(model, name="model"))
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    for _name, _load, seed, cfg in cases(args.configs, args.loads, args.seeds, args.offset):
        sim = Simulator(cfg, seed=seed)
        inner = scorer_choice(scorer_, np.random.default_rng(seed))

        def choose(snap, pod, mask, *, _inner=inner):
            if mask.sum() >= 2:
                enc = encode(snap, pod)
                kind = kind_of(pod.name)
                nodes = enc.nodes[mask]
                shared = np.concatenate([enc.pod, enc.cluster]).astype(np.float32)
                for c, col in enumerate(NODE_FEATURES):
                    up, dn = nodes.copy(), nodes.copy()
                    up[:, c] += args.step
                    dn[:, c] -= args.step
                    d = (model.forward(up, shared) - model.forward(dn, shared)) / (2 * args.step)
                    acc[(kind, col)].extend(d.tolist())
            return _inner(snap, pod, mask)

        run(sim, choose)
    return [{"kind": k, "column": c, "mean_dq": float(np.mean(v)), "mean_abs_dq": float(np.mean(np.abs(v))),
             "n": len(v)} for (k, c), v in sorted(acc.items())]


def mean_rows(rows: Sequence[dict], metric: str) -> list[dict]:
    """``outcomes`` rows as ``policy.comparison``'s summary rows: per (config, load, policy), ``metric``'s mean over
    the seeds (NaN seeds, a kind with no finished job, left out)."""
    acc: dict[tuple, list[float]] = defaultdict(list)
    for r in rows:
        v = float(r[metric])
        if not math.isnan(v):
            acc[(r["config"], float(r["load"]), r["policy"])].append(v)
    return [{"scenario": c, "load": ld, "policy": p, metric: float(np.mean(v))} for (c, ld, p), v in acc.items()]


def same_setting(policy: str, present: set[str]) -> tuple[str, ...]:
    """The heuristics ``policy`` is judged against: default-k8s (always plain kube-scheduler) and demand-aware and
    lookahead in ``policy``'s own setting (its ``@`` suffix), those of them ``present`` has, as issue #22 asks (the
    same command for every policy); the shipped setting's where none is."""
    _, sep, tail = policy.rpartition("@")
    suffix = "@" + tail if sep and tail != ARGMAX[1:] else ""
    same = tuple(h + suffix for h in HEURISTICS[1:] if h + suffix in present)
    return (HEURISTICS[0], *same) if suffix and same else HEURISTICS


def outcome_table(rows: Sequence[dict], policy: str) -> str:
    """Markdown: per case, ``policy``'s excess / the best heuristic's in the same setting (``same_setting``), over
    all jobs and over each kind's jobs alone; geometric means over the cases below."""
    metrics = ("excess_all", *(f"excess_{k}" for k in KINDS))
    ex = {m: excess_by_case(mean_rows(rows, m), m) for m in metrics}
    present = {r["policy"] for r in rows}
    against = tuple(h for h in same_setting(policy, present) if h in present)
    lines = [f"against: {', '.join(against)}", "",
             "| config | load | best heuristic (all jobs) | all | cpu jobs | net jobs | io jobs |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for fam, load in sorted({(f, ld) for f, ld, _ in ex["excess_all"]}):
        best = min(against, key=lambda h, f=fam, ld=load: ex["excess_all"][(f, ld, h)])
        cells = []
        for m in metrics:
            e = ex[m]
            have = [h for h in against if (fam, load, h) in e]
            if (fam, load, policy) not in e or not have:
                cells.append("-")
                continue
            cells.append(cell(case_ratio(e[(fam, load, policy)], min(e[(fam, load, h)] for h in have))))
        head = f"| {fam} | {load:g} | {best} {ex['excess_all'][(fam, load, best)]:.3f} | "
        lines.append(head + " | ".join(cells) + " |")
    means = []
    for m in metrics:
        e = ex[m]
        keep = {k: v for k, v in e.items() if all((k[0], k[1], h) in e for h in (*against, policy))}
        means.append(f"{m.removeprefix('excess_')} {geometric_mean(ratios(keep, policy, against).values()):.3f}")
    lines.append(f"\ngeometric mean over the cases: {'; '.join(means)}")
    return "\n".join(lines)


DECISION_HEADER = ("| {} | decisions | served = argmax "
                   "| argmax refused by the hot filter (demand-aware's / lookahead's) "
                   "| served another band-tied node | served outside the band "
                   "| lookahead's predicted added excess: served pick / argmax pick / demand-aware served / "
                   "lookahead served "
                   "| of which the hot filter's refusals | of which the band's ties |")


def decision_table(rows: Sequence[dict], group: str = "kind") -> str:
    """Markdown: per ``group`` value, where the model's served pick leaves its argmax (the hot filter refused the
    argmax node, or kube-scheduler's scoring chose among the nodes the band ties) and what each rule's pick costs
    by ``lookahead``'s prediction on the same snapshot (mean per decision)."""
    out = [DECISION_HEADER.format(group), "|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r[group]].append(r)
    for g, rs in sorted(by.items()):
        keys = ("pick", "argmax", "argmax_allowed", "pick_tied", "cost_pick", "cost_argmax", "cost_demand_aware",
                "cost_lookahead")
        f = {k: np.array([float(r[k]) for r in rs]) for k in keys}
        moved = f["pick"] != f["argmax"]
        refused = moved & (f["argmax_allowed"] == 0)
        tied = moved & ~refused & (f["pick_tied"] == 1)
        added = np.where(refused, f["cost_pick"] - f["cost_argmax"], 0.0).mean()
        added_tied = np.where(tied, f["cost_pick"] - f["cost_argmax"], 0.0).mean()
        costs = " / ".join(f"{f[k].mean():.3f}" for k in ("cost_pick", "cost_argmax", "cost_demand_aware",
                                                          "cost_lookahead"))
        others = " / ".join(f"{1 - np.mean([float(r[k]) for r in rs]):.2f}" for k in ("demand_aware_argmax_allowed",
                                                                                   "lookahead_argmax_allowed"))
        out.append(f"| {g} | {len(rs)} | {1 - moved.mean():.2f} | {refused.mean():.2f} ({others}) | "
                   f"{tied.mean():.2f} | {(moved & ~refused & ~tied).mean():.2f} | {costs} | {added:+.3f} | "
                   f"{added_tied:+.4f} |")
    return "\n".join(out)


def response(args) -> list[dict]:
    """How the model's Q and ``lookahead``'s predicted cost of a node answer the node's estimated use of one resource:
    per (kind, resource), central differences of ``--step`` x capacity added to every node's measured use (a
    node's row and its cost depend on its own state only; the cluster row is kept as it was), over every feasible
    node of every decision of the model's served trajectory. Both read the same estimate
    (``policy.features.estimated_usage``); the contention model's answer is the simulator's for disk and net, whose
    sharing rule (``rate``) ``lookahead`` applies, not for cpu (the active set shares cpu ``equal``)."""
    from dataclasses import replace

    from policy.features import mean_capacity, node_rows
    from policy.state import RESOURCES

    model = load_model(args.model)
    la = make_scorer("lookahead")
    scorer_ = Served(ModelScorer(model, name="model"))
    acc: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for _name, _load, seed, cfg in cases(args.configs, args.loads, args.seeds, args.offset):
        sim = Simulator(cfg, seed=seed)
        inner = scorer_choice(scorer_, np.random.default_rng(seed))

        def choose(snap, pod, mask, *, _inner=inner):
            if mask.sum() >= 2:
                enc = encode(snap, pod)
                shared = np.concatenate([enc.pod, enc.cluster]).astype(np.float32)
                mean_cap = mean_capacity(snap)
                for r, res in enumerate(RESOURCES):
                    q, cost = [], []
                    for sign in (1.0, -1.0):
                        usage = snap.usage.copy()  # NaN (no sample) stays NaN; a stale sample is not read
                        usage[:, r] = np.maximum(usage[:, r] + sign * args.step * snap.capacity[:, r], 0.0)
                        s2 = replace(snap, usage=usage)
                        q.append(model.forward(node_rows(s2, pod, mean_cap=mean_cap), shared)[mask])
                        cost.append(la.costs(s2, pod)[mask])
                    dq, dc = (q[0] - q[1]) / (2 * args.step), -(cost[0] - cost[1]) / (2 * args.step)
                    acc[(kind_of(pod.name), res)].extend(zip(dq.tolist(), dc.tolist(), strict=True))
            return _inner(snap, pod, mask)

        run(sim, choose)
    out = []
    for (k, res), v in sorted(acc.items()):
        a = np.array(v)
        corr = float(np.corrcoef(a[:, 0], a[:, 1])[0, 1]) if a[:, 0].std() > 0 and a[:, 1].std() > 0 else math.nan
        out.append({"kind": k, "resource": res, "mean_dq": float(a[:, 0].mean()),
                    "mean_neg_dcost": float(a[:, 1].mean()), "corr": corr, "n": len(a)})
    return out


def input_table(rows: Sequence[dict]) -> str:
    """Markdown: where the model's served pick and lookahead's differ, the mean of each ``COMPARED`` input column on
    the model's node and on lookahead's, per job kind."""
    out = ["### inputs of the two picks where the model (served) and lookahead (served) differ: model / lookahead", "",
           "| kind | decisions | " + " | ".join(COMPARED) + " |", "|---|---:|" + "---:|" * len(COMPARED)]
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["pick"] != r["lookahead"]:
            by[r["kind"]].append(r)
    for kind, rs in sorted(by.items()):
        mean = {(c, w): np.mean([float(r[f"{c}_{w}"]) for r in rs]) for c in COMPARED for w in ("pick", "lookahead")}
        cells = [f"{mean[(c, 'pick')]:.2f} / {mean[(c, 'lookahead')]:.2f}" for c in COMPARED]
        out.append(f"| {kind} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def type_table(rows: Sequence[dict]) -> str:
    """Markdown: the node types the decisions' picks went to (share of the decisions with a choice)."""
    picks = (("pick_type", "model served"), ("argmax_type", "model argmax"), ("lookahead_type", "lookahead served"))
    types = sorted({r[k] for r in rows for k, _ in picks})
    refused = [r for r in rows if r["pick"] != r["argmax"] and r["argmax_allowed"] == "0"]
    out = ["### node types of the io pods' picks (share of decisions)", "",
           "| pick | " + " | ".join(types) + " |", "|---|" + "---:|" * len(types)]
    for k, label in picks:
        n = len(rows)
        out.append(f"| {label} | " + " | ".join(f"{sum(r[k] == t for r in rows) / n:.2f}" for t in types) + " |")
    for k, label in picks[:2]:
        n = max(len(refused), 1)
        out.append(f"| {label}, where the filter refused the argmax | "
                   + " | ".join(f"{sum(r[k] == t for r in refused) / n:.2f}" for t in types) + " |")
    return "\n".join(out)


def write_csv(rows: list[dict], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=("outcomes", "decisions", "sensitivity", "response", "table", "gate"))
    p.add_argument("--runs", type=Path, nargs="+", metavar="DIR",
                   help="gate: two policy.evaluate folders (runs.csv) of the same cases, e.g. two hot filters, and "
                        "one --policies entry; or folders (pooled, outcomes ones too) and --policies CANDIDATE,SERVED")
    p.add_argument("--metric", default="excess_slowdown",
                   help="gate: the per-episode figure (outcomes folders: excess_all, excess_io, ...)")
    p.add_argument("--configs", default=",".join(DEFAULT_CONFIGS), type=lambda s: s.split(","),
                   help=f"from {', '.join(CONFIGS)}")
    p.add_argument("--loads", default=",".join(map(str, LOADS)), type=lambda s: [float(x) for x in s.split(",")])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--offset", type=int, default=None, help="into the validation split's seeds (>= 140: unused)")
    p.add_argument("--policies", default=f"default-k8s,demand-aware,lookahead,dqn:{MODEL},dqn:{MODEL}{ARGMAX}",
                   type=lambda s: s.split(","))
    p.add_argument("--model", default=MODEL)
    p.add_argument("--step", type=float, default=0.05)
    p.add_argument("--progress", default="none", help="outcomes: what the scheduler is shown of running pods' "
                   "progress (SimConfig.progress_shown; only lookahead-time reads it)")
    p.add_argument("--out", type=Path, help="the folder the CSV goes to (table: the folder read)")
    args = p.parse_args(argv)
    unknown = [c for c in args.configs if c not in CONFIGS]
    if unknown:
        p.error(f"unknown configs {unknown}; known: {', '.join(CONFIGS)}")
    if args.what == "gate":
        if (len(args.runs) == 2 and len(args.policies) == 1) or (args.runs and len(args.policies) == 2):
            return print_gate(args.runs, args.policies, metric=args.metric, configs=args.configs)
        p.error("gate: two --runs folders and one policy, or folders and two policies")
    if args.out is None:
        p.error("--out is required")
    if args.what == "table":
        return print_tables(args.out)
    if args.offset is None:
        p.error("--offset is required to run episodes")
    run_ = {"outcomes": outcomes, "decisions": decisions, "sensitivity": sensitivity, "response": response}
    rows = run_[args.what](args)
    write_csv(rows, args.out / f"{args.what}.csv")
    return 0


def gate_rows(folder: Path, name: str, metric: str) -> list[dict]:
    """``name``'s episodes in a ``policy.evaluate`` folder (``runs.csv``) or an ``outcomes`` folder (``outcomes.csv``,
    whose ``metric`` may be one kind's excess, ``excess_io``; its unschedulable pods are not recorded: 0), as
    ``policy.promote.pair_rows`` takes them."""
    evaluate = (folder / "runs.csv").is_file()
    out = []
    for r in read_csv(folder / ("runs.csv" if evaluate else "outcomes.csv")):
        if r["policy"] == name:
            out.append({"scenario": r["scenario" if evaluate else "config"], "workload": r.get("workload", ""),
                        "load": float(r["load"]), "seed": int(r["seed"]), "excess_slowdown": float(r[metric]),
                        "mean_jct": float(r["mean_jct"]) if evaluate else math.nan,
                        "unfinished": int(r["unfinished"]),
                        "unschedulable": int(r["unschedulable"]) if evaluate else 0})
    return out


def print_gate(runs: Sequence[Path], policies: Sequence[str], *, metric: str = "excess_slowdown",
               configs: Sequence[str] = tuple(CONFIGS)) -> int:
    """``policy.promote``'s rule (its ``pair_rows``, ``interval`` and ``decide``) on ``metric`` per episode: one policy
    in two folders that differ by a served setting (the gate a model meets, applied to a setting), or the first of
    two policies against the second, pooled over every folder given; episodes of ``configs`` only."""
    from policy.promote import decide, interval, pair_rows

    if len(policies) == 1:
        candidate, served = gate_rows(runs[0], policies[0], metric), gate_rows(runs[1], policies[0], metric)
        which = f"{policies[0]}: {runs[0]} / {runs[1]}"
    else:
        candidate = [r for f in runs for r in gate_rows(f, policies[0], metric)]
        served = [r for f in runs for r in gate_rows(f, policies[1], metric)]
        which = f"{policies[0]} / {policies[1]}: {', '.join(map(str, runs))}"
    candidate, served = ([r for r in rows if r["scenario"] in configs] for rows in (candidate, served))
    pairs = [p for p in pair_rows(candidate, served) if math.isfinite(p.ratio)]  # NaN: no job of that kind finished
    iv = interval([p.ratio for p in pairs])
    unfinished = (sum(p.candidate_unfinished for p in pairs), sum(p.served_unfinished for p in pairs))
    by_family: dict[str, list[float]] = defaultdict(list)
    for pr in pairs:
        by_family[pr.scenario].append(math.log(pr.ratio))
    families = ", ".join(f"{f} {math.exp(np.mean(v)):.3f}" for f, v in sorted(by_family.items()))
    print(f"{which} ({metric}): {decide(iv, unfinished=unfinished).reason}; "  # noqa: T201
          f"unfinished {unfinished[0]} / {unfinished[1]}; per family (geometric mean): {families}")
    return 0


def read_csv(path: Path) -> list[dict]:
    """``path``'s rows, or those of ``path`` + ``.gz`` where only the compressed copy is kept (decisions.csv)."""
    if not path.is_file() and path.with_name(path.name + ".gz").is_file():
        with gzip.open(path.with_name(path.name + ".gz"), "rt", newline="") as f:
            return list(csv.DictReader(f))
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def have(path: Path) -> bool:
    return path.is_file() or path.with_name(path.name + ".gz").is_file()


def print_tables(folder: Path) -> int:
    """Print the markdown tables of whatever CSVs ``folder`` holds (stdout: this script's output)."""
    parts = []
    if (folder / "summary.csv").is_file():  # a policy.evaluate folder
        summary, setting = read_summary(folder / "summary.csv"), served_setting_of(folder)
        scoring = (f"served, {setting['mapping']} at weight {setting['weight']:g}, hot filter {setting['hot_filter']}"
                   if setting.get("weight") else ARGMAX_SCORING)
        ex = excess_by_case(summary)
        models = sorted({p for _, _, p in ex if p.startswith("dqn:")}, key=lambda p: (p != DQN, p))
        parts.append(comparison(summary, scoring) + "\n" + "\n".join(
            f"{m} / the best of default-k8s, demand-aware, lookahead (geometric mean over the cases): "
            f"{ratio_to_best(ex, m):.3f}" for m in models))
    if (folder / "outcomes.csv").is_file():
        rows = read_csv(folder / "outcomes.csv")
        for pol in dict.fromkeys(r["policy"] for r in rows):
            if pol not in same_setting(pol, {r["policy"] for r in rows}):
                parts.append(f"### {pol} / the best heuristic's excess, per case\n\n{outcome_table(rows, pol)}")
    if have(folder / "decisions.csv"):
        rows = read_csv(folder / "decisions.csv")
        parts.append(f"### decisions, by job kind\n\n{decision_table(rows)}")
        io = [r for r in rows if r["kind"] == "io"]
        parts.append(f"### io pods' decisions, by config\n\n{decision_table(io, 'config')}")
        parts.append(type_table(io))
        if f"{COMPARED[0]}_pick" in rows[0]:
            parts.append(input_table(rows))
        parts.append(f"### every pod's decisions, by config\n\n{decision_table(rows, 'config')}")
    if (folder / "response.csv").is_file():
        parts.append("### per unit of a node's estimated use / capacity: the model's dQ and lookahead's -d cost\n\n"
                     "| kind | resource | model dQ | lookahead -d cost | correlation over nodes | node-decisions |\n"
                     "|---|---|---:|---:|---:|---:|\n" + "\n".join(
                         f"| {r['kind']} | {r['resource']} | {float(r['mean_dq']):+.3f} | "
                         f"{float(r['mean_neg_dcost']):+.3f} | {float(r['corr']):.2f} | {r['n']} |"
                         for r in read_csv(folder / "response.csv")))
    if (folder / "sensitivity.csv").is_file():
        rows = read_csv(folder / "sensitivity.csv")
        parts.append(sensitivity_table(rows))
    print("\n\n".join(parts))  # noqa: T201 (the script's output)
    return 0


def sensitivity_table(rows: Sequence[dict]) -> str:
    """Markdown: mean dQ / d column per kind (columns by name, kinds across)."""
    by = {(r["kind"], r["column"]): float(r["mean_dq"]) for r in rows}
    kinds = sorted({k for k, _ in by})
    out = ["### mean dQ / d column (served trajectory, every feasible node)", "",
           "| column | " + " | ".join(kinds) + " |", "|---|" + "---:|" * len(kinds)]
    for col in NODE_FEATURES:
        out.append(f"| {col} | " + " | ".join(f"{by.get((k, col), math.nan):+.3f}" for k in kinds) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
