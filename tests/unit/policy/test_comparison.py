"""The one comparison rule: per-case ratios (n/a below the noise floor), the floored geometric mean, the table."""

import json
import math

import pytest

from policy.comparison import (
    BASELINE,
    DQN,
    HEURISTICS,
    MIN_EXCESS,
    MIN_RATIO,
    MODEL_BASED,
    PRE_RECORDED_SETTING,
    SummaryError,
    case_ratio,
    cases,
    comparison,
    excess_by_case,
    geo_means,
    geometric_mean,
    merge_summaries,
    ratios,
    read_summary,
    served_setting,
)


@pytest.mark.parametrize(("excess", "other", "ratio"), [
    (0.2, 0.4, 0.5),
    (0.3, 0.1, 3.0),
    (0.0, 0.1, 0.0),                      # a policy that loses nothing: ratio 0 (the geometric mean floors it)
    (0.1, MIN_EXCESS, 0.1 / MIN_EXCESS),  # at the floor: still a ratio
    (0.1, 0.0049, None),                  # below it: the other is at the physical limit, noise
    (0.0, 0.0, None),
])
def test_case_ratio_is_none_below_the_noise_floor(excess, other, ratio):
    assert case_ratio(excess, other) == (ratio if ratio is None else pytest.approx(ratio))


@pytest.mark.parametrize(("values", "mean"), [
    ([2.0, 0.5], 1.0),
    ([4.0], 4.0),
    ([0.5, None, 2.0, None], 1.0),        # n/a cases are left out, not counted as 1
    ([0.0001, 1.0], math.sqrt(MIN_RATIO)),  # a near-zero ratio counts as MIN_RATIO
    ([None], math.nan),
    ([], math.nan),
])
def test_geometric_mean_floors_and_skips(values, mean):
    got = geometric_mean(values)
    assert math.isnan(got) if math.isnan(mean) else got == pytest.approx(mean)


def _ex() -> dict:
    return {("a", 0.9, "dqn:m"): 0.05, ("a", 0.9, "default-k8s"): 0.2, ("a", 0.9, "demand-aware"): 0.1,
            ("a", 0.9, "lookahead"): 0.125,
            ("b", 1.3, "dqn:m"): 0.3, ("b", 1.3, "default-k8s"): 0.004, ("b", 1.3, "demand-aware"): 0.2,
            ("b", 1.3, "lookahead"): 0.2,
            ("c", 1.3, "dqn:m"): 0.0001, ("c", 1.3, "default-k8s"): 0.5, ("c", 1.3, "demand-aware"): 0.4,
            ("c", 1.3, "lookahead"): 0.3}


def test_ratio_to_the_best_heuristic_leaves_out_cases_at_the_physical_limit_and_floors_tiny_ratios():
    r = ratios(_ex(), "dqn:m", HEURISTICS)
    assert r == {("a", 0.9): pytest.approx(0.5), ("b", 1.3): None, ("c", 1.3): pytest.approx(0.0001 / 0.3)}
    assert geometric_mean(r.values()) == pytest.approx((0.5 * 0.01) ** 0.5)  # b out, c floored at 0.01


def test_geo_means_are_to_default_k8s_and_to_the_best_model_based_heuristic():
    to_k8s, to_best = geo_means(_ex(), "dqn:m")
    assert to_k8s == pytest.approx((0.05 / 0.2 * MIN_RATIO) ** 0.5)  # b: default-k8s below the floor
    assert to_best == pytest.approx((0.05 / 0.1 * 0.3 / 0.2 * MIN_RATIO) ** (1 / 3))  # b counts here
    assert cases(_ex()) == [("a", 0.9), ("b", 1.3), ("c", 1.3)]
    assert set(MODEL_BASED) < set(HEURISTICS) and BASELINE in HEURISTICS


def _rows(cells: dict[str, float], family: str = "f", load: str = "0.9", seeds: str = "2") -> list[dict]:
    return [{"scenario": family, "load": load, "policy": p, "seeds": seeds, "excess_slowdown": str(x)}
            for p, x in cells.items()]


def test_comparison_uses_ratio_of_mean_excess():
    table = comparison(_rows({BASELINE: 0.4, "lookahead": 0.1, "demand-aware": 0.2, DQN: 0.2}))
    assert "| f | 0.9 | 0.4000 | 0.1000 | 0.2000 | 0.2000 | 0.50 | 2.00 |" in table
    assert "| geometric mean (1 / 1 cases) | all | | | | | **0.50** | **2.00** |" in table
    assert "mean over 2 seeds), each policy's scores taken as a pure argmax;" in table


