"""Where a successor may go when targets are full: the next best node, never back to the node it left.

A PodDisruptionBudget holds the migration at 'evicting' (the Eviction API answers 429; no disruption
controller runs here, so the budget never allows one) while the test fills the chosen target; deleting the
budget lets the eviction through, and the successor must not be lost on the full node -- nor restarted on
its source (issue #21: 3 of 8 moves in the lab restarted on the same node).
"""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client

from tests.helpers import wait_for

from .helpers import filler_pod, job_pod, required_fields

pytestmark = pytest.mark.e2e
NAME = "metadata.name"


def _hold_with_pdb(mig, dump):
    policy = client.PolicyV1Api(mig.cluster.api)
    policy.create_namespaced_pod_disruption_budget(mig.namespace, client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="job-pdb"),
        spec=client.V1PodDisruptionBudgetSpec(min_available=1,
                                              selector=client.V1LabelSelector(match_labels={"app": "job"}))))
    return policy


def _record(mig):
    leases = mig.windows()
    return json.loads(leases[0].metadata.annotations["drsched.io/migration"]) if leases else None


def _successor(mig, name: str = "job-m1"):
    return next((p for p in mig.pods() if p.metadata.name == name), None)


def test_target_full_mid_migration_goes_to_the_next_best_node(mig, dump):
    nodes = {"src": mig.node("src", cpu="4"), "big": mig.node("big", cpu="16"), "mid": mig.node("mid", cpu="8")}
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=nodes["src"], cpu="1", tag=mig.tag))
    policy = _hold_with_pdb(mig, dump)
    mig.start_fake_jobs()
    ctl = mig.controller("--max-per-node=5").start()
    rec = wait_for(lambda: (r := _record(mig)) and r["step"] == "evicting" and r, timeout=60,
                   what="the migration held at evicting by the PDB", on_timeout=dump)
    assert rec["candidates"] == [nodes["big"], nodes["mid"], ""], "the source is no candidate"
    mig.core.create_namespaced_pod(mig.namespace, filler_pod("fill-big", node=nodes["big"], cpu="15.5"))
    assert mig.live_copies() == {"job": ["job"]}, "the PDB held the eviction"
    policy.delete_namespaced_pod_disruption_budget("job-pdb", mig.namespace)

    successor = wait_for(lambda: (p := _successor(mig)) and p.status.phase == "Running" and p,
                         timeout=90, what="job-m1 Running", on_timeout=dump)
    assert successor.spec.node_name == nodes["mid"], dump()
    wait_for(lambda: not mig.windows(), timeout=30, what="the window released", on_timeout=dump)
    assert mig.live_copies() == {"job": ["job-m1"]}, dump()
    assert "cannot take it" in ctl.log_text()


def test_every_other_node_full_while_a_pdb_holds_it_the_move_is_not_made(mig, dump):
    """Before the source is stopped: no node but the source fits any more, so roll back, never restart in place."""
    nodes = {"src": mig.node("src", cpu="4"), "big": mig.node("big", cpu="16"), "mid": mig.node("mid", cpu="8")}
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=nodes["src"], cpu="1", tag=mig.tag))
    _hold_with_pdb(mig, dump)
    mig.start_fake_jobs()
    ctl = mig.controller("--max-per-node=5").start()
    wait_for(lambda: (r := _record(mig)) and r["step"] == "evicting", timeout=60,
             what="the migration held at evicting by the PDB", on_timeout=dump)
    for short, cpu in (("big", "15.5"), ("mid", "7.5")):  # leave less than the job's 1 cpu free
        mig.core.create_namespaced_pod(mig.namespace, filler_pod(f"fill-{short}", node=nodes[short], cpu=cpu))
    wait_for(lambda: "keeps running where it is" in ctl.log_text(), timeout=30, what="the migration rolled back",
             on_timeout=dump)
    wait_for(lambda: not mig.windows(), timeout=30, what="the window released", on_timeout=dump)
    assert mig.live_copies() == {"job": ["job"]} and [p.spec.node_name for p in mig.pods()] == [nodes["src"]]
    assert "reason=rolled-back" in ctl.log_text(), dump()


