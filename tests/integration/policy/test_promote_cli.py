"""``python -m policy.promote`` as a user runs it: the shipped model against itself and against a broken copy."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from policy.model import load_model, save_model

SHIPPED = Path(__file__).resolve().parents[3] / "policy" / "models" / "default.npz"


def _run(*args, timeout=300):
    return subprocess.run(["nice", "-n", "15", sys.executable, "-m", "policy.promote", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def _copy(src: Path, dst_dir: Path, name: str = "default") -> Path:
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / f"{name}.npz"
    shutil.copy(src, dst)
    shutil.copy(src.with_suffix(".json"), dst.with_suffix(".json"))
    return dst


@pytest.fixture(scope="module")
def negated(tmp_path_factory) -> Path:
    """The shipped model with its output negated: it places every pod where the model thinks worst."""
    m = load_model(SHIPPED)
    weights, biases = list(m.weights), list(m.biases)
    weights[-1], biases[-1] = -weights[-1], -biases[-1]
    return save_model(tmp_path_factory.mktemp("bad") / "negated.npz", weights, biases, activation=m.activation,
                      meta={**m.meta, "version": "negated"})


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def test_help_names_the_rule():
    proc = _run("--help")
    assert proc.returncode == 0 and "--candidate" in proc.stdout and "upper bound is below 1" in proc.stdout


def test_identical_models_are_not_promoted_and_apply_replaces_nothing(tmp_path):
    served = _copy(SHIPPED, tmp_path / "served")
    before = _files(served.parent)
    report = tmp_path / "report.json"
    proc = _run("--candidate", SHIPPED, "--served", served, "--quick", "--seeds", "1", "--apply", "--report", report)
    assert proc.returncode == 1, proc.stderr
    assert "not promoted" in proc.stderr and "interval 1.000-1.000" in proc.stderr
    assert _files(served.parent) == before
    r = json.loads(report.read_text())
    assert r["decision"] == "not promoted" and not r["applied"] and r["interval"]["hi"] == pytest.approx(1.0)
    assert all(p["ratio"] == 1.0 for p in r["pairs"]) and len(r["pairs"]) == r["interval"]["n"] >= 12
    assert r["candidate"]["version"] == r["served"]["version"] == load_model(SHIPPED).version


def test_a_negated_candidate_is_not_promoted(tmp_path, negated):
    served = _copy(SHIPPED, tmp_path / "served")
    before = _files(served.parent)
    proc = _run("--candidate", negated, "--served", served, "--quick", "--seeds", "1", "--apply")
    assert proc.returncode == 1, proc.stderr
    r = json.loads(proc.stdout)
    assert r["decision"] == "not promoted" and r["interval"]["lo"] > 1 and r["candidate"]["version"] == "negated"
    assert _files(served.parent) == before


def test_the_shipped_model_replaces_a_negated_served_one_only_with_apply(tmp_path, negated):
    served = _copy(negated, tmp_path / "served", name="served")
    before = _files(served.parent)
    dry = _run("--candidate", SHIPPED, "--served", served, "--quick", "--seeds", "1")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["decision"] == "would promote (dry run)" and _files(served.parent) == before
    proc = _run("--candidate", SHIPPED, "--served", served, "--quick", "--seeds", "1", "--apply")
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["decision"] == "promoted" and r["interval"]["hi"] < 1 and r["served"]["version"] == "negated"
    assert served.read_bytes() == SHIPPED.read_bytes()
    assert served.with_suffix(".json").read_bytes() == SHIPPED.with_suffix(".json").read_bytes()
    prev = served.parent / "served.prev.npz"
    assert prev.read_bytes() == before["served.npz"] and load_model(prev).version == "negated"
    assert sorted(_files(served.parent)) == ["served.json", "served.npz", "served.prev.json", "served.prev.npz"]


def test_refuses_the_test_split_in_one_line(tmp_path):
    proc = _run("--candidate", SHIPPED, "--split", "test", "--quick")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "test split is reported on, never chosen on" in proc.stderr


@pytest.mark.parametrize("which", ["--candidate", "--served"])
def test_a_corrupt_npz_is_exit_2_with_one_line_naming_it(tmp_path, which):
    bad = _copy(SHIPPED, tmp_path / "bad", name="truncated")
    bad.write_bytes(SHIPPED.read_bytes()[:200])
    other = "--served" if which == "--candidate" else "--candidate"
    proc = _run(which, bad, other, SHIPPED, "--quick")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and str(bad) in proc.stderr and "cannot read weights" in proc.stderr


def _row_with_inputs(pod, *, jct):
    """A serve row as the extender writes it, with the inputs its encoder read, and the pod's outcome."""
    import numpy as np

    from policy.decisionlog import DecisionInputs, decision_row, outcome_row
    from policy.features import encode
    from policy.state import ClusterSnapshot, PodView

    snap = ClusterSnapshot(names=("a", "b"), capacity=np.array([[4.0, 16.0, 1000.0, 500.0]] * 2),
                           requested=np.array([[1.0, 2.0], [0.0, 0.0]]),
                           usage=np.array([[3.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]),
                           usage_age=np.array([5.0, 5.0]), assumed=np.zeros((2, 4)), pods=np.array([1.0, 0.0]),
                           max_pods=np.full(2, 110.0), ready=np.array([True, True]))
    view = PodView(requests=[2.0, 1.0], demand=[2.0, 1.0, 0.0, 0.0], demand_source="learned")
    return [decision_row(ts=3, replica="r", mode="serve", pod=pod, requests=view.requests, demand=view.demand,
                         demand_source="learned", policy="model", model_version="older", nodes=["a", "b"],
                         scores=[0, 10], raw=[-1.0, 0.0], chosen="b",
                         inputs=DecisionInputs(snap=snap, cluster=encode(snap, view).cluster, max_usage_age=60.0)),
            outcome_row(ts=4, replica="r", pod=pod, node="b", phase="Succeeded", created=0.0, started=1.0,
                        finished=jct)]


def test_log_reports_its_mean_and_warns_on_another_model_version(tmp_path):
    from policy.decisionlog import decision_row, outcome_row

    pod = ("ns", "p", "u")
    rows = [decision_row(ts=1, replica="r", mode="serve", pod=pod, requests=[1, 1], demand=[1, 1, 0, 0],
                         demand_source="requests", policy="model", model_version="older", nodes=["a"], scores=[10],
                         raw=[1.0], chosen="a"),
            outcome_row(ts=2, replica="r", pod=pod, node="a", phase="Succeeded", created=0.0, started=1.0,
                        finished=42.0)]
    rows += _row_with_inputs(("ns", "q", "v"), jct=42.0)
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "decisions-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    served = _copy(SHIPPED, tmp_path / "served")
    proc = _run("--candidate", SHIPPED, "--served", served, "--quick", "--seeds", "1", "--log", tmp_path / "log")
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)["log"]
    # every serve row is the older version's: no on-policy mean for --served, and a warning saying why
    assert log["on_policy_mean_jct_s"] is None and log["other_versions"] == ["older"]
    assert (log["serve_decisions"], log["served_version_decisions"]) == (2, 0)
    mb = log["model_based"]  # the same weights pick the same node: the log's estimate is the observed mean
    assert (mb["n"], mb["differ"], mb["ratio"], mb["skipped"]["no_inputs"]) == (1, 0, 1.0, 1)
    assert "WARNING" in proc.stderr and "older" in proc.stderr
