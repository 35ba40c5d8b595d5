"""Where the headline's A/A variance comes from: a descriptive, post-hoc study of `default#2` against `default`.

Reads only a lab run directory's committed files (jobs.csv, counters.csv, pod-counters.csv, system.csv,
host.csv) and prints plain-text tables; it writes nothing and changes no endpoint. The pre-registered primary
endpoint stays what `lab/protocols/multi-resource.yaml` says (the per-seed log mean-JCT ratio, all jobs).

    PYTHONPATH=. python results/lab/aa-variance/study.py [RUN_DIR]    # default: the headline's directory

Sections: 1 the endpoint as registered; 2 by job kind, node and phase (which jobs carry the A/A difference);
3 placement (did the two identical runs place pods differently, and why); 4 host recordings against the A/A
difference; 5 alternative endpoints and designs, with the seeds each implies for a +-5 % A/A interval and for
80 % power at a 15 % effect (`policy.paired`).
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from lab.report import read_rows
from policy.paired import interval, normal_quantile, seeds_for_power, t_quantile

HEADLINE = Path("results/lab/multi-resource-2026-12-07")
A, B = "default", "default#2"  # the A/A pair: B / A is the ratio
KINDS = ("cpu", "train", "net", "io")
GROUPS = {"cpu": ("cpu",), "train": ("train",), "net": ("net",), "io": ("io",), "compute (cpu+train)": ("cpu", "train"),
          "no io (cpu+train+net)": ("cpu", "train", "net"), "no net (cpu+train+io)": ("cpu", "train", "io"),
          "all": KINDS}
MARGIN = math.log(1.05)  # the A/A target's upper end; ln(1/0.95) is wider, so this one binds


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def f(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def load_jobs(run_dir: Path) -> dict[tuple[int, str], dict[str, dict]]:
    """(seed, arm) -> job -> row, for finished jobs."""
    out: dict[tuple[int, str], dict[str, dict]] = defaultdict(dict)
    for r in read_rows(run_dir / "jobs.csv"):
        if math.isfinite(f(r["jct_s"])):
            out[(int(r["seed"]), r["arm"])][r["job"]] = r
    return out


def aa_seeds(jobs) -> list[int]:
    return sorted(s for s, a in jobs if a == A and (s, B) in jobs)


def seeds_for_margin(sd: float, margin: float = MARGIN, most: int = 2000) -> int:
    """Least n with t(0.975, n-1) * sd / sqrt(n) <= margin: the interval's half-width inside +-5 % when the
    true A/A log ratio is 0 (an expected-width criterion, not a guarantee; a mean away from 0 needs more)."""
    if not sd > 0:
        return 0
    for n in range(3, most + 1):
        if t_quantile(0.975, n - 1) * sd / math.sqrt(n) <= margin:
            return n
    return most + 1


def power_seeds(sd: float) -> int:
    """``policy.paired.seeds_for_power`` at the protocol's 15 % and 80 %; 0 where there is no sd (an arm absent)."""
    return seeds_for_power(sd) if sd > 0 else 0


def sd_interval(sd: float, n: int) -> tuple[float, float]:
    """95 % interval of a normal sd from n values (chi-square, Wilson-Hilferty quantiles: close from about 10
    values on, loose for 3)."""
    nu = n - 1

    def chi2(p: float) -> float:
        z = normal_quantile(p)
        return nu * (1 - 2 / (9 * nu) + z * math.sqrt(2 / (9 * nu))) ** 3
    return sd * math.sqrt(nu / chi2(0.975)), sd * math.sqrt(nu / chi2(0.025))


def wait(r: dict) -> float:
    return f(r["start_s"]) - f(r["submit_s"])


def run(r: dict) -> float:
    return f(r["finish_s"]) - f(r["start_s"])


def mean_jct(rows, kinds=KINDS, key="jct_s") -> float:
    v = [f(r[key]) for r in rows if r["kind"] in kinds]
    v = [x for x in v if math.isfinite(x)]
    return float(np.mean(v)) if v else math.nan


