"""Configuration of the node agent: one typed object per process.

Every field has a default and a one-line description; the same description is the
``--help`` text of its command-line flag (``monitor.__main__``). Precedence: flags, then
environment variables ``DRSCHED_MONITOR_<FIELD>`` (``NODE_NAME`` for the node name, as the
downward API sets it), then defaults. Settings are built by ``build_settings`` when the
process starts -- never at import -- so tests can build their own.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from monitor.errors import ConfigError

ENV_PREFIX = "DRSCHED_MONITOR_"


class MonitorSettings(BaseSettings):
    """Effective configuration of one monitor agent."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    host: str = Field("0.0.0.0", description="Address the HTTP server binds to.")
    port: int = Field(9847, ge=1, le=65535, description="TCP port of the HTTP server.")
    node_name: str = Field(
        default_factory=socket.gethostname,
        validation_alias=AliasChoices("node_name", "NODE_NAME", f"{ENV_PREFIX}NODE_NAME"),
        description="Node name reported in /usage and metrics (env NODE_NAME; default: hostname).",
    )
    interval: float = Field(1.0, gt=0, le=60, description="Seconds between samples; rates are over this interval.")
    window: int = Field(60, ge=1, le=86400, description="Samples kept for the window mean and max.")
    ewma_alpha: float = Field(
        0.2, gt=0, le=1, description="Weight of the newest sample in the EWMA (1 = no smoothing)."
    )
    proc_root: Path = Field(Path("/proc"), description="Mount point of the host's /proc (e.g. /host/proc).")
    cgroup_root: Path = Field(Path("/sys/fs/cgroup"), description="Mount point of the host's cgroup filesystem.")
    cgroup_parent: str = Field(
        "", description="Cgroup path under the root that holds kubepods (the kubelet's --cgroup-root; '' = top)."
    )
    cgroup_version: Literal["auto", "1", "2"] = Field(
        "auto", description="Cgroup version: auto detects v2 by <root>/cgroup.controllers, else v1."
    )
    interfaces: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Network interfaces to sum (comma-separated); empty = all but loopback."
    )
    disks: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Block devices to sum (comma-separated); empty = all whole physical disks."
    )
    pod_network: bool = Field(
        True, description="Read per-pod network counters from a pod process's /proc/<pid>/net/dev."
    )
    node_view: Literal["host", "cgroup"] = Field(
        "host", description="Where node-level usage comes from: host (/proc: a real node) or cgroup (for "
        "emulated nodes sharing one host: the node's cgroup subtree and --node-net-dev counters)."
    )
    node_cgroup: str = Field(
        "", description="With --node-view cgroup: the node's cgroup path under the cgroup root ('' = --cgroup-parent)."
    )
    node_net_dev: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="With --node-view cgroup: the node's bridge/veth devices in the host "
        "netns (comma-separated; NODE=DEV entries apply to that node only)."
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    pods_token_file: Path | None = Field(
        None, description="File with the token a non-loopback caller must send (Authorization: Bearer) to get "
        "per-pod readings; unset or missing: per-pod readings to loopback callers only."
    )

    @field_validator("interfaces", "disks", "node_net_dev", mode="before")
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("node_name")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("node name must not be empty")
        return value.strip()

    @model_validator(mode="after")
    def _node_cgroup_known(self) -> MonitorSettings:
        if self.node_view == "cgroup" and not (self.node_cgroup.strip("/") or self.cgroup_parent.strip("/")):
            raise ValueError("node_view cgroup needs node_cgroup (or cgroup_parent): the node's cgroup path")
        return self

    def node_cgroup_path(self) -> str:
        """The node's cgroup (node view ``cgroup``): ``node_cgroup``, else ``cgroup_parent``."""
        return self.node_cgroup.strip("/") or self.cgroup_parent.strip("/")

    def window_seconds(self) -> float:
        return self.window * self.interval


def build_settings(**overrides: Any) -> MonitorSettings:
    """Build the settings from ``overrides`` (flags), the environment and defaults.

    Raises ``ConfigError`` with every problem listed when the result is invalid.
    """
    try:
        return MonitorSettings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(None, f"invalid monitor configuration: {problems}") from exc
