"""The controller's cycle: fetch once, advance in-flight migrations, decide on ONE snapshot, hand intents over.

Why it exists: it is the reconcile loop around the pure rule (``policy.migrate.decide``) and the one executor.
Per cycle (descheduler's sync-then-balance shape):

1. list nodes, pods and window Leases (one fetch);
2. advance every in-flight window (resume or roll back: ``executor.advance``);
3. build one ``ClusterSnapshot`` (the shared ``kube.cache``, as the extender does), windows reserved on their
   placement node;
4. for each opted-in pod (label ``drsched.io/migrate=true``): skip with a counted reason, or read its
   progress into a ``RunningJob``;
5. ``decide`` with the extender's scorer → intents; the executor applies the budget/dry-run and starts them.

A pod on a node whose Ready condition is not True (its kubelet died or lost the API server) is skipped as
``node-not-ready``: its phase still says Running and its process may well still run, but an Eviction there
would never finish (nobody stops the container) and its progress says nothing about a target. Such pods are
neither running jobs for the budget nor lost ones; they are looked at again once the node is back.

With ``mode=taint`` (a baseline) step 5 is replaced: ``policy.migrate.taint.decide_taints`` on the same jobs and
snapshot → taint / untaint intents, applied here through ``Kube.set_node_taints``; no job is moved (windows
left by a migrate-mode life are still advanced to their end). ``clear_taints`` removes every degraded taint
when the process stops, so the next experiment arm starts on untainted nodes.

State owned: the rule's ``RuleState`` (slow-check counts, blocklisted nodes), the taint baseline's
``TaintState`` and the highest rate seen per job, all in memory; a restarted controller re-learns them (the
hysteresis restarts, which only delays a move or a taint; taints already set are read back from the nodes).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kube.errors import ApiError, Conflict, PermanentError, TemporaryError
from kube.objects import pod_key
from kube.selectors import matches
from migration.degraded import tainted_nodes, with_taint
from migration.errors import RecordError
from migration.executor import Candidate, Executor, Window, budget_state, parse_window
from migration.kube import Kube
from migration.podspec import MIGRATE_LABEL, job_base
from migration.progress import ExpectedRates, ProgressSource, SkipReason, read_or_skip, running_job
from migration.protocol import PodState
from migration.record import Resume, Step
from migration.snapshot import build_picture, fits, view_of
from migration.telemetry import Kind, PodRef, Telemetry
from policy.baselines import Scorer, make_scorer
from policy.migrate import RuleParams, RuleState, RunningJob, decide
from policy.migrate.taint import TaintState, decide_taints
from policy.state import ClusterSnapshot

log = logging.getLogger(__name__)


def make_target_scorer(policy: str, model_path=None) -> Scorer:
    """The scorer the extender would use for ``policy`` (same code: ``policy.baselines`` / ``policy.model``)."""
    if policy != "model":
        return make_scorer(policy)
    from kube.config import DEFAULT_MODEL
    from policy.model import ModelScorer, load_model

    return ModelScorer(load_model(model_path or DEFAULT_MODEL))


@dataclass(frozen=True)
class CycleConfig:
    namespace: str | None
    node_selector: Mapping[str, str]
    stale_after_s: float
    restore_cost_s: float
    dry_run: bool = False
    """Dry run: windows left by an earlier run are not advanced either (that could stop a pod)."""
    mode: str = "migrate"
    """``migrate`` or the baseline ``taint`` (settings ``mode``)."""
    resume: Resume = Resume.CHECKPOINT
    """How a successor starts; ``scratch``: the rule counts every unit done as lost by a move."""


def _ref(pod: Mapping[str, Any]) -> PodRef:
    return PodRef(*pod_key(pod))


def not_ready_nodes(nodes: list[Mapping[str, Any]]) -> set[str]:
    """Names of the nodes whose Ready condition is not True (a node with no conditions at all counts as ready,
    as ``kube.objects.node_info`` has it)."""
    out = set()
    for node in nodes:
        conditions = (node.get("status") or {}).get("conditions") or []
        ready = next((c for c in conditions if isinstance(c, Mapping) and c.get("type") == "Ready"), None)
        if ready is not None and ready.get("status") != "True":
            out.add(str((node.get("metadata") or {}).get("name")))
    return out


def _template_pod(window: Window) -> dict[str, Any]:
    """A window's pod template as pod JSON, for requests and the demand profile."""
    template = window.template
    return {"metadata": {"annotations": template.get("annotations", {})}, "spec": template.get("spec", {})}


def _has_controller(pod: Mapping[str, Any]) -> bool:
    return any(o.get("controller") for o in (pod.get("metadata") or {}).get("ownerReferences") or [])


