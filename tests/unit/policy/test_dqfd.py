"""``policy.dqfd``: DQfD's large-margin loss on logged decisions, its weight schedule, and the TD step that carries
it (with no imitation, the same step as stable-baselines3's)."""

import numpy as np
import pytest

pytest.importorskip("torch")

import torch as th  # noqa: E402

from policy.dqfd import Imitation, margin_loss, weight_at  # noqa: E402
from policy.logged import Examples  # noqa: E402
from policy.warmstart import Batch  # noqa: E402


def examples(rows: np.ndarray, sizes: list[int], picks: list[int]) -> Examples:
    return Examples(rows=rows.astype(np.float32), offsets=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                    picks=np.asarray(picks, dtype=np.int64), skipped={})


@pytest.mark.parametrize(("q", "pick", "margin", "loss"), [
    ([1.0, 0.0, 0.0], 0, 0.5, 0.0),     # the pick leads by 1 >= the margin: nothing to learn
    ([1.0, 0.7, 0.0], 0, 0.5, 0.2),     # leads by 0.3: 0.2 short of the margin
    ([0.0, 1.0, 0.0], 0, 0.5, 1.5),     # behind by 1: the gap plus the margin
    ([0.2, 0.2], 1, 0.1, 0.1),          # a tie costs the margin
])
def test_the_margin_loss_is_the_picks_shortfall_against_the_best_other_candidate_plus_the_margin(q, pick, margin,
                                                                                                 loss):
    ex = examples(np.zeros((len(q), 1)), [len(q)], [pick])
    assert margin_loss(th.tensor(q), Batch(ex, np.arange(1)), margin).item() == pytest.approx(loss)


def test_the_margin_loss_averages_decisions_of_different_sizes():
    ex = examples(np.zeros((5, 1)), [2, 3], [1, 0])
    q = th.tensor([0.0, 0.0, 0.0, 1.0, 0.5])  # decision 1: tie -> 0.5; decision 2: behind by 1 -> 1.5
    assert margin_loss(q, Batch(ex, np.arange(2)), 0.5).item() == pytest.approx(1.0)


def test_minimising_it_on_a_tiny_network_makes_every_pick_the_top_by_the_margin():
    # 40 decisions of 3-6 candidates with 2 features each; the pick is the candidate with the largest feature 0
    rng = np.random.default_rng(0)
    sizes = rng.integers(3, 7, 40).tolist()
    rows = rng.normal(size=(sum(sizes), 2))
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    picks = [int(np.argmax(rows[offsets[i]:offsets[i + 1], 0])) for i in range(40)]
    ex = examples(rows, sizes, picks)
    th.manual_seed(0)
    net = th.nn.Sequential(th.nn.Linear(2, 8), th.nn.ReLU(), th.nn.Linear(8, 1))
    batch = Batch(ex, np.arange(40))
    opt = th.optim.Adam(net.parameters(), lr=0.02)
    first = margin_loss(net(batch.x).squeeze(-1), batch, 0.1).item()
    for _ in range(400):
        loss = margin_loss(net(batch.x).squeeze(-1), batch, 0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert first > 0.1 and loss.item() < 0.01
    q = net(batch.x).squeeze(-1).detach().numpy()
    for i in range(40):
        lo, hi = offsets[i], offsets[i + 1]
        others = np.delete(q[lo:hi], picks[i])
        assert q[lo + picks[i]] > others.max()


@pytest.mark.parametrize(("step", "weight", "decay", "expected"), [
    (0, 1.0, 0, 1.0), (10_000, 1.0, 0, 1.0),           # no decay: constant
    (0, 2.0, 30_000, 2.0), (15_000, 2.0, 30_000, 1.0),  # linear from the weight ...
    (30_000, 2.0, 30_000, 0.0), (45_000, 2.0, 30_000, 0.0),  # ... to 0 at the decay step, and 0 after
])
def test_the_weight_decays_linearly_to_zero(step, weight, decay, expected):
    assert weight_at(step, weight, decay) == pytest.approx(expected)


def test_the_imitation_term_is_weighted_and_gone_once_its_weight_is_zero():
    ex = examples(np.arange(12, dtype=float).reshape(6, 2), [3, 3], [0, 2])
    net = th.nn.Linear(2, 1)
    term = Imitation(examples=ex, index=np.arange(2), weight=2.0, margin=0.1, decay=100, batch=64,
                     rng=np.random.default_rng(0))
    at0, at50 = term.loss(net, 0), term.loss(net, 50)
    plain = margin_loss(net(Batch(ex, np.arange(2)).x).squeeze(-1), Batch(ex, np.arange(2)), 0.1)
    assert at0.item() == pytest.approx(2.0 * plain.item()) and at50.item() == pytest.approx(plain.item())
    assert term.loss(net, 100) is None


def _model(seed: int):
    from policy.train import Args, make_env, make_model

    args = Args(buffer_size=500, learning_starts=100, progress=False, seed=seed, clusters="standard:3-4", n_jobs=12,
                max_nodes=4, train_freq=1)
    model = make_model(args, make_env(args))
    model.learn(total_timesteps=100)  # random placements fill the buffer; no gradient step yet
    return model


def test_with_an_imitation_that_weighs_nothing_the_td_step_is_stable_baselines3s():
    plain, ours, start = _model(5), _model(5), _model(5)
    ours.imitation = Imitation(examples=examples(np.zeros((2, 1)), [2], [0]), index=np.arange(1), weight=0.0,
                               margin=0.1, decay=0, batch=1, rng=np.random.default_rng(0))
    for model in (plain, ours):
        np.random.seed(9)  # the replay buffer samples from numpy's global generator
        model.train(gradient_steps=20, batch_size=16)
    for a, b in zip(plain.q_net.parameters(), ours.q_net.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert plain._n_updates == ours._n_updates == 20
    assert any(not th.equal(a, b) for a, b in zip(start.q_net.parameters(), ours.q_net.parameters(), strict=True))


def test_the_imitation_term_moves_the_network_and_stays_out_of_the_checkpoint(tmp_path):
    model = _model(6)
    before = [p.detach().clone() for p in model.q_net.parameters()]
    rows = np.random.default_rng(1).normal(size=(30, model.q_net.q_net[0].in_features))
    model.imitation = Imitation(examples=examples(rows, [3] * 10, [0] * 10), index=np.arange(10), weight=1.0,
                                margin=0.1, decay=0, batch=4, rng=np.random.default_rng(0))
    model.train(gradient_steps=5, batch_size=16)
    assert any(not th.equal(a, b) for a, b in zip(before, model.q_net.parameters(), strict=True))
    model.save(str(tmp_path / "m.sb3.zip"))
    import zipfile

    with zipfile.ZipFile(tmp_path / "m.sb3.zip") as z:
        assert "imitation" not in z.read("data").decode()
