"""The lab's world: the request rule per variant, templates whose arguments are what they say, the files' columns."""

from __future__ import annotations

import pytest

from policy.labworld import (
    FILES,
    JOB_COLUMNS,
    JOB_COST_COLUMNS,
    JOB_RUN_COLUMNS,
    JOB_SOLO_COLUMNS,
    REAL_NODES,
    SHAPES,
    TEMPLATES,
    VARIANTS,
    UnknownVariant,
    cpu_request_m,
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
