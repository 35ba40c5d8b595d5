"""The extender's one typed config object: defaults < YAML file < ``DRSCHED_*`` env vars < CLI flags.

Built by ``build_settings`` (a function, never at import); ``get_settings`` caches the env/file-only
build for the app, and tests override it (``app.dependency_overrides[get_settings]``) or pass their own
``Settings`` to ``create_app``. ``python -m extender --help`` lists every field below with its doc.
The validator at the bottom refuses combinations that cannot work, naming the fields.
"""

from __future__ import annotations

import functools
import json
import os
import ssl
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from kube.config import DEFAULT_MODEL, problems
from kube.errors import ConfigError
from kube.objects import DISK_ANNOTATION, NET_ANNOTATION
from kube.profiles import PROFILE_ANNOTATION
from kube.selectors import parse_pairs, parse_selector
from policy.baselines import SCORERS
from policy.served import DEFAULT_MAPPING, HOT_THRESHOLDS, ScoreMapping
from policy.state import DEFAULT_DISK_MBPS, DEFAULT_NET_MBPS

CONFIG_ENV = "DRSCHED_CONFIG"
PROMETHEUS_QUERY_KEYS = ("cpu", "mem", "net", "disk", "timestamp")
KEEP_ALIVE_S = 120.0  # > kube-scheduler's 90 s idle-connection timeout: the client closes idle connections first


