"""The policy entry points end to end, as a user runs them."""

import csv
import json
import re
import subprocess
import sys

import numpy as np

from policy.features import encode
from policy.model import load_model
from policy.state import ClusterSnapshot, PodView


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=timeout)


def test_evaluate_quick_end_to_end(tmp_path):
    proc = _run("policy.evaluate", "--quick", "--out", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "scenario=base workload=drs load=0.9" in proc.stdout
    for name in ("runs.csv", "summary.csv", "table.txt", "summary.md", "base-drs-load0.9.png", "base-drs-load1.5.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    rows = list(csv.DictReader((tmp_path / "summary.csv").open()))
    policies = {r["policy"] for r in rows}
    assert {"default-k8s", "demand-aware", "random"} <= policies
    base = [r for r in rows if r["policy"] == "default-k8s"]
    assert all(float(r["excess_ratio"]) == 1.0 for r in base)


def test_evaluate_rejects_unknown_policy_and_scenario(tmp_path):
    proc = _run("policy.evaluate", "--quick", "--policies", "nope", "--out", str(tmp_path))
    assert proc.returncode == 2 and "unknown scorer 'nope'" in proc.stderr
    proc = _run("policy.evaluate", "--quick", "--scenarios", "moon", "--out", str(tmp_path))
    assert proc.returncode == 2 and "unknown scenario" in proc.stderr
    proc = _run("policy.evaluate", "--quick", "--policies", f"dqn:{tmp_path}/none.npz", "--out", str(tmp_path))
    assert proc.returncode == 2 and "model file not found" in proc.stderr


def test_evaluate_a_split_on_its_own_seeds(tmp_path):
    from policy.splits import SEED_BASE, TEST

    proc = _run("policy.evaluate", "--split", "test", "--quick", "--scenarios", "bursty,no-profile",
                "--policies", "default-k8s,demand-aware", "--no-plots", "--out", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stderr
    runs = list(csv.DictReader((tmp_path / "runs.csv").open()))
    assert {r["scenario"] for r in runs} == {"bursty", "no-profile"}
    assert {int(r["seed"]) for r in runs} == {SEED_BASE["test"], SEED_BASE["test"] + 1}
    assert {r["workload"] for r in runs} == {TEST["bursty"].workload}
    # runs.csv is committed with the results: a rerun writes it byte for byte; the wall seconds go to timing.csv
    again = tmp_path / "again"
    proc = _run("policy.evaluate", "--split", "test", "--quick", "--scenarios", "bursty,no-profile",
                "--policies", "default-k8s,demand-aware", "--no-plots", "--out", str(again), "-q")
    assert proc.returncode == 0, proc.stderr
    assert (again / "runs.csv").read_bytes() == (tmp_path / "runs.csv").read_bytes() and "wall_s" not in runs[0]
    timing = list(csv.DictReader((again / "timing.csv").open()))
    assert [(r["scenario"], r["seed"], r["policy"]) for r in timing] == [
        (r["scenario"], r["seed"], r["policy"]) for r in runs] and all(float(r["wall_s"]) > 0 for r in timing)
    proc = _run("policy.evaluate", "--split", "test", "--workloads", "batch", "--out", str(tmp_path))
    assert proc.returncode == 2 and "--workloads does not apply" in proc.stderr
    proc = _run("policy.evaluate", "--split", "validation", "--scenarios", "bursty", "--out", str(tmp_path))
    assert proc.returncode == 2 and "unknown family ['bursty']" in proc.stderr


def test_evaluate_scored_as_served(tmp_path):
    common = ["policy.evaluate", "--quick", "--policies", "default-k8s,demand-aware", "--no-plots", "-q"]
    argmax = _run(*common, "--out", str(tmp_path / "a"))
    served = _run(*common, "--served", "10", "--out", str(tmp_path / "s"))
    assert argmax.returncode == 0 and served.returncode == 0, served.stderr
    rows = {name: {(r["policy"], r["seed"], r["load"]): r
                   for r in csv.DictReader((tmp_path / name / "runs.csv").open())}
            for name in ("a", "s")}
    same = [k for k in rows["a"] if k[0] == "default-k8s"]
    assert same and all(rows["a"][k]["mean_slowdown"] == rows["s"][k]["mean_slowdown"] for k in same)
    proc = _run(*common, "--served", "0", "--out", str(tmp_path / "z"))
    assert proc.returncode == 2 and "must be > 0" in proc.stderr


def test_train_smoke_run_exports_a_servable_model(tmp_path):
    out = tmp_path / "m"
    proc = _run("policy.train", "--steps", "400", "--learning-starts", "100", "--eval-every", "0",
                "--eval-seeds", "1", "--clusters", "standard:3-6", "--n-jobs", "30",
                "--max-nodes", "8", "--out", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["trained_steps"] == 400 and meta["train_config"]["max_nodes"] == 8
    assert meta["source_commit"] and isinstance(meta["source_dirty"], bool)
    assert set(meta["eval_excess_slowdown"]) >= {"dqn", "default-k8s", "demand-aware"}
    assert (tmp_path / "m.sb3.zip").exists()
    # Trained on at most 8 nodes, it still scores 500 with finite values.
    model = load_model(out.with_suffix(".npz"))
    n = 500
    rng = np.random.default_rng(0)
    snap = ClusterSnapshot(names=tuple(f"n{i}" for i in range(n)), capacity=np.tile([8, 32, 125, 200], (n, 1)),
                           requested=rng.random((n, 2)), usage=rng.random((n, 4)) * 4, usage_age=np.ones(n),
                           assumed=np.zeros((n, 4)), pods=np.ones(n), max_pods=np.full(n, 110),
                           ready=np.ones(n, bool))
    q = model.q_values(encode(snap, PodView.from_requests(0.5, 1)))
    assert q.shape == (n,) and np.all(np.isfinite(q))


def test_train_resumes_from_checkpoint(tmp_path):
    out = tmp_path / "m"
    common = ["--learning-starts", "50", "--eval-every", "0", "--eval-seeds", "1",
              "--clusters", "standard:3", "--n-jobs", "20", "--max-nodes", "4", "--out", str(out), "--no-progress"]
    assert _run("policy.train", "--steps", "150", *common).returncode == 0
    first = json.loads(out.with_suffix(".json").read_text())["trained_steps"]
    assert first >= 150
    proc = _run("policy.train", "--steps", "150", "--resume", f"{out}.sb3.zip", *common)
    assert proc.returncode == 0, proc.stderr[-3000:]
    total = int(re.search(r"trained (\d+) steps", proc.stderr).group(1))
    assert total >= first + 150  # counted on from the checkpoint, not from zero
    # The kept artifact is the best held-out one of either run, never silently replaced by a worse one.
    meta = json.loads(out.with_suffix(".json").read_text())
    assert meta["trained_steps"] in (first, total)


def test_help_documents_every_flag():
    for mod in ("policy.evaluate", "policy.train"):
        proc = _run(mod, "--help")
        assert proc.returncode == 0 and "--out" in proc.stdout
    train_help = _run("policy.train", "--help").stdout
    assert "held-out" in train_help or "--eval-seeds" in train_help
