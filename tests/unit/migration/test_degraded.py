"""The taint baseline: the pure decision (``policy.migrate.taint``) as a table, then the cycle over a fake API."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from migration.controller import Controller, CycleConfig
from migration.degraded import TAINT_KEY, tainted_nodes, with_taint
from migration.executor import Executor
from migration.progress import AnnotationSource
from migration.protocol import Timeouts
from migration.snapshot import build_picture
from migration.telemetry import Metrics, Telemetry
from policy.baselines import make_scorer
from policy.migrate import Budget, RuleParams, RunningJob
from policy.migrate.taint import TaintState, decide_taints
from policy.state import PodView

from .fakes import FakeKube, node, pod, progress_doc

NOW = 10_000.0
SLOW, FAST = 0.001, 0.01  # progress/s; expected 0.01 (100 s alone)


def job(name: str, where: str, rate: float | None) -> RunningJob:
    return RunningJob(job_id=f"default/{name}", node=where, progress=0.2, rate=rate, expected_rate=0.01,
                      running_for=100.0, checkpoint_progress=0.2, restore_cost=1.0,
                      pod=PodView.from_requests(0.5, 0.25))


def snap(now: float = NOW):
    return build_picture(nodes=[node("a", cpu="2"), node("b", cpu="16")], pods=[], now=now).snapshot


P = RuleParams(slow_checks=2, min_running=0, blocklist_for=120)


@pytest.mark.parametrize(("jobs", "tainted", "state", "intents"), [
    # a slow job on a: its first degraded check only warms up, the second taints a; b is left alone
    ([job("j", "a", SLOW), job("k", "b", FAST)], set(), TaintState(), []),
    ([job("j", "a", SLOW)], set(), TaintState(streak={"a": 1}), [("a", True)]),
    # a job that is slow but too young to judge, or one not slow at all, says nothing against its node
    ([job("j", "a", None)], set(), TaintState(streak={"a": 1}), []),
    ([job("j", "a", FAST)], set(), TaintState(streak={"a": 1}), []),
    # already tainted and still degraded: nothing to do (and never a second taint)
    ([job("j", "a", SLOW)], {"a"}, TaintState(streak={"a": 5}, last_degraded={"a": NOW - 500}), []),
    # recovered: its job runs fast again; untainted once blocklist_for passed since the last degraded check
    ([job("j", "a", FAST)], {"a"}, TaintState(last_degraded={"a": NOW - 121}), [("a", False)]),
    ([job("j", "a", FAST)], {"a"}, TaintState(last_degraded={"a": NOW - 60}), []),
    # nobody left there to judge it: let new pods probe it after blocklist_for
    ([], {"a"}, TaintState(last_degraded={"a": NOW - 121}), [("a", False)]),
    # a taint found after a restart (no memory of it): kept for blocklist_for from now
    ([], {"a"}, TaintState(), []),
], ids=["warming", "tainted", "too-young", "not-slow", "still-degraded", "recovered", "recovering", "probe",
        "restart"])
def test_decide_taints(jobs, tainted, state, intents):
    result = decide_taints(jobs, snap(), P, state, tainted)
    assert [(i.node, i.taint) for i in result.intents] == intents


def test_a_streak_broken_by_one_good_check_starts_again():
    state = decide_taints([job("j", "a", SLOW)], snap(), P, TaintState(), set()).state
    state = decide_taints([job("j", "a", FAST)], snap(NOW + 10), P, state, set()).state
    result = decide_taints([job("j", "a", SLOW)], snap(NOW + 20), P, state, set())
    assert result.intents == () and result.state.streak == {"a": 1}


def test_the_restart_memory_then_untaints_after_blocklist_for():
    state = decide_taints([], snap(), P, TaintState(), {"a"}).state
    assert [(i.node, i.taint) for i in decide_taints([], snap(NOW + 121), P, state, {"a"}).intents] == [("a", False)]


def test_with_taint_keeps_other_taints_and_adds_once():
    other = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
    on = with_taint([other], on=True)
    assert on == [other, {"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
    assert with_taint(on, on=True) == on and with_taint(on, on=False) == [other]
    assert tainted_nodes([{"metadata": {"name": "a"}, "spec": {"taints": on}}, {"metadata": {"name": "b"}}]) == {"a"}


def _cycle_setup(*, dry_run: bool = False, slow: bool = True):
    kube = FakeKube([node("a", cpu="2"), node("b", cpu="16")],
                    [pod("job", node="a", progress=progress_doc(rate=1.0 if slow else 10.0))])
    tele = Telemetry(Metrics())
    ex = Executor(kube, tele, budget=Budget(cooldown=0, max_fraction=1, dry_run=dry_run), timeouts=Timeouts(),
                  source=AnnotationSource(), grace_period_s=None, identity="t")
    ctl = Controller(kube, ex, tele, scorer=make_scorer("default-k8s"),
                     params=RuleParams(slow_checks=1, min_running=0, blocklist_for=0), source=AnnotationSource(),
                     config=CycleConfig(namespace=None, node_selector={}, stale_after_s=120, restore_cost_s=1,
                                        dry_run=dry_run, mode="taint"))
    return kube, tele, ctl


def _sample(tele: Telemetry, name: str, **labels) -> float:
    return tele.metrics.registry.get_sample_value(name, labels) or 0.0


def test_taint_mode_taints_the_slow_node_moves_nothing_and_untaints_on_recovery():
    kube, tele, ctl = _cycle_setup()
    ctl.cycle()
    assert tainted_nodes(kube.nodes) == {"a"}
    assert not kube.leases and not [c for c in kube.calls if c[0] in ("evict", "create")], "nothing moves"
    assert _sample(tele, "drsched_migration_taints_total", action="added") == 1
    assert _sample(tele, "drsched_migration_tainted_nodes") == 1
    ctl.cycle()
    assert [c for c in kube.calls if c[0] == "taint"] == [("taint", "a")], "tainted once"
    kube.pods[("default", "job")]["metadata"]["annotations"]["drsched.io/progress"] = progress_doc(
        rate=10.0, updated_at=time.time())
    ctl.cycle()
    assert tainted_nodes(kube.nodes) == set() and _sample(tele, "drsched_migration_taints_total", action="removed") == 1


def test_taint_mode_conflict_is_retried_next_cycle():
    kube, tele, ctl = _cycle_setup()
    real = kube.list_nodes
    kube.list_nodes = lambda: [{**n, "metadata": {**n["metadata"], "resourceVersion": "stale"}} for n in real()]
    ctl.cycle()
    assert tainted_nodes(kube.nodes) == set() and _sample(tele, "drsched_migration_errors_total", kind="temporary") == 1
    kube.list_nodes = real
    ctl.cycle()
    assert tainted_nodes(kube.nodes) == {"a"}


def test_taint_mode_dry_run_and_clear_on_stop():
    kube, tele, ctl = _cycle_setup(dry_run=True)
    ctl.cycle()
    assert tainted_nodes(kube.nodes) == set() and _sample(tele, "drsched_migration_taints_total", action="dry-run") == 1
    kube, tele, ctl = _cycle_setup()
    ctl.clear_taints()
    assert not [c for c in kube.calls if c[0] == "taint"], "a replica that never acted touches no node"
    ctl.cycle()
    ctl.clear_taints()
    assert tainted_nodes(kube.nodes) == set() and _sample(tele, "drsched_migration_tainted_nodes") == 0


def test_taint_mode_leaves_nodes_outside_the_selector_alone():
    kube, tele, ctl = _cycle_setup(slow=False)
    for n in kube.nodes:
        n["metadata"]["labels"] = {"pool": "batch"}
    kube.nodes.append({**node("other"), "spec": {"taints": with_taint([], on=True)}})
    ctl.config = replace(ctl.config, node_selector={"pool": "batch"})
    ctl.cycle()
    ctl.clear_taints()
    assert tainted_nodes(kube.nodes) == {"other"} and not [c for c in kube.calls if c[0] == "taint"]


def test_an_untaint_that_did_not_happen_is_tried_again_at_once():
    state = TaintState(last_degraded={"a": NOW - 121})
    first = decide_taints([], snap(), P, state, {"a"})
    again = decide_taints([], snap(NOW + 5), P, first.state, {"a"})  # the patch met a Conflict: still tainted
    assert [(i.node, i.taint) for i in again.intents] == [("a", False)]
    assert decide_taints([], snap(NOW + 10), P, again.state, set()).state.last_degraded == {}, "then forgotten"
