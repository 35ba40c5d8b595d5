#!/usr/bin/env python3
"""Issue #23's A/B, warm start vs cold start of DQN training, as a table from ``results/policy/warm-start/``.

Why it exists: the endpoint was fixed before the runs (the folder's README) and is read off the trainer's
periodic validation figures; this script is the one place that reads them, so the README's numbers can be
rebuilt from the committed per-run files. ``--collect DIR`` first turns a run directory's training logs
(``<arm>-<seed>.log``, the trainer's ``eval steps=...`` lines) into ``per-run/<arm>-<seed>.eval.csv`` and copies
the small JSON files beside them; without it, ``table.md`` (and ``validation.png``) are written from ``per-run/``::

    python scripts/warm_start_table.py --collect /tmp/ws     # once, from the runs
    python scripts/warm_start_table.py                        # the table from the committed files

Primary endpoint, per seed: the first evaluation step at which an arm's validation excess slowdown is within
``WITHIN`` of the cold arm's final figure (at most ``(1 + WITHIN) x`` it); secondary: the figure at ``STEPS``,
warm vs cold, paired by seed (mean difference, and the ratio's 95 % t-interval, ``policy.paired.interval``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import shutil
from pathlib import Path

from policy.paired import interval
from policy.paths import POLICY_RESULTS
from policy.trainlog import EVAL, FIELDS, OUTPUT, imitation_seconds, plot_curves

FOLDER = POLICY_RESULTS / "warm-start"
RUNS = FOLDER / "per-run"
"""The per-run files (not ``runs/``: git ignores that name)."""
ARMS = ("cold", "warm")
WITHIN = 0.05
"""The primary endpoint's tolerance: within 5 % of the cold arm's final validation figure."""
STEPS = (2500, 5000, 10000, 20000)
"""The secondary endpoint's steps."""
PRIMARY_SEEDS = (1, 2, 3)
"""The training seeds the A/B was planned with; more seeds, when run, get a second table."""
"""The training log's committed name (``*.log`` is git-ignored)."""