def table(header: list[str], rows: list[list]) -> None:
    cells = [[str(c) for c in header]] + [[c if isinstance(c, str) else f"{c:.3f}" if isinstance(c, float)
                                           else str(c) for c in row] for row in rows]
    width = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for i, r in enumerate(cells):
        say("  ".join(c.rjust(w) for c, w in zip(r, width, strict=True)))
        if i == 0:
            say("  ".join("-" * w for w in width))
    say()


def share(parts: dict[str, np.ndarray], total: np.ndarray) -> dict[str, float]:
    """Each part's share of var(total), cov(part, total) / var(total): they add to 1 when the parts add to total."""
    v = float(np.var(total, ddof=1))
    return {k: float(np.cov(p, total, ddof=1)[0, 1] / v) for k, p in parts.items()}


def paired(jobs, seed: int) -> list[tuple[dict, dict]]:
    a, b = jobs[(seed, A)], jobs[(seed, B)]
    return [(a[j], b[j]) for j in sorted(a) if j in b]


# 1 ---------------------------------------------------------------------------------------------------------
def endpoint(jobs, seeds) -> np.ndarray:
    logs = np.array([math.log(mean_jct(jobs[(s, B)].values()) / mean_jct(jobs[(s, A)].values())) for s in seeds])
    iv = interval(list(logs))
    lo, hi = sd_interval(iv.sd, len(seeds))
    say(f"## 1. The registered endpoint, A/A ({B} / {A}), seeds {seeds[0]}-{seeds[-1]} ({len(seeds)})\n")
    table(["seed", "jobs", "mean JCT A", "mean JCT B", "ratio", "log"],
          [[s, len(paired(jobs, s)), mean_jct(jobs[(s, A)].values()), mean_jct(jobs[(s, B)].values()),
            math.exp(x), x] for s, x in zip(seeds, logs, strict=True)])
    say(f"ratio {iv.ratio:.3f} (95 % {iv.low:.3f}-{iv.high:.3f}); sd of the log ratio {iv.sd:.3f} "
        f"(its own 95 % interval {lo:.3f}-{hi:.3f}); seeds for +-5 %: {seeds_for_margin(iv.sd)}; "
        f"for 80 % power at 15 %: {seeds_for_power(iv.sd)}")
    loo = [interval([x for j, x in enumerate(logs) if j != i]).sd for i in range(len(seeds))]
    worst = int(np.argmin(loo))
    say(f"leave one seed out: sd {min(loo):.3f}-{max(loo):.3f} (lowest without seed {seeds[worst]})\n")
    return logs


# 2 ---------------------------------------------------------------------------------------------------------
def by_part(jobs, seeds, label: str, part_of) -> None:
    """Split each seed's (mean JCT B - mean JCT A) / mean JCT A into parts by ``part_of(row_a, row_b)``; the parts
    add up to the seed's ratio - 1 (about its log ratio). Prints each part's mean, sd and share of var."""
    names: list[str] = []
    for s in seeds:
        for a, b in paired(jobs, s):
            if (k := part_of(a, b)) not in names:
                names.append(k)
    parts = {}
    for k in names:
        col = []
        for s in seeds:
            pairs = paired(jobs, s)
            base = sum(f(a["jct_s"]) for a, _ in pairs)
            col.append(sum((f(b["jct_s"]) - f(a["jct_s"])) / base for a, b in pairs if part_of(a, b) == k))
        parts[k] = np.array(col)
    total = sum(parts.values())
    sh = share(parts, total)
    say(f"### by {label}: each part's contribution to (mean JCT B / A - 1), per seed\n")
    table([label, "mean", "sd", "share of var"] + [str(s) for s in seeds],
          [[k, float(p.mean()), float(p.std(ddof=1)), sh[k]] + [f"{x:+.3f}" for x in p]
           for k, p in sorted(parts.items())]
          + [["total", float(total.mean()), float(total.std(ddof=1)), 1.0] + [f"{x:+.3f}" for x in total]])


