"""The report's pre-registered section: the endpoint, the A/A and positive-control verdicts, claims no stronger
than their intervals, power, predictions declared in advance, and flagged runs left out."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lab import verdict
from lab.endpoint import interval
from lab.protocol import parse_protocol
from lab.report import PROTOCOL_FILE, append_rows, summarise
from tests.unit.lab.test_protocol import MAIN

# per arm, per seed 1..4: the mean JCT relative to default's 100 s
RATIOS = {"default": [1, 1, 1, 1], "default#2": [1.01, 0.99, 1.02, 0.98], "model": [0.9, 1.08, 0.95, 1.05],
          "demand-aware": [0.8, 0.82, 0.78, 0.81], "worst-fit@off": [1.5, 1.4, 1.6, 1.45]}


def _dir(tmp_path: Path, *, gates: list[dict] = ()) -> Path:
    for arm, ratios in RATIOS.items():
        for seed, r in enumerate(ratios, start=1):
            append_rows(tmp_path, "jobs.csv", [
                {"seed": seed, "arm": arm, "variant": "under", "job": f"j{i}", "kind": "cpu", "node": "rn-large",
                 "submit_s": 0, "finish_s": 100 * r * k, "jct_s": 100 * r * k, "slowdown": r * k}
                for i, k in enumerate((0.5, 1.5))])
    append_rows(tmp_path, "nodes.csv", [{"node": "rn-large", "node_type": "large", "cpu_quota_m": 1000,
                                         "mem_mi": 2048, "net_mbit": 80}])
    if gates:
        append_rows(tmp_path, "gates.csv", list(gates))
    (tmp_path / PROTOCOL_FILE).write_text(MAIN.replace("seeds: [1, 2, 3, 4, 5, 6, 7]", "seeds: [1, 2, 3, 4, 5]"))
    return tmp_path


def test_the_report_judges_the_run_against_its_protocol(tmp_path: Path) -> None:
    text = summarise(_dir(tmp_path))
    head = text[:text.index("### variant")]
    assert "## Pre-registered protocol `under-main` (main)" in head
    assert "per-seed log mean JCT ratio to `default`, paired over seeds, with its 95 % t-interval" in head
    assert "Seeds planned: 5; with results: 4 (still to run or rerun: 5). **Interim look**" in head
    claims = [line.rsplit("|", 2)[1].strip() for line in head.splitlines() if line.startswith("| `")]
    assert claims and all(c.startswith("interim: ") for c in claims)  # no claim reads as the endpoint's yet
    assert "Protocol file" in head and "Note:" not in head
    aa = interval([math.log(x) for x in RATIOS["default#2"]])
    assert f"A/A check (`default#2` against `default`, interval {aa.low:.3f}-{aa.high:.3f}): within +-5 %: yes." \
        in head
    assert "Positive control (`worst-fit@off`): detected (interval" in head
    assert "| `demand-aware` | compared | 4 |" in head and "lower, by" in head
    model_row = next(line for line in head.splitlines() if line.startswith("| `model`"))
    assert "| 0.97 |" in model_row and "no difference detected; no difference detectable below" in model_row
    assert "needs 7 seeds" in head and "the protocol plans 5: UNDERPOWERED" in head  # pilot sd 0.1 -> 7 seeds
    assert "It predicted under 10 % for `model`, and the protocol said so in advance" in head
    assert "This run's own A/A sd of the log ratio" in head


def test_a_flagged_run_is_left_out_and_listed_as_flagged_rerun(tmp_path: Path) -> None:
    gate = {"seed": 2, "arm": "model", "variant": "under", "gate": "host-interference", "flagged": 1,
            "value": 0.2, "detail": "8 of 40 busy samples ..."}
    ok = {**gate, "seed": 3, "flagged": 0}
    text = summarise(_dir(tmp_path, gates=[gate, ok]))
    assert "- seed 2, arm `model`, variant `under`: flagged, rerun -- host-interference: 8 of 40" in text
    assert "| `model` | compared | 3 |" in text  # seeds 1, 3, 4 only
    assert "| model | 3 |" in text  # the plain tables leave it out too


@pytest.mark.parametrize("control, says", [
    ([1.1, 0.9, 1.05, 0.95], "no 'no difference' above is evidence of anything"),
    ([0.7, 0.72, 0.69, 0.71], "detected, but BETTER than `default`"),
])
def test_a_positive_control_not_detected_or_better_says_what_that_means(control, says) -> None:
    p = parse_protocol(MAIN, path="m.yaml")
    per_run = {(s, a): {"mean_jct_s": 100.0 * (r if a != "worst-fit@off" else control[s - 1])}
               for a, rs in RATIOS.items() for s, r in enumerate(rs, start=1)}
    assert says in "\n".join(verdict.lines(p, per_run, {}))


def test_only_the_registered_seeds_count() -> None:
    p = parse_protocol(MAIN, path="m.yaml")  # seeds 1..7
    per_run = {(s, a): {"mean_jct_s": 100.0 * (1.5 if a == "model" and s > 7 else 1.0)}
               for a in ("default", "model") for s in range(1, 12)}
    text = "\n".join(verdict.lines(p, per_run, {}))
    assert "Seeds planned: 7; with results: 7." in text and "| `model` | compared | 7 | 1.000 |" in text


@pytest.mark.parametrize("aa, says", [([1.1, 0.9, 1.12, 0.88], "within +-5 %: NO"), ([1.0], "fewer than two")])
def test_an_aa_check_that_fails_says_so(aa, says) -> None:
    p = parse_protocol(MAIN, path="m.yaml")
    per_run = {(s, "default"): {"mean_jct_s": 100.0} for s in range(1, 5)}
    per_run.update({(s, "default#2"): {"mean_jct_s": 100.0 * r} for s, r in enumerate(aa, start=1)})
    assert says in "\n".join(verdict.lines(p, per_run, {}))


def test_a_retired_run_leaves_every_file_and_is_listed_as_flagged_and_rerun(tmp_path: Path) -> None:
    from lab.report import RETIRED_DIR, read_rows, retire_run

    gate = {"seed": 2, "arm": "model", "variant": "under", "gate": "host-interference", "flagged": 1,
            "value": 0.2, "detail": "8 of 40 busy samples ..."}
    out = _dir(tmp_path, gates=[gate])
    append_rows(out, "events.csv", [{"seed": 2, "arm": "model", "t_s": 1, "node": "n", "event": "e", "value": 1},
                                    {"seed": 2, "arm": "default", "t_s": 1, "node": "n", "event": "e", "value": 1}])
    assert retire_run(out, (2, "model", "under")) == 2 + 1 + 1  # two jobs, one gate row, one event
    assert not [r for r in read_rows(out / "jobs.csv") if (r["seed"], r["arm"]) == ("2", "model")]
    assert len(read_rows(out / "events.csv")) == 1 and len(read_rows(out / RETIRED_DIR / "jobs.csv")) == 2
    text = summarise(out)
    assert "Flagged and rerun" in text and "- seed 2, arm `model`, variant `under`: host-interference" in text
    assert "flagged, rerun --" not in text  # nothing is flagged in the current files any more


def test_a_secondary_endpoint_is_judged_in_a_table_of_its_own(tmp_path: Path) -> None:
    d = _dir(tmp_path)
    text = (d / PROTOCOL_FILE).read_text().replace("  metric: mean_jct_s\n",
                                                    "  metric: mean_jct_s\n  also: [makespan_s]\n")
    (d / PROTOCOL_FILE).write_text(text)
    head = summarise(d)
    head = head[:head.index("### variant")]
    assert "Secondary endpoint, fixed in advance: the per-seed log makespan_s ratio to `default`" in head
    part = head[head.index("Secondary endpoint"):]
    da = next(line for line in part.splitlines() if line.startswith("| `demand-aware` |"))
    assert da.startswith("| `demand-aware` | 4 | 0.80") and "lower, by" in da  # makespan follows the jobs here


def test_with_every_planned_seed_the_claims_are_the_endpoint(tmp_path: Path) -> None:
    d = _dir(tmp_path)
    (d / PROTOCOL_FILE).write_text(MAIN.replace("seeds: [1, 2, 3, 4, 5, 6, 7]", "seeds: [1, 2, 3, 4]"))
    head = summarise(d)
    head = head[:head.index("### variant")]
    assert "Seeds planned: 4; with results: 4." in head and "Interim" not in head
    assert "interim: " not in head and "lower, by" in head
