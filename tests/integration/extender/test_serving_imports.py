"""Serving a pod loads no simulator, training or evaluation code, for the model and for every scorer that reads
the contention model (import-linter checks the static graph; this checks what a running extender has loaded,
lazy imports included)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO

from .payloads import EXAMPLE

NOT_SERVED = ("policy.sim", "policy.env", "policy.train", "policy.evaluate", "policy.shaping", "policy.report",
              "policy.splits", "policy.migration_eval", "torch", "gymnasium", "stable_baselines3")

# filter + prioritize + explain through the real app on the example static cluster, then list what is loaded
_SERVE = """
import json, sys
from fastapi.testclient import TestClient
from extender.service import create_app
from extender.settings import build_settings
from tests.integration.extender.payloads import NODE_NAMES, args_names
app = create_app(build_settings(static_cluster={cluster!r}, policy={policy!r}))
with TestClient(app) as c:
    assert c.get("/readyz").json()["policy"] == {policy!r}, c.get("/readyz").json()
    for verb in ("filter", "prioritize"):
        reply = c.post("/" + verb, json=args_names(NODE_NAMES))
        assert reply.status_code == 200, (verb, reply.text)
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("policy", ["model", "lookahead", "demand-aware"])
def test_serving_a_pod_loads_no_simulator_or_training_code(policy: str) -> None:
    code = _SERVE.format(cluster=str(EXAMPLE), policy=policy)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert "policy.baselines.lookahead" in modules and "policy.fairshare" in modules  # the check sees imports
    bad = sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_SERVED))
    assert not bad, bad
