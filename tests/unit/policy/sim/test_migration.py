"""Migration in the simulator: checkpoints, lost work, restore pauses, the hook, and the excess identity."""

import math

import numpy as np
import pytest

from policy.baselines import make_scorer
from policy.migrate import Budget, MigrationController, MigrationIntent, RuleParams
from policy.sim import JobSpec, NodeFailure, Nodes, SimConfig, Simulator, Straggler, first_feasible, run
from policy.sim.checkpoint import checkpointed

NODE = (1.0, 8.0, 100.0, 100.0)


def nodes(n):
    return Nodes(tuple(f"n{i}" for i in range(n)), ("t",) * n, np.array([NODE] * n), np.full(n, 110.0))


def job(work=100.0, submit=0.0):
    return JobSpec("cpu", work, (0.1, 0.1), (1.0, 0.5, 0.0, 0.0), submit=submit)


@pytest.mark.parametrize("done,interval,expected", [
    (0.0, 30.0, 0.0), (29.9, 30.0, 0.0), (30.0, 30.0, 30.0), (75.0, 30.0, 60.0), (75.0, None, 0.0), (75.0, 0, 0.0),
])
def test_checkpointed(done, interval, expected):
    assert checkpointed(done, interval) == pytest.approx(expected)


class Scripted:
    """A controller that moves the named job to the named node at its first check at or after ``at``."""

    def __init__(self, moves):
        self.moves = moves

    def reset(self):
        self.pending = list(self.moves)
        self.seen = []

    def check(self, snap, jobs, budget_state):
        self.seen.append((snap.now, {j.job_id: j for j in jobs}, budget_state))
        out = []
        for at, job_id, target in list(self.pending):
            if snap.now >= at and any(j.job_id == job_id for j in jobs):
                src = next(j.node for j in jobs if j.job_id == job_id)
                out.append(MigrationIntent(job_id, src, target, (), "scripted", 0, 0, 0, 0, 0, 1))
                self.pending.remove((at, job_id, target))
        return out


def place_on(index):
    return lambda snap, pod, mask: index if mask[index] else int(mask.argmax())


@pytest.mark.parametrize("interval,restore,finish,lost", [
    (None, 0.0, 140.0, 40.0),   # no checkpoints: the move at t=40 loses all 40 s of work
    (0.0, 5.0, 145.0, 40.0),    # 0 = none too, plus 5 s restore
    (30.0, 5.0, 115.0, 10.0),   # checkpoint at 30: 10 s lost, 5 s restore
    (20.0, 0.0, 100.0, 0.0),    # the move falls on a checkpoint: nothing lost
])
def test_a_move_loses_the_work_since_the_checkpoint_and_pays_the_restore(interval, restore, finish, lost):
    ctl = Scripted([(40.0, "cpu-0", "n1")])
    sim = Simulator(SimConfig(checkpoint_interval=interval, restore_cost=restore, migration_interval=10.0),
                    seed=0, nodes=nodes(2), jobs=[job()], controller=ctl)
    result = run(sim, place_on(0))
    assert result.jct.tolist() == pytest.approx([finish])
    assert (result.migrations, result.lost_work) == (1, pytest.approx(lost))
    assert result.excess_integral == pytest.approx(float((result.slowdown - 1).sum()))


def test_the_reporter_view_is_smoothed_and_restarts_with_the_process():
    ctl = Scripted([(40.0, "cpu-0", "n1")])
    events = (Straggler(0, 20.0, 1000.0, 0.5),)
    sim = Simulator(SimConfig(checkpoint_interval=30.0, restore_cost=5.0, events=events), seed=0,
                    nodes=nodes(2), jobs=[job()], controller=ctl)
    run(sim, place_on(0))
    views = {t: seen["cpu-0"] for t, seen, _ in ctl.seen if "cpu-0" in seen}
    assert views[10.0].rate is None and views[20.0].rate == pytest.approx(0.01)
    assert views[30.0].rate == pytest.approx(0.5 * 0.005 + 0.5 * 0.01)   # half speed since 20, smoothed
    assert views[30.0].progress == pytest.approx(0.25) and views[30.0].checkpoint_progress == pytest.approx(0.0)
    assert views[40.0].checkpoint_progress == pytest.approx(0.3) and views[40.0].node == "n0"
    # restored on n1 at 45: a new process, whose rate is unknown at its first report
    assert views[50.0].rate is None and views[50.0].node == "n1" and views[50.0].running_for == pytest.approx(5.0)
    assert views[50.0].progress == pytest.approx(0.35) and views[60.0].rate == pytest.approx(0.01)
    in_flight = [b.in_flight for t, _, b in ctl.seen if t == 50.0]
    assert in_flight == [{}]   # restored at 45, so no longer in flight at 50


