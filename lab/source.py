"""The lab's data source: ``python -m workloads source`` on the host, where pulling net jobs fetch their data.

Why it exists: in the multi-resource world (``policy.labworld.WORLDS``) a net job's speed must depend on its
node's link, so its bytes come from outside its pod and enter through the node's shaped bridge
(``harness.nodenet``). The source runs on the host like the control plane (``RealCluster.start_system_process``:
in the system cgroup under isolation, so its CPU is no node's) and listens on the host's address, which is every
pod's ``status.hostIP``: a pod finds it through the downward API (``pod_env``), and a job the migration controller
moves asks the same source from its new node. State: none here; the process is the cluster's, stopped with it or
by ``stop_source``.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from kubernetes import client

from harness.procs import free_port
from harness.realcluster import RealCluster
from policy.labworld import SOURCE_ENV

NAME = "drsched-source"
"""The source's name among the cluster's processes (its log: ``logs/drsched-source.log`` in the cluster's workdir)."""
HOST_IP_ENV = "DRSCHED_HOST_IP"
"""The pod's own variable for its node's address (``status.hostIP``), from which ``SOURCE_ENV`` is made."""
READY_TIMEOUT_S = 30.0
REPO = Path(__file__).resolve().parents[1]


def start_source(cluster: RealCluster) -> int:
    """Start the source on the cluster's host address and a free port; the port, once it accepts connections."""
    port = free_port()
    argv = [sys.executable, "-m", "workloads", "source", f"--port={port}", f"--bind={cluster.api_host}"]
    process = cluster.start_system_process(NAME, argv, env={**os.environ, "PYTHONPATH": str(REPO)})
    process.wait_ready(lambda: _accepts(cluster.api_host, port), timeout=READY_TIMEOUT_S)
    return port


def stop_source(cluster: RealCluster) -> None:
    cluster.stop_system_process(NAME)


def _accepts(host: str, port: int) -> bool:
    with socket.create_connection((host, port), timeout=1.0):
        return True


def pod_env(port: int) -> list[client.V1EnvVar]:
    """The variables a pulling job's container needs: its node's address from the downward API, then
    ``SOURCE_ENV`` as ``$(DRSCHED_HOST_IP):<port>`` (Kubernetes expands a variable defined before it)."""
    host = client.V1EnvVarSource(field_ref=client.V1ObjectFieldSelector(field_path="status.hostIP"))
    return [client.V1EnvVar(name=HOST_IP_ENV, value_from=host),
            client.V1EnvVar(name=SOURCE_ENV, value=f"$({HOST_IP_ENV}):{port}")]
