"""CI's smoke run of the lab (`lab/protocols/ci-smoke.yaml`: 1 seed, `default` and `model`, 16 small jobs) on
its own isolated cluster, as `python -m lab run --protocol` runs it: the cluster is isolated where the machine
allows it, the jobs scaled to the nodes it got, every job runs to exit 0, and every gate is checked and
recorded -- host interference from the node counters, the placement of every system pod and process, and for
the drsched arm that the extender scored its pods (its decision log). An arm a gate flags is listed with its
reason instead of tabled; which happens depends on the machine, so each arm must do exactly one of the two.

It starts its own cluster, so it runs before the package's shared one (conftest orders tests without
`real_cluster` first), waiting for the machine's real-node lock as any lab run does."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from harness import deploy as harness_deploy
from harness.imagecache import find_image
from harness.isolation import SYSTEM_CGROUP, SYSTEM_NODE, Isolation, IsolationUnavailable
from lab.cli import build_parser, plan_from_args
from lab.experiment import run
from lab.report import read_rows
from lab.shadow import shadow_check
from policy.labworld import JOB_COLUMNS

pytestmark = [pytest.mark.e2e, pytest.mark.realnodes]
SMOKE = Path(__file__).resolve().parents[3] / "lab" / "protocols" / "ci-smoke.yaml"


@pytest.mark.timeout(1500)  # a cold machine also builds the control plane and imports every image
def test_ci_smoke_protocol_runs_isolated_and_checks_every_gate(
    node_binaries, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("extender", "monitor", "migration", "workloads"):
        if find_image(name) is None:
            pytest.skip(f"IMAGES NOT BUILT: no {name} image in the image cache; run `make images` first")
    try:
        Isolation.for_this_machine()
        isolatable = True
    except IsolationUnavailable:
        isolatable = False
    out = tmp_path / "smoke"
    plan = plan_from_args(build_parser().parse_args(["run", "--out", str(out), "--protocol", str(SMOKE)]))
    lines: list[str] = []
    started = time.monotonic()
    run(plan, lines.append)
    wall_s = time.monotonic() - started
    with capsys.disabled():
        print(f"\nci-smoke lab run: {wall_s:.0f} s wall")  # noqa: T201 (a figure for the report, not a gate)

    record = json.loads((out / "isolation.json").read_text())
    assert record["isolated"] is isolatable, record
    nodes = {r["node"]: int(r["cpu_quota_m"]) for r in read_rows(out / "nodes.csv")}
    assert nodes == record["node_quotas_m"]
    if isolatable:
        assert sum(nodes.values()) <= record["isolation"]["node_budget_millis"]

    rows = read_rows(out / "jobs.csv")
    assert tuple(rows[0]) == JOB_COLUMNS
    assert sorted((r["arm"], r["job"]) for r in rows) == sorted(
        (arm, f"j{i:03d}") for arm in ("default", "model") for i in range(16))
    for row in rows:
        assert row["exit_code"] == "0", row
        assert row["node"] in nodes, row
        assert float(row["cpu_request_m"]) <= nodes[row["node"]], row  # the scaled jobs fit where they ran

    gates = {(r["arm"], r["gate"]): r for r in read_rows(out / "gates.csv")}
    assert ("default", "host-interference") in gates and ("model", "host-interference") in gates
    assert ("default", "scored") not in gates  # the default-scheduler's pods are not the extender's to score
    scored = gates[("model", "scored")]
    assert int(scored["value"]) < 16, scored  # the decision log proved at least some pods scored
    if isolatable:
        for arm in ("default", "model"):
            assert gates[(arm, "placement")]["flagged"] == "0", gates[(arm, "placement")]
        placement = json.loads((out / "placement.json").read_text())
        assert placement["isolation"]["node_cpus"] == record["isolation"]["node_cpus"]
        where = {p["component"]: p["node"] for p in placement["processes"]}
        drsched = [c for c in where if c.startswith(f"pod {harness_deploy.NS}/drsched-extender")]
        assert drsched and all(where[c] == SYSTEM_NODE for c in drsched), where
        system = read_rows(out / "system.csv")
        assert {r["role"] for r in system} >= {"system", "node", "cgroup"}
        assert any(r["source"] == SYSTEM_CGROUP for r in system)

    summary = (out / "summary.md").read_text()
    assert ("Host isolation: on." if isolatable else "Host isolation: OFF") in summary
    for arm in ("default", "model"):
        flagged = f"seed 1, arm `{arm}`, variant `under`: flagged, rerun -- " in summary
        tabled = f"| {arm} | 1 |" in summary
        assert flagged != tabled, (arm, summary)
    assert any("seed 1 arm model: done" in line for line in lines), lines
    # shadow mode in the default arm (issue #23 D6): the run kept the extender's log, and it holds the default
    # scheduler's bindings with drsched's choice and the pods' outcomes, which `lab shadow` reads
    runs = read_rows(out / "runs.csv")
    assert sorted(r["arm"] for r in runs) == ["default", "model"]
    check = shadow_check(out)
    (seed,) = check["seeds"]
    assert seed["seed"] == 1 and 0 < seed["shadowed"] <= 16 and seed["estimated"] > 0, check
    assert seed["predicted"] is not None and seed["measured"] is not None, check