def test_comparison_shows_n_a_and_leaves_the_case_out_of_the_geometric_mean():
    rows = (_rows({BASELINE: 0.4, "lookahead": 0.1, "demand-aware": 0.2, DQN: 0.2})
            + _rows({BASELINE: 0.003, "lookahead": 0.1, "demand-aware": 0.2, DQN: 0.05}, family="g"))
    table = comparison(rows, "scored somehow")
    assert "| g | 0.9 | 0.0030 | 0.1000 | 0.2000 | 0.0500 | n/a | 0.50 |" in table
    assert "| geometric mean (1 / 2 cases) | all | | | | | **0.50** | **1.00** |" in table
    assert "scored somehow;" in table


def test_excess_by_case_reads_any_metric():
    rows = [{**r, "excess_queue": "0.25"} for r in _rows({BASELINE: 0.4})]
    assert excess_by_case(rows) == {("f", 0.9, BASELINE): 0.4}
    assert excess_by_case(rows, "excess_queue") == {("f", 0.9, BASELINE): 0.25}


def _write(path, header: str, *lines: str):
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def test_read_summary_reads_rows_and_names_file_line_and_field(tmp_path):
    good = _write(tmp_path / "summary.csv", "scenario,load,policy,seeds,excess_slowdown", "f,0.9,dqn:default,5,0.1")
    assert read_summary(good) == [{"scenario": "f", "load": "0.9", "policy": "dqn:default", "seeds": "5",
                                   "excess_slowdown": "0.1"}]
    missing = _write(tmp_path / "missing.csv", "scenario,load,policy,excess_slowdown", "f,0.9,dqn:default,0.1")
    with pytest.raises(SummaryError, match=r"missing\.csv:1: seeds: no such column"):
        read_summary(missing)
    bad = _write(tmp_path / "bad.csv", "scenario,load,policy,seeds,excess_slowdown", "f,0.9,a,5,0.1",
                 "f,0.9,b,5,oops")
    with pytest.raises(SummaryError, match=r"bad\.csv:3: excess_slowdown: not a number: 'oops'") as err:
        read_summary(bad)
    assert (err.value.line, err.value.field) == (3, "excess_slowdown")
    with pytest.raises(SummaryError, match=r"summary\.csv:1: excess_queue: no such column"):
        read_summary(good, metrics=("excess_slowdown", "excess_queue"))


def test_served_setting_from_served_json_or_the_pre_recorded_default(tmp_path):
    assert served_setting(tmp_path) == {"hot_filter": "prefer-cool", **PRE_RECORDED_SETTING}
    (tmp_path / "served.json").write_text(json.dumps({"hot_filter": "strict", "mapping": "band:0.02", "weight": 5}))
    assert served_setting(tmp_path) == {"hot_filter": "strict", "mapping": "band:0.02", "weight": 5}


def _batch(folder, rows):
    folder.mkdir()
    body = [",".join(map(str, (*r[:4], 5, r[4]))) for r in rows]
    lines = ["scenario,workload,load,policy,seeds,excess_slowdown", *body]
    (folder / "summary.csv").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize(("other", "rtol", "joined"), [
    (0.2665839652112565, 0.0, True),          # bitwise equal
    (0.26658396521125666, 0.0, False),        # the last bits differ: the exact join refuses
    (0.26658396521125666, 1e-9, True),        # ... the tolerant one keeps the first batch's row
    (0.2666, 1e-9, False),                    # a real difference is refused either way
])
def test_merge_summaries_joins_equal_rows_and_refuses_others(tmp_path, other, rtol, joined):
    a = _batch(tmp_path / "a", [("f", "drs", 0.9, "default-k8s", 0.2665839652112565), ("f", "drs", 0.9, "x", 0.1)])
    b = _batch(tmp_path / "b", [("f", "drs", 0.9, "default-k8s", other), ("f", "drs", 0.9, "y", 0.2)])
    if not joined:
        with pytest.raises(ValueError, match="differs"):
            merge_summaries([a, b], tmp_path / "out", rtol=rtol)
        return
    assert merge_summaries([a, b], tmp_path / "out", rtol=rtol) == 3
    ex = excess_by_case(read_summary(tmp_path / "out" / "summary.csv"))
    assert ex[("f", 0.9, "default-k8s")] == 0.2665839652112565
