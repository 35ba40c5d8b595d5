"""The tenants scenario on real nodes (``lab.tenants``, ``lab.kube.tenant_pod``): the seed's tenants on the
cluster's nodes, a pod bound to its node that asks for little and runs the cpu job under its cycle, kept apart from
the jobs, the flag a protocol fixes, and the record."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes import client

from lab import report
from lab.cli import main, parse_args, plan_from_args
from lab.experiment import keep_tenants
from lab.gates import demand_from_jobs
from lab.kube import JOB_LABEL, RUN_LABEL, TENANT_LABEL, tenant_name, tenant_pod
from lab.regate import regate
from lab.report import read_rows
from lab.tenants import TENANT_FILE, TENANT_STARTED, LabTenant, demand_rows, lab_tenants, tenants_from_rows
from policy.labworld import REAL_NODES, TENANT_COLUMNS
from policy.tenants import Tenant, draw_tenants
from workloads.cli import build_parser
from workloads.jobs.cpucap import Cycle

ROOT = Path(__file__).resolve().parents[3]
ISOLATED = tuple(dataclasses.replace(s, cpu_millis=s.cpu_millis * 2 // 5) for s in REAL_NODES)  # 100/200/200/400


@pytest.mark.parametrize("shapes", [REAL_NODES, ISOLATED])
def test_a_seed_s_tenants_go_on_its_chosen_nodes_of_the_cluster_it_really_got(shapes) -> None:
    for seed in (601, 602, 603):
        placed = lab_tenants(seed, shapes, 2)
        drawn = draw_tenants(seed, [s.cpu_millis for s in shapes], 2)
        assert [p.tenant for p in placed] == list(drawn)
        assert [p.node_name for p in placed] == [shapes[t.node].name for t in drawn]
        assert len({p.node_name for p in placed}) == 2


def test_a_tenant_s_argv_runs_the_cpu_job_under_its_cycle_in_cores() -> None:
    (placed, *_) = lab_tenants(601, ISOLATED, 2)
    t = placed.tenant
    argv = placed.argv()
    args = build_parser("cpu").parse_args(argv)  # the workloads image's own parser takes it
    cycle = Cycle.parse(args.cores_cycle)
    assert args.kind == "cpu"
    assert (cycle.high, cycle.low) == (t.high_m / 1000, t.low_m / 1000)
    assert (cycle.period_s, cycle.high_s, cycle.phase_s) == (t.period_s, t.high_s, t.phase_s)
    for at in (0.0, 7.3, t.period_s * 2.5, 300.0):  # the job's cap is the tenant's use, second by second
        assert cycle.cores(at) * 1000 == pytest.approx(t.use_m(at))
    assert "--checkpoint-every=0" in argv and args.units >= 10**9


def test_the_tenant_pod_is_bound_to_its_node_asks_little_and_is_no_job_of_the_run() -> None:
    (placed, *_) = lab_tenants(602, ISOLATED, 2)
    pod = tenant_pod(placed, name=tenant_name("def-un601-1", 0), run_id="def-un601-1", image="drsched/workloads:x")
    spec, (container,) = pod.spec, pod.spec.containers
    assert spec.node_name == placed.node_name and spec.scheduler_name is None and spec.node_selector is None
    assert container.resources.requests == {"cpu": f"{placed.tenant.request_m}m", "memory": "64Mi"}
    assert container.resources.limits == {"memory": "128Mi"}  # no cpu limit: burstable, free to use more
    assert placed.tenant.high_m > placed.tenant.low_m >= 2 * placed.tenant.request_m  # use > request
    labels = pod.metadata.labels
    assert labels[TENANT_LABEL] == "def-un601-1" and RUN_LABEL not in labels and JOB_LABEL not in labels
    assert not (pod.metadata.annotations or {})  # no profile: drsched sees its use through the usage signal only
    assert not pod.metadata.name.startswith("def-un601-1")  # the run id prefixes the run's jobs (lab shadow)
    assert container.args == [*placed.argv(), "--log-level=WARNING"]
    assert spec.volumes[0].empty_dir is not None and spec.volumes[0].host_path is None


def test_the_flag_reaches_the_plan_a_protocol_fixes_it_and_a_node_holds_one_tenant(tmp_path: Path, capsys) -> None:
    assert plan_from_args(parse_args(["run", "--out", str(tmp_path)])).tenants == 0
    assert plan_from_args(parse_args(["run", "--out", str(tmp_path), "--tenants", "2"])).tenants == 2
    smoke = ROOT / "lab" / "protocols" / "ci-smoke.yaml"
    assert main(["run", "--out", str(tmp_path), "--protocol", str(smoke), "--tenants", "2", "--unregistered"]) == 2
    assert "the protocol fixes --tenants; drop them" in capsys.readouterr().out
    assert main(["run", "--out", str(tmp_path), "--tenants", "5"]) == 2
    assert "--tenants: 5 is not 0-4" in capsys.readouterr().out


def test_run_help_says_what_tenants_are(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--tenants N the tenants scenario" in text and "distinct seed-" in text
    assert "in no metric and not scored" in text


def test_tenants_csv_holds_each_seed_s_tenants_once(tmp_path: Path) -> None:
    draws = {seed: lab_tenants(seed, REAL_NODES, 2) for seed in (601, 602)}
    keep_tenants(tmp_path, draws)
    keep_tenants(tmp_path, draws)  # a resumed run: nothing twice
    rows = read_rows(tmp_path / TENANT_FILE)
    assert tuple(rows[0]) == TENANT_COLUMNS and len(rows) == 4
    assert [(int(r["seed"]), r["node"], int(r["high_m"])) for r in rows] == [
        (seed, p.node_name, p.tenant.high_m) for seed, placed in draws.items() for p in placed]


class FakeCluster:
    """Just what ``Lab.start_tenants`` / ``delete_tenants`` call: pods created run at once, a delete removes them."""

    def __init__(self) -> None:
        self.pods: list = []
        self.core = SimpleNamespace(list_namespaced_pod=self._list, delete_collection_namespaced_pod=self._delete)

    def create_pod(self, pod, namespace: str) -> None:
        since = datetime.fromtimestamp(1_000 + len(self.pods), tz=UTC)
        running = client.V1ContainerState(running=client.V1ContainerStateRunning(started_at=since))
        pod.metadata.namespace = namespace
        pod.status = client.V1PodStatus(phase="Running", container_statuses=[client.V1ContainerStatus(
            name="tenant", image="img", image_id="", ready=True, restart_count=0, state=running)])
        self.pods.append(pod)

    def _selected(self, namespace: str, label_selector: str) -> list:
        key, value = label_selector.split("=")
        return [p for p in self.pods if p.metadata.namespace == namespace and p.metadata.labels.get(key) == value]

    def _list(self, namespace: str, label_selector: str):
        return SimpleNamespace(items=self._selected(namespace, label_selector))

    def _delete(self, namespace: str, label_selector: str, grace_period_seconds: int) -> None:
        gone = self._selected(namespace, label_selector)
        self.pods = [p for p in self.pods if p not in gone]

    @staticmethod
    def poll(check, *, timeout: float, what: str):
        value = check()
        assert value is not None, what
        return value


def test_an_arm_s_tenants_start_in_the_jobs_namespace_before_its_jobs_and_go_with_its_end() -> None:
    from lab import kube

    lab = kube.Lab.__new__(kube.Lab)  # no cluster: only the tenants' creation and removal are under test
    lab.cluster = FakeCluster()
    tenants = lab_tenants(603, ISOLATED, 2)
    assert lab.start_tenants(tenants, run_id="mod-un603-1", image="img") == [1_000.0, 1_001.0]  # cycles' time 0
    assert lab.start_tenants([], run_id="def-un603-2", image="img") == []  # none: nothing made, nothing waited for
    assert [(p.metadata.namespace, p.spec.node_name) for p in lab.cluster.pods] == [
        (kube.JOBS_NS, t.node_name) for t in tenants]
    assert lab.cluster.core.list_namespaced_pod(kube.JOBS_NS, label_selector=f"{RUN_LABEL}=mod-un603-1").items == []
    lab.delete_tenants("mod-un603-1")
    assert lab.cluster.pods == []


def test_an_arm_starts_its_tenants_before_its_jobs_and_removes_them_even_when_interrupted(monkeypatch, tmp_path):
    from lab import experiment
    from lab.plan import Plan

    calls: list[str] = []

    class FakeLab:
        policy, hot_filter, migration_on = "model", None, False

        def set_arm(self, **_kw) -> None:
            calls.append("set_arm")

        def start_tenants(self, tenants, *, run_id, image) -> list[float]:
            calls.append(f"start {len(tenants)}")
            return [0.0] * len(tenants)

        def delete_tenants(self, run_id) -> None:
            calls.append("delete")

        def remove_run_state(self, run_id) -> None:
            calls.append("remove state")

    def interrupted(*_a, **_kw):
        calls.append("run_arm")
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "run_arm", interrupted)
    cluster = SimpleNamespace(shapes=ISOLATED, isolation=None, system_node=None, all_nodes=lambda: [],
                              node=lambda name: SimpleNamespace(cgroup_root=f"/{name}-absent"))
    plan = Plan(out=tmp_path, seeds=[603], arms=["default"], tenants=2)
    plan.schedules[603] = []
    plan.tenant_draws[603] = lab_tenants(603, ISOLATED, 2)
    with pytest.raises(KeyboardInterrupt):
        experiment._one(plan, FakeLab(), cluster, seed=603, arm="default", image="img", solos={}, types={},
                        largest="large", progress=lambda _line: None)
    assert calls == ["set_arm", "start 2", "run_arm", "remove state", "delete"]


def test_the_report_says_which_tenants_every_arm_ran_beside(tmp_path: Path) -> None:
    from lab.report import tenant_lines

    assert tenant_lines(tmp_path) == []  # no tenants.csv: no line
    keep_tenants(tmp_path, {601: lab_tenants(601, REAL_NODES, 2)})
    (line, _) = tenant_lines(tmp_path)
    (first, second) = lab_tenants(601, REAL_NODES, 2)
    assert line.startswith("Tenants (placed before every arm's jobs, in no table below): seed 601: ")
    assert f"{first.node_name} (asks {first.tenant.request_m} m, uses {first.tenant.high_m}/" in line
    assert second.node_name in line


# ---- what the tenants want, for the host-interference gate -----------------------------------------------------


KNOWN = LabTenant("rn-large", Tenant(node=3, request_m=20, high_m=300, low_m=80, period_s=40.0, high_s=10.0,
                                     phase_s=0.0))


def test_demand_rows_are_the_cycle_in_the_arm_s_time_as_the_gate_reads_jobs() -> None:
    rows = demand_rows([(KNOWN, -5.0)], until_s=60.0)  # its cycle began 5 s before the arm's clock
    want = demand_from_jobs(rows)
    for t in (0.0, 4.9, 5.1, 34.9, 35.1, 59.9):
        assert want("rn-large", t) == KNOWN.tenant.use_m(t + 5.0), t
    assert want("rn-large", 60.0) == 0 and want("rn-small", 10.0) == 0
    assert [(r["start_s"], r["finish_s"], r["cpu_use_m"]) for r in rows] == [
        (-5.0, 5.0, 300), (5.0, 35.0, 80), (35.0, 45.0, 300), (45.0, 60.0, 80)]


def test_tenants_csv_reads_back_as_the_tenants_it_recorded(tmp_path: Path) -> None:
    draws = {seed: lab_tenants(seed, ISOLATED, 2) for seed in (601, 602)}
    keep_tenants(tmp_path, draws)
    assert tenants_from_rows(read_rows(tmp_path / TENANT_FILE), [s.name for s in ISOLATED]) == draws


def _tenant_run(tmp_path: Path, *, started: bool) -> Path:
    """One run on rn-large (quota 400 m): its job wants 200 m and the node's tenant 300 m, the node used 300 m,
    never throttled, the node CPUs full: starved by the host, though the job alone would not make the node busy."""
    out = tmp_path / ("started" if started else "unstarted")
    out.mkdir()
    run = {"seed": 1, "arm": "default", "variant": "under"}
    report.append_rows(out, "nodes.csv", [{"node": s.name, "node_type": s.node_type, "cpu_quota_m": s.cpu_millis,
                                           "mem_mi": s.memory_mib, "net_mbit": s.net_mbit} for s in ISOLATED])
    report.append_rows(out, "jobs.csv", [{**run, "job": "j0", "node": "rn-large", "start_s": 0, "finish_s": 6,
                                          "cpu_use_m": 200}])
    report.append_rows(out, "counters.csv", [{**run, "t_s": float(i), "node": "rn-large", "nr_periods": 10 * i,
                                              "nr_throttled": 0, "throttled_ns": 0, "usage_ns": int(i * 300e6),
                                              "nr_bursts": "", "burst_ns": ""} for i in range(7)])
    report.append_rows(out, "system.csv", [{**run, "t_s": i + 0.003, "source": "cpu1", "role": "node",
                                            "usage_ns": "", "busy_ticks": 100 * i, "idle_ticks": 0} for i in range(7)])
    keep_tenants(out, {1: [KNOWN]})
    if started:
        report.append_rows(out, "events.csv", [{"seed": 1, "arm": "default", "t_s": -2.0, "node": "rn-large",
                                                "event": TENANT_STARTED, "value": KNOWN.cycle()}])
    return out


def test_regate_counts_what_the_tenant_wanted_from_when_its_cycle_began(tmp_path: Path) -> None:
    [with_tenant] = regate(_tenant_run(tmp_path, started=True))
    assert with_tenant["now"]["flagged"] == 1 and "6 of 6" in with_tenant["now"]["detail"]
    [unknown] = regate(_tenant_run(tmp_path, started=False))  # no start recorded: its want is not known
    assert unknown["now"]["flagged"] == 0
