"""The runbook's two rollback switches, as written there, work on the shipped extender Deployment.

* To a heuristic: the runbook's JSON patch applies to ``manifests/extender/deployment.yaml`` (its ``test``
  operation holds), the patched flags parse to ``policy: demand-aware``, and an extender with that policy
  serves it without calling itself degraded; the patch with its values swapped undoes it.
* To pass-through: the runbook's env var turns ``pass_through`` on, and then every pod gets neutral answers
  (filter passes every node, hot and unknown ones too; prioritize scores 0), counted per verb.
"""

from __future__ import annotations

import copy
import json
import re

import pytest
import yaml
from fastapi.testclient import TestClient

from extender.__main__ import build_parser
from extender.service import create_app
from extender.settings import build_settings
from tests.helpers import REPO
from tests.integration.extender.payloads import EXAMPLE, NODE_NAMES, args_names, static_settings

from .rules import RUNBOOK

DEPLOYMENT = REPO / "manifests" / "extender" / "deployment.yaml"


def runbook_section(title: str) -> str:
    text = RUNBOOK.read_text()
    start = text.index(f"### {title}\n")
    end = text.find("\n#", start + 4)
    return text[start:end if end > 0 else None]


def json_patch(doc: dict, ops: list[dict]) -> dict:
    """RFC 6902 ``test`` and ``replace`` -- the two operations the runbook uses -- on a copy of ``doc``."""
    doc = copy.deepcopy(doc)
    for op in ops:
        *parents, last = [int(p) if p.isdigit() else p for p in op["path"].lstrip("/").split("/")]
        target = doc
        for key in parents:
            target = target[key]
        if op["op"] == "test":
            assert target[last] == op["value"], f"the runbook's test operation fails: {target[last]!r}"
        elif op["op"] == "replace":
            target[last] = op["value"]
        else:
            raise AssertionError(f"unexpected operation {op['op']}")
    return doc


def container_args(deployment: dict) -> list[str]:
    return deployment["spec"]["template"]["spec"]["containers"][0]["args"]


def test_the_heuristic_switch_patches_the_shipped_flag_and_serves_the_heuristic():
    ops = json.loads(re.search(r"-p '(\[.*?\])'", runbook_section("To a heuristic"), flags=re.S).group(1))
    shipped = yaml.safe_load(DEPLOYMENT.read_text())
    patched = json_patch(shipped, ops)
    flags = vars(build_parser().parse_args(container_args(patched)))
    assert vars(build_parser().parse_args(container_args(shipped)))["policy"] == "model"
    assert flags["policy"] == "demand-aware"
    undo = [{**op, "value": {o["value"] for o in ops if o["op"] != op["op"]}.pop()} for op in ops]
    assert json_patch(patched, undo) == shipped

    with TestClient(create_app(static_settings(policy=flags["policy"]))) as client:
        ready = client.get("/readyz").json()
        scores = [h["Score"] for h in client.post("/prioritize", json=args_names()).json()]
        metrics = client.get("/metrics").text
    assert ready["status"] == "ready" and ready["policy"] == "demand-aware"
    assert len(set(scores)) > 1  # it still decides
    assert 'drsched_extender_model_info{degraded="false",policy="demand-aware"' in metrics
    assert 'drsched_extender_decisions_total{policy="demand-aware",verb="prioritize"} 1.0' in metrics


def test_the_pass_through_switch_answers_every_pod_neutrally(monkeypatch):
    env = re.search(r"set env deployment/drsched-extender (DRSCHED_\w+)=(\w+)",
                    runbook_section("To pass-through (neutral scores)"))
    assert env, "the runbook's set env command"
    monkeypatch.setenv(env.group(1), env.group(2))
    settings = build_settings(static_cluster=str(EXAMPLE))
    assert settings.pass_through is True
    monkeypatch.delenv(env.group(1))
    assert build_settings(static_cluster=str(EXAMPLE)).pass_through is False

    with TestClient(create_app(static_settings())) as client:  # off: drsched filters and scores
        filtered = client.post("/filter", json=args_names()).json()
        decided = [h["Score"] for h in client.post("/prioritize", json=args_names()).json()]
    assert filtered["FailedNodes"] and len(set(decided)) > 1
    with TestClient(create_app(settings)) as client:
        filtered = client.post("/filter", json=args_names(NODE_NAMES + ["ghost"])).json()
        scores = [h["Score"] for h in client.post("/prioritize", json=args_names()).json()]
        metrics = client.get("/metrics").text
    assert filtered["NodeNames"] == NODE_NAMES + ["ghost"] and filtered["FailedNodes"] == {}
    assert scores == [0] * len(NODE_NAMES)
    assert 'drsched_extender_canary_neutral_total{verb="filter"} 1.0' in metrics
    assert 'drsched_extender_canary_neutral_total{verb="prioritize"} 1.0' in metrics


@pytest.mark.parametrize("body", [b"not json", b'{"Pod": 5, "NodeNames": []}', b"[" * 5000, b" " * 2048])
def test_bodies_refused_before_the_route_count_as_bad_requests(body):
    """``DrschedExtenderBadRequests`` reads requests_total{outcome="bad_request"}: a 400 for a body the
    extender cannot read is counted there like one it cannot serve, under the verb it was sent to."""
    with TestClient(create_app(static_settings(max_body_bytes=1024))) as client:
        for verb in ("filter", "prioritize"):
            assert client.post(f"/{verb}", content=body, headers={"content-type": "application/json"}).status_code \
                == 400
        assert 400 <= client.post("/nope", content=body).status_code < 500  # no verb: not counted
        metrics = client.get("/metrics").text
    counted = [line for line in metrics.splitlines() if line.startswith("drsched_extender_requests_total{")]
    assert sorted(counted) == [f'drsched_extender_requests_total{{outcome="bad_request",verb="{verb}"}} 1.0'
                               for verb in ("filter", "prioritize")]
