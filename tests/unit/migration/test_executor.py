"""The executor: the budget and dry-run applied to intents, and the protocol driven over a fake API."""

from __future__ import annotations

import copy
import json

import pytest

from migration.executor import Candidate, Executor, budget_state, parse_window
from migration.kube import TEMPLATE_ANNOTATION
from migration.progress import AnnotationSource
from migration.protocol import Timeouts
from migration.record import ANNOTATION, MigrationRecord, Outcome, Resume, Step
from migration.telemetry import Metrics, Telemetry
from policy.migrate import Budget, BudgetState, MigrationIntent
from workloads.progress import parse_progress

from .fakes import FakeKube, node, pod, progress_doc


class Events:
    def __init__(self) -> None:
        self.posted: list[tuple[str, str, str]] = []

    def event(self, *, namespace, name, uid, reason, message, type_="Normal"):
        self.posted.append((name, reason, message))


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def intent(job: str, source: str = "a", target: str = "b", fallbacks: tuple[str, ...] = ("c",)) -> MigrationIntent:
    return MigrationIntent(job_id=job, source=source, target=target, fallbacks=fallbacks, reason="slow",
                           time_left_here=800, time_left_target=80, restore_cost=1, lost_work_time=0,
                           predicted_rate=0.01, slow_checks=3)


def setup(n: int = 1, budget: Budget | None = None, **kube_kw):
    pods = [pod(f"job{i}", node="a", progress=progress_doc()) for i in range(n)]
    kube = FakeKube([node("a"), node("b"), node("c")], pods)
    events = Events()
    tele = Telemetry(Metrics(), events)
    clock = Clock()
    ex = Executor(kube, tele, budget=budget or Budget(cooldown=0, max_fraction=1), timeouts=Timeouts(evict_s=30),
                  source=AnnotationSource(), grace_period_s=None, identity="me", clock=clock)
    cands = {f"default/job{i}": Candidate(pod=p, base=f"job{i}", progress=parse_progress(
        p["metadata"]["annotations"]["drsched.io/progress"]), history=None) for i, p in enumerate(pods)}
    return kube, ex, tele, events, clock, cands


def metric(tele: Telemetry, name: str, **labels) -> float:
    return tele.metrics.registry.get_sample_value(name, labels) or 0.0


def test_allowed_intent_opens_a_window_and_evicts_then_waits_for_the_scheduler():
    kube, ex, tele, events, _, cands = setup()
    started = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    assert len(started) == 1
    window = started[0]
    assert window.record.step is Step.PLACING and window.record.successor_uid is not None
    assert kube.calls == [("evict", "job0"), ("create", "job0-m1")]
    created = kube.pods[("default", "job0-m1")]
    assert created["metadata"]["annotations"]["drsched.io/migrated-from"] == "job0"
    assert "drsched.io/progress" not in created["metadata"]["annotations"]
    assert metric(tele, "drsched_migration_decisions_total", verdict="allowed") == 1
    assert metric(tele, "drsched_migration_started_total") == 1
    assert {r for _, r, _ in events.posted} >= {"MigrationDecision", "MigrationStarted", "MigrationStep"}
    stored = parse_window(kube.leases[("default", "drsched-migration-job0")])
    assert stored.record == window.record and stored.template["spec"]["containers"][0]["name"] == "main"


def test_protocol_completes_once_the_successor_runs_and_reports_its_resume():
    kube, ex, tele, events, _, cands = setup()
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    kube.schedule("job0-m1")
    window = ex.advance(window)
    assert window.record.step is Step.RUNNING and window.record.node == "b"
    kube.pods[("default", "job0-m1")]["metadata"]["annotations"]["drsched.io/progress"] = progress_doc(resumed_from=200)
    assert ex.advance(window) is None
    assert not kube.leases
    assert metric(tele, "drsched_migration_completed_total") == 1
    assert metric(tele, "drsched_migration_released_total", outcome="completed") == 1
    assert ("job0-m1", "MigrationCompleted") in {(n, r) for n, r, _ in events.posted}