class Controller:
    def __init__(self, kube: Kube, executor: Executor, telemetry: Telemetry, *, scorer: Scorer, params: RuleParams,
                 source: ProgressSource, config: CycleConfig, clock: Callable[[], float] = time.time) -> None:
        self.kube, self.executor, self.telemetry = kube, executor, telemetry
        self.scorer, self.params, self.source, self.config = scorer, params, source, config
        self.clock = clock
        self.rule_state = RuleState()
        self.taint_state = TaintState()
        self.rates = ExpectedRates()
        self.acted = False  # a cycle ran: this replica may have tainted nodes (``clear_taints``)

    def _windows(self) -> list[Window]:
        out = []
        for lease in self.kube.list_windows(namespace=self.config.namespace):
            try:
                out.append(parse_window(lease))
            except RecordError as exc:
                meta = lease.get("metadata") or {}
                self.telemetry.report(Kind.ERROR, "permanent", f"window {meta.get('namespace')}/{meta.get('name')} "
                                      f"unreadable, left for a person: {exc}", warning=True)
        return out

    def _skip(self, pod: Mapping[str, Any], reason: SkipReason | str, detail: str) -> None:
        self.telemetry.report(Kind.SKIP, str(reason), detail, pod=_ref(pod))

    def cycle(self) -> None:
        """One cycle (module docstring). API trouble raises ``TemporaryError`` / ``PermanentError``."""
        cfg = self.config
        self.acted = True
        nodes = self.kube.list_nodes()
        pods = self.kube.list_pods(namespace=cfg.namespace)
        windows = self._windows()
        if not cfg.dry_run:
            room = self._room(nodes, pods, windows)
            windows = [w for w in (self.executor.advance(w, room=room(w)) for w in windows) if w is not None]
        now = self.clock()
        reservations = [(w.record.placement, _template_pod(w))
                        for w in windows if w.record.step in (Step.RESERVED, Step.EVICTING, Step.SOURCE_GONE)
                        and w.record.placement]
        picture = build_picture(nodes=nodes, pods=pods, now=now, node_selector=cfg.node_selector,
                                reservations=reservations)
        flying = {w.record.job for w in windows}
        unready = not_ready_nodes(nodes)
        jobs, candidates, histories = [], {}, {}
        running = 0
        for pod in pods:
            meta = pod.get("metadata") or {}
            if (meta.get("labels") or {}).get(MIGRATE_LABEL) != "true":
                continue
            ns = meta.get("namespace", "default")
            job = f"{ns}/{job_base(pod)}"
            state = PodState.of(pod)
            if state.lineage is not None:
                histories[job] = state.lineage
            if state.deleting:
                self._skip(pod, SkipReason.TERMINATING, "being deleted")
                continue
            if state.phase != "Running" or not state.node:
                self._skip(pod, SkipReason.NOT_RUNNING, f"phase {state.phase} node {state.node}")
                continue
            if state.node in unready:
                self._skip(pod, SkipReason.NODE_NOT_READY, f"node {state.node} is not Ready")
                continue
            running += 1
            if job in flying:
                self._skip(pod, SkipReason.IN_FLIGHT, "a migration of this job is in progress")
                continue
            if _has_controller(pod):
                self._skip(pod, SkipReason.HAS_CONTROLLER, "its controller would recreate it; only bare pods move")
                continue
            view = picture.views.get(f"{ns}/{meta.get('name')}")
            if view is None:
                self._skip(pod, SkipReason.BAD_REQUESTS, picture.bad_pods.get(f"{ns}/{meta.get('name')}", "unparsed"))
                continue
            progress, reason, detail = read_or_skip(self.source, pod, now=now, stale_after_s=cfg.stale_after_s)
            if progress is None:
                self._skip(pod, reason or SkipReason.NO_PROGRESS, detail)
                continue
            jobs.append(running_job(job=job, pod=pod, node=state.node, progress=progress, view=view, now=now,
                                    rates=self.rates, default_restore_cost_s=cfg.restore_cost_s,
                                    checkpointed=cfg.resume is Resume.CHECKPOINT))
            candidates[job] = Candidate(pod=pod, base=job_base(pod), progress=progress, history=state.lineage)
        self.rates.forget(set(candidates) | flying)
        if cfg.mode == "taint":
            self._taint(nodes, jobs, picture.snapshot)
            self.telemetry.metrics.in_flight.set(len(windows))
            return
        result = decide(jobs, picture.snapshot, self.scorer, self.params, self.rule_state)
        self.rule_state = result.state
        for job, skip in result.skipped.items():
            self._skip(candidates[job].pod, skip.value, result.details.get(job, "rule"))
        state = budget_state(now=now, running=running, windows=windows, histories=histories)
        started = self.executor.submit(result.intents, candidates=candidates, state=state)
        self.telemetry.metrics.in_flight.set(len(windows) + len(started))

    def _room(self, nodes: list[Mapping[str, Any]], pods: list[Mapping[str, Any]],
              windows: list[Window]) -> Callable[[Window], bool]:
        """Per window whose source still runs: does its pod fit a node other than the source now? (A snapshot
        without the windows' reservations; built only when such a window exists.) True for every other window."""
        waiting = [w for w in windows if w.record.step in (Step.RESERVED, Step.EVICTING)]
        if not waiting:
            return lambda _w: True
        snap = build_picture(nodes=nodes, pods=pods, now=self.clock(), node_selector=self.config.node_selector).snapshot

        def room(w: Window) -> bool:
            if w.record.step not in (Step.RESERVED, Step.EVICTING):
                return True
            view = view_of(_template_pod(w))
            if view is None:
                return True  # cannot tell: let the scheduler decide, as before
            return any(fits(snap, n, view) for n in snap.names if n != w.record.source_node)

        return room

    def _taint(self, nodes: list[Mapping[str, Any]], jobs: list[RunningJob], snap: ClusterSnapshot) -> None:
        """The taint baseline's step 5: decide on this cycle's jobs and snapshot, then apply each intent."""
        tainted = tainted_nodes(nodes) & set(snap.names)  # only nodes within --node-selector are ours to change
        result = decide_taints(jobs, snap, self.params, self.taint_state, tainted)
        self.taint_state = result.state
        listed = {str((n.get("metadata") or {}).get("name")): n for n in nodes}
        for it in result.intents:
            action = "added" if it.taint else "removed"
            if self.config.dry_run:
                self.telemetry.report(Kind.TAINT, "dry-run", f"would have {action} it: {it.reason}", node=it.node)
                continue
            node = listed[it.node]
            try:
                self.kube.set_node_taints(node=node, taints=with_taint((node.get("spec") or {}).get("taints") or [],
                                                                       on=it.taint))
            except Conflict:  # the node changed since the list: decided again next cycle on a fresh one
                self.telemetry.report(Kind.ERROR, "temporary", f"node {it.node} changed under us; taint "
                                      f"{action} next cycle", warning=True, node=it.node)
                continue
            (tainted.add if it.taint else tainted.discard)(it.node)
            self.telemetry.report(Kind.TAINT, action, it.reason, node=it.node, taint="drsched.io/degraded:NoSchedule")
        self.telemetry.metrics.tainted.set(len(tainted))

    def clear_taints(self) -> None:
        """Remove the degraded taint from every node within ``node_selector`` (mode taint, on a clean stop of a
        replica that acted), so a stopped baseline leaves no node shut. Best effort: a node changed under us
        is listed again (three rounds); an API error is logged, not raised."""
        if self.config.mode != "taint" or self.config.dry_run or not self.acted:
            return
        left: list[str] = []
        try:
            for _ in range(3):
                nodes = [n for n in self.kube.list_nodes() if tainted_nodes([n])
                         and matches((n.get("metadata") or {}).get("labels"), self.config.node_selector)]
                left = []
                for node in nodes:
                    name = str(node["metadata"]["name"])
                    try:
                        self.kube.set_node_taints(node=node, taints=with_taint(
                            (node.get("spec") or {}).get("taints") or [], on=False))
                    except Conflict:
                        left.append(name)
                        continue
                    self.telemetry.report(Kind.TAINT, "removed", "the controller stops", node=name)
                if not left:
                    break
        except ApiError as exc:
            self.telemetry.report(Kind.ERROR, "permanent", f"taints left on nodes at stop: {exc}", warning=True)
            return
        if left:
            self.telemetry.report(Kind.ERROR, "permanent", f"taints left on nodes at stop: {','.join(left)}",
                                  warning=True)
            return
        self.telemetry.metrics.tainted.set(0)


def run_loop(controller: Controller, *, interval_s: float, stop: threading.Event, once: bool = False) -> None:
    """Cycle every ``interval_s`` until ``stop``; API trouble backs off exponentially (max 30 s) and the next
    cycle resumes from the window Leases, so an API server that is briefly away only delays the protocol."""
    backoff = 1.0
    while not stop.is_set():
        started = time.monotonic()
        wait = interval_s
        try:
            controller.cycle()
            backoff = 1.0
        except TemporaryError as exc:
            controller.telemetry.report(Kind.ERROR, "temporary", f"cycle interrupted, retrying: {exc}", warning=True,
                                        retry_in=round(max(exc.delay, backoff), 1))
            wait = min(max(exc.delay, backoff), 30.0)
            backoff = min(backoff * 2, 30.0)
        except PermanentError as exc:  # e.g. RBAC: a person must act; keep trying slowly
            controller.telemetry.report(Kind.ERROR, "permanent", f"cycle failed: {exc}", warning=True)
            wait = 30.0
        finally:
            controller.telemetry.metrics.cycle.observe(time.monotonic() - started)
        if once:
            return
        stop.wait(wait)
