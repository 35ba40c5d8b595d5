"""The policy comparison, once: a ``summary.csv`` as per-case excess, the ratio rule, and the comparison table.

Why it exists: the DQN is judged everywhere by one figure, its excess slowdown (mean slowdown - 1) as a ratio
to another policy's on the same case (family and load), summarised by a geometric mean over the cases. The
README's tables (``scripts/readme_tables.py``), the calibrated-world record (``scripts/calibrated_world.py``),
the size split (``scripts/size_table.py``), the horizon study (``results/policy/horizon/report.py``), the
served sweep (``policy.served_sweep``) and the served-validation bar (its unit test) all use that figure;
written once here, they cannot drift apart. The rule:

- a case whose denominator (the other policy's excess) is below ``MIN_EXCESS``, a policy already at the
  physical limit, has no ratio (``None``, shown as n/a) and is left out of the geometric mean;
- in the geometric mean, ratios below ``MIN_RATIO`` count as ``MIN_RATIO``, so one near-zero case cannot
  dominate it.

Two other rules share the noise floor ``MIN_EXCESS`` but are deliberately not this one. ``policy.promote``
compares two models per episode pair and floors both excesses at it instead of leaving pairs out (symmetric:
swapping the models gives the reciprocal ratios, so the gate favours neither); ``policy.tables``' per-seed
ratio column leaves out the seeds whose baseline excess is at most it, and averages the rest.

Pure: standard library only. The files it reads are a ``summary.csv`` (``read_summary``, whose errors name
the file, line and field) and a result folder's ``served.json`` (``served_setting``); ``merge_summaries`` joins
several evaluations' ``summary.csv`` into one.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

DQN = "dqn:default"
"""The shipped model's label in the committed result folders."""
BASELINE = "default-k8s"
"""Plain kube-scheduler: the policy every evaluation's ratios are taken against (``policy.grid`` runs it)."""
MODEL_BASED = ("lookahead", "demand-aware")
"""The model-based heuristics: "best model-based" on a case is the lower excess of the two."""
HEURISTICS = (BASELINE, "demand-aware", "lookahead")
"""Issue #22's "best heuristic" on a case: the lowest excess of these (the horizon study, the served bar)."""
MIN_EXCESS = 0.005
"""A ratio to an excess below this (a policy already at the physical limit) is noise: shown as n/a, left out."""
MIN_RATIO = 0.01
"""Ratios below this count as this in the geometric mean, so one near-zero case cannot dominate it."""
ARGMAX = "each policy's scores taken as a pure argmax"
COMPARISONS = (("test-served", "each policy scored as served (the hot-node filter prefer-cool, then kube-scheduler's "
                "resource scoring + the extender's 0-10 score at weight 10; default-k8s is plain kube-scheduler)"),
               ("test", ARGMAX),
               ("validation", ARGMAX))
"""Result folders that get a ``comparison.md``, and how the policies were scored in them (a served folder's
``served.json`` says it instead, ``scripts/readme_tables.py``'s ``served_scoring``; the text here is that of
folders made before, with min-max at weight 10, which ``scripts/calibrated_world.py`` also describes)."""
PRE_RECORDED_SETTING = {"mapping": "minmax", "weight": 10}
"""The served setting of result folders written before evaluations recorded theirs in ``served.json``."""
KEYS = ("scenario", "load", "policy", "seeds")
"""The columns of a ``summary.csv`` row that name its case, policy and seed count."""

Case = tuple[str, float]
"""(family, load)."""
Excess = dict[tuple[str, float, str], float]
"""(family, load, policy) -> a metric's mean over seeds (``excess_by_case``)."""


class SummaryError(ValueError):
    """A ``summary.csv`` that cannot be read as one: ``path``, its ``line`` (1 = the header) and the ``field``."""

    def __init__(self, path: Path, line: int, field: str, message: str) -> None:
        super().__init__(f"{path}:{line}: {field}: {message}")
        self.path, self.line, self.field = path, line, field