def test_every_other_node_full_once_the_source_is_gone_the_successor_waits_and_never_returns(mig, dump):
    """After the source is gone the scheduler finds the targets full (fillers the controller does not watch:
    another namespace): the old chain (target, fallbacks, source, anywhere) restarted the job on its source."""
    nodes = {"src": mig.node("src", cpu="4"), "big": mig.node("big", cpu="16"), "mid": mig.node("mid", cpu="8")}
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=nodes["src"], cpu="1", tag=mig.tag))
    policy = _hold_with_pdb(mig, dump)
    mig.start_fake_jobs()
    mig.controller("--max-per-node=5").start()
    wait_for(lambda: (r := _record(mig)) and r["step"] == "evicting", timeout=60,
             what="the migration held at evicting by the PDB", on_timeout=dump)
    unseen = f"{mig.namespace}-unseen"
    mig.cluster.create_namespace(unseen)
    try:
        for short, cpu in (("big", "15.5"), ("mid", "7.5")):  # leave less than the job's 1 cpu free
            mig.core.create_namespaced_pod(unseen, filler_pod(f"fill-{short}", node=nodes[short], cpu=cpu))
        policy.delete_namespaced_pod_disruption_budget("job-pdb", mig.namespace)

        # the chain reaches its last candidate, any node but the source, and waits there Pending
        rec = wait_for(lambda: (r := _record(mig)) and r["step"] == "placing" and r["candidate"] == 2
                       and r["retiring_uid"] is None and r["successor_uid"] and r,
                       timeout=90, what="job-m1 created for the last candidate", on_timeout=dump)
        pending = _successor(mig)
        assert pending.metadata.uid == rec["successor_uid"], dump()
        assert required_fields(pending) == [[(NAME, "NotIn", (nodes["src"],))]], dump()
        assert pending.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution \
            .node_selector_terms[0].match_expressions[0].values == [mig.tag], "the job's own term, merged into"
        time.sleep(3)  # the source has room (the job left it): a scheduler allowed to would bind it there now
        pending = _successor(mig)
        assert pending.spec.node_name is None and pending.status.phase == "Pending", dump()
        assert mig.live_copies() == {"job": ["job-m1"]}, "one copy: Pending, never lost"

        mig.core.delete_namespaced_pod("fill-mid", unseen, grace_period_seconds=0)
        successor = wait_for(lambda: (p := _successor(mig)) and p.status.phase == "Running" and p,
                             timeout=90, what="job-m1 Running once mid has room", on_timeout=dump)
        assert successor.spec.node_name == nodes["mid"], dump()
        wait_for(lambda: not mig.windows(), timeout=30, what="the window released", on_timeout=dump)
    finally:
        for name in ("fill-big", "fill-mid"):
            try:
                mig.core.delete_namespaced_pod(name, unseen, grace_period_seconds=0)
            except client.ApiException:
                pass


def test_only_the_source_fits_so_the_job_stays_where_it_is(mig, dump):
    """Decision time: the one other node is full; the rule proposes nothing (skip 'no-target'), nothing stops."""
    from harness.procs import free_port

    from .test_migrate import _metric

    src = mig.node("src", cpu="2")
    other = mig.node("other", cpu="4")
    mig.core.create_namespaced_pod(mig.namespace, filler_pod("fill-other", node=other, cpu="3.8"))
    mig.core.create_namespaced_pod(mig.namespace, job_pod("job", node=src, tag=mig.tag))
    mig.start_fake_jobs()
    port = free_port()
    ctl = mig.controller(f"--metrics-port={port}").start()
    wait_for(lambda: _metric(port, 'drsched_migration_skipped_total{reason="no-target"}') >= 3, timeout=60,
             what="three cycles of skip no-target", on_timeout=dump, ignore=(OSError,))
    assert _metric(port, "drsched_migration_started_total") == 0.0
    assert not mig.windows() and mig.live_copies() == {"job": ["job"]}, dump()
    assert [p.spec.node_name for p in mig.pods()] == [src]
    assert ctl.proc.poll() is None, dump()
