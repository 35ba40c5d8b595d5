"""What an isolated lab run records and checks: the system CPU set's use (system.csv), the scored gate from
the extender's decision log, the placement gate, and the run's isolation record (isolation.json)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from harness.isolation import Isolation
from lab import report
from lab.counters import system_sampler
from lab.errors import RunError
from lab.experiment import choose_isolation, keep_isolation
from lab.gates import (
    CpuTimes,
    GateError,
    SystemSample,
    flagged_runs,
    gate_rows,
    read_system_rows,
    system_pods_on_job_nodes,
    system_rows,
    system_use,
)
from lab.kube import DECISIONS_MOUNT, SHADOW_ARGS, _lab_settings, scored_uids, served_versions
from policy.decisionlog import decision_row, filter_row, outcome_row

PROC_STAT = "cpu  9 0 9 9 0 0 0 0 0 0\ncpu0 {a} 0 {b} 100 0 0 0 0 0 0\ncpu1 {c} 0 0 {d} 0 0 0 0 0 0\nintr 1 2\n"


def _cgroup(fs: Path, path: str, usage: int) -> None:
    for hierarchy in ("cpu", "cpuacct"):
        (fs / hierarchy / path.strip("/")).mkdir(parents=True, exist_ok=True)
    (fs / "cpu" / path.strip("/") / "cpu.stat").write_text("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n")
    (fs / "cpuacct" / path.strip("/") / "cpuacct.usage").write_text(f"{usage}\n")


# ---- the system CPU set's use --------------------------------------------------------------------------------


def test_system_sampler_reads_the_system_cgroups_and_every_cpu_with_its_set(tmp_path: Path) -> None:
    _cgroup(tmp_path, "/drsched-system", 1_000_000_000)
    stat = tmp_path / "stat"
    stat.write_text(PROC_STAT.format(a=50, b=10, c=90, d=10))
    sample = system_sampler(["/drsched-system", "/rn-gone.runtime"], cpu_roles={0: "system", 1: "node"},
                            fs=tmp_path, proc_stat=stat)
    got = sample(1.0)
    assert got == [SystemSample(1.0, "/drsched-system", "cgroup", usage_ns=1_000_000_000),
                   SystemSample(1.0, "cpu0", "system", times=CpuTimes(busy=60, idle=100)),
                   SystemSample(1.0, "cpu1", "node", times=CpuTimes(busy=90, idle=10))]
    stat.write_text("garbage\n")
    assert [s.source for s in sample(2.0)] == ["/drsched-system"]  # an unreadable /proc/stat drops its rows only


def test_system_use_is_busy_share_per_cpu_set_and_millicores_per_cgroup() -> None:
    def at(t: float, usage: int, busy0: int, busy1: int) -> list[SystemSample]:
        return [SystemSample(t, "/drsched-system", "cgroup", usage_ns=usage),
                SystemSample(t, "cpu0", "system", times=CpuTimes(busy=busy0, idle=1000 - busy0 + int(t) * 100)),
                SystemSample(t, "cpu1", "node", times=CpuTimes(busy=busy1, idle=0))]

    # 2 s: the system cgroup used 0.5 s of CPU (250 m); cpu0 was busy 50 of 200 ticks, cpu1 all 100.
    use = system_use(at(2.0, 1_500_000_000, 100, 300) + at(0.0, 1_000_000_000, 50, 200))
    assert use.cgroup_m == {"/drsched-system": 250.0}
    assert use.system_busy == pytest.approx(50 / 200) and use.node_busy == 1.0
    backwards = system_use(at(0.0, 9, 0, 0) + at(1.0, 1, 0, 0))  # a recreated cgroup: nothing to say
    assert backwards.cgroup_m == {} and backwards.node_busy is None


def test_system_csv_round_trips_and_a_bad_row_names_its_line() -> None:
    samples = [SystemSample(0.5, "/rn-system", "cgroup", usage_ns=7),
               SystemSample(0.5, "cpu1", "", times=CpuTimes(3, 4))]
    rows = [{k: str(v) for k, v in r.items()} for r in system_rows(samples, seed=1, arm="model", variant="under")]
    assert read_system_rows(rows) == samples
    with pytest.raises(GateError, match=r"system.csv:3: a row that does not parse"):
        read_system_rows([rows[0], {**rows[1], "busy_ticks": "x"}])


# ---- scored ---------------------------------------------------------------------------------------------------


def _row(uid: str, mode: str = "serve") -> dict:
    return decision_row(ts=1.0, replica="r", mode=mode, pod=("lab", f"pod-{uid}", uid), requests=[0.1, 0.1],
                        demand=[0.1, 0.1, 0, 0], demand_source="profile", policy="model", model_version="v1",
                        nodes=["rn-small", "rn-large"], scores=[3, 7], raw=[0.3, 0.7], chosen="rn-large")


def test_scored_uids_are_the_serve_rows_of_every_segment(tmp_path: Path) -> None:
    (tmp_path / "decisions-20261201T000000.000000Z.jsonl").write_bytes(
        b"".join(orjson.dumps(r) + b"\n" for r in (_row("u1"), _row("u2", mode="shadow"))))
    outcome = outcome_row(ts=2.0, replica="r", pod=("lab", "pod-u3", "u3"), node="rn-small", phase="Succeeded",
                          created=1.0, started=1.5, finished=2.0)
    # A second segment (the extender restarted for the next arm), its last line torn by a kill.
    (tmp_path / "decisions-20261201T000100.000000Z.jsonl").write_bytes(
        orjson.dumps(_row("u4")) + b"\n" + orjson.dumps(outcome) + b"\n" + b'{"v": 1, "ki')
    assert scored_uids(tmp_path) == {"u1", "u4"}  # shadow rows and outcomes prove no score


def test_served_versions_are_each_pod_s_serve_rows_versions(tmp_path: Path) -> None:
    stale = {**_row("u2"), "model_version": "heuristic:demand-aware"}  # the previous arm's extender answered
    (tmp_path / "decisions-20261201T000000.000000Z.jsonl").write_bytes(
        b"".join(orjson.dumps(r) + b"\n" for r in (_row("u1"), stale, _row("u3", mode="shadow"))))
    assert served_versions(tmp_path) == {"u1": {"v1"}, "u2": {"heuristic:demand-aware"}}
    assert served_versions(tmp_path / "missing") == {}


def test_a_pod_filtered_to_one_node_had_nothing_to_score(tmp_path: Path) -> None:
    # kube-scheduler binds a pod with one feasible node without calling prioritize: the filter row says so.
    sole = filter_row(ts=1.0, replica="r", pod=("lab", "pod-u5", "u5"), passed=1, nodes_total=4)
    (tmp_path / "decisions-20261201T000000.000000Z.jsonl").write_bytes(
        orjson.dumps(_row("u1")) + b"\n" + orjson.dumps(sole) + b"\n")
    assert scored_uids(tmp_path) == {"u1", "u5"}


def test_an_unreadable_decision_log_scores_nothing(tmp_path: Path) -> None:
    assert scored_uids(tmp_path / "missing") == set()
    (tmp_path / "decisions-20261201T000000.000000Z.jsonl").write_text('{"not": "a row"}\n')
    assert scored_uids(tmp_path) == set()


def test_the_lab_extender_writes_its_decision_log_to_the_host_directory(tmp_path: Path) -> None:
    docs = [{"kind": "Deployment", "metadata": {"name": "drsched-extender"}, "spec": {"replicas": 2, "template": {
        "spec": {"containers": [{"name": "extender", "args": ["--policy=model"]}]}}}}]
    _lab_settings(docs, decision_dir=tmp_path)
    spec = docs[0]["spec"]["template"]["spec"]
    assert docs[0]["spec"]["replicas"] == 1
    args = spec["containers"][0]["args"]
    assert args == ["--policy=model", f"--decision-log-dir={DECISIONS_MOUNT}", *SHADOW_ARGS]
    # the extender's own parser takes them: shadow mode on the lab's namespace, the default scheduler's pods
    from extender.__main__ import build_parser
    from extender.settings import build_settings

    parsed = vars(build_parser().parse_args(args))
    parsed.pop("config")
    settings = build_settings(None, **parsed)
    assert settings.shadow and settings.shadow_namespaces == ["lab"]
    assert settings.shadow_scheduler_names == ["default-scheduler"]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "lab-decisions", "mountPath": DECISIONS_MOUNT}]
    assert spec["volumes"] == [{"name": "lab-decisions", "hostPath": {"path": str(tmp_path), "type": "Directory"}}]


def test_an_unscored_pod_flags_its_arm_for_a_rerun() -> None:
    rows = gate_rows(seed=1, arm="model", variant="under", missing=["lab/j003"], pods=16)
    assert rows[0]["gate"] == "scored" and rows[0]["flagged"] == 1
    why = flagged_runs([{k: str(v) for k, v in r.items()} for r in rows])[(1, "model", "under")]
    assert why == ["scored: unscored: 1 of 16 pods not scored by the arm's policy: lab/j003"]


# ---- placement ------------------------------------------------------------------------------------------------


def test_a_system_pod_on_a_job_node_is_found_and_flags_the_arm() -> None:
    pods = [("lab", "rn-small"), ("drsched-system/drsched-extender-abc", "rn-system"),
            ("drsched-system/drsched-monitor-x1", "rn-small"), ("lab/run-j001", "rn-large"),
            ("drsched-system/drsched-migration-q", "rn-medium"), ("kube-system/coredns", "rn-system")]
    found = system_pods_on_job_nodes(pods, job_nodes=["rn-small", "rn-medium", "rn-large"], jobs_namespace="lab")
    assert found == ["drsched-system/drsched-migration-q on rn-medium", "lab on rn-small"]
    rows = gate_rows(seed=2, arm="default", variant="under", misplaced=found[:1])
    assert (rows[0]["gate"], rows[0]["flagged"], rows[0]["value"]) == ("placement", 1, 1)
    ok = gate_rows(seed=2, arm="default", variant="under", misplaced=[])
    assert ok[0]["flagged"] == 0 and "no system pod on a job node" in ok[0]["detail"]


# ---- the run's isolation record ---------------------------------------------------------------------------------


def _record(isolated: bool, quotas: dict[str, int]) -> dict:
    iso = Isolation(system_cpus="0", node_cpus="1")
    return {"isolated": isolated, "why_not": None if isolated else "turned off",
            "isolation": iso.describe() if isolated else None, "node_quotas_m": quotas, "node_scale": 0.4}


def test_a_directory_is_resumed_only_with_the_isolation_it_started_with(tmp_path: Path) -> None:
    small = {"rn-small": 100, "rn-large": 400}
    keep_isolation(tmp_path, _record(True, small))
    keep_isolation(tmp_path, _record(True, small))  # the same again: resumes
    assert json.loads((tmp_path / "isolation.json").read_text())["isolation"]["node_cpus"] == "1"
    with pytest.raises(RunError, match=r"ran with isolated=True, this cluster has False"):
        keep_isolation(tmp_path, _record(False, small))
    with pytest.raises(RunError, match=r"node_quotas_m="):
        keep_isolation(tmp_path, _record(True, {"rn-small": 250, "rn-large": 1000}))


def test_no_isolate_says_so() -> None:
    iso, why = choose_isolation(False)
    assert iso is None and "--no-isolate" in why


def test_the_report_says_how_the_run_was_isolated_and_how_busy_the_cpu_sets_were(tmp_path: Path) -> None:
    keep_isolation(tmp_path, _record(True, {"rn-small": 100, "rn-large": 400}))
    samples = [SystemSample(t, "cpu0", "system", times=CpuTimes(busy=10 * t, idle=90 * t)) for t in (0, 1, 2)]
    samples += [SystemSample(t, "/drsched-system", "cgroup", usage_ns=int(t * 1e8)) for t in (0, 2)]
    report.append_rows(tmp_path, "system.csv", system_rows(samples, seed=3, arm="model", variant="under"))
    text = "\n".join(report.isolation_lines(tmp_path))
    assert "Host isolation: on. System CPUs 0, node CPUs 1; node quotas 100/400 m" in text
    assert "| 3 | model | under | 10 % | n/a | /drsched-system 100 |" in text


def test_counters_csv_keeps_every_cpu_stat_field_and_cpuacct_usage(tmp_path: Path) -> None:
    from lab.gates import CpuStat, NodeSample
    from lab.observed import ArmResult
    from lab.records import counter_rows

    result = ArmResult(t0=0.0, counters=[NodeSample(1.0, "rn-small", CpuStat(10, 4, 500, nr_bursts=2, burst_ns=70), 9),
                                         NodeSample(2.0, "rn-small", CpuStat(20, 5, 600), 19)])
    report.append_rows(tmp_path, "counters.csv", counter_rows(result, seed=1, arm="model", variant="under"))
    got = report.read_rows(tmp_path / "counters.csv")
    assert [(r["nr_periods"], r["nr_throttled"], r["throttled_ns"], r["usage_ns"], r["nr_bursts"], r["burst_ns"])
            for r in got] == [("10", "4", "500", "9", "2", "70"), ("20", "5", "600", "19", "", "")]