class Settings(BaseSettings):
    """Every option of ``python -m extender`` (env var: ``DRSCHED_<NAME>``, YAML key: ``<name>``)."""

    model_config = SettingsConfigDict(env_prefix="DRSCHED_", extra="forbid", validate_default=True)

    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8888, ge=1, le=65535, description="Port to listen on.")
    url_prefix: str = Field("/", description="Path prefix of the verbs (kube-scheduler's urlPrefix path), "
                                             "e.g. /scheduler -> POST /scheduler/filter.")
    policy: str = Field("model", description="'model' (the DQN artifact at model_path) or a heuristic name: "
                                             + ", ".join(SCORERS) + ".")
    model_path: Path = Field(DEFAULT_MODEL, description="DQN artifact (.npz beside its .json).")
    fallback_heuristic: str = Field("demand-aware", description="Heuristic served when the model is missing "
                                                                 "or corrupt (/readyz then says degraded).")
    static_cluster: Path | None = Field(None, description="Serve from a static-cluster YAML (nodes, pods, usage) "
                                                          "instead of the Kubernetes API.")
    kubeconfig: Path | None = Field(None, description="Kubeconfig for the cluster cache and bind; unset: "
                                                      "in-cluster config, then ~/.kube/config.")
    usage_provider: Literal["static", "none", "monitor", "prometheus"] | None = Field(
        None, description="Where node usage comes from: static (YAML usage_file, or the static cluster's "
                          "usage), none (score from requests), monitor (the drsched node agents), prometheus "
                          "(node-exporter metrics). Unset: static with static_cluster or usage_file, else none.")
    usage_file: Path | None = Field(None, description="YAML of node usage for the static provider "
                                                      "(default: the static cluster file).")
    usage_interval_s: float = Field(10.0, gt=0, description="Seconds between usage fetches.")
    usage_timeout_s: float = Field(2.0, gt=0, description="Timeout of one usage fetch.")
    max_usage_age_s: float = Field(60.0, gt=0, description="Usage older than this is stale: the node is scored "
                                                           "from requests and does not count as hot.")
    monitor_agents: Annotated[dict[str, str], NoDecode] = Field(
        {}, description="monitor provider without a cluster (static cluster, tests): node -> agent "
                                          "base URL, as JSON or node=url,node=url. In a cluster agents are found "
                                          "by monitor_selector.")
    monitor_selector: str = Field("app.kubernetes.io/name=drsched-monitor",
                                  description="Equality label selector of the agent pods (k=v,k2=v2).")
    monitor_namespace: str | None = Field(None, description="Namespace of the agent pods (unset: any).")
    monitor_port: int = Field(9847, ge=1, le=65535, description="Agent HTTP port (hostNetwork: on the node IP).")
    monitor_stat: Literal["current", "ewma", "window_mean", "window_max"] = Field(
        "ewma", description="Which scheduler_units statistic of the agent's /usage is the node's usage.")
    monitor_pod_stat: Literal["current", "ewma", "mean", "max"] = Field(
        "mean", description="Which per-pod statistic feeds the learned profiles.")
    monitor_concurrency: int = Field(32, ge=1, description="Agent requests in flight at once.")
    monitor_token_file: Path | None = Field(None, description="Token sent to the agents (Authorization: Bearer) "
                                                              "for their per-pod readings, which feed learning.")
    prometheus_url: str | None = Field(None, description="Prometheus base URL for the prometheus provider, "
                                                         "e.g. http://prometheus:9090.")
    prometheus_queries: Annotated[dict[str, str], NoDecode] = Field(
        {}, description="PromQL replacing the default cpu / mem / net / disk / timestamp "
                                          "queries (JSON; $label and $window are substituted; '' drops timestamp).")
    prometheus_rate_window: str = Field("1m", description="Range of the rate() in the default queries "
                                                          "(>= 4 scrape intervals).")
    prometheus_node_label: str = Field("instance", description="Series label that identifies the node.")
    prometheus_instance_map: Annotated[dict[str, str], NoDecode] = Field(
        {}, description="Label value (or its host part) -> node name, before the name and "
                                          "address rules (JSON or value=node,...).")
    profile_file: Path | None = Field(None, description="JSON file the learned profiles persist to "
                                                        "(unset: not persisted).")
    profile_half_life_s: float = Field(600.0, gt=0, description="Learned profiles: a reading's weight halves "
                                                                "every this many seconds.")
    profile_min_samples: int = Field(6, ge=1, description="Samples (polls) before a learned profile is served.")
    profile_save_interval_s: float = Field(60.0, gt=0, description="Seconds between saves of the profile file.")
    profile_ttl_s: float = Field(7 * 86400.0, gt=0, description="Profiles not updated for this long are dropped.")
    profile_max: int = Field(10_000, ge=1, description="Most profiles kept (least recently updated dropped).")
    workload_labels: Annotated[list[str], NoDecode] = Field(
        [], description="Pod labels that together name a workload (comma-separated), "
                                          "used before owner references; the drsched.io/workload label wins.")
    pod_workloads: Annotated[dict[str, str], NoDecode] = Field(
        {}, description="Static cluster / tests: pod UID -> workload key for learning "
                                          "(JSON or uid=key,...); in a cluster the pods' owners say it.")
    assume_grace_s: float = Field(5.0, ge=0, description="Pods bound up to this long before a usage sample stay "
                                                        "'assumed' (the sample has not seen them ramp up).")
    hot_cpu: float | None = Field(HOT_THRESHOLDS[0], gt=0, description="Filter nodes whose estimated cpu usage / "
                                  "capacity is at or above this (unset: no cpu check).")
    hot_mem: float | None = Field(HOT_THRESHOLDS[1], gt=0, description="Same for memory.")
    hot_net: float | None = Field(None, gt=0, description="Same for network bandwidth.")
    hot_disk: float | None = Field(None, gt=0, description="Same for disk bandwidth.")
    hot_filter: Literal["prefer-cool", "prefer-fit", "strict", "off"] = Field(
        "prefer-cool", description="prefer-cool: hot nodes are filtered only while some node of the request "
        "passes every other check and is not hot, so a busy cluster never leaves a pod without a node (it is "
        "scored instead); prefer-fit: the same, but a node is judged as it would be with the pod on it (usage "
        "+ the pod's expected demand), so an idle node too small for the pod is not taken for cool; strict: "
        "hot nodes are always filtered and the pod waits until one cools down; off: no hot-node filter.")
    score_mapping: str = Field(str(DEFAULT_MAPPING), description="How raw values become the 0-10 scores: "
                               "minmax, band:B (within B of the best: 10) or linear:B (one point per B below the "
                               "best); policy.served.ScoreMapping, chosen on validation.")
    net_annotation: str = Field(NET_ANNOTATION, description="Node annotation with network capacity, MB/s.")
    disk_annotation: str = Field(DISK_ANNOTATION, description="Node annotation with disk capacity, MB/s.")
    default_net_mbps: float = Field(DEFAULT_NET_MBPS, gt=0, description="Network capacity of nodes without the "
                                                                        "annotation.")
    default_disk_mbps: float = Field(DEFAULT_DISK_MBPS, gt=0, description="Disk capacity of nodes without the "
                                                                          "annotation.")
    profile_annotation: str = Field(PROFILE_ANNOTATION, description="Pod annotation with its demand profile.")
    shutdown_drain_s: float = Field(0.0, ge=0, description="On SIGTERM keep serving this long before stopping, "
                                    "/readyz 503 'draining' and every answer 'Connection: close', so the Service and "
                                    "kube-scheduler's keep-alive connection move to another replica first (the "
                                    "shipped Deployment: 5, so a rolling upgrade drops no request); 0: stop at once. "
                                    "Keep it below the pod's terminationGracePeriodSeconds.")
    keep_alive_s: float = Field(KEEP_ALIVE_S, ge=1, description="How long the service listener keeps an idle "
                                "keep-alive connection open. Above kube-scheduler's idle-connection timeout (90 s, "
                                "Go's http.DefaultTransport, which its extender client keeps), so the scheduler, never "
                                "the extender, closes an idle connection: with uvicorn's 5 s a POST written as the "
                                "server closed failed with 'broken pipe', which Go does not retry and ignorable: true "
                                "turned into an unscored pod.")
    bind_timeout_s: float = Field(5.0, gt=0, description="Timeout of one Binding POST (one retry after a timeout).")
    max_body_bytes: int = Field(64 * 2**20, gt=0, description="Larger request bodies are refused with 400.")
    decision_history: int = Field(1000, ge=0, description="Recent decisions kept for /debug/explain.")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    log_format: Literal["json", "text"] = Field("json", description="Log line format.")
    tls_cert_file: Path | None = Field(None, description="Serve HTTPS with this certificate (PEM; with "
                                                         "tls_key_file). Unset: plain HTTP.")
    tls_key_file: Path | None = Field(None, description="Private key of tls_cert_file (PEM).")
    tls_client_ca_file: Path | None = Field(None, description="Require a client certificate signed by this CA "
                                                              "for the verbs (mutual TLS: only kube-scheduler may "
                                                              "call); /healthz, /readyz, /metrics stay open.")
    bind_enabled: bool = Field(False, description="Serve POST /bind (kube-scheduler's bindVerb); needs "
                                                  "tls_client_ca_file. Off: /bind answers 404.")
    insecure_bind_without_client_ca: bool = Field(False, description="LOCAL TESTS ONLY: serve /bind to any caller "
                                                                     "without a client certificate (logged loudly).")
    debug_host: str = Field("127.0.0.1", description="Address of the /debug/* listener (reach it with "
                                                     "kubectl port-forward).")
    debug_port: int = Field(8889, ge=0, le=65535, description="Port of the /debug/* listener; 0: no debug "
                                                             "endpoints at all.")
    annotation_trust_fraction: float = Field(
        0.5, ge=0, le=1, description="A profile annotation claiming less than this fraction of the workload's "
                                     "trusted learned profile (cpu or memory) is not believed; 0: always believed.")
    # -- decision log, shadow mode, exploration, canary (issue #23; extender/README.md "Shadow mode") --
    decision_log_dir: Path | None = Field(None, description="Directory of the decision log (JSON-lines segments; "
                                                            "unset: no log).")
    decision_log_max_file_bytes: int = Field(64 * 2**20, ge=4096, description="A log segment is closed past this "
                                                                              "size and a new one started.")
    decision_log_max_bytes: int = Field(1024 * 2**20, ge=4096, description="Oldest segments are deleted while the "
                                                                           "log's segments total more than this.")
    decision_log_flush_ms: int = Field(1000, ge=1, le=60_000, description="Rows reach the kernel at least this "
                                                                          "often: what a kill -9 can lose.")
    decision_log_queue: int = Field(10_000, ge=1, description="Rows waiting for the writer; beyond, rows are dropped "
                                                              "and counted, the request never waits.")
    decision_log_nodes: int = Field(0, ge=0, description="Score vector entries kept per logged decision: the best "
                                                         "this many nodes plus the chosen and actual ones (0: all).")
    decision_log_input_nodes: int = Field(32, ge=0, description="Nodes per logged decision whose feature-encoder "
                                          "inputs are recorded (for the warm start): the best this many by score "
                                          "plus the chosen and actual ones (0: every node the row keeps).")
    shadow: bool = Field(False, description="Shadow mode: at each binding by a selected other scheduler, record "
                                            "what drsched would have chosen (binds and changes nothing).")
    shadow_scheduler_names: Annotated[list[str], NoDecode] = Field(
        ["default-scheduler"], description="Shadow the pods of these schedulerNames (comma-separated).")
    shadow_namespaces: Annotated[list[str], NoDecode] = Field(
        [], description="Shadow only pods in these namespaces (comma-separated; empty: all).")
    shadow_selector: str = Field("", description="Shadow only pods with these labels (k=v,k2=v2; empty: all).")
    shadow_replicas: int = Field(1, ge=1, description="Shadowing replicas sharing the work: each records the pods "
                                                      "whose UID hashes to its index, so a binding is recorded once.")
    shadow_replica_index: int | None = Field(None, ge=0, description="This replica's index among shadow_replicas "
                                             "(unset: the StatefulSet ordinal ending $HOSTNAME, else 0).")
    explore: bool = Field(False, description="Exploration: draw the top node among near-tied ones (score within "
                                             "explore_margin of the best) and log its propensity.")
    explore_margin: float = Field(1.0, ge=0, le=10, description="Nodes within this of the best 0-10 score are "
                                                               "near-tied for exploration.")
    explore_seed: int = Field(0, description="Seed of exploration's draw (a hash of seed and pod UID).")
    canary_namespaces: Annotated[list[str], NoDecode] = Field(
        [], description="Canary: drsched decides only for pods in these namespaces (comma-separated; with "
                        "canary_selector both must match); others get neutral answers. Empty: every namespace.")
    canary_selector: str = Field("", description="Canary: drsched decides only for pods with these labels "
                                                 "(k=v,k2=v2); empty: any labels.")
    pass_through: bool = Field(False, description="Rollback switch: drsched decides for no pod; every pod gets the "
                                                  "canary's neutral answers, so kube-scheduler decides alone.")

    @field_validator("monitor_agents", "prometheus_queries", "prometheus_instance_map", "pod_workloads",
                     mode="before")
    @classmethod
    def _mapping(cls, value: Any) -> Any:
        """A dict, JSON text, or k=v,k2=v2 (flags and env vars are strings)."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if text.startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not valid JSON: {exc.msg}") from None
        return dict(parse_pairs(text))

    @field_validator("score_mapping")
    @classmethod
    def _score_mapping(cls, value: str) -> str:
        return str(ScoreMapping.parse(value))

    @field_validator("workload_labels", "shadow_scheduler_names", "shadow_namespaces", "canary_namespaces",
                     mode="before")
    @classmethod
    def _list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [p.strip() for p in value.split(",") if p.strip()]
        return value

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource, dotenv_settings, file_secret_settings,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings)

    @model_validator(mode="after")
    def _combinations(self) -> Settings:
        if not self.url_prefix.startswith("/"):
            raise ValueError(f"url_prefix must start with '/', got {self.url_prefix!r}")
        if self.policy != "model" and self.policy not in SCORERS:
            raise ValueError(f"policy {self.policy!r} is neither 'model' nor a heuristic ({', '.join(SCORERS)})")
        if self.fallback_heuristic not in SCORERS:
            raise ValueError(f"fallback_heuristic {self.fallback_heuristic!r} is not one of {', '.join(SCORERS)}")
        if self.fallback_heuristic == "round-robin" or self.policy == "round-robin":
            raise ValueError("round-robin keeps state between calls; replicas behind one Service would disagree")
        if self.static_cluster is not None and self.kubeconfig is not None:
            raise ValueError("static_cluster and kubeconfig are exclusive: serve a file or a cluster, not both")
        if self.usage_provider is None:
            self.usage_provider = "static" if (self.static_cluster or self.usage_file) else "none"
        if self.usage_provider == "static" and self.static_cluster is None and self.usage_file is None:
            raise ValueError("usage_provider 'static' needs usage_file (or static_cluster to read usage from); "
                             "use usage_provider 'none' to score from requests only")
        if self.usage_provider == "prometheus" and not self.prometheus_url:
            raise ValueError("usage_provider 'prometheus' needs prometheus_url")
        if self.usage_provider == "monitor" and self.static_cluster is not None and not self.monitor_agents:
            raise ValueError("usage_provider 'monitor' with a static cluster needs monitor_agents (node: URL); "
                             "there is no API to find the agents in")
        try:
            parse_selector(self.monitor_selector)
        except ValueError as exc:
            raise ValueError(f"monitor_selector: {exc}") from None
        for name in ("shadow_selector", "canary_selector"):
            try:
                parse_selector(getattr(self, name))
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None
        if self.shadow and self.static_cluster is not None:
            raise ValueError("shadow needs a cluster to watch bindings in; a static_cluster has none")
        if self.shadow and not self.shadow_scheduler_names:
            raise ValueError("shadow needs shadow_scheduler_names (whose bindings to shadow)")
        if self.shadow_replica_index is None:
            self.shadow_replica_index = replica_ordinal(os.environ.get("HOSTNAME", "")) \
                if self.shadow_replicas > 1 else 0
        if self.shadow_replica_index is None or self.shadow_replica_index >= self.shadow_replicas:
            raise ValueError(f"shadow_replica_index must be in 0..{self.shadow_replicas - 1} (shadow_replicas "
                             f"{self.shadow_replicas}); $HOSTNAME {os.environ.get('HOSTNAME', '')!r} has no "
                             "StatefulSet ordinal")
        if self.decision_log_max_bytes < self.decision_log_max_file_bytes:
            raise ValueError("decision_log_max_bytes must be at least decision_log_max_file_bytes (one segment)")
        bad_urls = [u for u in self.monitor_agents.values() if not u.startswith(("http://", "https://"))]
        if bad_urls:
            raise ValueError(f"monitor_agents URLs must start with http:// or https://, got {bad_urls[0]!r}")
        unknown = sorted(set(self.prometheus_queries) - set(PROMETHEUS_QUERY_KEYS))
        if unknown or any(not self.prometheus_queries.get(k, "x") for k in ("cpu", "mem")):
            raise ValueError(f"prometheus_queries keys are {', '.join(PROMETHEUS_QUERY_KEYS)} (cpu and mem not "
                             f"empty); got {', '.join(unknown) or 'an empty cpu or mem query'}")
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("tls_cert_file and tls_key_file go together")
        if self.tls_client_ca_file is not None and self.tls_cert_file is None:
            raise ValueError("tls_client_ca_file (client certificates) needs HTTPS: set tls_cert_file and tls_key_file")
        if self.bind_enabled and self.tls_client_ca_file is None and not self.insecure_bind_without_client_ca:
            raise ValueError("bind_enabled needs tls_client_ca_file (only callers with a client certificate from "
                             "that CA may bind); for a local test only, add insecure_bind_without_client_ca")
        if self.debug_port and self.debug_port == self.port:
            raise ValueError(f"debug_port {self.debug_port} is the service port; the debug listener needs its own "
                             "(0 turns it off)")
        if self.usage_timeout_s >= self.usage_interval_s:
            raise ValueError("usage_timeout_s must be shorter than usage_interval_s")
        return self

    @property
    def mapping(self) -> ScoreMapping:
        """``score_mapping`` parsed (validated at start)."""
        return ScoreMapping.parse(self.score_mapping)

    @property
    def prefix(self) -> str:
        """``url_prefix`` without its trailing slash ("" for "/")."""
        return self.url_prefix.rstrip("/")

    def server_ssl_context(self) -> ssl.SSLContext | None:
        """The service port's TLS context: None for plain HTTP. With a client CA, a certificate is asked for
        (``CERT_OPTIONAL``): one that does not chain to the CA fails the handshake; a caller without one gets
        through to the open endpoints (kubelet probes, scrapes) and is refused the verbs by the app."""
        if self.tls_cert_file is None:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(self.tls_cert_file, self.tls_key_file)
        if self.tls_client_ca_file is not None:
            ctx.load_verify_locations(self.tls_client_ca_file)
            ctx.verify_mode = ssl.CERT_OPTIONAL
        return ctx

    def echo(self) -> dict[str, Any]:
        """The effective config as plain values, for the one start-up log line."""
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.model_dump().items()}


def replica_ordinal(hostname: str) -> int | None:
    """The ordinal a StatefulSet pod's name ends with (``drsched-extender-2`` -> 2); None without one."""
    head, sep, tail = hostname.rpartition("-")
    return int(tail) if sep and head and tail.isdigit() else None


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(None, f"{path}: cannot read config file: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(None, f"{path}: not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(None, f"{path}: config file must be a mapping of option: value")
    return {str(k).replace("-", "_"): v for k, v in data.items()}


def build_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings from the YAML file (``config_file`` or $DRSCHED_CONFIG), env vars, then ``overrides``.

    Raises ``ConfigError`` with every problem, naming the fields.
    """
    config_file = config_file or os.environ.get(CONFIG_ENV)
    file_values = _read_yaml(Path(config_file)) if config_file else {}
    env_names = {f"DRSCHED_{name.upper()}" for name in Settings.model_fields}
    # env beats the file: drop file keys that an env var sets, then let pydantic-settings read env.
    file_values = {k: v for k, v in file_values.items() if f"DRSCHED_{k.upper()}" not in os.environ}
    unknown = sorted(k for k in file_values if f"DRSCHED_{k.upper()}" not in env_names)
    if unknown:
        raise ConfigError(None, f"{config_file}: unknown option(s) {', '.join(unknown)}")
    try:
        return Settings(**{**file_values, **{k: v for k, v in overrides.items() if v is not None}})
    except ValidationError as exc:
        raise ConfigError(None, f"invalid configuration: {problems(exc)}") from None


@functools.lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings from file + env (cached). Tests override this dependency."""
    return build_settings()