def read_summary(path: Path, *, metrics: Sequence[str] = ("excess_slowdown",)) -> list[dict]:
    """The rows of ``policy.evaluate``'s ``summary.csv`` at ``path``, as strings; ``KEYS`` and ``metrics`` checked
    present and numeric where they are numbers (``SummaryError`` otherwise)."""
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        for field in (*KEYS, *metrics):
            if field not in (reader.fieldnames or ()):
                raise SummaryError(path, 1, field, "no such column")
        rows = list(reader)
    for line, row in enumerate(rows, start=2):
        for field, kind in (("load", float), ("seeds", int), *((m, float) for m in metrics)):
            try:
                kind(row[field])
            except (TypeError, ValueError):
                raise SummaryError(path, line, field, f"not a number: {row[field]!r}") from None
    return rows


def served_setting(folder: Path) -> dict:
    """The served setting an evaluation ran with (its ``served.json``, written by ``policy.evaluate --served``;
    ``PRE_RECORDED_SETTING`` for a folder written before evaluations recorded it)."""
    path = folder / "served.json"
    return json.loads(path.read_text()) if path.is_file() else {"hot_filter": "prefer-cool", **PRE_RECORDED_SETTING}


def excess_by_case(summary: Iterable[dict], metric: str = "excess_slowdown") -> Excess:
    """(family, load, policy) -> mean excess slowdown (or another metric) over seeds."""
    return {(r["scenario"], float(r["load"]), r["policy"]): float(r[metric]) for r in summary}


def cases(ex: Excess) -> list[Case]:
    """The (family, load) cases of ``ex``, sorted: the order every table and geometric mean takes them in."""
    return sorted({(f, ld) for f, ld, _ in ex})


def case_ratio(excess: float, other: float) -> float | None:
    """``excess`` / ``other``, or None when ``other`` is below ``MIN_EXCESS`` (the ratio would be noise)."""
    return None if other < MIN_EXCESS else excess / other


def ratios(ex: Excess, policy: str, others: Sequence[str]) -> dict[Case, float | None]:
    """Per case: ``policy``'s excess / the lowest excess of ``others`` on it (``case_ratio``)."""
    return {(fam, load): case_ratio(ex[(fam, load, policy)], min(ex[(fam, load, p)] for p in others))
            for fam, load in cases(ex)}


def geometric_mean(values: Iterable[float | None]) -> float:
    """The geometric mean of the ratios that are not None, each floored at ``MIN_RATIO``; NaN when none is left."""
    vs = [max(v, MIN_RATIO) for v in values if v is not None]
    return math.exp(sum(math.log(v) for v in vs) / len(vs)) if vs else float("nan")


def geo_means(ex: Excess, policy: str = DQN) -> tuple[float, float]:
    """The geometric means over cases of ``policy``'s excess / default-k8s's and / the best model-based one's."""
    return (geometric_mean(ratios(ex, policy, (BASELINE,)).values()),
            geometric_mean(ratios(ex, policy, MODEL_BASED).values()))


def ratio_to_best(ex: Excess, policy: str, against: Sequence[str] = HEURISTICS) -> float:
    """``policy``'s excess / the lowest of ``against`` on each case, geometric mean over the cases: the endpoint of
    every issue #22 study."""
    return geometric_mean(ratios(ex, policy, against).values())


def cell(ratio: float | None) -> str:
    """A ratio as a table cell (``n/a`` where the case has none)."""
    return "n/a" if ratio is None else f"{ratio:.2f}"


def add_merge_options(parser, folder: Path) -> None:
    """A results table script's ``--merge NAME FOLDER...`` and ``--rtol`` (``merge_from_args`` applies them)."""
    parser.add_argument("--merge", nargs="+", metavar=("NAME", "FOLDER"),
                        help=f"join the FOLDERs' summary.csv into {folder}/NAME/, then write table.md")
    parser.add_argument("--rtol", type=float, default=0.0,
                        help="with --merge: rows in two batches may differ by this relative amount (0: bitwise "
                             "equal; policy.comparison.merge_summaries)")


