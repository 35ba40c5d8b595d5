"""The lab's schedule: a pure function of its seed, and a file format whose errors say where."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter
from pathlib import Path

import pytest

from lab.schedule import (
    COLUMNS,
    ScheduleError,
    check_fit,
    make_schedule,
    parse_schedule,
    schedule_csv,
    uses_source,
)
from policy.labworld import (
    FLAT_REQUEST_M,
    HONEST_CAP_M,
    MISLEADING_LEVEL,
    MISLEADING_MAX_REQUEST_M,
    REAL_NODES,
    REQUEST_RATIO,
    SOURCE_ENV,
    TEMPLATES,
    WORLDS,
    misleading_ratio,
)

ROOT = Path(__file__).resolve().parents[3]


def test_same_seed_same_schedule_and_another_seed_another() -> None:
    assert make_schedule(seed=4) == make_schedule(seed=4)
    assert schedule_csv(make_schedule(seed=4)) == schedule_csv(make_schedule(seed=4))
    assert make_schedule(seed=4) != make_schedule(seed=5)


def test_variants_share_jobs_and_times_and_differ_only_in_cpu_requests() -> None:
    under, flat, honest = (make_schedule(seed=2, variant=v) for v in ("under", "flat", "honest"))
    assert [(j.job, j.template, j.submit_s, j.units) for j in under] == [
        (j.job, j.template, j.submit_s, j.units) for j in honest] == [
        (j.job, j.template, j.submit_s, j.units) for j in flat]
    for u, f, h in zip(under, flat, honest, strict=True):
        assert u.cpu_request_m == max(10, round(u.cpu_use_m * REQUEST_RATIO))
        assert f.cpu_request_m == FLAT_REQUEST_M
        assert h.cpu_request_m == min(h.cpu_use_m, HONEST_CAP_M)
    # flat: the request no longer orders jobs by what they use (a cpu job asks what an io job asks)
    assert {f.kind for f in flat} >= {"cpu", "io"}


def test_straggler_regime_submits_within_30_s_and_jobs_are_longer() -> None:
    drs, strag = make_schedule(seed=1, jobs=20), make_schedule(seed=1, jobs=20, regime="straggler", scale=1.0)
    assert max(j.submit_s for j in strag) <= 31
    assert all(j.units == round(TEMPLATES[j.template].units * 2.5) for j in strag)
    assert max(j.submit_s for j in drs) > 31


def test_schedule_file_round_trips() -> None:
    jobs = make_schedule(seed=9, jobs=6)
    assert parse_schedule(schedule_csv(jobs), path="s.csv") == jobs


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda lines: ["job,kind"] + lines[1:], "s.csv:1: header"),
    (lambda lines: lines[:2] + [lines[2].replace(",cpu", ",cpu,extra", 1)], "s.csv:3: expected"),
    (lambda lines: lines[:2] + [lines[2].split(",", 4)[0] + ",cpu-s,cpu,soon," + lines[2].split(",", 4)[4]],
     "s.csv:3: field 'submit_s'"),
    (lambda lines: lines[:2] + [lines[2].replace(lines[2].split(",")[1], "gpu-x", 1)], "s.csv:3: field 'template'"),
    (lambda lines: lines[:2] + [lines[1]], "s.csv:3: field 'job'"),
    (lambda lines: lines[:1], "s.csv: no jobs"),
])
def test_bad_schedule_file_names_file_line_and_field(mutate, where) -> None:
    lines = schedule_csv(make_schedule(seed=3, jobs=3)).splitlines()
    with pytest.raises(ScheduleError, match=where.replace(".", r"\.")):
        parse_schedule("\n".join(mutate(lines)) + "\n", path="s.csv")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ScheduleError, match="regime"):
        make_schedule(seed=1, regime="fast")
    with pytest.raises(ScheduleError, match="variant"):
        make_schedule(seed=1, variant="lying")
    assert COLUMNS[0] == "job"


def test_fraction_shape_draws_the_same_jobs_capped_below_a_core() -> None:
    core, frac = make_schedule(seed=6, jobs=30), make_schedule(seed=6, jobs=30, shape="fraction")
    assert [(j.job, j.kind, j.submit_s) for j in core] == [(j.job, j.kind, j.submit_s) for j in frac]
    for c, f in zip(core, frac, strict=True):
        assert (c.template == f.template) == (c.kind in ("io", "net"))
        if f.kind in ("cpu", "train"):
            assert f.cpu_use_m < 1000 and any(a.startswith("--cores=0.") for a in f.argv())
            assert f.units * 1000 // f.cpu_use_m == pytest.approx(c.units, rel=0.35)  # about as long alone
    with pytest.raises(ScheduleError, match="shape 'huge'"):
        make_schedule(seed=1, shape="huge")


# ---- jobs scaled with the nodes the cluster really got (host isolation) ---------------------------------------

ISOLATED = tuple(dataclasses.replace(s, cpu_millis=s.cpu_millis * 2 // 5) for s in REAL_NODES)  # 100/200/200/400


@pytest.mark.parametrize("shape", ["core", "fraction", "small"])
@pytest.mark.parametrize("variant", ["under", "flat", "honest", "misleading"])
def test_jobs_on_scaled_nodes_keep_their_share_of_every_node(shape: str, variant: str) -> None:
    full = make_schedule(seed=3, jobs=20, variant=variant, shape=shape)
    small = make_schedule(seed=3, jobs=20, variant=variant, shape=shape, shapes=ISOLATED)
    assert [(j.template, j.submit_s) for j in small] == [(j.template, j.submit_s) for j in full]
    for a, b in zip(full, small, strict=True):
        if a.kind in ("cpu", "train"):
            assert b.cpu_use_m == a.cpu_use_m * 2 // 5
            assert b.units == round(a.units * 0.4)  # the work follows the speed: the same time alone
            assert f"--cores={b.cpu_use_m / 1000:g}" in b.argv()
        else:
            assert b.units == a.units and b.cpu_use_m == 40  # paced by bandwidth: same work, smaller request
        for big_node, node in zip(REAL_NODES, ISOLATED, strict=True):  # who fits where is unchanged
            assert (a.cpu_request_m <= big_node.cpu_millis) == (b.cpu_request_m <= node.cpu_millis), (a, b, node)


def test_the_described_world_is_unchanged_by_the_scaling_code() -> None:
    jobs = make_schedule(seed=5, jobs=30, shape="fraction", variant="honest")
    assert make_schedule(seed=5, jobs=30, shape="fraction", variant="honest", shapes=REAL_NODES) == jobs
    for job in jobs:
        assert job.argv()[3:] == list(TEMPLATES[job.template].args)  # the solo cache keys stay valid


def test_a_job_that_no_longer_fits_its_smallest_node_is_refused() -> None:
    job = make_schedule(seed=1, jobs=1, variant="under")[0]  # unscaled: asks for 200 m or 20 m
    big = dataclasses.replace(job, template="cpu-s", kind="cpu", cpu_request_m=200)
    check_fit([big], REAL_NODES, variant="under")  # 200 m on the 250 m node: fits
    with pytest.raises(ScheduleError, match=r"j000 \(cpu-s\) asks for 200 m cpu, more than node rn-small has"):
        check_fit([big], ISOLATED, variant="under")


# ---- worlds: the drs world draws what it always drew, the multi-resource world its own mix ---------------------

RESULTS = ROOT / "results" / "lab"
COMMITTED = [  # (schedule file, how it was drawn): the landed runs' schedules, which results depend on
    ("aa-pilot-2026-12-02/schedule-drs-under-201.csv", dict(seed=201, jobs=48, window_s=240.0, scale=1.0), ISOLATED),
    ("aa-pilot-2026-12-02/schedule-drs-under-203.csv", dict(seed=203, jobs=48, window_s=240.0, scale=1.0), ISOLATED),
    ("straggler-2026-12-01/schedule-straggler-under-4.csv", dict(seed=4, jobs=12, regime="straggler", scale=0.2),
     REAL_NODES),
]


@pytest.mark.parametrize("world", [None, WORLDS["drs"]])
@pytest.mark.parametrize(("name", "drawn", "shapes"), COMMITTED)
def test_the_drs_world_draws_exactly_the_committed_schedules(name, drawn, shapes, world) -> None:
    chosen = {} if world is None else {"world": world}
    made = make_schedule(**drawn, shapes=shapes, **chosen)
    assert schedule_csv(made) == (RESULTS / name).read_text()


def test_the_multi_resource_world_draws_its_own_mix_and_pulling_net_jobs() -> None:
    world = WORLDS["multi-resource"]
    jobs = make_schedule(seed=11, jobs=400, world=world)
    kinds = Counter(j.kind for j in jobs)
    assert set(kinds) == {kind for kind, _ in world.mix}
    for kind, weight in world.mix:  # 400 draws: each share within 0.07 of its weight (about 3 sd)
        assert abs(kinds[kind] / len(jobs) - weight) < 0.07, (kind, kinds)
    assert {j.template for j in jobs if j.kind == "net"} == {"net-p"}
    assert {j.template for j in jobs if j.kind == "cpu"} == {"cpu-s", "cpu-l"}  # the shape's, not overridden
    assert uses_source(jobs) and not uses_source(make_schedule(seed=11, jobs=400))
    net = next(j for j in jobs if j.kind == "net")
    assert f"--source-env={SOURCE_ENV}" in net.argv() and "--bandwidth=4" in net.argv()
    drs = make_schedule(seed=11, jobs=400)  # the same seed in the other world: its own mix
    assert Counter(j.kind for j in drs)["net"] < kinds["net"] and "io" in kinds


def test_a_multi_resource_schedule_follows_its_nodes_scaled_like_the_drs_world() -> None:
    world = WORLDS["multi-resource"]
    small = tuple(dataclasses.replace(s, cpu_millis=s.cpu_millis * 2 // 5) for s in world.nodes)
    full, scaled = make_schedule(seed=5, jobs=30, world=world), make_schedule(seed=5, jobs=30, world=world,
                                                                              shapes=small)
    assert [j.template for j in full] == [j.template for j in scaled]
    assert all(b.units == a.units for a, b in zip(full, scaled, strict=True) if a.kind == "net")


def test_a_misleading_schedule_asks_one_request_per_workload_from_its_seed_s_ratio() -> None:
    small = make_schedule(seed=4, jobs=60, variant="misleading", shape="small")
    assert [(j.template, j.submit_s, j.units) for j in small] == [
        (j.template, j.submit_s, j.units) for j in make_schedule(seed=4, jobs=60, variant="under", shape="small")]
    asked: dict[str, set[int]] = {}
    for j in small:
        asked.setdefault(j.template, set()).add(j.cpu_request_m)
        ratio = misleading_ratio(4, j.template)
        asks = math.ceil(j.cpu_use_m * MISLEADING_LEVEL / ratio)
        assert j.cpu_request_m == max(10, min(MISLEADING_MAX_REQUEST_M, asks))
        assert j.cpu_use_m <= min(s.cpu_millis for s in REAL_NODES)  # every job fits the smallest node
    assert all(len(r) == 1 for r in asked.values()) and len(asked) >= 4
    # another seed, other ratios: the workloads that over-ask are not the same every seed
    assert any(misleading_ratio(4, t) != misleading_ratio(5, t) for t in asked)
    # what the request says ranks jobs unlike what they use: some heavier job asks for less than a lighter one
    pairs = {(j.cpu_use_m, j.cpu_request_m) for j in small}
    assert any(a[0] < b[0] and a[1] > b[1] for a, b in itertools.permutations(pairs, 2))


def test_a_seeded_straggler_cuts_one_node_2_to_4x_permanent_or_transient_the_same_in_every_arm() -> None:
    from lab.schedule import draw_straggler

    drawn = [draw_straggler(seed, REAL_NODES, at_s=20.0) for seed in range(400)]
    assert draw_straggler(7, REAL_NODES, at_s=20.0) == draw_straggler(7, REAL_NODES, at_s=20.0)
    quota = {s.name: s.cpu_millis for s in REAL_NODES}
    assert {d.node for d in drawn} == set(quota)  # any node, seed-chosen
    for d in drawn:
        assert d.at_s == 20.0 and quota[d.node] / 4 - 1 <= d.quota_m <= quota[d.node] / 2 + 1
        assert d.restore_s is None or 50.0 <= d.restore_s <= 110.0
    transient = sum(d.restore_s is not None for d in drawn)
    assert 150 < transient < 250  # about half
    # on isolated (smaller) nodes the same seed degrades the same node by the same factor
    small = draw_straggler(7, ISOLATED, at_s=20.0)
    big = draw_straggler(7, REAL_NODES, at_s=20.0)
    assert (small.node, small.restore_s) == (big.node, big.restore_s)
    assert small.quota_m == pytest.approx(big.quota_m * 0.4, abs=1)


def test_a_plan_s_straggler_is_its_named_node_or_the_seed_s_draw(tmp_path) -> None:
    from lab.plan import Plan
    from lab.schedule import SEEDED, Straggler, draw_straggler

    named = Plan(out=tmp_path, seeds=[1], arms=["model"], regime="straggler")
    assert named.straggler(5, REAL_NODES) == Straggler("rn-large", 20.0, 200, None)
    seeded = Plan(out=tmp_path, seeds=[1], arms=["model"], regime="straggler", straggler_node=SEEDED)
    assert seeded.straggler(5, REAL_NODES) == draw_straggler(5, REAL_NODES, at_s=20.0)


def test_a_plan_draws_by_the_rule_it_names() -> None:
    from lab.plan import Plan
    from lab.schedule import draw_straggler

    plan = Plan(out=Path("x"), seeds=[1], arms=["model"], regime="straggler", straggler_node="seed-loaded")
    got = plan.straggler(5, ISOLATED)
    assert got == draw_straggler(5, ISOLATED, at_s=20.0, rule="seed-loaded") != draw_straggler(5, ISOLATED, at_s=20.0)
    assert got.node != "rn-small"


def test_the_loaded_rule_s_transient_cuts_outlast_a_move_by_the_lab_s_controller_twice_over() -> None:
    """``policy.straggler.break_even_s`` with the controller as the lab runs it (``lab.kube.MIGRATION_ARGS``), the
    pilot's slowest stop-to-restart (10.8 s, results/lab/straggler-pilot-2026-12-07/summary.md), the jobs'
    checkpoint every 5 s and about 2 s for the jobs' smoothed rate to show a cut; the pilot's own transient cuts
    (41-50 s) were hardly past it."""
    from lab.kube import MIGRATION_ARGS
    from policy.straggler import RULES, break_even_s

    args = dict(a.removeprefix("--").split("=", 1) for a in MIGRATION_ARGS)
    rule = RULES["seed-loaded"]
    worst = break_even_s(check_s=float(args["interval-s"]), slow_checks=int(args["slow-checks"]), rate_lag_s=2.0,
                         restart_s=10.8, checkpoint_s=5.0, cut=rule.cut[0])
    assert 30.0 < worst < 40.0
    assert rule.restore_after_s[0] >= 2 * worst
