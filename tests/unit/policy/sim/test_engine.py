"""Engine invariants: speed alone, sharing, accounting, completion, determinism, the excess integral."""

import numpy as np
import pytest

from policy.baselines.koord import Koord
from policy.features import feasible_mask
from policy.sim import (
    ConfigError,
    InfeasiblePlacement,
    JobSpec,
    Nodes,
    NoPendingPod,
    SimConfig,
    Simulator,
    first_feasible,
    run,
)
from policy.sim.episode import scorer_choice
from policy.splits import TEST, seeds


def nodes(*caps, max_pods=110):
    cap = np.array(caps, dtype=float)
    return Nodes(tuple(f"n{i}" for i in range(len(caps))), ("t",) * len(caps), cap, np.full(len(caps), float(max_pods)))


ONE_CORE = (1.0, 8.0, 100.0, 100.0)


def cpu_job(submit, work, cores=1.0, req=(0.1, 0.1)):
    return JobSpec("cpu", work, req, (cores, 0.5, 0.0, 0.0), submit=submit)


def sim_of(jobs, caps=(ONE_CORE,), **cfg):
    return Simulator(SimConfig(**cfg), seed=0, nodes=nodes(*caps), jobs=jobs)


@pytest.mark.parametrize("jobs,finishes", [
    ([cpu_job(0, 10)], [10]),                                   # alone: full speed
    ([cpu_job(0, 10), cpu_job(0, 10)], [20, 20]),               # two 1-core jobs on one core: twice as long
    ([cpu_job(0, 10), cpu_job(5, 10)], [15, 20]),               # overlap 5..15 at half speed
    ([cpu_job(0, 10, cores=2.0)], [20]),                         # wants 2 cores of 1
    ([cpu_job(0, 10), cpu_job(0, 10), cpu_job(0, 10)], [30, 30, 30]),
])
def test_finish_times(jobs, finishes):
    sim = sim_of(jobs)
    result = run(sim, first_feasible)
    assert sorted(result.jct + np.array([jobs[i].submit for i in sim._finished])) == pytest.approx(finishes)
    assert result.excess_integral == pytest.approx(float((result.slowdown - 1).sum()))


def test_alone_slowdown_is_one():
    result = run(sim_of([JobSpec("io", 60.0, (0.5, 0.5), (1.0, 1.0, 0.5, 80.0))], caps=((4, 16, 125, 200),)),
                 first_feasible)
    assert result.slowdown.tolist() == pytest.approx([1.0])
    assert result.excess_integral == pytest.approx(0.0, abs=1e-12)


CONFIGS = [
    dict(cluster="standard:4", load=0.9, n_jobs=150),
    dict(cluster="mixed:8", load=1.5, n_jobs=150, arrival="bursty"),
    dict(cluster="mixed:4-8", load=1.2, n_jobs=150, workload="batch", profile_error=0.3),
    dict(cluster="small:3", load=0.6, n_jobs=100, workload="cpu:1,io:1", sample_interval=2.0),
]


def random_policy(seed):
    rng = np.random.default_rng(seed)
    return lambda snap, pod, mask: int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("cfg", CONFIGS)
def test_accounting_never_above_capacity_and_everything_ends(cfg):
    sim = Simulator(SimConfig(**cfg), seed=3)
    choose = random_policy(0)
    while (p := sim.next_decision()) is not None:
        snap, mask = sim.snapshot(), sim.feasible_mask()
        assert mask.any()
        assert np.all(snap.requested <= snap.capacity[:, :2] + 1e-9)
        assert np.all(sim.fleet.usage <= snap.capacity + 1e-9)
        assert np.all(snap.pods <= snap.max_pods)
        sim.place(choose(snap, p.pod, mask))
    result = sim.result()
    assert result.finished + result.unschedulable == result.n_jobs == cfg["n_jobs"]
    assert result.unfinished == 0
    assert np.all(result.slowdown >= 1 - 1e-9)
    assert result.excess_integral == pytest.approx(float((result.slowdown - 1).sum()), rel=1e-9)


def test_work_is_conserved(completion_spy):
    seen = completion_spy
    run(Simulator(SimConfig(cluster="standard:2", load=1.5, n_jobs=100), seed=1), first_feasible)
    assert len(seen) == 100 and max(abs(r) for r in seen) < 1e-9


