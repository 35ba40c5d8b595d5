"""Offline evaluation on a decision log: what a policy's mean JCT would have been, from what was logged. Pure.

Why: before a candidate replaces the served policy, its value should be estimated from what happened on
the cluster, not only in the simulator. Importance weighting makes that unbiased where the log holds the
probability of each logged choice (exploration, ``policy.explore``): a target policy's mean outcome is

    IPS    V = 1/n  sum_i  1[target(row_i) = chosen_i] / propensity_i * jct_i
    SNIPS  V = sum_i w_i jct_i / sum_i w_i      (w_i = the same weights; lower variance, slightly biased)

over the decisions with an outcome, each with a 95 % bootstrap interval (seeded, so reruns agree). The
action is the extender's top node; kube-scheduler adds its own plugins' scores, so the estimate assumes it
binds that node: the report counts the decisions whose pod ended elsewhere (``bound_elsewhere``), and the
estimate means little when they are many.

Targets are functions of a logged row. The log holds each decision's full score vector but not the
cluster's state, so the policies it can evaluate are those computable from it: ``logged`` (the choice
made, i.e. the on-policy mean) and ``greedy`` (the logged policy's best raw value, exploration removed).
Shadow rows have no propensity (another scheduler
decided), so for them only the model's ``predicted_gain`` and the observed JCT split by agreement are
reported; evaluating a new model on them needs the simulator (not done here).

    python -m policy.offline /var/lib/drsched/decisions --target greedy
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from policy.decisionlog import LogError, Row, read_log

Target = Callable[[Row], str | None]


def _greedy(row: Row) -> str | None:
    raw = [(-np.inf if v is None else v) for v in row["raw"]]
    best = int(np.argmax(raw)) if raw else -1
    return row["nodes"][best] if best >= 0 and np.isfinite(raw[best]) else None


TARGETS: dict[str, Target] = {"logged": lambda r: r["chosen"], "greedy": _greedy}


@dataclass(frozen=True, slots=True)
class Estimate:
    estimator: str
    value: float | None   # mean JCT (s) the target would have had
    lo: float | None      # 95 % bootstrap interval
    hi: float | None
    n: int                # decisions with an outcome
    matched: int          # of which the target agrees with the logged choice


def _bootstrap(fn: Callable[[np.ndarray], float], n: int, *, draws: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    vals = [fn(rng.integers(0, n, n)) for _ in range(draws)]
    vals = [v for v in vals if np.isfinite(v)]
    return (float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))) if vals else (np.nan, np.nan)


def importance_weighted(pairs: list[tuple[Row, Row]], target: Target, *, reward: str = "jct_s",
                        draws: int = 1000, seed: int = 0) -> list[Estimate]:
    """IPS and SNIPS estimates of ``target``'s mean ``reward`` over (decision, outcome) pairs."""
    rows = [(d, o) for d, o in pairs
            if o is not None and o[reward] is not None and d["chosen"] is not None and d["propensity"] > 0]
    n = len(rows)
    if n == 0:
        return [Estimate(e, None, None, None, 0, 0) for e in ("ips", "snips")]
    w = np.array([float(target(d) == d["chosen"]) / d["propensity"] for d, _ in rows])
    r = np.array([float(o[reward]) for _, o in rows])

    def ips(idx: np.ndarray) -> float:
        return float((w[idx] * r[idx]).mean())

    def snips(idx: np.ndarray) -> float:
        s = w[idx].sum()
        return float((w[idx] * r[idx]).sum() / s) if s > 0 else np.nan

    out, everyone = [], np.arange(n)
    for name, fn in (("ips", ips), ("snips", snips)):
        value = fn(everyone)
        lo, hi = _bootstrap(fn, n, draws=draws, seed=seed)
        out.append(Estimate(name, _clean(value), _clean(lo), _clean(hi), n, int((w > 0).sum())))
    return out


def shadow_summary(pairs: list[tuple[Row, Row]], *, reward: str = "jct_s") -> dict:
    """Shadow rows: agreement, mean predicted gain, and the observed mean JCT where drsched agreed / differed."""
    rows = [(d, o) for d, o in pairs if d["mode"] == "shadow" and d["chosen"] is not None]
    agree = [d["chosen"] == d["actual"] for d, _ in rows]
    gains = [d["predicted_gain"] for d, _ in rows if d["predicted_gain"] is not None]

    def mean_jct(flag: bool) -> float | None:
        xs = [o[reward] for (_, o), a in zip(rows, agree, strict=True) if a is flag and o and o[reward] is not None]
        return _clean(float(np.mean(xs))) if xs else None

    return {"decisions": len(rows), "agreement_rate": _clean(float(np.mean(agree))) if rows else None,
            "mean_predicted_gain": _clean(float(np.mean(gains))) if gains else None,
            "observed_mean_jct_where_agreed": mean_jct(True), "observed_mean_jct_where_differed": mean_jct(False)}


def _clean(x: float) -> float | None:
    return round(float(x), 6) if x is not None and np.isfinite(x) else None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m policy.offline", description=__doc__.split("\n\n")[0])
    p.add_argument("log", nargs="+", help="decision log directory(ies) or segment file(s)")
    p.add_argument("--target", choices=sorted(TARGETS), default="greedy", help="policy to evaluate (module doc)")
    p.add_argument("--reward", choices=("jct_s", "run_s"), default="jct_s", help="outcome to average")
    p.add_argument("--draws", type=int, default=1000, help="bootstrap resamples for the interval")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    a = p.parse_args(argv)
    try:
        log = read_log(a.log)
    except LogError as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201 -- a command's answer
        return 2
    pairs = log.joined()
    serve = [(d, o) for d, o in pairs if d["mode"] == "serve"]
    explored = sum(1 for d, _ in serve if d["propensity"] < 1)
    elsewhere = sum(1 for d, o in serve if o is not None and o["node"] is not None and o["node"] != d["chosen"])
    report = {"decisions": len(pairs), "with_outcome": sum(o is not None for _, o in pairs),
              "torn_lines_skipped": len(log.torn), "serve": {"decisions": len(serve), "explored": explored,
                                                            "bound_elsewhere": elsewhere},
              "target": a.target, "reward": a.reward,
              "estimates": [asdict(e) for e in importance_weighted(serve, TARGETS[a.target], reward=a.reward,
                                                                  draws=a.draws, seed=a.seed)],
              "shadow": shadow_summary(pairs, reward=a.reward)}
    print(json.dumps(report, indent=2))  # noqa: T201 -- a command's answer
    return 0


if __name__ == "__main__":
    sys.exit(main())
