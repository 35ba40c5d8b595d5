"""The lab runs a world (``policy.labworld.WORLDS``): chosen by flag or protocol, recorded per results directory
(never mixed), the cluster's links checked against it, pulling jobs told where the source is, solos kept apart."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from lab.cli import main, parse_args, plan_from_args
from lab.errors import RunError
from lab.experiment import check_links, keep_world
from lab.schedule import make_schedule, parse_schedule
from lab.solo import cache_path
from lab.source import HOST_IP_ENV, pod_env
from policy.labworld import MULTI_NODES, REAL_NODES, SOURCE_ENV, TEMPLATES, WORLDS

SMOKE = Path(__file__).resolve().parents[3] / "lab" / "protocols" / "ci-smoke.yaml"


def test_the_world_flag_reaches_the_plan_and_a_protocol_fixes_it(tmp_path: Path, capsys) -> None:
    assert plan_from_args(parse_args(["run", "--out", str(tmp_path)])).world == "drs"
    assert plan_from_args(parse_args(["run", "--out", str(tmp_path), "--world", "multi-resource"])).world == \
        "multi-resource"
    named = tmp_path / "named.yaml"
    named.write_text(SMOKE.read_text().replace("scenario:\n", "scenario:\n  world: multi-resource\n", 1))
    assert plan_from_args(parse_args(["run", "--out", str(tmp_path), "--protocol", str(named),
                                      "--unregistered"])).world == "multi-resource"
    assert main(["run", "--out", str(tmp_path), "--protocol", str(SMOKE), "--world", "multi-resource",
                 "--unregistered"]) == 2
    assert "the protocol fixes --world; drop them" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        parse_args(["run", "--out", str(tmp_path), "--world", "mars"])


def test_the_schedule_command_draws_the_named_world(capsys) -> None:
    assert main(["schedule", "--seed", "4", "--jobs", "40", "--world", "multi-resource"]) == 0
    jobs = parse_schedule(capsys.readouterr().out, path="stdout")
    assert jobs == make_schedule(seed=4, jobs=40, world=WORLDS["multi-resource"])
    assert "net-p" in {j.template for j in jobs} and "net-m" not in {j.template for j in jobs}


def test_a_results_directory_never_mixes_worlds(tmp_path: Path) -> None:
    keep_world(tmp_path, WORLDS["multi-resource"])
    keep_world(tmp_path, WORLDS["multi-resource"])  # the same again: resumes
    record = json.loads((tmp_path / "world.json").read_text())
    assert record["world"] == "multi-resource" and record["links_mbit"]["rn-large"] == 10
    with pytest.raises(RunError, match="ran in world 'multi-resource', this run is in 'drs'"):
        keep_world(tmp_path, WORLDS["drs"])
    old = tmp_path / "old"  # a directory from before worlds: runs (nodes.csv), no world.json, so drs
    old.mkdir()
    (old / "nodes.csv").write_text("node,node_type,cpu_quota_m,mem_mi,net_mbit\n")
    with pytest.raises(RunError, match="ran in world 'drs'"):
        keep_world(old, WORLDS["multi-resource"])
    keep_world(old, WORLDS["drs"])
    (old / "world.json").write_text("[")
    with pytest.raises(RunError, match="not a world record"):
        keep_world(old, WORLDS["drs"])


def test_a_given_cluster_must_have_the_worlds_links() -> None:
    check_links(SimpleNamespace(shapes=MULTI_NODES), WORLDS["multi-resource"])
    with pytest.raises(RunError, match="not world 'multi-resource'"):
        check_links(SimpleNamespace(shapes=REAL_NODES), WORLDS["multi-resource"])


def test_a_pulling_pod_finds_the_source_at_its_own_nodes_address() -> None:
    host, source = pod_env(9123)
    assert (host.name, host.value_from.field_ref.field_path) == (HOST_IP_ENV, "status.hostIP")
    assert (source.name, source.value) == (SOURCE_ENV, f"$({HOST_IP_ENV}):9123")
    assert f"--source-env={source.name}" in TEMPLATES["net-p"].args


def test_solo_times_are_kept_per_world_since_the_nodes_links_differ() -> None:
    argv = make_schedule(seed=1, jobs=1)[0].argv()
    drs, multi = ({cache_path(image_digest="d", shape=s, argv=argv) for s in nodes} for nodes in (REAL_NODES,
                                                                                                 MULTI_NODES))
    assert not drs & multi


def test_only_pulling_pods_get_the_source_and_none_running_is_an_error(monkeypatch, tmp_path: Path) -> None:
    from lab import kube

    created = []
    lab = kube.Lab.__new__(kube.Lab)  # no cluster: only submit's pod spec is under test
    lab.cluster = SimpleNamespace(create_pod=lambda pod, namespace: created.append(pod))
    lab.source_port = None
    monkeypatch.setattr(kube.Lab, "state_dir", lambda self, run_id, job: tmp_path)
    multi = make_schedule(seed=11, jobs=40, world=WORLDS["multi-resource"])
    pull, cpu = (next(j for j in multi if j.kind == kind) for kind in ("net", "cpu"))
    lab.submit(cpu, run_id="r", image="img", scheduler=None, expected_s=10.0)
    with pytest.raises(RunError, match=f"job {pull.job} .net-p. pulls from the lab's source, and none runs"):
        lab.submit(pull, run_id="r", image="img", scheduler=None, expected_s=10.0)
    lab.source_port = 9123
    lab.submit(pull, run_id="r", image="img", scheduler=None, expected_s=10.0)
    cpu_pod, pull_pod = created
    assert cpu_pod.spec.containers[0].env is None
    assert [e.name for e in pull_pod.spec.containers[0].env] == [HOST_IP_ENV, SOURCE_ENV]
    assert f"--source-env={SOURCE_ENV}" in pull_pod.spec.containers[0].args


def test_the_report_says_which_world_the_run_was_in(tmp_path: Path) -> None:
    from lab.report import ReportError, world_lines

    assert world_lines(tmp_path) == []  # a directory from before worlds
    keep_world(tmp_path, WORLDS["multi-resource"])
    (line, _) = world_lines(tmp_path)
    assert line.startswith("World: `multi-resource` (CPU and link speed do not scale together")
    assert line.endswith("node links rn-small 80, rn-medium 20, rn-medium-mem 20, rn-large 10 Mbit/s.")
    (tmp_path / "world.json").write_text('{"world": "drs"}')
    with pytest.raises(ReportError, match="not a world record"):
        world_lines(tmp_path)


def test_nodes_csv_records_each_nodes_link_which_isolation_leaves_alone() -> None:
    from harness.isolation import scale_shapes
    from lab.records import node_rows

    rows = node_rows(scale_shapes(WORLDS["multi-resource"].nodes, 900))
    assert [(r["node"], r["cpu_quota_m"], r["net_mbit"]) for r in rows] == [
        ("rn-small", 100, 80), ("rn-medium", 200, 20), ("rn-medium-mem", 200, 20), ("rn-large", 400, 10)]