@pytest.mark.parametrize("cfg", CONFIGS[:2])
def test_deterministic_by_seed(cfg):
    a = run(Simulator(SimConfig(**cfg), seed=7), random_policy(1))
    b = run(Simulator(SimConfig(**cfg), seed=7), random_policy(1))
    c = run(Simulator(SimConfig(**cfg), seed=8), random_policy(1))
    assert a.jct.tolist() == b.jct.tolist() and a.excess_integral == b.excess_integral
    assert a.jct.tolist() != c.jct.tolist()


def test_reset_replays_the_same_episode():
    sim = Simulator(SimConfig(n_jobs=50), seed=5)
    first = run(sim, first_feasible)
    sim.reset(5)
    assert run(sim, first_feasible).jct.tolist() == first.jct.tolist()


def test_unschedulable_on_arrival_is_reported_not_offered():
    sim = sim_of([cpu_job(0, 10), cpu_job(1, 10, req=(5.0, 0.1))])
    offered = []
    result = run(sim, lambda s, p, m: offered.append(p.name) or 0)
    assert offered == ["cpu-0"]
    assert (result.finished, result.unschedulable) == (1, 1)


def test_pod_that_fits_nowhere_now_waits_for_a_completion():
    jobs = [cpu_job(0, 10, req=(0.8, 0.1)), cpu_job(1, 10, req=(0.8, 0.1))]
    result = run(sim_of(jobs), first_feasible)
    assert sorted(result.jct.tolist()) == pytest.approx([10.0, 19.0])  # second starts at 10, waited 9


def test_deferred_pod_is_retried_after_a_completion():
    jobs = [cpu_job(0, 10), cpu_job(1, 10)]
    sim = sim_of(jobs, caps=(ONE_CORE, ONE_CORE))
    deferred = []

    def choose(snap, pod, mask):
        if pod.name == "cpu-1" and not deferred:
            deferred.append(snap.now)
            return None
        return 1 if pod.name == "cpu-1" else 0

    result = run(sim, choose)
    assert deferred == [1.0] and result.finished == 2
    assert sorted(result.jct.tolist()) == pytest.approx([10.0, 19.0])


def test_always_deferring_stops_at_the_time_limit():
    result = run(sim_of([cpu_job(0, 10)], time_limit=100.0), lambda s, p, m: None)
    assert (result.finished, result.unfinished, result.unschedulable) == (0, 1, 0)


def test_action_errors():
    sim = sim_of([cpu_job(0, 10, req=(0.8, 0.1)), cpu_job(0, 10, req=(0.8, 0.1))], caps=(ONE_CORE, ONE_CORE))
    with pytest.raises(NoPendingPod):
        sim.place(0)
    sim.next_decision()
    sim.place(0)
    sim.next_decision()
    assert sim.feasible_mask().tolist() == [False, True]
    with pytest.raises(InfeasiblePlacement, match="node 0"):
        sim.place(0)
    with pytest.raises(InfeasiblePlacement):
        sim.place(7)
    sim.place(1)


def test_monitor_view_is_stale_and_assumed_covers_the_gap():
    jobs = [JobSpec("cpu", 100.0, (0.5, 0.5), (2.0, 1.0, 1.0, 2.0), submit=1.0, expected=(1.5, 1.0, 1.0, 2.0)),
            JobSpec("cpu", 100.0, (0.5, 0.5), (2.0, 1.0, 1.0, 2.0), submit=12.0)]
    sim = sim_of(jobs, caps=((4, 16, 125, 200),), sample_interval=10.0)
    sim.next_decision()
    sim.place(0)
    snap = sim.snapshot()
    assert snap.usage[0].tolist() == [0, 0, 0, 0] and snap.usage_age[0] == 1.0
    assert snap.assumed[0].tolist() == [1.5, 1.0, 1.0, 2.0]
    sim.next_decision()  # t = 12, after the tick at 10
    snap = sim.snapshot()
    assert snap.usage[0].tolist() == [2.0, 1.0, 1.0, 2.0] and snap.usage_age[0] == pytest.approx(2.0)
    assert snap.assumed[0].tolist() == [0, 0, 0, 0]
    assert snap.requested[0].tolist() == [0.5, 0.5]


def test_metrics_series_are_recorded_at_the_sample_interval():
    result = run(Simulator(SimConfig(cluster="standard:4", n_jobs=80, sample_interval=5.0), seed=2), first_feasible)
    assert np.allclose(np.diff(result.tick_times), 5.0)
    assert result.utilisation.shape == (len(result.tick_times), 4)
    assert np.all((result.utilisation >= 0) & (result.utilisation <= 1 + 1e-9))
    assert result.imbalance > 0 and result.p95_jct >= result.mean_jct * 0.5 and result.makespan > 0


