"""The lab's world: the request rule per variant, templates whose arguments are what they say, the files' columns."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from policy.labworld import (
    ALIBABA_USE_PER_REQUEST,
    FILES,
    JOB_COLUMNS,
    JOB_COST_COLUMNS,
    JOB_RUN_COLUMNS,
    JOB_SOLO_COLUMNS,
    MISLEADING_LEVEL,
    MISLEADING_MAX_REQUEST_M,
    MONITOR_POD_REQUESTS,
    REAL_NODES,
    SHAPES,
    SMALL_CPU_M,
    TEMPLATES,
    VARIANTS,
    UnknownVariant,
    cpu_request_m,
    misleading_ratio,
    scaled_units,
)


@pytest.mark.parametrize(("use_m", "variant", "request_m"), [
    (1000, "under", 200), (100, "under", 20), (30, "under", 10),  # 0.2 x use, at least 10 m
    (1000, "flat", 100), (100, "flat", 100),                       # the same for every pod
    (1000, "honest", 450), (300, "honest", 300), (5, "honest", 10),  # use, at most 450 m, at least 10 m
    (333, "under", 67),                                            # rounded up
])  # fmt: skip
def test_cpu_request_per_variant(use_m: int, variant: str, request_m: int) -> None:
    assert cpu_request_m(use_m, variant) == request_m


def test_an_unknown_variant_names_the_known_ones() -> None:
    with pytest.raises(UnknownVariant, match=", ".join(VARIANTS)):
        cpu_request_m(100, "fair")


def test_every_shape_draws_known_templates_of_its_own_kind() -> None:
    for sizes in SHAPES.values():
        for kind, options in sizes.items():
            assert all(TEMPLATES[f"{kind}-{size}"].kind == kind for size in options)


def test_a_template_argv_scales_its_units_and_keeps_its_arguments() -> None:
    tpl = TEMPLATES["io-m"]
    assert tpl.argv(scale=0.5) == ["io", "--state-dir=/state", "--units=30", "--chunk-bytes=1048576", "--bandwidth=4"]
    assert scaled_units(1, 0.1) == 1  # never less than one unit


def test_fraction_templates_cap_their_cores_at_their_cpu_use() -> None:
    for key in ("cpu-fs", "cpu-fl", "train-fm"):
        tpl = TEMPLATES[key]
        cores = next(float(a.split("=")[1]) for a in tpl.args if a.startswith("--cores="))
        assert cores * 1000 == tpl.cpu_use_m


def test_the_real_nodes_are_unequal_and_oversubscribe_two_cores_slightly() -> None:
    assert len({(s.cpu_millis, s.memory_mib) for s in REAL_NODES}) == len(REAL_NODES)
    assert sum(s.cpu_millis for s in REAL_NODES) == 2250
    assert len({s.node_type for s in REAL_NODES}) == len(REAL_NODES)


def test_jobs_csv_is_the_run_columns_then_the_cost_columns_and_every_file_has_unique_columns() -> None:
    assert JOB_COLUMNS == JOB_RUN_COLUMNS + JOB_COST_COLUMNS + JOB_SOLO_COLUMNS
    assert JOB_RUN_COLUMNS[-1] == "migrations"
    assert FILES["jobs.csv"] == JOB_COLUMNS
    for name, columns in FILES.items():
        assert len(set(columns)) == len(columns), name


# ---- the misleading variant and the small job shape (issue #21's misleading scenario) ----------------------------

@pytest.mark.parametrize(("use_m", "ratio", "node_scale", "request_m"), [
    (125, 0.55, 1.0, 29),    # near the sample's median (0.633): about under's 0.2 x use (125 x 0.1266 / 0.55 = 28.8)
    (60, 0.38, 1.0, 20),     # 60 x 0.1266 / 0.38 = 19.99, rounded up
    (60, 1.92, 1.0, 10),     # 3.96: never below MIN_REQUEST_M on the described nodes
    (250, 1.92, 1.0, 17),    # the sample's top decile: asks for a third of what under would
    (250, 0.22, 1.0, 144),   # a low decile asks for 2.9x what under would
    (250, 0.04, 1.0, 200),   # 16x: capped where the smallest node still has room
    (100, 0.04, 0.4, 80),    # the cap follows the nodes under host isolation
    (24, 1.92, 0.4, 4),      # never below MIN_REQUEST_M, scaled with the nodes like the rest (10 x 0.4)
])  # fmt: skip
def test_a_misleading_request_is_use_over_the_workload_s_ratio_capped_to_fit(use_m, ratio, node_scale, request_m):
    assert cpu_request_m(use_m, "misleading", node_scale=node_scale, ratio=ratio) == request_m


@pytest.mark.parametrize("ratio", [None, 0.0, -1.0, float("nan")])
def test_a_misleading_request_without_a_ratio_is_refused(ratio) -> None:
    with pytest.raises(ValueError, match="misleading variant needs"):
        cpu_request_m(100, "misleading", ratio=ratio)


def test_a_workload_s_ratio_is_fixed_per_seed_drawn_from_the_alibaba_table_and_varies_over_seeds() -> None:
    keys = [f"cpu-{m}m" for m in SMALL_CPU_M]
    assert misleading_ratio(7, "cpu-60m") == misleading_ratio(7, "cpu-60m")
    drawn = [misleading_ratio(seed, key) for seed in range(200) for key in keys]
    assert set(drawn) == set(ALIBABA_USE_PER_REQUEST)  # every decile drawn, nothing else
    assert len({tuple(misleading_ratio(seed, key) for key in keys) for seed in range(20)}) > 10


def test_the_alibaba_table_is_ten_rising_quantiles_mostly_over_asking() -> None:
    assert len(ALIBABA_USE_PER_REQUEST) == 10 and list(ALIBABA_USE_PER_REQUEST) == sorted(ALIBABA_USE_PER_REQUEST)
    assert sum(r < 1 for r in ALIBABA_USE_PER_REQUEST) == 7 and max(ALIBABA_USE_PER_REQUEST) < 2


def test_small_jobs_fit_the_smallest_node_spread_4x_and_cap_their_cores_at_their_use() -> None:
    smallest = min(s.cpu_millis for s in REAL_NODES)
    uses = []
    for kind, sizes in SHAPES["small"].items():
        for size in sizes:
            tpl = TEMPLATES[f"{kind}-{size}"]
            assert tpl.cpu_use_m <= smallest, tpl
            uses.append(tpl.cpu_use_m)
            if kind in ("cpu", "train"):
                assert f"--cores={tpl.cpu_use_m / 1000:g}" in tpl.args
    assert max(uses) / min(uses) >= 4
    assert MISLEADING_MAX_REQUEST_M < smallest
    assert MISLEADING_LEVEL == pytest.approx(0.2 * 0.633)  # under's level at the sample's median ratio


def test_the_monitor_pod_s_requests_are_the_daemonset_manifest_s():
    # policy may read no file (it is pure), so the manifest's figures are written in labworld; this keeps them equal.
    doc = yaml.safe_load((Path(__file__).parents[3] / "manifests/monitor/daemonset.yaml").read_text())
    (container,) = doc["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"] == {"cpu": f"{MONITOR_POD_REQUESTS[0]}m",
                                                  "memory": f"{MONITOR_POD_REQUESTS[1]}Mi"}