def test_full_target_falls_back_to_the_next_candidate():
    kube, ex, _, _, _, cands = setup()
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    kube.schedule("job0-m1", fits=False)
    window = ex.advance(window)
    assert kube.calls[-2:] == [("delete", "job0-m1"), ("create", "job0-m1")]
    assert window.record.placement == "c"
    kube.schedule("job0-m1")
    assert ex.advance(window).record.node == "c"


def test_pdb_refusals_retry_then_roll_back_without_stopping_anything():
    kube, ex, tele, _, clock, cands = setup()
    kube.evict_refusals = 10
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    assert window.record.step is Step.EVICTING
    clock.t += 10
    window = ex.advance(window)
    assert window.record.step is Step.EVICTING and ("default", "job0") in kube.pods
    clock.t += 31
    assert ex.advance(window) is None
    assert ("default", "job0") in kube.pods and ("default", "job0-m1") not in kube.pods
    assert metric(tele, "drsched_migration_rolled_back_total") == 1


def test_a_window_is_resumed_from_storage_by_a_new_executor():
    kube, ex, _, _, _, cands = setup()
    kube.evict_refusals = 1
    ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    lease = kube.list_windows(namespace=None)[0]
    _, fresh, _, _, _, _ = setup()
    fresh.kube = kube  # a restarted controller: same cluster, nothing in memory
    window = fresh.advance(parse_window(lease))
    assert window.record.step is Step.PLACING and ("default", "job0") not in kube.pods


@pytest.mark.parametrize("budget,state,verdict", [
    (Budget(dry_run=True), BudgetState(now=0, running=1), "dry-run"),
    (Budget(max_per_job=1), BudgetState(now=0, running=1, migrations={"default/job0": 1}), "max-per-job"),
    (Budget(cooldown=60), BudgetState(now=100, running=1, last_migrated={"default/job0": 90}), "cooldown"),
    (Budget(max_concurrent=1, max_fraction=1), BudgetState(now=0, running=9, in_flight={"x": ("d", "e")}), "total"),
    (Budget(max_per_node=1, max_fraction=1), BudgetState(now=0, running=9, in_flight={"x": ("a", "e")}),
     "source-node"),
    (Budget(cooldown=0), BudgetState(now=0, running=1, in_flight={"default/job0": ("a", "b")}), "in-flight"),
])
def test_budget_refusals_are_reported_and_carry_out_nothing(budget, state, verdict):
    kube, ex, tele, events, _, cands = setup(budget=budget)
    assert ex.submit([intent("default/job0")], candidates=cands, state=state) == []
    assert kube.calls == [] and not kube.leases
    assert metric(tele, "drsched_migration_decisions_total", verdict=verdict) == 1
    expected_reason = "MigrationDryRun" if verdict == "dry-run" else "MigrationDecision"
    assert [(n, r) for n, r, _ in events.posted] == [("job0", expected_reason)]


def test_budget_caps_apply_in_order_within_one_cycle():
    kube, ex, tele, _, _, cands = setup(n=3, budget=Budget(max_concurrent=2, max_per_node=5, max_fraction=1,
                                                          cooldown=0))
    ex.submit([intent(f"default/job{i}") for i in range(3)], candidates=cands, state=BudgetState(now=0, running=3))
    assert len(kube.leases) == 2
    assert metric(tele, "drsched_migration_decisions_total", verdict="total") == 1


def test_budget_state_reads_windows_and_lineage():
    kube, ex, _, _, _, cands = setup()
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    lineage = MigrationRecord.from_storage(kube.pods[("default", "job0-m1")]["metadata"]["annotations"])
    st = budget_state(now=5, running=3, windows=[window], histories={"default/job0": lineage})
    assert st.in_flight == {"default/job0": ("a", "b")}
    assert st.migrations == {"default/job0": 1} and st.last_migrated == {"default/job0": 1000.0}


def test_an_existing_window_is_not_opened_twice():
    kube, ex, _, _, _, cands = setup()
    kube.evict_refusals = 5
    ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    assert ex.start(intent("default/job0"), cands["default/job0"]) is None


