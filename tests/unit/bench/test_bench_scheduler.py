"""bench/bench_scheduler.py's control-plane comparison: the right processes summed, each round against its own no-op."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest
import yaml

from harness.cluster import Binaries, ControlPlane

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))  # the script imports its neighbours as top-level modules
_spec = importlib.util.spec_from_file_location("bench_scheduler", ROOT / "bench" / "bench_scheduler.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def _arm(ms: dict[str, float], above: dict[str, float] | None = None) -> dict:
    return {"cpu_per_pod": {k: 99.0 for k in ms},  # to the last binding: not what the comparison reads
            "cpu_settled_per_pod": {k: v / 1000 for k, v in ms.items()},
            "cpu_above_idle_per_pod": {k: v / 1000 for k, v in (above or {}).items()}}


def test_the_control_plane_is_everything_but_the_extender():
    arm = _arm({"extender": 100.0, "kube-scheduler": 1.0, "kube-apiserver": 2.0, "etcd": 0.5, "kwok": 0.5})
    assert bench.control_plane_ms(arm, "cpu_settled_per_pod") == pytest.approx(4.0)


def test_each_drsched_round_is_compared_with_its_own_no_op_round():
    cp = {"kube-scheduler": 1.0, "kube-apiserver": 1.0, "etcd": 0.0, "kwok": 0.0}
    arms = {"no extender": _arm(cp),
            "no-op extender": _arm(cp, cp), "drsched, baseline tree": _arm({**cp, "etcd": 9.0}),
            "drsched": _arm({**cp, "kube-apiserver": 2.0}, {**cp, "kube-apiserver": 1.5}),
            "no-op extender #2": _arm({**cp, "kube-apiserver": 3.0}),
            "drsched #2": _arm({**cp, "kube-apiserver": 3.0})}
    (s1, all1, above1), (s2, all2, above2) = bench.control_plane_excess(arms)
    assert (s1, s2) == ("", " #2")
    assert all1 == pytest.approx(0.5) and above1 == pytest.approx(0.25)
    assert all2 == pytest.approx(0.0) and math.isnan(above2)  # no idle figures in round 2


def test_the_audited_apiserver_logs_every_request_at_metadata_level(tmp_path):
    cp = ControlPlane(workdir=tmp_path, binaries=Binaries(tmp_path), audit=True)
    args = dict(a.removeprefix("--").split("=", 1) for a in cp._audit_args())
    assert args["audit-log-path"] == str(cp.audit_log)
    policy = yaml.safe_load(Path(args["audit-policy-file"]).read_text())
    assert policy["rules"] == [{"level": "Metadata"}] and "RequestReceived" in policy["omitStages"]
    assert ControlPlane(workdir=tmp_path, binaries=Binaries(tmp_path))._audit_args() == []


def test_a_run_refuses_to_start_when_its_results_file_exists(tmp_path, capsys):
    existing = tmp_path / "scheduler-20261203T1807.json"
    existing.write_text("{}")
    with pytest.raises(SystemExit) as exc:
        bench.main(["--results", str(existing)])  # before any cluster starts: an error at once, not after the run
    assert exc.value.code == 2 and "exists; every run keeps its own file" in capsys.readouterr().err
    assert existing.read_text() == "{}"