def phase_of(seed_jobs: dict[str, dict], n: int = 3):
    order = sorted(seed_jobs, key=lambda j: f(seed_jobs[j]["submit_s"]))
    size = math.ceil(len(order) / n)
    where = {j: i // size for i, j in enumerate(order)}
    return lambda a, _b: f"submit third {where[a['job']] + 1}"


def by_kind_node_phase(jobs, seeds) -> None:
    say("## 2. Which jobs carry the A/A difference\n")
    by_part(jobs, seeds, "kind", lambda a, _b: a["kind"])
    by_part(jobs, seeds, "node (moved: on another node in B)",
            lambda a, b: a["node"] if a["node"] == b["node"] else "moved")
    parts: dict[str, list[float]] = defaultdict(list)
    for s in seeds:
        ph = phase_of(jobs[(s, A)])
        pairs = paired(jobs, s)
        base = sum(f(a["jct_s"]) for a, _ in pairs)
        acc: dict[str, float] = defaultdict(float)
        for a, b in pairs:
            acc[ph(a, b)] += (f(b["jct_s"]) - f(a["jct_s"])) / base
        for k in ("submit third 1", "submit third 2", "submit third 3"):
            parts[k].append(acc.get(k, 0.0))
    arr = {k: np.array(v) for k, v in parts.items()}
    total = sum(arr.values())
    sh = share(arr, total)
    say("### by phase (jobs in submit order, in thirds)\n")
    table(["phase", "mean", "sd", "share of var"] + [str(s) for s in seeds],
          [[k, float(p.mean()), float(p.std(ddof=1)), sh[k]] + [f"{x:+.3f}" for x in p] for k, p in arr.items()])
    # is a run's A/A difference one shock over the whole run, or independent stretches? (covariance of thirds)
    var_t = float(np.var(total, ddof=1))
    var_p = sum(float(np.var(p, ddof=1)) for p in arr.values())
    cov = (var_t - var_p) / 6.0  # mean covariance of the 3 x 2 ordered pairs
    own = var_p / 3.0 - cov
    say(f"thirds: sum of their variances {var_p:.4f} of the total's {var_t:.4f}; mean covariance between two "
        f"thirds {cov:+.5f} (a run-level part); if a run of 2x the jobs at the same load were 6 such thirds, "
        f"its (ratio - 1) sd would be about {math.sqrt(max(6 * own + 36 * cov, 0) / 4):.3f} "
        f"(3x: {math.sqrt(max(9 * own + 81 * cov, 0) / 9):.3f}) -- a rough extrapolation\n")
    # JCT = wait (submit -> start) + run (start -> finish)
    w, r = [], []
    for s in seeds:
        pairs = paired(jobs, s)
        base = sum(f(a["jct_s"]) for a, _ in pairs)
        w.append(sum(wait(b) - wait(a) for a, b in pairs) / base)
        r.append(sum(run(b) - run(a) for a, b in pairs) / base)
    arr = {"wait (submit->start)": np.array(w), "run (start->finish)": np.array(r)}
    sh = share(arr, sum(arr.values()))
    say("### by part of the JCT\n")
    table(["part", "mean", "sd", "share of var"],
          [[k, float(p.mean()), float(p.std(ddof=1)), sh[k]] for k, p in arr.items()])
    say(f"mean wait before start a job, s, {A} / {B}: " + ", ".join(
        f"{s} {np.mean([wait(a) for a, _ in paired(jobs, s)]):.1f}/{np.mean([wait(b) for _, b in paired(jobs, s)]):.1f}"
        for s in seeds) + "\n")
    # concentration: how much of each seed's summed |dJCT| the top jobs carry
    rows = []
    for s in seeds:
        d = sorted((f(b["jct_s"]) - f(a["jct_s"]), a["job"], a["kind"], a["node"], b["node"])
                   for a, b in paired(jobs, s))
        absd = np.array(sorted((abs(x[0]) for x in d), reverse=True))
        top = sorted(d, key=lambda x: -abs(x[0]))[:3]
        net = sum(x[0] for x in d)
        rows.append([s, f"{net:+.1f}", float(absd[:5].sum() / absd.sum()), float(sum(x[0] for x in sorted(
            d, key=lambda x: -abs(x[0]))[:5]) / net) if net else math.nan,
            "; ".join(f"{j} {k} {na}->{nb} {x:+.1f}s" for x, j, k, na, nb in top)])
    say("### concentration: the 5 jobs (of 48) with the largest |JCT B - JCT A| per seed\n")
    table(["seed", "sum dJCT s", "top5 share of sum|d|", "top5 / net", "largest three"], rows)
    # per-job log ratios: the spread of a job's A/A ratio, by kind and whether it moved
    rows = []
    for kind in KINDS:
        for moved in (False, True):
            v = [math.log(f(b["jct_s"]) / f(a["jct_s"])) for s in seeds for a, b in paired(jobs, s)
                 if a["kind"] == kind and (a["node"] != b["node"]) == moved]
            if v:
                rows.append([kind, "moved" if moved else "same node", len(v), float(np.mean(v)),
                             float(np.std(v, ddof=1)),
                             float(np.percentile(np.abs(v), 90))])
    say("### per-job A/A log ratio ln(JCT B / JCT A), all seeds pooled\n")
    table(["kind", "placement", "jobs", "mean", "sd", "p90 |log|"], rows)


# 3 ---------------------------------------------------------------------------------------------------------
def net_links(run_dir: Path, jobs, seeds, totals: np.ndarray) -> None:
    """Where each run put its net jobs: a net job's time depends on its node's link (80/20/20/10 Mbit/s), which
    the default scheduler does not see."""
    link = {r["node"]: f(r["net_mbit"]) for r in read_rows(run_dir / "nodes.csv")}
    nodes = sorted(link, key=lambda n: -link[n])
    rows, diff = [], []
    for s, t in zip(seeds, totals, strict=True):
        count = {arm: [sum(r["kind"] == "net" and r["node"] == n for r in jobs[(s, arm)].values()) for n in nodes]
                 for arm in (A, B)}
        mean_link = {arm: float(np.mean([link[r["node"]] for r in jobs[(s, arm)].values() if r["kind"] == "net"]))
                     for arm in (A, B)}
        diff.append(math.log(mean_link[B] / mean_link[A]))
        rows.append([s, f"{t:+.3f}", "/".join(map(str, count[A])), "/".join(map(str, count[B])),
                     f"{mean_link[A]:.1f}", f"{mean_link[B]:.1f}"])
    say(f"### net jobs per node ({'/'.join(f'{n} {link[n]:.0f}' for n in nodes)} Mbit/s), {A} and {B}\n")
    table(["seed", "ratio-1", f"net jobs {A}", f"net jobs {B}", f"mean link {A}", f"mean link {B}"], rows)
    say(f"correlation over seeds of ln(mean link B / A) with (ratio - 1): r = {np.corrcoef(diff, totals)[0, 1]:.2f}\n")


def placement(run_dir: Path, jobs, seeds) -> None:
    """Did A and B place jobs differently? For each moved job, was the cluster's request state at its submit the
    same in both runs (earlier jobs bound and not yet finished, on the same nodes)? The default scheduler scores on
    requests, so a move with the same state is a tie-break (kube-scheduler picks at random among equal scores)
    or something outside requests; with a different state it is timing (earlier jobs finished at other times,
    or were placed elsewhere)."""
    say("## 3. Placement: the same schedule, the same scheduler\n")
    rows = []
    moved_parts, stay_parts, totals = [], [], []
    for s in seeds:
        a, b = jobs[(s, A)], jobs[(s, B)]
        order = sorted(a, key=lambda j: f(a[j]["submit_s"]))
        moved = [j for j in order if j in b and a[j]["node"] != b[j]["node"]]
        first = order.index(moved[0]) if moved else None

        def state(run, t):
            return frozenset((j, run[j]["node"]) for j in run if f(run[j]["submit_s"]) < t
                             and not f(run[j]["finish_s"]) <= t)
        same_state = sum(state(a, f(a[j]["submit_s"])) == state(b, f(b[j]["submit_s"])) for j in moved)
        first_same = moved and state(a, f(a[moved[0]]["submit_s"])) == state(b, f(b[moved[0]]["submit_s"]))
        base = sum(f(a[j]["jct_s"]) for j in order if j in b)
        dm = sum(f(b[j]["jct_s"]) - f(a[j]["jct_s"]) for j in moved) / base
        ds = sum(f(b[j]["jct_s"]) - f(a[j]["jct_s"]) for j in order if j in b and j not in moved) / base
        moved_parts.append(dm)
        stay_parts.append(ds)
        totals.append(dm + ds)
        by_kind = "/".join(str(sum(a[j]["kind"] == k for j in moved)) for k in KINDS)
        rows.append([s, len(moved), by_kind, "-" if first is None else f"#{first + 1}",
                     "-" if not moved else ("same" if first_same else "differs"), same_state,
                     f"{dm:+.3f}", f"{ds:+.3f}",
                     f"{dm + ds:+.3f}"])
    table(["seed", "moved", "cpu/train/net/io", "first move (submit order)", "state at first move",
           "moves with same state", "moved jobs' part", "same-node jobs' part", "total (ratio-1)"], rows)
    arr = {"moved jobs": np.array(moved_parts), "same-node jobs": np.array(stay_parts)}
    sh = share(arr, np.array(totals))
    say(f"share of var(ratio - 1): moved jobs {sh['moved jobs']:.2f}, same-node jobs {sh['same-node jobs']:.2f} "
        "(a same-node job also feels its neighbours' moves, so its part is not pure host noise)\n")
    net_links(run_dir, jobs, seeds, np.array(totals))
    # jobs that finished before the seed's first move ran on identical placements all their life: pure noise
    clean, rest = [], []
    for s in seeds:
        a, b = jobs[(s, A)], jobs[(s, B)]
        order = sorted(a, key=lambda j: f(a[j]["submit_s"]))
        moved = [j for j in order if j in b and a[j]["node"] != b[j]["node"]]
        t0 = min(f(a[moved[0]]["submit_s"]), f(b[moved[0]]["submit_s"])) if moved else math.inf
        for j in order:
            if j not in b:
                continue
            x = (math.log(f(b[j]["jct_s"]) / f(a[j]["jct_s"])), a[j]["kind"])
            (clean if max(f(a[j]["finish_s"]), f(b[j]["finish_s"])) < t0 else rest).append(x)
    rows = []
    for name, group in (("done before the seed's first move", clean), ("the rest", rest)):
        for kind in ("cpu", "train", "net", "io", "all"):
            v = [x for x, k in group if kind in ("all", k)]
            if len(v) > 1:
                rows.append([name, kind, len(v), float(np.mean(v)), float(np.std(v, ddof=1))])
    say("### per-job ln(JCT B / JCT A): jobs whose whole life saw identical placements vs the rest\n")
    table(["jobs", "kind", "n", "mean", "sd"], rows)


# 4 ---------------------------------------------------------------------------------------------------------
def host(run_dir: Path, jobs, seeds, logs: np.ndarray) -> None:
    say("## 4. Host recordings against the A/A difference\n")
    want = {(s, a) for s in seeds for a in (A, B)}
    ticks: dict[tuple, dict[tuple[str, str], list]] = defaultdict(lambda: defaultdict(list))
    for r in read_rows(run_dir / "system.csv"):
        k = (int(r["seed"]), r["arm"])
        if k in want and r["role"] in ("system", "node"):
            ticks[k][(r["role"], r["source"])].append((f(r["t_s"]), f(r["busy_ticks"]), f(r["idle_ticks"])))
    load: dict[tuple, list] = defaultdict(list)
    for r in read_rows(run_dir / "host.csv"):
        k = (int(r["seed"]), r["arm"])
        if k in want:
            load[k].append(f(r["load1"]))
    thr: dict[tuple, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in read_rows(run_dir / "counters.csv"):
        k = (int(r["seed"]), r["arm"])
        if k in want:
            thr[k][r["node"]].append((f(r["t_s"]), f(r["nr_periods"]), f(r["nr_throttled"]), f(r["usage_ns"])))
    pod_cpu: dict[tuple, dict[str, float]] = defaultdict(dict)
    for r in read_rows(run_dir / "pod-counters.csv"):
        k = (int(r["seed"]), r["arm"])
        if k in want and r["pod"]:
            job = r["pod"].rsplit("-", 1)[-1]
            pod_cpu[k][job] = max(pod_cpu[k].get(job, 0.0), f(r["usage_ns"]) / 1e9)

    def busy(k, role):
        # summed over the role's CPUs: busy / (busy + idle) between each CPU's first and last sample
        per_cpu = [sorted(v) for (r, _), v in ticks[k].items() if r == role]
        db = sum(v[-1][1] - v[0][1] for v in per_cpu)
        di = sum(v[-1][2] - v[0][2] for v in per_cpu)
        return db / (db + di) if db + di > 0 else math.nan

    def throttled(k):
        p = sum(v[-1][1] - v[0][1] for v in thr[k].values())
        return sum(v[-1][2] - v[0][2] for v in thr[k].values()) / p if p else math.nan

    def node_m(k):
        dur = max((v[-1][0] - v[0][0] for v in thr[k].values()), default=0.0)
        if dur <= 0:
            return math.nan
        return sum(v[-1][3] - v[0][3] for v in thr[k].values()) / 1e6 / dur

    def cpu_per_work(k):
        """Mean over cpu/train jobs of their pod's CPU seconds per unit of work: host slowness per CPU-second."""
        v = [pod_cpu[k][j] / f(r["work"]) for j, r in jobs[k].items() if r["kind"] in ("cpu", "train")
             and j in pod_cpu[k] and f(r["work"]) > 0]
        return float(np.mean(v)) if v else math.nan

    measures = {"system CPUs busy": lambda k: busy(k, "system"), "node CPUs busy": lambda k: busy(k, "node"),
                "load1 mean": lambda k: float(np.mean(load[k])) if load[k] else math.nan,
                "node throttled share": throttled, "node CPU m": node_m,
                "compute CPU-s per work unit x1000": lambda k: 1000 * cpu_per_work(k)}
    rows, diffs = [], defaultdict(list)
    for s, x in zip(seeds, logs, strict=True):
        row = [s, f"{x:+.3f}"]
        for name, fn in measures.items():
            va, vb = fn((s, A)), fn((s, B))
            diffs[name].append(vb - va)
            row.append(f"{va:.3f} / {vb:.3f}")
        rows.append(row)
    say(f"### per seed, {A} / {B}\n")
    table(["seed", "log ratio"] + list(measures), rows)
    say("### correlation over seeds of (B - A) with the A/A log ratio "
        "(|r| > 0.55 for p < 0.05 at 13 seeds, > 0.75 at 7)\n")
    rows = []
    for name, d in diffs.items():
        ok = np.isfinite(np.array(d))
        x, y = np.array(d)[ok], logs[ok]
        rows.append([name, int(ok.sum()), float(np.corrcoef(x, y)[0, 1]) if ok.sum() > 2 else math.nan])
    table(["measure", "seeds", "r"], rows)
    # the compute jobs' part of the A/A difference against how much CPU time a unit of their work took
    pts = []
    for s in seeds:
        ca, cb = cpu_per_work((s, A)), cpu_per_work((s, B))
        if math.isfinite(ca) and math.isfinite(cb):
            pairs = paired(jobs, s)
            base = sum(f(a["jct_s"]) for a, _ in pairs)
            part = sum(f(b["jct_s"]) - f(a["jct_s"]) for a, b in pairs if a["kind"] in ("cpu", "train")) / base
            pts.append((s, math.log(cb / ca), part))
    within = []
    for s in seeds:
        for arm in (A, B):
            k = (s, arm)
            v = [pod_cpu[k][j] / f(r["work"]) for j, r in jobs[k].items() if r["kind"] in ("cpu", "train")
                 and j in pod_cpu[k] and f(r["work"]) > 0]
            if len(v) > 1:
                within.append(1000 * float(np.std(v, ddof=1)))
    if within:
        say(f"compute CPU-s per work unit x1000, sd between the jobs of one run: {min(within):.2f}-{max(within):.2f} "
            f"(median {np.median(within):.2f}, {len(within)} runs)\n")
    if len(pts) > 2:
        x, y = np.array([p[1] for p in pts]), np.array([p[2] for p in pts])
        say(f"compute jobs' part of (ratio - 1) against ln(CPU-s per work unit, B / A), seeds "
            f"{pts[0][0]}-{pts[-1][0]} ({len(pts)}; pod-counters.csv): r = {np.corrcoef(x, y)[0, 1]:.2f}; "
            + ", ".join(f"{s_} {lx:+.3f}/{py:+.3f}" for s_, lx, py in pts) + "\n")
        # what the endpoint's sd would be on these seeds with the host's speed taken out: each run's compute JCTs
        # divided by its CPU-s per work unit (relative to the pair's mean), net and io jobs left as they are
        raw, adj = [], []
        for s_, lx, _ in pts:
            rows_a, rows_b = list(jobs[(s_, A)].values()), list(jobs[(s_, B)].values())
            raw.append(math.log(mean_jct(rows_b) / mean_jct(rows_a)))

            def scaled(rows, factor):
                return float(np.mean([f(r["jct_s"]) / (factor if r["kind"] in ("cpu", "train") else 1.0)
                                      for r in rows]))
            adj.append(math.log(scaled(rows_b, math.exp(lx / 2)) / scaled(rows_a, math.exp(-lx / 2))))
        say(f"on those seeds, sd of the A/A log ratio {np.std(raw, ddof=1):.3f}; with each run's compute JCTs "
            f"divided by its CPU-s per work unit {np.std(adj, ddof=1):.3f} (per seed: "
            + ", ".join(f"{s_} {x:+.3f}->{y:+.3f}" for (s_, _, _), x, y in zip(pts, raw, adj, strict=True)) + ")\n")


# 5 ---------------------------------------------------------------------------------------------------------
def endpoints(jobs, seeds) -> None:
    say("## 5. Other endpoints and designs: A/A sd, seeds for +-5 %, and what the drsched arms show on them\n")

    def ratio_mean(rows_b, rows_a, kinds, key):
        return math.log(mean_jct(rows_b, kinds, key) / mean_jct(rows_a, kinds, key))

    def per_job_log(rows_b, rows_a, kinds, key="jct_s"):
        a = {r["job"]: r for r in rows_a}
        v = [math.log(f(r[key]) / f(a[r["job"]][key])) for r in rows_b if r["kind"] in kinds and r["job"] in a]
        return float(np.mean(v)) if v else math.nan

    designs = []
    for g, kinds in GROUPS.items():
        designs.append((f"mean JCT, {g}", lambda b, a, k=kinds: ratio_mean(b, a, k, "jct_s")))
    designs += [
        ("mean slowdown vs best node, all", lambda b, a: ratio_mean(b, a, KINDS, "best_slowdown")),
        ("mean slowdown vs best node, no io", lambda b, a: ratio_mean(b, a, ("cpu", "train", "net"), "best_slowdown")),
        ("mean run time (start->finish), all", lambda b, a: math.log(np.mean([run(r) for r in b])
                                                                     / np.mean([run(r) for r in a]))),
        ("median JCT, all", lambda b, a: math.log(np.median([f(r["jct_s"]) for r in b])
                                                  / np.median([f(r["jct_s"]) for r in a]))),
        ("per-job paired: mean ln(JCT ratio), all", lambda b, a: per_job_log(b, a, KINDS)),
        ("per-job paired: mean ln(JCT ratio), no io", lambda b, a: per_job_log(b, a, ("cpu", "train", "net"))),
        ("per-job paired: mean ln(JCT ratio), compute", lambda b, a: per_job_log(b, a, ("cpu", "train"))),
    ]
    rows = []
    for name, fn in designs:
        out = [name]
        for arm in (B, "model", "demand-aware"):
            logs = [fn(list(jobs[(s, arm)].values()), list(jobs[(s, A)].values())) for s in seeds if (s, arm) in jobs]
            iv = interval([x for x in logs if math.isfinite(x)])
            if arm == B:
                out += [iv.sd, f"{iv.low:.3f}-{iv.high:.3f}", seeds_for_margin(iv.sd), power_seeds(iv.sd)]
            else:
                out += [f"{iv.ratio:.3f} ({iv.low:.3f}-{iv.high:.3f}) sd {iv.sd:.3f}"]
        rows.append(out)
    table(["endpoint", "A/A sd", "A/A 95 %", "seeds +-5 %", "seeds 80 % @15 %", "model / default",
           "demand-aware / default"], rows)
    # the A/A arm already runs every seed: as a second baseline run it halves the baseline's own run-to-run variance
    rows = []
    for arm in ("model", "demand-aware"):
        if not any((s, arm) in jobs for s in seeds):
            continue
        one = [math.log(mean_jct(jobs[(s, arm)].values()) / mean_jct(jobs[(s, A)].values())) for s in seeds
               if (s, arm) in jobs]
        both = [math.log(mean_jct(jobs[(s, arm)].values())) - 0.5 * (math.log(mean_jct(jobs[(s, A)].values()))
                + math.log(mean_jct(jobs[(s, B)].values()))) for s in seeds if (s, arm) in jobs]
        for name, logs in (("default (registered)", one), ("both default runs (geometric mean)", both)):
            iv = interval(logs)
            rows.append([arm, name, f"{iv.ratio:.3f} ({iv.low:.3f}-{iv.high:.3f})", iv.sd, power_seeds(iv.sd)])
    say("### the drsched arms against one or both default runs (mean JCT, all jobs)\n")
    table(["arm", "baseline", "ratio (95 %)", "sd", "seeds 80 % @15 %"], rows)
    # more jobs per seed: per-job log ratios split into a seed-level and a job-level component (one-way ANOVA)
    d = [np.array([math.log(f(b["jct_s"]) / f(a["jct_s"])) for a, b in paired(jobs, s)]) for s in seeds]
    n = float(np.mean([len(x) for x in d]))
    within = float(np.mean([x.var(ddof=1) for x in d]))
    between = float(np.var([x.mean() for x in d], ddof=1))
    seed_var = max(between - within / n, 0.0)
    say(f"per-job paired, all kinds: per-seed mean's sd {math.sqrt(between):.3f}; within-seed job sd "
        f"{math.sqrt(within):.3f} over {n:.0f} jobs, seed-level component sd {math.sqrt(seed_var):.3f}")
    say("if jobs were independent given the seed (they are not: they share nodes), jobs per seed ->"
        " sd of the per-seed mean, seeds for +-5 %:")
    table(["jobs a seed", "sd", "seeds +-5 %"], [[m, math.sqrt(seed_var + within / m),
                                                  seeds_for_margin(math.sqrt(seed_var + within / m))]
                                                 for m in (48, 96, 192)])


def main(argv: list[str]) -> int:
    run_dir = Path(argv[1]) if len(argv) > 1 else HEADLINE
    jobs = load_jobs(run_dir)
    seeds = aa_seeds(jobs)
    if len(seeds) < 3:
        sys.stderr.write(f"{run_dir}: {len(seeds)} seeds have both {A} and {B}; at least 3 are needed\n")
        return 2
    say(f"# A/A variance study of {run_dir} (descriptive, post hoc; seeds {', '.join(map(str, seeds))})\n")
    logs = endpoint(jobs, seeds)
    by_kind_node_phase(jobs, seeds)
    placement(run_dir, jobs, seeds)
    host(run_dir, jobs, seeds, logs)
    endpoints(jobs, seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