def test_rollback_when_every_target_is_full():
    tiny = Nodes(("n0", "n1"), ("t", "t"), np.array([NODE, NODE]), np.array([110.0, 1.0]))
    ctl = Scripted([(20.0, "cpu-0", "n1")])
    jobs = [job(), job(work=500.0)]
    sim = Simulator(SimConfig(), seed=0, nodes=tiny, jobs=jobs, controller=ctl)
    result = run(sim, lambda s, p, m: 0 if p.name == "cpu-0" else 1)
    assert (result.migrations, sim.migrator.rollbacks) == (0, 1) and result.finished == 2


def test_never_two_copies_and_work_conserved_under_the_real_rule(completion_spy):
    seen = completion_spy
    events = tuple(Straggler(i, 50.0 * i, 600.0, 0.25) for i in range(3))
    cfg = SimConfig(cluster="standard:6", load=0.8, n_jobs=60, work_scale=4.0, checkpoint_interval=30.0,
                    restore_cost=10.0, events=events)
    ctl = MigrationController(make_scorer("demand-aware"), RuleParams(), Budget())
    sim = Simulator(cfg, seed=3, controller=ctl)
    while (p := sim.next_decision()) is not None:
        f = sim.fleet
        placed = [j for js in f.on_node for j in js] + [j for r in f.restoring for j in r]
        assert len(placed) == len(set(placed)) == f.running
        assert all(f.node[j] >= 0 for j in placed)
        sim.place(first_feasible(sim.snapshot(), p.pod, sim.feasible_mask()))
    result = sim.result()
    assert result.migrations > 0 and result.finished == 60
    assert len(seen) == 60 and max(abs(r) for r in seen) < 1e-9   # every job, lost work included, done once
    assert result.excess_integral == pytest.approx(float((result.slowdown - 1).sum()), rel=1e-9)
    assert ctl.outcomes["allowed"] >= result.migrations


def test_no_stragglers_means_almost_no_migrations():
    # With a load-aware placement there is little to fix without stragglers (first-feasible packing, by
    # contrast, is legitimately rebalanced by migration).
    cfg = SimConfig(cluster="standard:8", load=0.8, n_jobs=100, work_scale=5.0, checkpoint_interval=30.0,
                    restore_cost=10.0)
    scorer = make_scorer("demand-aware")
    ctl = MigrationController(scorer)
    result = run(Simulator(cfg, seed=5, controller=ctl),
                 lambda snap, pod, mask: int(np.flatnonzero(mask)[np.argmax(scorer.score(snap, pod)[mask])]))
    assert result.migrations <= 0.05 * result.n_jobs


def test_node_failure_restarts_from_the_checkpoint_and_pays_the_restore():
    cfg = SimConfig(checkpoint_interval=30.0, restore_cost=5.0, events=(NodeFailure(0, at=40.0),))
    sim = Simulator(cfg, seed=0, nodes=nodes(2), jobs=[job()])
    result = run(sim, first_feasible)
    # 40 s done, checkpoint at 30: 10 lost; placed on n1 at 40, restores until 45, 70 s left -> 115
    assert result.jct.tolist() == pytest.approx([115.0])
    assert (result.restarts, result.lost_work) == (1, pytest.approx(10.0))
    assert result.excess_integral == pytest.approx(0.15)


def test_failure_of_the_node_a_job_is_restoring_on():
    ctl = Scripted([(40.0, "cpu-0", "n1")])
    cfg = SimConfig(checkpoint_interval=30.0, restore_cost=5.0, events=(NodeFailure(1, at=42.0),))
    sim = Simulator(cfg, seed=0, nodes=nodes(3), jobs=[job()], controller=ctl)
    result = run(sim, place_on(0))
    # moved at 40 (10 lost), n1 fails at 42 mid-restore; back on n0 at 42, restores to 47, 70 s -> 117
    assert result.jct.tolist() == pytest.approx([117.0]) and result.restarts == 1
    assert result.excess_integral == pytest.approx(float((result.slowdown - 1).sum()))