@pytest.mark.parametrize("cfg,field", [
    (dict(arrival="uniform"), "arrival"), (dict(load=0), "load"), (dict(profile="oracle"), "profile"),
    (dict(arrival="trace"), "trace"), (dict(sample_interval=-1), "sample_interval"),
])
def test_config_errors_name_the_field(cfg, field):
    with pytest.raises(ConfigError) as info:
        SimConfig(**cfg)
    assert info.value.field == field


def test_excess_splits_into_queueing_and_contention():
    # One core. Job 0 (req 0.8) runs 0..10 alone; job 1 (req 0.8) arrives at 1, waits 9 s, runs 10..20:
    # slowdowns 1 and 1.9 -> excess 0.45, all of it queueing (9 / 10 over 2 jobs).
    waits = run(sim_of([cpu_job(0, 10, req=(0.8, 0.1)), cpu_job(1, 10, req=(0.8, 0.1))]), first_feasible)
    assert (waits.excess_slowdown, waits.excess_queue, waits.excess_contention) == pytest.approx((0.45, 0.45, 0.0))
    # Two 1-core jobs that both fit share the core: slowdown 2 each, all of it contention.
    shares = run(sim_of([cpu_job(0, 10), cpu_job(0, 10)]), first_feasible)
    assert (shares.excess_queue, shares.excess_contention) == pytest.approx((0.0, 1.0))
    assert shares.summary()["excess_contention"] == pytest.approx(1.0)


def test_choice_share_counts_decisions_with_two_feasible_nodes():
    # Two nodes; the first pod fills n0 by requests (0.8 of 1 core), so the second can only go to n1.
    jobs = [cpu_job(0, 10, req=(0.8, 0.1)), cpu_job(0, 10, req=(0.8, 0.1))]
    result = run(sim_of(jobs, caps=(ONE_CORE, ONE_CORE)), first_feasible)
    assert (result.decisions, result.choices, result.choice_share) == (2, 1, 0.5)
    single = run(sim_of([cpu_job(0, 10)]), first_feasible)
    assert (single.decisions, single.choice_share) == (1, 0.0)


def test_an_idle_cluster_is_still_sampled_so_a_policy_refusing_a_frozen_view_gets_to_place():
    # Job 0's expected demand (0.9 of the core) is assumed on the node until the next sample, at t = 100.
    # Koordinator's filter refuses the node as hot (>= 65 % cpu), so job 1 waits; job 0 finishes at t = 10
    # and nothing else runs or arrives. Only the monitor's next tick (nothing running: usage 0, nothing
    # assumed) lets job 1 in, at t = 100: without ticks while idle it was refused every 10 s until the limit.
    jobs = [JobSpec("cpu", 10.0, (0.1, 0.1), (0.9, 0.5, 0.0, 0.0), submit=0.0),
            cpu_job(1, 10)]
    koord = scorer_choice(Koord(), np.random.default_rng(0))
    result = run(sim_of(jobs, sample_interval=100.0, time_limit=1000.0), koord)
    assert result.finished == 2
    assert sorted(result.jct.tolist()) == pytest.approx([10.0, 109.0])


def test_koord_finishes_the_very_stale_family():
    # 200 pods, usage sampled every 150 s: it once went on refusing an idle cluster for ~1e7 simulated seconds
    cfg = SimConfig(load=1.3, n_jobs=200, **TEST["very-stale"].config)
    koord = scorer_choice(Koord(), np.random.default_rng(0))
    decisions = []

    def choose(snap, pod, mask):
        decisions.append(1)
        assert len(decisions) < 50_000, f"no end in sight at t = {snap.now:.0f} s"
        return koord(snap, pod, mask)

    result = run(Simulator(cfg, seed=seeds("test", 1)[0]), choose)
    assert (result.finished, result.unfinished, result.unschedulable) == (200, 0, 0)


# ---- the multi-resource world's links: a net job is as fast as its node's link lets it --------------------

def _pulling_net_jobs(n):
    from policy.labworld import TEMPLATES, WORLDS
    from policy.sim.labmix import demand, work

    t = TEMPLATES["net-p"]
    return [JobSpec("net", work(t, WORLDS["multi-resource"].scale), (0.02, 0.1), demand(t)) for _ in range(n)]


