"""The report's pre-registered section: a results directory judged against its protocol, in words no stronger
than the intervals. Pure: protocol and metrics in, markdown lines out.

Why it exists: the answer to "does drsched help?" is fixed by the protocol before the runs (``lab.protocol``);
this module only applies it. It states the endpoint, the A/A interval and whether it is within the +-5 %
target, whether the positive control was detected (its interval excludes 1), each arm's ratio with its
interval and a claim from ``lab.endpoint.claim`` (and so for each secondary endpoint), the simulator's
predictions with the arms it predicted under 10 % for (declared in advance), the power: the seeds the
protocol's pilot sd and this run's own A/A sd imply for 80 % power at a 15 % effect, and the runs a gate
flagged (left out, to be rerun).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from lab import endpoint
from lab.protocol import Protocol
from lab.schedule import variant_text
from policy.paired import seeds_for_power

AA_MARGIN = 0.05
"""The A/A target: the A/A ratio's interval within +-5 % (issue #21)."""
MAX_SEEDS = 1000
"""``seeds_for_power`` gives up beyond this; such a pilot says the lab cannot tell at this size."""


def _seeds_needed(p: Protocol, sd: float) -> str:
    n = seeds_for_power(sd, effect=p.effect, power=p.power, alpha=p.alpha, most=MAX_SEEDS)
    return f"more than {MAX_SEEDS}" if n > MAX_SEEDS else str(n)


def _fmt(iv: endpoint.Interval) -> tuple[str, str]:
    ratio = "n/a" if not math.isfinite(iv.ratio) else f"{iv.ratio:.3f}"
    span = f"{iv.low:.3f}-{iv.high:.3f}" if iv.seeds >= 2 else "none (one seed)" if iv.seeds == 1 else "n/a"
    return ratio, span


def lines(p: Protocol, per_run: Mapping[tuple[int, str], Mapping[str, float]],
          flagged: Mapping[tuple[int, str, str], list[str]], *, starts: list[str] = (), label: str = "") -> list[str]:
    """The section for ``p``: ``per_run`` maps (seed, arm) -> metrics of the protocol's variant with flagged
    runs already left out; ``flagged`` maps (seed, arm, variant) -> reasons; ``starts`` the run's
    protocol-runs.txt lines (when each start ran and under which registration); ``label`` names the metric
    (default: its column name)."""
    s = p.scenario
    metric = label or p.metric
    per_run = {(seed, arm): m for (seed, arm), m in per_run.items() if seed in p.seeds}  # the registered seeds only
    out = [f"## Pre-registered protocol `{p.name}` ({p.kind})", "",
           f"Protocol file `{p.path}`, sha256 `{p.sha256[:12]}`." + (f" Note: {p.note}." if p.note else ""),
           *(f"Run start: {line}." for line in starts),
           f"Scenario: variant `{s.variant}` ({variant_text(s.variant)}), regime `{s.regime}`, job shape "
           f"`{s.job_shape}`, {s.jobs} jobs a seed over about {s.window_s:g} s, work x{s.scale:g}."
           + (f" Scenario note: {s.note}." if s.note else ""),
           f"Primary endpoint, fixed in advance: the per-seed log {metric} ratio to `{p.baseline}`, paired over "
           f"seeds, with its 95 % t-interval, reported as exp (a ratio and its interval). Arm order: "
           + (f"randomised per seed (key `{p.order_key}`, recorded in order.csv)." if p.order == "random"
              else "fewest extender rollouts (not randomised)."), ""]
    done = sorted({seed for seed, arm in per_run if arm == p.baseline})
    missing = [x for x in p.seeds if x not in done]
    out += [f"Seeds planned: {len(p.seeds)}; with results: {len(done)}"
            + (f" (still to run or rerun: {', '.join(map(str, missing))})" if missing else "") + "."
            + (f" **Interim look**: the registered endpoint is the interval over all {len(p.seeds)} seeds; each claim "
               "and verdict below reads the intervals as they stand and decides nothing until then." if missing
               else ""), ""]
    rows = {arm: endpoint.interval(endpoint.log_ratios(per_run, arm, baseline=p.baseline, metric=p.metric))
            for arm in p.arms if arm != p.baseline}
    out += [f"| arm | role | seeds | ratio to `{p.baseline}` | 95 % interval | predicted | claim |",
            "|---|---|---:|---:|---|---:|---|"]
    for arm, iv in rows.items():
        role = "A/A" if arm == p.aa_arm else "positive control" if arm == p.positive_control else "compared"
        ratio, span = _fmt(iv)
        pred = f"{p.predicted[arm]:.2f}" if arm in p.predicted else "-"
        out.append(f"| `{arm}` | {role} | {iv.seeds} | {ratio} | {span} | {pred} | "
                   f"{'interim: ' if missing else ''}{endpoint.claim(iv, baseline=p.baseline)} |")
    out.append("")
    if p.aa_arm is not None:
        iv = rows[p.aa_arm]
        verdict = ("not judged: fewer than two seeds" if iv.seeds < 2 else
                   f"within +-{100 * AA_MARGIN:g} %: yes" if iv.within(AA_MARGIN) else
                   f"within +-{100 * AA_MARGIN:g} %: NO -- two arms that run the same thing differ by up to "
                   f"{100 * max(1 - iv.low, iv.high - 1):.0f} %, so smaller differences between other arms mean "
                   "nothing")
        out.append(f"A/A check (`{p.aa_arm}` against `{p.baseline}`, interval {_fmt(iv)[1]}): {verdict}.")
    if p.positive_control is not None:
        iv = rows[p.positive_control]
        verdict = ("not judged: fewer than two seeds" if iv.seeds < 2 else
                   f"detected (interval {_fmt(iv)[1]} excludes 1)" if iv.excludes_one and iv.ratio > 1 else
                   f"detected, but BETTER than `{p.baseline}` (interval {_fmt(iv)[1]}): the control is not the bad "
                   "policy it should be; check what it ran" if iv.excludes_one else
                   f"NOT detected (interval {_fmt(iv)[1]} contains 1): this lab cannot tell a deliberately bad "
                   "policy from the default here, so no 'no difference' above is evidence of anything")
        out.append(f"Positive control (`{p.positive_control}`): {verdict}.")
    out += ["", *_secondary_lines(p, per_run), *_power_lines(p, rows), *_prediction_lines(p),
            *flagged_lines(flagged)]
    return out