def test_config_fields_are_validated():
    from policy.sim import ConfigError

    for kw in (dict(restore_cost=-1), dict(restore_cost=math.inf), dict(checkpoint_interval=-5),
               dict(migration_interval=0), dict(work_scale=0)):
        with pytest.raises(ConfigError):
            SimConfig(**kw)


def test_the_migrator_returns_moves_and_leaves_the_fleet_alone():
    from policy.sim.fleet import Fleet
    from policy.sim.migration import Migrator, Move

    sim = Simulator(SimConfig(), seed=0, nodes=nodes(2), jobs=[job(), job()])  # for jobs with profiles
    fleet = Fleet(sim.nodes, sim.jobs, 30.0)
    fleet.add(0, 0, 0.0, [])
    fleet.add(1, 0, 0.0, [])
    ctl = Scripted([(0.0, "cpu-0", "n1")])
    m = Migrator(ctl, sim.jobs, fleet, ("n0", "n1"), checkpoint_interval=30.0, restore_cost=5.0)
    snap = sim.snapshot()
    before = (list(map(list, fleet.on_node)), list(fleet.node), fleet.requested.copy())
    moves = m.check(40.0, snap, [0.0, 0.0])
    assert moves == [Move(job=0, job_id="cpu-0", source="n0", targets=(1,))]
    assert (list(map(list, fleet.on_node)), list(fleet.node)) == before[:2]
    assert np.array_equal(fleet.requested, before[2]) and m.migrations == 0
    m.applied(moves[0], None, 40.0)
    assert (m.migrations, m.rollbacks) == (0, 1)


class Moving:
    """A controller that asks, once, to move ``job_id`` to ``targets`` (the first the target, the rest fallbacks)."""

    def __init__(self, job_id, *targets):
        self.job_id, self.targets = job_id, targets

    def reset(self):
        self.done = False

    def check(self, snap, jobs, budget_state):
        if self.done or not any(j.job_id == self.job_id for j in jobs):
            return []
        self.done = True
        src = next(j.node for j in jobs if j.job_id == self.job_id)
        return [MigrationIntent(self.job_id, src, self.targets[0], self.targets[1:], "asked", 0, 0, 0, 0, 0, 1)]


@pytest.mark.parametrize("targets,moved", [(("n0",), 0), (("n0", "n1"), 1), (("n1",), 1)])
def test_a_move_never_lands_back_on_the_node_it_left(targets, moved):
    """Issue #21: a restart in place costs the restore and the lost work for nothing; the source is skipped
    wherever it stands among the targets, and a move with no other target is rolled back (the job stays)."""
    sim = Simulator(SimConfig(checkpoint_interval=30.0, restore_cost=5.0), seed=0, nodes=nodes(2), jobs=[job()],
                    controller=Moving("cpu-0", *targets))
    result = run(sim, place_on(0))
    assert (result.migrations, sim.migrator.rollbacks) == (moved, 1 - moved)
    assert result.finished == 1


class Tainting:
    """A controller that taints ``names`` from its first check on and moves nothing (as the taint baseline)."""

    def __init__(self, *names):
        self.names = names

    def reset(self):
        self.tainted = frozenset()

    def check(self, snap, jobs, budget_state):
        self.tainted = frozenset(self.names)
        return []


def test_a_tainted_node_takes_no_new_pod_and_keeps_its_running_ones():
    two = Nodes(("n0", "n1"), ("a", "b"), np.array([NODE, NODE]), np.full(2, 110.0))
    jobs = [job(work=50.0), job(work=10.0, submit=15.0), job(work=10.0, submit=30.0)]
    sim = Simulator(SimConfig(migration_interval=10.0), seed=0, nodes=two, jobs=jobs, controller=Tainting("n0"))
    seen = []

    def choose(snap, pod, mask):
        seen.append((snap.now, bool(snap.ready[0]), bool(mask[0])))
        return place_on(0)(snap, pod, mask)

    result = run(sim, choose)
    # the first job was placed before the first check and ran to its end there; the later ones went to n1
    assert [t for _, t in result.placements] == ["a", "b", "b"]
    assert seen[1:] == [(15.0, False, False), (30.0, False, False)]
    assert sorted(result.jct.tolist()) == pytest.approx([10.0, 10.0, 50.0])  # each alone on its node
