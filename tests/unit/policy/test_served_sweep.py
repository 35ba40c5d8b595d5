"""The served-setting sweep: the selection table from rows, and a tiny resumable run on validation."""

import csv

import pytest

from policy import served_sweep
from policy.splits import LOADS, SPLITS


def _rows(setting_excess: dict[tuple[str, int], dict[str, float]], base: float = 0.2) -> list[dict]:
    rows = [{"mapping": "-", "weight": "0", "policy": "default-k8s", "family": "a", "load": str(ld), "seeds": "5",
             "excess_slowdown": str(base)} for ld in (0.9, 1.3)]
    for (mapping, weight), ex in setting_excess.items():
        for pol, v in ex.items():
            rows += [{"mapping": mapping, "weight": str(weight), "policy": pol, "family": "a", "load": str(ld),
                      "seeds": "5", "excess_slowdown": str(v)} for ld in (0.9, 1.3)]
    return rows


def test_the_table_ranks_settings_by_the_dqns_ratio_to_default_k8s():
    rows = _rows({("minmax", 10): {"dqn": 0.10, "lookahead": 0.05, "demand-aware": 0.08},
                  ("band:0.05", 3): {"dqn": 0.06, "lookahead": 0.12, "demand-aware": 0.20}})
    table = served_sweep.table(rows)
    assert [(r["mapping"], r["weight"]) for r in table] == [("band:0.05", 3), ("minmax", 10)]
    best = table[0]
    assert best["dqn/k8s"] == pytest.approx(0.3) and best["dqn/best"] == pytest.approx(0.5)
    assert best["lookahead/k8s"] == pytest.approx(0.6) and best["worst family"] == "a"
    assert table[1]["dqn/best"] == pytest.approx(2.0)
    assert "band:0.05" in served_sweep.format_table(table, limit=1).splitlines()[1]


def test_cases_at_the_physical_limit_are_left_out_of_the_ratios():
    rows = _rows({("minmax", 1): {"dqn": 0.001, "lookahead": 0.001, "demand-aware": 0.002}}, base=0.001)
    r = served_sweep.table(rows)[0]
    assert r["dqn/k8s"] != r["dqn/k8s"] and r["dqn/best"] != r["dqn/best"]  # nan: nothing to compare


def test_a_tiny_sweep_writes_every_case_and_resumes(tmp_path):
    kw = dict(mappings=["linear:0.05"], weights=[2], seeds=1, jobs=8, workers=1)
    path = served_sweep.sweep(tmp_path, **kw)
    with path.open() as f:
        rows = list(csv.DictReader(f))
    cases = len(SPLITS["validation"]) * len(LOADS)
    assert len(rows) == cases * 4
    assert {(r["mapping"], r["weight"]) for r in rows} == {("-", "0"), ("linear:0.05", "2")}
    assert {r["policy"] for r in rows if r["mapping"] != "-"} == {"dqn", "lookahead", "demand-aware"}
    served_sweep.sweep(tmp_path, **{**kw, "weights": [2, 3]})
    with path.open() as f:
        again = list(csv.DictReader(f))
    assert len(again) == cases * 7 and again[:len(rows)] == rows  # weight 2 not run twice


def test_the_command_refuses_bad_grids(capsys, tmp_path):
    assert served_sweep.main(["--out", str(tmp_path), "--weights", "0"]) == 2
    assert served_sweep.main(["--out", str(tmp_path), "--mappings", "cubic"]) == 2
    assert served_sweep.main(["--out", str(tmp_path), "--table"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_sweeps_on_other_seeds_merge_seed_weighted_and_only_where_both_ran():
    a = _rows({("minmax", 10): {"dqn": 0.10, "lookahead": 0.05, "demand-aware": 0.08},
               ("band:0.05", 3): {"dqn": 0.06, "lookahead": 0.12, "demand-aware": 0.20}})
    b = _rows({("minmax", 10): {"dqn": 0.20, "lookahead": 0.05, "demand-aware": 0.08}}, base=0.4)
    merged = served_sweep.merge(a, b)
    assert {(r["mapping"], r["weight"]) for r in merged} == {("-", 0), ("minmax", 10)}
    dqn = [r for r in merged if r["policy"] == "dqn"]
    assert all(r["seeds"] == 10 and r["excess_slowdown"] == pytest.approx(0.15) for r in dqn)
    (row,) = served_sweep.table(merged)
    assert row["dqn/k8s"] == pytest.approx(0.15 / 0.3)
