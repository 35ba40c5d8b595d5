#!/usr/bin/env python3
"""Did the policy's world change? The results in the simulator's original contention rule against the same
evaluations in a fitted set, from the result files alone: the record behind the switch to that set.

Why it exists: a fitted contention set (``policy/sim/calibration.yaml``) changes the simulated world the DQN
was trained in. Whether it must be retrained depends on how its standing moves: its excess slowdown as a
ratio to default-k8s's and to the best model-based heuristic's (the README's comparison,
``policy.comparison``), and which policy ranks first. This script writes each calibrated folder's
``comparison.md`` and ``results/policy/calibrated-world.md`` from the ``summary.csv`` files that
``python -m policy.evaluate --contention NAME`` wrote, against the original-world ones (kept in
``results/policy/original-world/`` since the simulator runs the fitted set)::

    python scripts/calibrated_world.py            # write the comparison files
    python scripts/calibrated_world.py --check    # exit 1 when one is out of date

The verdict uses one rule, written in the file: the world changed materially for the DQN when, in any
split and scoring mode, the geometric mean of either ratio rises by more than ``MATERIAL`` (10 %). The ratios
are ``policy.comparison``'s; this script adds the verdict and the record around them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from policy.comparison import (
    BASELINE,
    COMPARISONS,
    DQN,
    MIN_EXCESS,
    MIN_RATIO,
    MODEL_BASED,
    SummaryError,
    cases,
    comparison,
    excess_by_case,
    geo_means,
    ratios,
    read_summary,
)
from policy.paths import POLICY_RESULTS

ROOT = Path(__file__).resolve().parent.parent
RESULTS = POLICY_RESULTS
PREFIX = "calibrated-"
ORIGINAL = "original-world/"
"""The original-world result folders are ``ORIGINAL`` + their name; ``dqn:default`` in them, in the calibrated
folders and in ``MODEL_DIR`` is the model shipped then, now ``OLD_MODEL``."""
OLD_MODEL = "policy/models/original-world.npz"
RETRAINED = "policy/models/archive/default-ebc0f11-s100000.npz"
"""The retrained model, shipped as ``policy/models/default.npz`` until the distilled student replaced it."""
OUT = RESULTS / "calibrated-world.md"
RUNS = (("validation", "validation, argmax"), ("validation-served", "validation, served"),
        ("test", "test, argmax"), ("test-served", "test, served (the README headline)"))
"""Result folder name (original world: ``ORIGINAL`` + it; calibrated: ``PREFIX`` + it), and its label."""
MATERIAL = 0.10
SCORING = dict(COMPARISONS) | {"validation-served": COMPARISONS[0][1]}
CANDIDATE = "dqn:calibrated"
MODEL_DIR = RESULTS / "calibrated-model"
"""``MODEL_DIR/<set>-<run>``: the old and the retrained model with default-k8s and the model-based heuristics."""
CONTROL_DIR = MODEL_DIR / "models"
CONTROLS = (("original", 2), ("fitted-lab", 2))
"""Controls trained with the same recipe (world, seed), in ``CONTROL_DIR/<world>-s<seed>``: the shipped model is
seed 1 in original (retraining it today gives the same weights), the retrained one seed 1 in fitted-lab; a second
seed in each world tells a change of world from a change of seed."""
MODEL_POLICIES = (f"default-k8s,demand-aware,lookahead,dqn:{OLD_MODEL},dqn:policy/models/default.npz,"
                  + ",".join(f"dqn:{CONTROL_DIR}/{w}-s{s}.npz" for w, s in CONTROLS))
MAKE = ("python -m policy.evaluate --workers 2 --no-plots -q --policies $POLICIES --seeds 5 --contention {set} "
        "--split {split}{served} --out results/policy/calibrated-{name}")


def ranking(summary: list[dict]) -> dict[str, tuple[float, int]]:
    """Policy -> (mean excess over the cases, cases in which it has the lowest excess)."""
    ex = excess_by_case(summary)
    each = cases(ex)
    policies = sorted({p for _, _, p in ex})
    wins = {p: 0 for p in policies}
    for fam, load in each:
        wins[min(policies, key=lambda p: ex[(fam, load, p)])] += 1
    return {p: (sum(ex[(f, ld, p)] for f, ld in each) / len(each), wins[p]) for p in policies}


def _pct(new: float, old: float) -> str:
    return f"{100 * (new / old - 1):+.1f} %"


def report(root: Path) -> tuple[str, dict[Path, str]]:
    """calibrated-world.md and every calibrated folder's comparison.md."""
    res = root / RESULTS
    sets = {json.loads((res / f"{PREFIX}{name}" / "contention.json").read_text())["set"] for name, _ in RUNS}
    if len(sets) != 1:
        raise SystemExit(f"error: the calibrated folders were made in different sets: {sorted(sets)}")
    cal = sets.pop()
    files: dict[Path, str] = {}
    head = ["| split, scoring | dqn / default-k8s: original | " + cal + " | change | dqn / best model-based: "
            "original | " + cal + " | change | first by mean excess: original | " + cal + " |",
            "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    changed, sections = [], []
    for name, label in RUNS:
        old, new = (read_summary(res / f"{folder}{name}" / "summary.csv") for folder in (ORIGINAL, PREFIX))
        files[RESULTS / f"{PREFIX}{name}" / "comparison.md"] = comparison(new, SCORING[name] + f", contention set "
                                                                          f"{cal}")
        (ok, ob), (nk, nb) = geo_means(excess_by_case(old)), geo_means(excess_by_case(new))
        ro, rn = ranking(old), ranking(new)
        first_o, first_n = (min(r, key=lambda p: r[p][0]) for r in (ro, rn))
        head.append(f"| {label} | {ok:.2f} | {nk:.2f} | {_pct(nk, ok)} | {ob:.2f} | {nb:.2f} | {_pct(nb, ob)} | "
                    f"{first_o} | {first_n} |")
        changed += [f"{label}: dqn / {what} {_pct(n, o)}" for what, n, o in
                    (("default-k8s", nk, ok), ("best model-based", nb, ob)) if n > o * (1 + MATERIAL)]
        order_o, order_n = (sorted(r, key=lambda p: r[p][0]) for r in (ro, rn))
        rows = [f"| {p} | {ro[p][0]:.4f} | {order_o.index(p) + 1} | {ro[p][1]} | {rn[p][0]:.4f} | "
                f"{order_n.index(p) + 1} | {rn[p][1]} |" for p in order_n]
        per_case = _per_case(old, new)
        sections += [f"### {label}", "", f"Mean excess slowdown over the {len(per_case)} cases, rank, and cases "
                     "won (lowest excess):", "", f"| policy | original | rank | won | {cal} | rank | won |",
                     "|---|---:|---:|---:|---:|---:|---:|", *rows, "",
                     "Per case, the DQN's ratios (n/a: the other is below the physical-limit threshold):", "",
                     f"| family | load | dqn / default-k8s: original | {cal} | dqn / best model-based: original | "
                     f"{cal} |", "|---|---|---:|---:|---:|---:|", *per_case, "",
                     f"Sources: `{RESULTS}/{ORIGINAL}{name}/summary.csv`, `{RESULTS}/{PREFIX}{name}/summary.csv` (its "
                     f"`comparison.md` has the excess values).", ""]
    verdict = ("**The world changed materially for the DQN** (" + "; ".join(changed) + "): retrain in it (done: "
               "the model retrained in it is the shipped one now, below)."
               if changed else f"**The DQN's world did not change materially**: no geometric-mean ratio rose by "
               f"more than {100 * MATERIAL:.0f} %, so the shipped model is not retrained for `{cal}`.")
    text = [f"# The policy's world in the `{cal}` contention set", "",
            f"Generated by `python scripts/calibrated_world.py` from the committed `summary.csv` files. The "
            f"original world is the `original` set the results and the shipped model were made with before the "
            f"simulator adopted `{cal}`, the set fitted on the real-node lab runs (`policy/sim/calibration.yaml`, "
            f"`results/policy/calibration/`); the model then shipped is `{OLD_MODEL}` now, `dqn:default` in "
            f"these tables. Same policies, splits, seeds (5) "
            f"and episodes; only the contention rule differs. Excess = mean slowdown − 1; ratios are the DQN's "
            f"excess over the other's, geometric mean over the cases where the other's excess is at least "
            f"{MIN_EXCESS} (ratios below {MIN_RATIO} count as {MIN_RATIO}), as in the README.", "",
            *head, "", f"Rule: the world changed materially when a geometric mean above rises by more than "
            f"{100 * MATERIAL:.0f} %. {verdict}", "", *sections, "## Commands", "",
            "```", "POLICIES=default-k8s,tlp,lvrb,koord,demand-aware,lookahead,random,round-robin,"
            f"dqn:{OLD_MODEL}"]
    for name, _ in RUNS:
        split, served = name.split("-")[0], " --served 10 --mapping minmax" if name.endswith("served") else ""
        text.append(MAKE.format(set=cal, split=split, served=served, name=name))
    text += ["python scripts/calibrated_world.py", "```", "",
             f"The original-world folders (`{RESULTS}/{ORIGINAL}`) are `make evaluate`'s while `original` was the "
             "active set (today: the same commands with `--contention original`). All these folders were made "
             "with the old "
             "model at `policy/models/default.npz`, hence its label `dqn:default`; run from the renamed file, it "
             "is labelled `dqn:original-world`."]
    if (root / MODEL_DIR).is_dir():
        text += ["", *candidate(root, cal)]
    files[OUT] = "\n".join(text) + "\n"
    return files[OUT], files


def candidate(root: Path, cal: str) -> list[str]:
    """The model retrained in ``cal`` (shipped until the student) against the old one, evaluated in both worlds."""
    meta = json.loads((root / RETRAINED).with_suffix(".json").read_text())
    train = meta["train_config"]
    lines = [f"## The model retrained in `{cal}`, shipped until the distilled student", "",
             f"`{RETRAINED}` (version `{meta['version']}`, `dqn:calibrated` in these folders; it was "
             "`policy/models/default.npz` until `results/policy/ship-student/` replaced it): the "
             f"shipped recipe (`policy/models/default-train.yaml`, seed {train['seed']}, {train['steps']:,} steps, "
             f"`make model`) in `{cal}`, the simulator's active set; it was first trained as "
             f"`policy/models/calibrated.npz` with `--contention {cal}`, to the same weights. The kept checkpoint "
             f"is the one with the lowest validation excess ({train['eval_seeds']} seeds, in `{cal}`) at step "
             f"{meta['trained_steps']:,}; training took {meta['train_seconds']:.0f} s. The old model "
             f"(`{OLD_MODEL}`) is the one shipped before. Both models on the same episodes, 5 seeds, in each "
             "world:", "",
             "| world | split, scoring | old: dqn / default-k8s | retrained | old: dqn / best model-based | "
             "retrained | mean excess: old | retrained |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    better = []
    for world in ("original", cal):
        for name, label in RUNS:
            summary = read_summary(root / MODEL_DIR / f"{world}-{name}" / "summary.csv")
            ex = excess_by_case(summary)
            (sk, sb), (ck, cb) = geo_means(ex), geo_means(ex, CANDIDATE)
            rank = ranking(summary)
            if rank[CANDIDATE][0] < rank[DQN][0]:
                better.append(f"{world} {label.split(' (')[0]}")
            lines.append(f"| {world} | {label} | {sk:.2f} | {ck:.2f} | {sb:.2f} | {cb:.2f} | "
                         f"{rank[DQN][0]:.4f} | {rank[CANDIDATE][0]:.4f} |")
    lines += ["", f"The retrained model has the lower mean excess in {len(better)} of {2 * len(RUNS)} views"
              + (f" ({'; '.join(better)})." if better else ".")]
    lines += _controls(root, cal)
    lines += ["", "Commands (the worlds named explicitly, so the folders do not depend on the file's active set; "
              "they ran with the old model at `policy/models/default.npz` and the retrained one at "
              "`policy/models/calibrated.npz`, hence the labels `dqn:default` and `dqn:calibrated`):",
              "", "```", "python -m policy.train --config policy/models/default-train.yaml --out policy/models/default"]
    lines += [f"python -m policy.train --config policy/models/default-train.yaml --contention {w} --seed {sd} "
              f"--out {CONTROL_DIR}/{w}-s{sd}" for w, sd in CONTROLS]
    lines += [f"POLICIES={MODEL_POLICIES}"]
    for world in ("original", cal):
        for name, _ in RUNS:
            split, served = name.split("-")[0], " --served 10 --mapping minmax" if name.endswith("served") else ""
            lines.append(MAKE.format(set=world, split=split, served=served, name=name).replace(
                "results/policy/calibrated-" + name, f"{MODEL_DIR}/{world}-{name}"))
    return [*lines, "```"]


def _controls(root: Path, cal: str) -> list[str]:
    """Every trained model side by side: dqn / best model-based (geometric mean) and mean excess."""
    models = [("original, seed 1 (old)", DQN), (f"{cal}, seed 1 (retrained, shipped until the student)", CANDIDATE)]
    models += [(f"{w}, seed {sd}", f"dqn:{w}-s{sd}") for w, sd in CONTROLS]
    first = read_summary(root / MODEL_DIR / f"original-{RUNS[0][0]}" / "summary.csv")
    models = [(label, pol) for label, pol in models if any(r["policy"] == pol for r in first)]
    if len(models) <= 2:
        return []
    lines = ["", "Every model of the recipe side by side, by the world it was trained in and its seed (retraining "
             f"the shipped recipe in `original` reproduces `{OLD_MODEL}` weight for weight, so "
             "seed 1 differs only by the world): each cell is dqn / best model-based (geometric mean) and, in "
             "brackets, the mean excess over the cases.", "",
             "| world | split, scoring | " + " | ".join(label for label, _ in models) + " |",
             "|---|---|" + "---:|" * len(models)]
    for world in ("original", cal):
        for name, label in RUNS:
            summary = read_summary(root / MODEL_DIR / f"{world}-{name}" / "summary.csv")
            rank = ranking(summary)
            ex = excess_by_case(summary)
            cells = [f"{geo_means(ex, pol)[1]:.2f} ({rank[pol][0]:.4f})" for _, pol in models]
            lines.append(f"| {world} | {label} | " + " | ".join(cells) + " |")
    return lines


def _per_case(old: list[dict], new: list[dict]) -> list[str]:
    eo, en = excess_by_case(old), excess_by_case(new)
    by = [ratios(ex, DQN, others) for others in ((BASELINE,), MODEL_BASED) for ex in (eo, en)]
    return [f"| {fam} | {load:g} | " + " | ".join("n/a" if r[(fam, load)] is None else f"{r[(fam, load)]:.2f}"
                                                 for r in by) + " |" for fam, load in cases(eo)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file is out of date")
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout whose results/policy/ to read")
    args = p.parse_args(argv)
    try:
        _, files = report(args.root)
    except SummaryError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    stale = [rel for rel, text in files.items()
             if not (args.root / rel).is_file() or (args.root / rel).read_text() != text]
    if not args.check:
        for rel in stale:
            (args.root / rel).write_text(files[rel])
    for rel in stale:
        sys.stderr.write(f"{'out of date' if args.check else 'wrote'}: {rel}\n")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
