"""Wiring: settings → API client, telemetry, progress source, scorer, executor, controller, leader election.

Why it exists: ``__main__`` parses flags; this builds the parts once (never at import) and runs the loop,
inside the leader Lease when ``leader_elect`` is on. The effective config is logged once at start.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from kube.client import make_api_client
from kube.errors import ConfigError
from kube.logs import kv
from migration.controller import Controller, CycleConfig, make_target_scorer, run_loop
from migration.executor import Executor
from migration.kube import Kube, LeaderElector
from migration.progress import make_source
from migration.protocol import Timeouts
from migration.record import Resume
from migration.settings import Settings
from migration.telemetry import Metrics, Telemetry
from policy.migrate import Budget, RuleParams

log = logging.getLogger(__name__)


def serve_metrics(*, port: int, host: str, registry):
    """The controller's only listener: prometheus_client's own threaded server for ``/metrics``; returns the
    server (``shutdown()`` stops it) and its thread."""
    from prometheus_client import start_http_server

    return start_http_server(port, addr=host, registry=registry)


@dataclass
class App:
    settings: Settings
    controller: Controller
    telemetry: Telemetry
    api_client: object

    def run(self, stop: threading.Event) -> int:
        s = self.settings
        if s.metrics_port:
            serve_metrics(port=s.metrics_port, host=s.metrics_host, registry=self.telemetry.metrics.registry)
        log.info("starting", extra=kv(**{k: str(v) for k, v in s.model_dump().items()}))
        if s.once or not s.leader_elect:
            self.telemetry.metrics.leader.set(1)
            run_loop(self.controller, interval_s=s.interval_s, stop=stop, once=s.once)
            if not s.once:
                self.controller.clear_taints()
            return 0
        lost, done = threading.Event(), threading.Event()

        def lead() -> None:
            self.telemetry.metrics.leader.set(1)
            log.info("leading", extra=kv(identity=s.identity, lease=f"{s.lease_namespace}/{s.lease_name}"))
            try:
                run_loop(self.controller, interval_s=s.interval_s, stop=stop)
            finally:
                done.set()

        def on_lost() -> None:
            self.telemetry.metrics.leader.set(0)
            log.error("leadership lost, exiting", extra=kv(identity=s.identity))
            lost.set()
            stop.set()

        LeaderElector(self.api_client, namespace=s.lease_namespace, name=s.lease_name, identity=s.identity,
                      lease_s=s.lease_s, renew_s=s.renew_s, retry_s=s.retry_s, lead=lead, on_lost=on_lost).start()
        stop.wait()
        if lost.is_set():
            return 1  # another replica leads now: its taints are its own
        if self.controller.acted and done.wait(timeout=s.interval_s + 30.0):  # the cycle in progress ends first
            self.controller.clear_taints()
        return 0


def build_app(settings: Settings) -> App:
    s = settings
    api_client = make_api_client(kubeconfig=s.kubeconfig)
    kube = Kube(api_client)
    telemetry = Telemetry(Metrics(), kube.event_sink())
    try:
        scorer = make_target_scorer(s.policy, s.model_path)
    except Exception as exc:  # a missing or corrupt model: refuse to start rather than move jobs by another rule
        raise ConfigError(None, f"policy {s.policy!r}: {exc}") from None
    source = make_source(s.progress_source, default_port=s.progress_port, timeout_s=s.progress_timeout_s)
    budget = Budget(max_concurrent=s.max_concurrent, max_per_node=s.max_per_node, max_fraction=s.max_fraction,
                    cooldown=s.cooldown_s, max_per_job=s.max_per_job, dry_run=s.dry_run)
    params = RuleParams(margin=s.margin, slow_checks=s.slow_checks, slow_ratio=s.slow_ratio,
                        min_running=s.min_running_s, blocklist_for=s.blocklist_s)
    executor = Executor(kube, telemetry, budget=budget, source=source, grace_period_s=s.grace_period_s,
                        identity=s.identity, test_pause_at=s.test_pause_at, resume=Resume(s.resume),
                        timeouts=Timeouts(evict_s=s.evict_timeout_s, place_s=s.place_timeout_s,
                                          resume_s=s.resume_timeout_s))
    controller = Controller(kube, executor, telemetry, scorer=scorer, params=params, source=source,
                            config=CycleConfig(namespace=s.namespace, node_selector=s.selector,
                                               stale_after_s=s.stale_after_s, restore_cost_s=s.restore_cost_s,
                                               dry_run=s.dry_run, mode=s.mode, resume=Resume(s.resume)))
    return App(settings=s, controller=controller, telemetry=telemetry, api_client=api_client)