def merge_from_args(args, folder: Path) -> None:
    """Do what ``add_merge_options``' flags asked for, if anything."""
    if args.merge:
        name, *folders = args.merge
        merge_summaries([Path(f) for f in folders], folder / name, rtol=args.rtol)


def comparison(summary: list[dict], scoring: str = ARGMAX) -> str:
    """Per case: the DQN's excess as a ratio to default-k8s's and to the best of lookahead and demand-aware."""
    ex = excess_by_case(summary)
    seeds = sorted({int(r["seeds"]) for r in summary})
    to_k8s, to_best = ratios(ex, DQN, (BASELINE,)), ratios(ex, DQN, MODEL_BASED)
    lines = [f"Excess slowdown (mean slowdown - 1, mean over {'/'.join(map(str, seeds))} seeds), {scoring}; "
             "ratios are the DQN's mean excess / the other's. Best model-based = the lower of lookahead and "
             "demand-aware.", "",
             "| family | load | default-k8s | lookahead | demand-aware | dqn | dqn / default-k8s | "
             "dqn / best model-based |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for fam, load in cases(ex):
        lines.append(f"| {fam} | {load:g} | {ex[(fam, load, BASELINE)]:.4f} | {ex[(fam, load, 'lookahead')]:.4f} | "
                     f"{ex[(fam, load, 'demand-aware')]:.4f} | {ex[(fam, load, DQN)]:.4f} | "
                     f"{cell(to_k8s[(fam, load)])} | {cell(to_best[(fam, load)])} |")
    counted = [sum(r is not None for r in rs.values()) for rs in (to_k8s, to_best)]
    lines.append(f"| geometric mean ({counted[0]} / {counted[1]} cases) | all | | | | | "
                 f"**{geometric_mean(to_k8s.values()):.2f}** | **{geometric_mean(to_best.values()):.2f}** |")
    lines += ["", f"n/a: the other's excess is below {MIN_EXCESS} (at the physical limit), so the ratio is noise and "
              f"is left out of the geometric mean; ratios below {MIN_RATIO} count as {MIN_RATIO} in it."]
    return "\n".join(lines) + "\n"


def merge_summaries(folders: Sequence[Path], dest: Path, *, rtol: float = 0.0) -> int:
    """Join the ``summary.csv`` of ``folders`` (``policy.evaluate`` runs of batches of policies on the same
    episodes) into ``dest / "summary.csv"``, with the first folder's ``served.json``; returns the rows written.
    A policy-and-case row in two batches must be equal (the simulator is deterministic, so a heuristic
    evaluated in every batch gives the same figures each time): ``ValueError`` otherwise, and the first
    batch's row is kept. ``rtol`` > 0 lets every number of such a row differ by that relative amount (text
    fields still exactly): for rows made at commits whose order of summation differs in the last bits
    (the 1,000-node joins of ``results/policy/ensemble`` and ``results/policy/distill``)."""
    rows: dict[tuple[str, str, str, str], dict] = {}
    header: list[str] = []
    for folder in folders:
        with (folder / "summary.csv").open() as f:
            reader = csv.DictReader(f)
            header = header or list(reader.fieldnames or [])
            for row in reader:
                key = (row["scenario"], row["workload"], row["load"], row["policy"])
                if key in rows:
                    if not _same_row(rows[key], row, rtol):
                        raise ValueError(f"{folder}/summary.csv: {key} differs from an earlier batch's row")
                    continue
                rows[key] = row
    dest.mkdir(parents=True, exist_ok=True)
    with (dest / "summary.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows.values())
    served = folders[0] / "served.json"
    if served.is_file() and served.resolve() != (dest / "served.json").resolve():
        shutil.copy(served, dest / "served.json")
    return len(rows)


def _same_row(old: dict, new: dict, rtol: float) -> bool:
    if rtol == 0 or old.keys() != new.keys():
        return old == new
    for k, a in old.items():
        try:
            same = math.isclose(float(a), float(new[k]), rel_tol=rtol, abs_tol=1e-12)
        except ValueError:
            same = a == new[k]
        if not same:
            return False
    return True