def test_released_window_left_by_a_killed_controller_is_just_deleted():
    kube, ex, tele, _, _, cands = setup()
    kube.evict_refusals = 5
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    done = window.record.with_outcome(Step.RELEASED, now=1, outcome=Outcome.ROLLED_BACK)
    lease = kube.update_window(lease=window.lease, annotations=done.for_storage())
    assert ex.advance(parse_window(lease)) is None and not kube.leases
    assert metric(tele, "drsched_migration_rolled_back_total") == 0, "counted once, by the one that released it"
    assert json.loads(lease["metadata"]["annotations"][ANNOTATION])["outcome"] == "rolled-back"
    assert TEMPLATE_ANNOTATION in lease["metadata"]["annotations"]


class Paused(Exception):
    """Raised by the test's stand-in for the fault point's endless wait."""


def _pause() -> None:
    raise Paused


@pytest.mark.parametrize("point,step,calls", [
    ("reserved", Step.RESERVED, []),
    ("evicting", Step.EVICTING, []),
    ("evicting:after-effect", Step.EVICTING, [("evict", "job0")]),
    ("source-gone", Step.SOURCE_GONE, [("evict", "job0")]),
    ("placing", Step.PLACING, [("evict", "job0")]),
    ("placing:after-effect", Step.PLACING, [("evict", "job0"), ("create", "job0-m1")]),
])
def test_test_pause_point_stops_with_the_step_stored_before_or_after_its_effect(point, step, calls):
    kube, ex, _, _, _, cands = setup()
    ex.test_pause_at, ex._pause = point, _pause
    with pytest.raises(Paused):
        ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    assert parse_window(kube.leases[("default", "drsched-migration-job0")]).record.step is step
    assert kube.calls == calls


@pytest.mark.parametrize("point,step", [("running", Step.RUNNING), ("released", Step.RELEASED),
                                        ("released:after-effect", None)])
def test_test_pause_points_at_the_end_of_the_protocol(point, step):
    kube, ex, _, _, _, cands = setup()
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    kube.schedule("job0-m1")
    if step is not Step.RUNNING:
        window = ex.advance(window)
        kube.pods[("default", "job0-m1")]["metadata"]["annotations"]["drsched.io/progress"] = progress_doc(
            resumed_from=200)
    ex.test_pause_at, ex._pause = point, _pause
    with pytest.raises(Paused):
        ex.advance(window)
    leases = [parse_window(lease).record.step for lease in kube.leases.values()]
    assert leases == ([step] if step else [])



def test_scratch_successor_gets_empty_state_volumes_and_the_record_says_scratch():
    kube, _, tele, _, clock, cands = setup()
    src = kube.pods[("default", "job0")]
    src["spec"]["volumes"] = [{"name": "state", "hostPath": {"path": "/srv/job0", "type": "Directory"}}]
    cands["default/job0"] = Candidate(pod=copy.deepcopy(src), base="job0", progress=cands["default/job0"].progress,
                                      history=None)
    ex = Executor(kube, tele, budget=Budget(cooldown=0, max_fraction=1), timeouts=Timeouts(evict_s=30),
                  source=AnnotationSource(), grace_period_s=None, identity="me", clock=clock, resume=Resume.SCRATCH)
    (window,) = ex.submit([intent("default/job0")], candidates=cands, state=BudgetState(now=0, running=1))
    created = kube.pods[("default", "job0-m1")]
    assert created["spec"]["volumes"] == [{"name": "state", "emptyDir": {}}]
    assert window.record.resume is Resume.SCRATCH and parse_window(
        kube.leases[("default", "drsched-migration-job0")]).template["spec"]["volumes"][0] == {"name": "state",
                                                                                                "emptyDir": {}}


def test_a_successor_never_lands_on_the_source_even_when_every_named_node_is_full():
    kube, ex, _, _, _, cands = setup()
    (window,) = ex.submit([intent("default/job0", fallbacks=("a",))], candidates=cands,
                          state=BudgetState(now=0, running=1))
    assert window.record.candidates == ("b", "")
    kube.schedule("job0-m1", fits=False)
    window = ex.advance(window)
    assert window.record.placement == "" and ("create", "job0-m1") == kube.calls[-1]
    kube.schedule("job0-m1")
    window = ex.advance(window)
    assert window.record.node not in (None, "a"), "any node but the one it left"