@pytest.mark.parametrize("node,jobs,jct", [
    ("mr-small", 1, 15.0),                       # 10 MB/s link: the job runs at its own 4 MiB/s cap
    ("mr-small", 2, 15.0),                       # two caps (8.4 MB/s) still fit the link
    ("mr-medium", 1, 15.0 * 4 * 1.048576 / 2.5),  # 2.5 MB/s link: 25.2 s
    ("mr-medium", 2, 30.0 * 4 * 1.048576 / 2.5),  # two share it: each at half, 50.3 s
    ("mr-large", 1, 15.0 * 4 * 1.048576 / 1.25),  # the most CPU, the slowest link (1.25 MB/s): 50.3 s
    ("mr-large", 3, 45.0 * 4 * 1.048576 / 1.25),
    ("rn-large", 1, 15.0),                       # the DRS world's node: its link never limits a net job
])
def test_a_pulling_net_job_is_as_fast_as_its_nodes_link_and_shares_it(node, jobs, jct):
    from policy.sim.calibration import shipped
    from policy.sim.cluster import parse_cluster

    sim = Simulator(SimConfig(contention=shipped("fitted-lab")), seed=0,
                    nodes=parse_cluster(f"{node}:1", np.random.default_rng(0)), jobs=_pulling_net_jobs(jobs))
    result = run(sim, first_feasible)
    assert result.jct.tolist() == pytest.approx([jct] * jobs, rel=1e-6)


def test_net_shown_changes_what_the_scheduler_sees_not_how_fast_jobs_run():
    from policy.sim.calibration import shipped
    from policy.sim.cluster import parse_cluster

    shown = []

    def spy(snap, pod, mask):
        shown.append(snap.capacity[:, 2].tolist())
        return first_feasible(snap, pod, mask)

    for net_shown, seen in ((None, 2.5), (1250.0, 1250.0)):
        shown.clear()
        sim = Simulator(SimConfig(contention=shipped("fitted-lab"), net_shown=net_shown), seed=0,
                        nodes=parse_cluster("mr-medium:1", np.random.default_rng(0)), jobs=_pulling_net_jobs(1))
        result = run(sim, spy)
        assert shown == [[seen]]
        assert result.jct.tolist() == pytest.approx([15.0 * 4 * 1.048576 / 2.5])  # the link limits it either way
        assert result.utilisation[:, 2].max() == pytest.approx(1.0)  # measured against the node's own link
    with pytest.raises(ConfigError, match="net_shown"):
        SimConfig(net_shown=0.0)


# ---- tenants: pods pinned outside the policy (the lab's tenants scenario) -----------------------------------


def test_tenants_are_pinned_before_the_first_decision_show_their_requests_and_use_and_count_in_no_metric():
    from policy.sim.cluster import LAB_CLUSTER

    cfg = SimConfig(cluster=LAB_CLUSTER, workload="lab-under-small", tenants=2, load=0.8, n_jobs=30)
    sim = Simulator(cfg, seed=3)
    assert len(sim.tenants) == 2 and len({t.node for t in sim.tenants}) == 2
    assert sim.next_decision() is not None
    snap = sim.snapshot()
    for t in sim.tenants:  # a policy sees the small request, a pod, and the use through the usage signal only
        assert snap.requested[t.node, 0] == pytest.approx(t.request_m / 1000)
        assert snap.pods[t.node] == 1
        assert snap.usage[t.node, 0] == pytest.approx(t.use_m(sim._sampled_at + 1e-6) / 1000)
        assert snap.usage[t.node, 0] > 2 * snap.requested[t.node, 0]
    others = [i for i in range(4) if i not in {t.node for t in sim.tenants}]
    assert all(snap.usage[i, 0] == 0 and snap.requested[i, 0] == 0 for i in others)
    while sim.next_decision() is not None:
        sim.place(int(np.flatnonzero(sim.feasible_mask())[0]))
    r = sim.result()
    assert r.n_jobs == r.finished == 30 and len(r.jct) == 30  # the tenants are no job
    assert sim.fleet.running == 0 and all(sim.fleet.pods[t.node] == 1 for t in sim.tenants)  # held to the end


