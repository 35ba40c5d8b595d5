"""policy.distill: the agreement and loss formulas, train-split states only, a student that reproduces a known
teacher's picks, and an artifact the extender loads without torch."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch as th

from policy.distill import (
    DistillArgs,
    States,
    agreement,
    distill,
    fit,
    loss,
    main,
    train_episodes,
    within_sigma,
)
from policy.model import DIGEST_KEY, FORMAT, SHIPPED_MODEL, load_model
from policy.splits import TRAIN_SEED_LIMIT


@pytest.mark.parametrize(("student", "teacher", "offsets", "expected"), [
    ([1, 2, 3], [0, 0, 1], [0, 3], 1.0),             # same top
    ([3, 2, 1], [0, 0, 1], [0, 3], 0.0),             # another top
    ([3, 2, 1], [1, 1, 0], [0, 3], 1.0),             # the teacher's top is tied: either agrees
    ([1, 2, 1, 2], [0, 1, 1, 0], [0, 2, 4], 0.5),    # two decisions, one agreeing
])
def test_agreement(student, teacher, offsets, expected):
    assert agreement(np.array(student, float), np.array(teacher, float), np.array(offsets)) == expected


def test_within_sigma_ignores_each_decisions_level():
    q = np.array([10.0, 12.0, -5.0, -3.0])  # two decisions, each +-1 around its own mean
    assert within_sigma(q, np.array([0, 2, 4])) == pytest.approx(1.0)


def _loss(s, t, seg, **kw):
    kw = {"sigma": 1.0, "tau": 0.5, "level_weight": 0.1, **kw}
    return float(loss(th.tensor(s, dtype=th.float64), th.tensor(t, dtype=th.float64), th.tensor(seg),
                      int(max(seg)) + 1, **kw))


def test_loss_of_a_shifted_student_is_the_level_term_plus_the_teachers_entropy():
    t = [0.0, 1.0, 3.0]
    p = np.exp(np.array(t) / 0.5) / np.exp(np.array(t) / 0.5).sum()
    entropy = -float((p * np.log(p)).sum())
    assert _loss(t, t, [0, 0, 0]) == pytest.approx(entropy)
    assert _loss([x + 2 for x in t], t, [0, 0, 0]) == pytest.approx(entropy + 0.1 * 4)
    assert _loss([x + 2 for x in t], t, [0, 0, 0], sigma=2.0) == pytest.approx(entropy + 0.1 * 4 / 4)


def test_loss_charges_a_reordered_student():
    t = [0.0, 1.0, 3.0]
    assert _loss([3.0, 1.0, 0.0], t, [0, 0, 0]) > _loss(t, t, [0, 0, 0]) + 1


def test_train_episodes_are_the_train_split_and_fixed_by_the_seed():
    eps = train_episodes(20, seed=3)
    assert all(0 <= seed < TRAIN_SEED_LIMIT for _, seed in eps)
    assert eps == train_episodes(20, seed=3)
    assert eps != train_episodes(20, seed=4)


def test_train_episodes_draw_the_given_job_mixes_else_the_recipes():
    assert {cfg.workload for cfg, _ in train_episodes(40, seed=3)} == {"drs", "batch"}
    mixed = train_episodes(40, seed=3, workloads="drs;io:2,cpu:1,net:1")
    assert {cfg.workload for cfg, _ in mixed} == {"drs", "io:2,cpu:1,net:1"}
    assert all(0 <= seed < TRAIN_SEED_LIMIT for _, seed in mixed)


def _synthetic(n_decisions=600, seed=0):
    """Decisions of 3-9 random rows valued by a fixed nonlinear teacher, plus a level per decision."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 10, n_decisions)
    rows = np.zeros((int(sizes.sum()), 43), dtype=np.float32)
    rows[:, :4] = rng.normal(size=(len(rows), 4))
    q = np.maximum(rows[:, 0], 0.0) - 0.5 * rows[:, 1] + 3.0 * np.repeat(rng.normal(size=n_decisions), sizes)
    episode = np.arange(n_decisions) // 20
    return States(rows=rows, q=q, offsets=np.concatenate([[0], np.cumsum(sizes)]), episode=episode)


def test_a_student_reproduces_a_known_teachers_picks():
    st = _synthetic()
    args = DistillArgs(teacher=Path("t.npz"), out=Path("s.npz"), net_arch=[32, 32], epochs=30, batch=64,
                       tau=0.05, holdout=0.2)
    net, report = fit(st, args)
    assert report["held_agreement"] > 0.85  # chance: ~1/6
    assert report["held_decisions"] == 120  # the last 6 of 30 episodes, whole
    assert report["history"][report["kept_epoch"] - 1]["held_loss"] == min(h["held_loss"] for h in report["history"])


def test_distill_writes_a_single_network_that_loads_without_torch(tmp_path):
    out = tmp_path / "student.npz"
    path, report = distill(DistillArgs(teacher=SHIPPED_MODEL, out=out, episodes=2, epochs=1, holdout=0.5))
    model = load_model(path)
    teacher_meta = json.loads(SHIPPED_MODEL.with_suffix(".json").read_text())
    assert model.meta["format"] == FORMAT
    assert [w.shape for w in model.weights] == [(43, 64), (64, 64), (64, 1)]
    assert model.meta["distilled_from"][DIGEST_KEY] == teacher_meta[DIGEST_KEY]
    assert "train split" in model.meta["distill_states"]
    assert not math.isnan(report["held_agreement"])
    code = (f"import sys, policy.model; policy.model.load_model({str(path)!r}); "
            "bad = [m for m in ('torch', 'gymnasium', 'stable_baselines3') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("argv", "says"), [
    (["--teacher", "missing.npz"], "model file not found"),
    (["--teacher", str(SHIPPED_MODEL), "--epsilon", "1.5"], "--epsilon"),
    (["--teacher", str(SHIPPED_MODEL), "--episodes", "1"], "--episodes"),
    (["--teacher", str(SHIPPED_MODEL), "--mapping", "band"], "band"),
])
def test_bad_input_is_one_line_and_status_2(tmp_path, capsys, argv, says):
    assert main([*argv, "--out", str(tmp_path / "s.npz")]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
    assert not (tmp_path / "s.npz").exists()