def collect(src: Path) -> None:
    """Each ``<arm>-<seed>.log`` in ``src`` to ``per-run/<arm>-<seed>.eval.csv``; its JSON files and the log (as
    ``OUTPUT``) copied."""
    RUNS.mkdir(parents=True, exist_ok=True)
    for log in sorted(src.glob("*-*.log")):
        if log.stem.split("-")[0] not in ARMS:
            continue
        by_step = {int(m[1]): m.groups() for m in EVAL.finditer(log.read_text())}  # the final eval repeats the last
        with (RUNS / f"{log.stem}.eval.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(FIELDS)
            w.writerows(by_step[s] for s in sorted(by_step))
        shutil.copy(log, RUNS / f"{log.stem}{OUTPUT}")
        for suffix in (".json", ".warm-start.json"):  # the .json holds the effective config too
            if (src / f"{log.stem}{suffix}").is_file():
                shutil.copy(src / f"{log.stem}{suffix}", RUNS / f"{log.stem}{suffix}")
    for name in ("times.csv", "log.out"):
        if (src / name).is_file():
            shutil.copy(src / name, RUNS / name)


def curves() -> dict[str, dict[int, dict[int, float]]]:
    """arm -> seed -> step -> the DQN's validation excess slowdown."""
    out: dict[str, dict[int, dict[int, float]]] = {arm: {} for arm in ARMS}
    for path in sorted(RUNS.glob("*.eval.csv")):
        arm, seed = path.name.split(".")[0].split("-")
        with path.open() as f:
            out[arm][int(seed)] = {int(r["steps"]): float(r["dqn"]) for r in csv.DictReader(f)}
    if (RUNS / "final.csv").is_file():  # the end-of-training figure at full precision (warm_start_step0 --finals)
        with (RUNS / "final.csv").open() as f:
            for r in csv.DictReader(f):
                arm, seed = r["run"].split("-")
                curve = out[arm].get(int(seed), {})
                if int(r["steps"]) in curve:
                    if abs(curve[int(r["steps"])] - float(r["dqn"])) > 6e-5:
                        raise ValueError(f"final.csv {r['run']}: {r['dqn']} is not the logged {curve[int(r['steps'])]}")
                    curve[int(r["steps"])] = float(r["dqn"])
    return out


def steps_to(curve: dict[int, float], target: float) -> int | None:
    """The first evaluation step whose figure is at most ``target`` (None: never within the run)."""
    return next((s for s in sorted(curve) if curve[s] <= target), None)


def _fmt_steps(s: int | None, last: int) -> str:
    return f"> {last:,}" if s is None else f"{s:,}"


def table(c: dict[str, dict[int, dict[int, float]]], seeds: list[int]) -> list[str]:
    """The primary and secondary endpoints over ``seeds`` (each with both arms)."""
    last = max(max(c["cold"][s]) for s in seeds)
    lines = ["### Primary: steps to within 5 % of the cold arm's final validation excess", "",
             f"Target per seed = {1 + WITHIN:g} x the cold run's excess at its last evaluation ({last:,} steps); "
             "the first evaluation (every 2,500 steps) at or below it. The last evaluation's figures are at full "
             "precision when `per-run/final.csv` has them, the others as the trainer logs them (4 decimals).", "",
             "| seed | cold final | target | cold steps | warm steps | warm - cold |",
             "|---:|---:|---:|---:|---:|---:|"]
    diffs = []
    for s in seeds:
        final = c["cold"][s][max(c["cold"][s])]
        target = (1 + WITHIN) * final
        sc, sw = steps_to(c["cold"][s], target), steps_to(c["warm"][s], target)
        d = None if sc is None or sw is None else sw - sc
        if d is not None:
            diffs.append(d)
        lines.append(f"| {s} | {final:.5f} | {target:.5f} | {_fmt_steps(sc, last)} | {_fmt_steps(sw, last)} | "
                     f"{'n/a' if d is None else f'{d:+,}'} |")
    mean = f"{sum(diffs) / len(diffs):+,.0f}" if len(diffs) == len(seeds) else "n/a (a run never reached it)"
    lines += [f"| mean | | | | | {mean} |", "",
              "### Secondary: validation excess slowdown at fixed steps, paired by seed", "",
              f"warm / cold: exp of the mean per-seed log ratio with its 95 % t-interval ({len(seeds) - 1} "
              "degrees of freedom).", "",
              "| steps | " + " | ".join(f"cold s{s} | warm s{s}" for s in seeds) +
              " | mean cold | mean warm | mean warm - cold | warm / cold [95 %] |",
              "|---:|" + "---:|" * (2 * len(seeds) + 4)]
    for step in sorted({st for arm in ARMS for s in seeds for st in c[arm][s]}):
        if not all(step in c[arm][s] for arm in ARMS for s in seeds):
            continue
        cold, warm = [c["cold"][s][step] for s in seeds], [c["warm"][s][step] for s in seeds]
        iv = interval([math.log(w / k) for w, k in zip(warm, cold, strict=True)])
        mark = "**" if step in STEPS else ""
        lines.append(f"| {mark}{step:,}{mark} | " +
                     " | ".join(f"{k:.4f} | {w:.4f}" for k, w in zip(cold, warm, strict=True)) +
                     f" | {sum(cold) / len(cold):.4f} | {sum(warm) / len(warm):.4f} | "
                     f"{(sum(warm) - sum(cold)) / len(cold):+.4f} | {iv.ratio:.2f} [{iv.low:.2f}, {iv.high:.2f}] |")
    return [*lines, "", "Bold: the steps fixed as the secondary endpoint; the others are shown, not tested.", ""]


def document() -> list[str]:
    """table.md: the brief's seeds first, then every paired seed when there are more, then the extras."""
    c = curves()
    paired = sorted(set(c["cold"]) & set(c["warm"]))
    first = [s for s in PRIMARY_SEEDS if s in paired]
    lines = [f"## Training seeds {', '.join(map(str, first))} (the planned A/B)", "", *table(c, first)]
    if len(paired) > len(first):
        lines += [f"## Training seeds {paired[0]}-{paired[-1]} (the planned seeds and the extra ones, "
                  "decided before any warm run)", "", *table(c, paired)]
    return lines + _baselines() + _step0() + _warm_start_reports() + _times()


def _step0() -> list[str]:
    """Each arm's network before any DQN step (``scripts/warm_start_step0.py``), when measured."""
    path = RUNS / "step0.csv"
    if not path.is_file():
        return []
    with path.open() as f:
        rows = list(csv.DictReader(f))
    lines = ["## Step 0: the networks DQN starts from (descriptive)", "",
             "| seed | cold (fresh init) | warm (after imitation) |", "|---:|---:|---:|"]
    by = {(int(r["seed"]), r["arm"]): float(r["dqn"]) for r in rows}
    for seed in sorted({s for s, _ in by}):
        lines.append(f"| {seed} | {by.get((seed, 'cold'), math.nan):.4f} | {by.get((seed, 'warm'), math.nan):.4f} |")
    return [*lines, ""]


def _baselines() -> list[str]:
    """The baselines' figures on the same episodes (equal in every run and step: they do not learn)."""
    vals: dict[str, set[float]] = {"default-k8s": set(), "demand-aware": set()}
    for path in RUNS.glob("*.eval.csv"):
        with path.open() as f:
            for r in csv.DictReader(f):
                for k in vals:
                    vals[k].add(float(r[k]))
    return ["Baselines on the same validation episodes: " +
            ", ".join(f"{k} {'/'.join(f'{v:.4f}' for v in sorted(vs))}" for k, vs in vals.items()), ""]


def _warm_start_reports() -> list[str]:
    lines = ["## The imitation stage (warm arm only)", "",
             "| seed | decisions | usable | held out | chance | agreement before | held-out after | train after | "
             "final loss |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for path in sorted(RUNS.glob("warm-*.warm-start.json")):
        r = json.loads(path.read_text())
        lines.append(f"| {path.name.split('.')[0].split('-')[1]} | {r['decisions']:,} | {r['usable']:,} | "
                     f"{r['held_out']:,} | {r['chance']:.3f} | {r['agreement_before']:.3f} | "
                     f"{r['agreement_after']:.3f} | {r['train_agreement_after']:.3f} | {r['final_loss']:.3f} |")
    return [*lines, ""]


def _times() -> list[str]:
    """Wall seconds per run (the runner's ``times.csv``) and the imitation's share, from the log timestamps."""
    path = RUNS / "times.csv"
    if not path.is_file():
        return []
    lines = ["## Wall time", "", "| run | seconds | imitation stage (s) |", "|---|---:|---:|"]
    with path.open() as f:
        for arm, seed, rc, secs in csv.reader(f):
            stage = imitation_seconds(RUNS / f"{arm}-{seed}{OUTPUT}") if arm == "warm" else None
            name = "decision log (sim_decision_log)" if arm == "log" else f"{arm}-{seed}"
            lines.append(f"| {name}{'' if rc == '0' else f' (rc {rc})'} | {float(secs):.0f} | "
                         f"{'' if stage is None else f'{stage:.1f}'} |")
    return [*lines, ""]


def plot(path: Path) -> None:
    """Validation excess vs steps for the seeds with both arms: each seed thin, the arm's mean thick (step 0 from
    ``per-run/step0.csv`` when measured), the baselines dashed; log scale, the curves span a factor of ten."""
    c = curves()
    paired = sorted(set(c["cold"]) & set(c["warm"]))
    step0 = {}
    if (RUNS / "step0.csv").is_file():
        with (RUNS / "step0.csv").open() as f:
            step0 = {(int(r["seed"]), r["arm"]): float(r["dqn"]) for r in csv.DictReader(f)}
    arms = [(arm, colour, [{**({0: step0[(s, arm)]} if (s, arm) in step0 else {}), **c[arm][s]} for s in paired])
            for arm, colour in zip(ARMS, ("tab:blue", "tab:orange"), strict=True)]
    with next(iter(sorted(RUNS.glob("*.eval.csv")))).open() as f:
        base = next(csv.DictReader(f))
    refs = [(name, float(base[name]), ls) for name, ls in (("default-k8s", "--"), ("demand-aware", ":"))]
    plot_curves(path, arms, refs,
                title="Warm start from a default-k8s log vs cold start",
                xlabel="DQN steps (0: before any; the warm arm's imitation comes before it)",
                ylabel="validation excess slowdown (log; lower is better)",
                mean_label="{arm}: mean of {n} seeds (thin: each seed)", markers=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--collect", type=Path, help="run directory to read the training logs from first")
    a = p.parse_args()
    if a.collect:
        collect(a.collect)
    (FOLDER / "table.md").write_text("\n".join(document()))
    plot(FOLDER / "validation.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