def test_a_tenant_changes_its_use_at_its_cycle_s_edges_and_slows_the_jobs_beside_it(monkeypatch):
    from policy.sim import engine
    from policy.tenants import Tenant

    tenant = Tenant(node=0, request_m=50, high_m=900, low_m=100, period_s=40.0, high_s=20.0, phase_s=0.0)
    monkeypatch.setattr(engine, "draw_tenants", lambda seed, cpu_m, count: (tenant,))  # one known tenant
    sim = sim_of([cpu_job(0, 30)], tenants=1)
    assert sim.next_decision() is not None
    assert sim.snapshot().requested[0, 0] == pytest.approx(0.05) and sim.snapshot().usage[0, 0] == pytest.approx(0.9)
    sim.place(0)
    assert sim.fleet.rate[0] == pytest.approx(0.5)  # equal cores (the active sharing rule): half a core each
    while sim.next_decision() is not None:
        pass
    # 20 s at half speed (10 s of work), 20 s at 0.9 while the tenant is at 100 m (18 s), then busy again at 40 s:
    # the last 2 s of work at half speed
    assert sim.result().jct[0] == pytest.approx(20 + 20 + 2 / 0.5)


def test_an_episode_without_tenants_draws_what_it_always_drew():
    base = dict(cluster="rn-small:1,rn-medium:1,rn-medium-mem:1,rn-large:1", workload="lab-under-small", n_jobs=20)
    plain = Simulator(SimConfig(**base), seed=4)
    with_tenants = Simulator(SimConfig(**base, tenants=2), seed=4)
    assert [(j.submit, j.work, j.requests) for j in plain.jobs] == [
        (j.submit, j.work, j.requests) for j in with_tenants.jobs]
    assert plain.tenants == ()


def test_more_tenants_than_nodes_is_a_config_error():
    with pytest.raises(ConfigError, match="tenants"):
        Simulator(SimConfig(cluster="standard:2", tenants=3), seed=1)
    with pytest.raises(ConfigError, match="tenants"):
        SimConfig(tenants=-1)


def _lab_sim(jobs, cluster):
    return Simulator(SimConfig(cluster=cluster, profile="class"), seed=0, jobs=jobs)


def test_the_lab_s_nodes_start_holding_the_daemonset_pod_s_requests_and_filter_by_them():
    # rn-small as the lab ran it: 100 m allocatable, 20 m and 48 Mi of it requested by the monitor DaemonSet pod, so
    # one 80 m compute job fills it and a 10 m net pod no longer fits beside it (it would on the bare node).
    compute = JobSpec("cpu", 13.0, (0.08, 0.0625), (0.4, 0.0625, 0.0, 0.0), submit=0.0)
    net = JobSpec("net", 15.0, (0.01, 0.09375), (0.04, 0.09375, 4.19, 0.0), submit=1.0)
    for cluster, fits in (("mr-lab-small:1,mr-lab-large:1", False), ("mr-iso-small:1,mr-iso-large:1", True)):
        sim = _lab_sim([compute, net], cluster)
        snap = sim.snapshot()
        daemons = cluster.startswith("mr-lab")
        assert snap.requested[0].tolist() == pytest.approx([0.02, 48 / 1024] if daemons else [0.0, 0.0])
        assert snap.pods.tolist() == ([1.0, 1.0] if daemons else [0.0, 0.0])
        assert sim.next_decision().job_id == 0
        sim.place(0)  # the compute job fills the small node by requests (exactly, with the DaemonSet pod)
        pending = sim.next_decision()
        assert pending.job_id == 1
        assert bool(feasible_mask(sim.snapshot(), pending.pod)[0]) is fits, cluster
        sim.place(1)
        result = run(sim, first_feasible)
        assert result.finished == 2
        # an empty node is back to exactly what its DaemonSet pod requests
        assert sim.fleet.requested.ravel().tolist() == pytest.approx([0.02, 48 / 1024] * 2 if daemons else [0] * 4)
        assert sim.fleet.free_cpu[0] == pytest.approx(0.1 - (0.02 if daemons else 0.0) + 1e-9)


def test_the_daemonset_pod_uses_nothing_and_slows_no_job():
    job = JobSpec("cpu", 13.0, (0.08, 0.0625), (0.4, 0.0625, 0.0, 0.0), submit=0.0)
    jct = {c: run(_lab_sim([job], f"{c}-large:1"), first_feasible).jct.tolist() for c in ("mr-iso", "mr-lab")}
    assert jct["mr-iso"] == jct["mr-lab"] == pytest.approx([13.0])


def test_a_pod_that_fits_only_the_bare_node_is_unschedulable_beside_the_daemonset():
    big = JobSpec("cpu", 5.0, (0.09, 0.0625), (0.09, 0.0625, 0.0, 0.0), submit=0.0)
    assert run(_lab_sim([big], "mr-iso-small:1"), first_feasible).finished == 1
    assert run(_lab_sim([big], "mr-lab-small:1"), first_feasible).unschedulable == 1