def _secondary_lines(p: Protocol, per_run: Mapping[tuple[int, str], Mapping[str, float]]) -> list[str]:
    """One table per secondary endpoint (``Protocol.also``), judged as the primary is."""
    out = []
    for metric in p.also:
        out += [f"Secondary endpoint, fixed in advance: the per-seed log {metric} ratio to `{p.baseline}`, paired, "
                "95 % t-interval.", "", f"| arm | seeds | ratio to `{p.baseline}` | 95 % interval | claim |",
                "|---|---:|---:|---|---|"]
        for arm in p.arms:
            if arm == p.baseline:
                continue
            iv = endpoint.interval(endpoint.log_ratios(per_run, arm, baseline=p.baseline, metric=metric))
            ratio, span = _fmt(iv)
            out.append(f"| `{arm}` | {iv.seeds} | {ratio} | {span} | {endpoint.claim(iv, baseline=p.baseline)} |")
        out.append("")
    return out


def _power_lines(p: Protocol, rows: Mapping[str, endpoint.Interval]) -> list[str]:
    what = (f"for {100 * p.power:.0f} % power at a {100 * p.effect:.0f} % effect (two-sided, alpha {p.alpha:g}, "
            "paired t on the log ratio)")
    out = []
    if p.pilot_sd is not None:
        need = _seeds_needed(p, p.pilot_sd)
        enough = need.isdigit() and len(p.seeds) >= int(need)
        out.append(f"Power: the pilot's per-seed sd of the log ratio, {p.pilot_sd:g} ({p.pilot_source}), needs "
                   f"{need} seeds {what}; the protocol plans {len(p.seeds)}: "
                   + ("enough." if enough else "UNDERPOWERED: a 15 % difference may go undetected."))
    if p.aa_arm is not None and rows[p.aa_arm].seeds >= 2 and rows[p.aa_arm].sd > 0:
        sd = rows[p.aa_arm].sd
        out.append(f"This run's own A/A sd of the log ratio: {sd:.3f} over {rows[p.aa_arm].seeds} seeds, which "
                   f"would need {_seeds_needed(p, sd)} seeds {what}.")
    return [*out, ""] if out else []


def _prediction_lines(p: Protocol) -> list[str]:
    if not p.predicted:
        return ["The protocol registered no simulator prediction.", ""]
    out = [f"The simulator's predicted ratios, registered in advance ({p.predicted_by}): "
           + ", ".join(f"`{a}` {r:.2f}x" for a, r in p.predicted.items()) + "."]
    small = p.small_predictions()
    if small:
        out.append(f"It predicted under 10 % for {', '.join(f'`{a}`' for a in small)}, and the protocol said so "
                   f"in advance: \"{p.predicted_note}\". A result within 10 % there is the expected one, not a "
                   "failure to detect.")
    return [*out, ""]


def flagged_lines(flagged: Mapping[tuple[int, str, str], list[str]]) -> list[str]:
    """The runs a gate flagged: reported, left out of every table, to be rerun (``lab.gates``)."""
    if not flagged:
        return []
    out = ["Flagged runs (left out of every table and ratio above; flagged, rerun):", ""]
    for (seed, arm, variant), why in sorted(flagged.items()):
        out.append(f"- seed {seed}, arm `{arm}`, variant `{variant}`: flagged, rerun -- " + "; ".join(why))
    return [*out, ""]


def retired_lines(retired: Mapping[tuple[int, str, str], list[str]], where: str) -> list[str]:
    """Runs a gate flagged whose rows were moved to ``where``/ before they were rerun."""
    if not retired:
        return []
    out = [f"Flagged and rerun (the flagged attempt's rows are in `{where}/`, out of every table):", ""]
    for (seed, arm, variant), why in sorted(retired.items()):
        out.append(f"- seed {seed}, arm `{arm}`, variant `{variant}`: " + "; ".join(why))
    return [*out, ""]
