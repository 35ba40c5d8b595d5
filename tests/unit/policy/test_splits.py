"""The splits: disjoint seeds by construction, validation inside training's ranges, test outside them."""

import numpy as np
import pytest

from policy.sim.cluster import parse_cluster
from policy.splits import LAB, SEED_BASE, SPLIT_SIZE, SPLITS, TEST, TRAIN_SEED_LIMIT, VALIDATION, seeds
from policy.train import Args, _split


def test_seed_ranges_are_disjoint():
    assert TRAIN_SEED_LIMIT <= SEED_BASE["validation"]
    assert SEED_BASE["validation"] + SPLIT_SIZE <= SEED_BASE["test"]
    assert SEED_BASE["test"] + SPLIT_SIZE <= SEED_BASE["lab"]
    assert seeds("test", 3, offset=2) == [SEED_BASE["test"] + 2 + i for i in range(3)]
    with pytest.raises(ValueError, match="outside split"):
        seeds("validation", 2, offset=SPLIT_SIZE - 1)
    with pytest.raises(ValueError, match="unknown split"):
        seeds("train", 1)


def _nodes(spec):
    return parse_cluster(spec, np.random.default_rng(0)).n


def _train_ranges():
    a = Args()
    return dict(intervals={float(x) for x in _split(a.sample_intervals)}, error=a.profile_error_max,
                workloads=set(_split(a.workloads)), unprofiled=a.unprofiled_max,
                max_nodes=a.max_nodes)  # training refuses clusters larger than its observation


def test_validation_families_lie_inside_the_default_training_ranges():
    r = _train_ranges()
    for fam in VALIDATION.values():
        c = fam.config
        assert c.get("sample_interval", 10.0) in r["intervals"], fam.name
        assert c.get("profile_error", 0.0) <= r["error"] and c.get("unprofiled", 0.0) <= r["unprofiled"], fam.name
        assert c.get("workload", "drs") in r["workloads"] and c.get("arrival", "poisson") == "poisson", fam.name
        assert _nodes(c["cluster"]) <= r["max_nodes"], fam.name


def test_each_test_family_leaves_training_on_the_axis_it_names():
    r = _train_ranges()
    out = {
        "large-hetero": _nodes(TEST["large-hetero"].config["cluster"]) > r["max_nodes"],
        "bursty": TEST["bursty"].config["arrival"] != "poisson",
        "io-heavy": TEST["io-heavy"].config["workload"] not in r["workloads"],
        "profile-error": TEST["profile-error"].config["profile_error"] > r["error"],
        "very-stale": TEST["very-stale"].config["sample_interval"] > max(r["intervals"]),
        "no-profile": TEST["no-profile"].config["unprofiled"] > r["unprofiled"],
    }
    assert set(out) == set(TEST) and all(out.values()), out



def test_the_lab_families_are_evaluation_only_and_leave_the_splits_alone():
    assert SPLITS["lab"] is LAB and set(LAB) == {"lab-under", "lab-flat", "lab-honest", "lab-mr-under", "lab-mr-flat",
                                                 "lab-mr-honest"}
    assert not set(LAB) & (set(VALIDATION) | set(TEST))
    r = _train_ranges()
    for fam in LAB.values():
        assert fam.workload not in r["workloads"], fam.name
        assert _nodes(fam.config["cluster"]) == 4, fam.name


def test_the_lab_families_before_the_multi_resource_world_are_unchanged():
    # Their results (results/policy/lab-sim/) were made with exactly these configs.
    drs = dict(cluster="rn-small:1,rn-medium:1,rn-medium-mem:1,rn-large:1", profile_error=0.0, sample_interval=10.0)
    for v in ("under", "flat", "honest"):
        assert LAB[f"lab-{v}"].config == {**drs, "workload": f"lab-{v}"}
    assert list(LAB)[:3] == ["lab-under", "lab-flat", "lab-honest"]


def test_the_multi_resource_families_run_that_worlds_nodes_and_mix():
    for v in ("under", "flat", "honest"):
        c = LAB[f"lab-mr-{v}"].config
        assert c["cluster"] == "mr-small:1,mr-medium:1,mr-medium-mem:1,mr-large:1"
        assert c["workload"] == f"lab-multi-resource-{v}" and c["profile_error"] == 0.0
