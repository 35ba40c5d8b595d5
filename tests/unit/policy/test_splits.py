"""The splits: disjoint seeds by construction, validation inside training's ranges, test outside them, the size
split the test families grown."""

import numpy as np
import pytest

from policy.sim.cluster import MIXED_WEIGHTS, parse_cluster
from policy.sim.config import SimConfig, build_episode
from policy.splits import (
    LAB,
    SEED_BASE,
    SIZE,
    SIZE_BASES,
    SIZE_JOBS_PER_NODE,
    SIZE_NODES,
    SPLIT_SIZE,
    SPLITS,
    TEST,
    TRAIN_SEED_LIMIT,
    VALIDATION,
    seeds,
)
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
                                                 "lab-mr-honest", "lab-misleading", "lab-tenants",
                                                 *(f"lab-mr-{v}-{frame}" for v in ("under", "flat", "honest")
                                                   for frame in ("isolated", "daemons"))}
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


def test_the_lab_frame_families_run_the_same_variant_s_jobs_scaled_on_the_scaled_nodes():
    for v in ("under", "flat", "honest"):
        base = LAB[f"lab-mr-{v}"].config
        for frame, prefix in (("isolated", "mr-iso"), ("daemons", "mr-lab")):
            c = LAB[f"lab-mr-{v}-{frame}"].config
            assert c == {**base, "cluster": base["cluster"].replace("mr-", f"{prefix}-"),
                         "workload": f"{base['workload']}-x0.4"}


def test_the_tenants_family_runs_the_misleading_family_s_nodes_and_jobs_with_under_s_requests_and_tenants():
    c = LAB["lab-tenants"].config
    assert c == {**LAB["lab-misleading"].config, "workload": "lab-under-small", "tenants": 2}
    assert all("tenants" not in f.config for name, f in LAB.items() if name != "lab-tenants")


def test_the_size_split_has_its_own_seeds_after_the_labs():
    assert SEED_BASE["lab"] + SPLIT_SIZE <= SEED_BASE["size"]
    assert seeds("size", 2) == [SEED_BASE["size"], SEED_BASE["size"] + 1]
    assert not set(SIZE) & (set(VALIDATION) | set(TEST) | set(LAB))


def test_each_size_family_is_its_test_family_on_more_nodes_with_jobs_to_match():
    assert set(SIZE) == {f"{b}-{n}" for b in SIZE_BASES for n in SIZE_NODES} and SPLITS["size"] is SIZE
    for base in SIZE_BASES:
        src = TEST[base].config
        src_types = parse_cluster(src["cluster"], np.random.default_rng(0)).types
        shares = (MIXED_WEIGHTS if src["cluster"].startswith("mixed:")  # the mix itself, not its 12-node rounding
                  else {t: src_types.count(t) / len(src_types) for t in set(src_types)})
        for n in SIZE_NODES:
            c = SIZE[f"{base}-{n}"].config
            assert {k: v for k, v in c.items() if k not in ("cluster", "n_jobs")} == \
                {k: v for k, v in src.items() if k != "cluster"}, base
            types = parse_cluster(c["cluster"], np.random.default_rng(0)).types
            assert len(types) == n and c["n_jobs"] == round(SIZE_JOBS_PER_NODE * n), (base, n)
            for t, share in shares.items():  # the test family's node mix, to within one node of each type
                assert abs(types.count(t) - n * share) < 1, (base, n, t)


def _span(cfg):
    _, jobs, _ = build_episode(cfg, np.random.default_rng(7))
    return max(j.submit for j in jobs)


def test_a_size_episode_keeps_its_test_familys_span_so_the_big_cluster_fills():
    # Arrival rates grow with capacity, so only jobs grown with the nodes keep the load on for as long.
    base = _span(SimConfig(load=0.9, n_jobs=200, **TEST["large-hetero"].config))
    big = SIZE["large-hetero-1000"].config
    assert 0.8 < _span(SimConfig(load=0.9, **big)) / base < 1.25
    assert _span(SimConfig(load=0.9, **{**big, "n_jobs": 200})) < base / 10
