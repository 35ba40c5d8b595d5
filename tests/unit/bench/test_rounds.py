"""bench/rounds.py: each round against its own no-op arm, and median / min / max / n over the rounds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # bench_scheduler imports it as a top-level module, as here
import rounds  # noqa: E402


def _arm(pods_s: float, extender_ms: float = 0.0, scheduler_ms: float = 2.0) -> dict:
    return {"pods_s": pods_s, "cpu_per_pod": {"extender": extender_ms / 1000, "kube-scheduler": scheduler_ms / 1000}}


ARMS = {"no extender": _arm(200.0), "no-op extender": _arm(100.0, 1.0), "drsched": _arm(80.0, 4.0, 5.0),
        "no-op extender #2": _arm(50.0, 2.0), "drsched #2": _arm(45.0, 6.0, 7.0),
        "no-op extender #3": _arm(100.0, 1.5), "drsched #3": _arm(60.0, 5.0, 6.0)}


@pytest.mark.parametrize(("arms", "expected"), [
    # the no-extender arm runs once, before round 1: only round 1 has a ratio to it
    (ARMS, [(1, 0.8, 0.4, None, 4.0, 1.0, 5.0), (2, 0.9, None, None, 6.0, 2.0, 7.0),
            (3, 0.6, None, None, 5.0, 1.5, 6.0)]),
    # a baseline tree's arm is read against the no-op arm of its own round
    ({"no-op extender": _arm(100.0), "drsched, baseline tree": _arm(70.0), "drsched": _arm(50.0)},
     [(1, 0.5, None, 0.7, 0.0, 0.0, 2.0)]),
    # a round cut short (no drsched arm) and arms of another name are left out
    ({"no-op extender": _arm(100.0), "drsched": _arm(50.0), "no-op extender #2": _arm(90.0), "other": _arm(1.0)},
     [(1, 0.5, None, None, 0.0, 0.0, 2.0)]),
    ({"no extender": _arm(100.0)}, []),
])
def test_each_round_is_read_against_its_own_no_op_arm(arms, expected):
    got = [tuple(r[f] for f in ("round", *rounds.FIELDS)) for r in rounds.rounds(arms)]
    assert got == [tuple(pytest.approx(v) if isinstance(v, float) else v for v in row) for row in expected]


@pytest.mark.parametrize(("values", "expected"), [
    ([0.8, 0.9, 0.6], {"median": 0.8, "min": 0.6, "max": 0.9, "n": 3}),
    ([0.8, 0.6], {"median": 0.7, "min": 0.6, "max": 0.8, "n": 2}),  # an even count: the mean of the middle two
    ([], None),
])
def test_spread(values, expected):
    assert rounds.spread(values) == (expected if expected is None else {k: pytest.approx(v) for k, v in
                                                                         expected.items()})


def test_the_summary_spreads_each_figure_over_the_rounds_that_have_it():
    s = rounds.summary(ARMS)
    assert s["n"] == 3 and [r["round"] for r in s["rounds"]] == [1, 2, 3]
    assert s["ratio_to_noop"] == {"median": pytest.approx(0.8), "min": pytest.approx(0.6), "max": pytest.approx(0.9),
                                  "n": 3}
    assert s["ratio_to_no_extender"]["n"] == 1 and s["baseline_ratio_to_noop"] is None
    assert (s["extender_ms"]["median"], s["noop_extender_ms"]["median"], s["scheduler_ms"]["max"]) == (5.0, 1.5, 7.0)
    assert s["pods_s"] == {"no extender": {"median": 200.0, "min": 200.0, "max": 200.0, "n": 1},
                           "no-op extender": {"median": 100.0, "min": 50.0, "max": 100.0, "n": 3},
                           "drsched": {"median": 60.0, "min": 45.0, "max": 80.0, "n": 3}}


def test_the_printed_table_has_a_row_per_round_then_the_spread():
    lines = rounds.render(rounds.summary(ARMS))
    body = [line.split() for line in lines[4:]]
    assert [row[0] for row in body] == ["1", "2", "3", "median", "min", "max", "n"]
    assert body[1] == ["2", "0.900", "-", "-", "6.00", "2.00", "7.00"]
    assert body[3][:2] == ["median", "0.800"] and body[-1] == ["n", "3", "1", "0", "3", "3", "3"]


def test_a_committed_record_written_before_the_summary_existed_still_summarises():
    arms = json.loads((ROOT / "results" / "bench" / "scheduler-cpcost-after-quiet.json").read_text())["figures"]["arms"]
    s = rounds.summary(arms)
    assert s["n"] == 2 and s["ratio_to_no_extender"]["n"] == 1
    assert s["ratio_to_noop"]["min"] == pytest.approx(arms["drsched"]["pods_s"] / arms["no-op extender"]["pods_s"])
