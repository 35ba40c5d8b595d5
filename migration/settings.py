"""The controller's one typed config object: defaults < ``DRSCHED_MIGRATION_*`` env vars < CLI flags.

Built by ``build_settings`` (a function, never at import); ``python -m migration --help`` lists every field
with its doc. The validator refuses combinations that cannot work, naming the fields.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from kube.config import problems
from kube.errors import ConfigError
from kube.selectors import parse_selector
from policy.baselines import SCORERS

_PAUSE_POINTS = (r"^$|^(reserved|evicting|source-gone|placing|running|released)$"
                 r"|^(evicting|placing|released):after-effect$")
"""Values of ``test_pause_at``: a step, or a step that has an effect with ``:after-effect`` (see the executor)."""


def _identity() -> str:
    return os.environ.get("POD_NAME") or socket.gethostname()


class Settings(BaseSettings):
    """Every option of ``python -m migration`` (env var ``DRSCHED_MIGRATION_<NAME>``)."""

    model_config = SettingsConfigDict(env_prefix="DRSCHED_MIGRATION_", extra="forbid", validate_default=True)

    kubeconfig: Path | None = Field(None, description="Kubeconfig; unset: in-cluster config, then ~/.kube/config.")
    namespace: str | None = Field(None, description="Only watch pods in this namespace (unset: all namespaces).")
    dry_run: bool = Field(False, description="Decide and report (log, Event, counter) but never stop a pod.")
    interval_s: float = Field(10.0, gt=0, description="Seconds between cycles (one snapshot and decision each).")
    once: bool = Field(False, description="Run one cycle, advance in-flight migrations once, and exit.")
    policy: str = Field("demand-aware", description="Scorer that picks targets, the extender's: 'model' or one of "
                                                    + ", ".join(SCORERS) + ".")
    model_path: Path | None = Field(None, description="DQN artifact for policy 'model' (default: the shipped one "
                                                      "the extender serves too).")
    node_selector: str = Field("", description="Only nodes with these labels are targets, e.g. pool=batch,zone=a.")
    progress_source: Literal["auto", "annotation", "http"] = Field(
        "auto", description="Where progress comes from: the drsched.io/progress annotation, GET /progress on "
                            "the pod IP (port: drsched.io/progress-port), or auto (annotation, else http).")
    progress_port: int | None = Field(None, ge=1, le=65535, description="Default port of GET /progress.")
    progress_timeout_s: float = Field(2.0, gt=0, description="Timeout of one GET /progress.")
    stale_after_s: float = Field(120.0, gt=0, description="Progress older than this is stale: the job is skipped.")
    restore_cost_s: float = Field(20.0, ge=0, description="Default seconds from stop to progress on the target.")
    # the baselines (migration/README.md, "Baselines")
    mode: Literal["migrate", "taint"] = Field(
        "migrate", description="migrate: move slow jobs to other nodes; taint: move nothing, taint the nodes the "
                               "rule judges degraded NoSchedule drsched.io/degraded and untaint them on recovery.")
    resume: Literal["checkpoint", "scratch"] = Field(
        "checkpoint", description="How a moved job starts: from its checkpoint, or from zero (the baseline: its "
                                  "state volumes are replaced by empty ones and the rule counts all work as lost).")
    # the rule (policy.migrate.RuleParams)
    margin: float = Field(0.25, ge=0, description="Safety margin on the target's predicted time left.")
    slow_checks: int = Field(3, ge=1, description="Consecutive slow cycles before a job is moved (hysteresis).")
    slow_ratio: float = Field(0.5, gt=0, le=1, description="Slow: rate below this fraction of the expected rate.")
    min_running_s: float = Field(30.0, ge=0, description="Seconds a process runs before its rate is trusted.")
    blocklist_s: float = Field(120.0, ge=0, description="Seconds a node that hosted a slow job is not a target.")
    # the budget (policy.migrate.Budget)
    max_concurrent: int = Field(4, ge=0, description="Migrations in flight at once, cluster-wide.")
    max_per_node: int = Field(2, ge=0, description="Migrations in flight touching one node.")
    max_fraction: float = Field(0.1, ge=0, le=1, description="Migrations in flight / running jobs (at least 1).")
    cooldown_s: float = Field(60.0, ge=0, description="Seconds after a job's last migration before the next.")
    max_per_job: int = Field(2, ge=0, description="Migrations of one job over its life.")
    # the protocol
    grace_period_s: int | None = Field(None, ge=0, description="Eviction grace period (unset: the pod's own).")
    evict_timeout_s: float = Field(300.0, gt=0, description="Roll back when a PDB refuses the eviction this long.")
    place_timeout_s: float = Field(60.0, gt=0, description="Try the next node when a successor stays unbound this "
                                                           "long (at once when the scheduler says Unschedulable).")
    resume_timeout_s: float = Field(300.0, gt=0, description="Outcome 'unconfirmed' when a successor reports no "
                                                             "progress this long.")
    test_pause_at: str = Field("", pattern=_PAUSE_POINTS, description="Kill tests only: stop the protocol for good "
                               "at this point: a step (its record stored, before its effect) or "
                               "evicting/placing/released:after-effect. Empty: off.")
    # leader election and serving
    leader_elect: bool = Field(True, description="Act only while holding the leader Lease.")
    lease_namespace: str = Field("kube-system", description="Namespace of the leader Lease.")
    lease_name: str = Field("drsched-migration-controller", description="Name of the leader Lease.")
    identity: str = Field(default_factory=_identity, description="Leader identity (default: $POD_NAME, hostname).")
    lease_s: int = Field(15, ge=2, description="Leader Lease duration.")
    renew_s: int = Field(10, ge=2, description="Leader renew deadline (< lease_s).")
    retry_s: int = Field(2, ge=1, description="Leader retry period.")
    metrics_host: str = Field("127.0.0.1", description="Address of the /metrics endpoint.")
    metrics_port: int = Field(0, ge=0, le=65535, description="Port of the /metrics endpoint (0: none).")
    log_level: str = Field("INFO", description="DEBUG shows every skipped job with its reason.")
    log_format: Literal["json", "text"] = Field("json", description="json: one object per line.")

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.policy != "model" and self.policy not in SCORERS:
            raise ValueError(f"policy {self.policy!r} is neither 'model' nor a heuristic ({', '.join(SCORERS)})")
        if self.mode == "taint" and self.resume == "scratch":
            raise ValueError("resume 'scratch' needs mode 'migrate': mode 'taint' moves no job")
        if self.leader_elect and not (self.lease_s > self.renew_s > 1.2 * self.retry_s):
            raise ValueError("leader election needs lease_s > renew_s > 1.2 * retry_s")
        try:
            parse_selector(self.node_selector)
        except ValueError as exc:
            raise ValueError(f"node_selector: {exc}") from None
        return self

    @property
    def selector(self) -> dict[str, str]:
        return parse_selector(self.node_selector)


def build_settings(**overrides: Any) -> Settings:
    """Settings from env vars and ``overrides`` (flags; None means 'not given'); ``ConfigError`` if invalid."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise ConfigError(None, problems(exc)) from None
