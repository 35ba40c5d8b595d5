"""policy.ensemble and policy.model's ensemble format: K members served as one, the mean of their Q-values."""

import hashlib
import io
import json
import subprocess
import sys

import numpy as np
import pytest

from policy.ensemble import main
from policy.features import FEATURE_VERSION, N_NODE, encode
from policy.model import (
    COMBINE,
    DIGEST_KEY,
    ENSEMBLE_FORMAT,
    N_INPUTS,
    EnsembleModel,
    ModelError,
    ModelScorer,
    load_model,
    meta_bytes,
    save_ensemble,
    save_model,
    with_digest,
)
from policy.sim.episode import scorer_from_spec
from policy.state import PodView
from tests.unit.policy.helpers import snapshot

POD = PodView(requests=[0.5, 1], demand=[1, 1, 10, 10], demand_source="learned")


def _member(tmp_path, name, seed, hidden=(16, 16), **meta):
    rng = np.random.default_rng(seed)
    sizes = [N_INPUTS, *hidden, 1]
    weights = [rng.normal(size=(a, b)) / np.sqrt(a) for a, b in zip(sizes, sizes[1:], strict=False)]
    biases = [rng.normal(size=b) * 0.1 for b in sizes[1:]]
    return save_model(tmp_path / name, weights, biases, meta={"version": name, **meta})


def _linear(tmp_path, name, column, scale, bias):
    """A one-layer member whose Q is ``scale * nodes[:, column] + bias``: values known in closed form."""
    w = np.zeros((N_INPUTS, 1))
    w[column, 0] = scale
    return save_model(tmp_path / name, [w], [np.array([bias])], meta={"version": name})


def _encoded(n=40, seed=0):
    rng = np.random.default_rng(seed)
    cap = np.tile([8.0, 32.0, 125.0, 200.0], (n, 1)) * rng.choice([0.5, 1, 2], size=(n, 1))
    return encode(snapshot(cap, requested=cap[:, :2] * rng.random((n, 2)) * 0.8, usage=cap * rng.random((n, 4)),
                           age=rng.random(n) * 30), POD)


def _build(tmp_path, members, name="ens"):
    assert main(["--out", str(tmp_path / f"{name}.npz"), *map(str, members)]) == 0
    return tmp_path / f"{name}.npz"


def test_one_member_scores_exactly_as_the_model_alone(tmp_path):
    single = _member(tmp_path, "a", 1)
    ens = load_model(_build(tmp_path, [single]))
    assert isinstance(ens, EnsembleModel) and len(ens.members) == 1
    for seed, n in ((0, 1), (1, 7), (2, 500)):
        enc = _encoded(n, seed)
        np.testing.assert_array_equal(ens.q_values(enc), load_model(single).q_values(enc))
        alone = ModelScorer(load_model(single)).score_encoded(enc)
        np.testing.assert_array_equal(ModelScorer(ens).score_encoded(enc), alone)


@pytest.mark.parametrize(("members", "expected"), [
    # (column, scale, bias) per member -> Q as (scale on that node column, constant)
    ([(0, 1.0, 0.0)], (1.0, 0.0)),
    ([(0, 1.0, 0.0), (0, 3.0, 0.0)], (2.0, 0.0)),
    ([(0, 0.0, 1.0), (0, 0.0, 3.0), (0, 0.0, 8.0)], (0.0, 4.0)),
    # the plain mean keeps units: a member with the larger spread decides more (no per-member standardising)
    ([(0, 100.0, 0.0), (0, -1.0, 0.0)], (49.5, 0.0)),
    ([(0, 2.0, 1.0), (0, 0.0, -1.0)], (1.0, 0.0)),
])
def test_the_value_is_the_mean_of_the_members_q_values(tmp_path, members, expected):
    paths = [_linear(tmp_path, f"m{i}", *spec) for i, spec in enumerate(members)]
    enc = _encoded(30, 3)
    ens = load_model(_build(tmp_path, paths))
    assert ens.meta["combine"] == COMBINE == "mean"
    scale, const = expected
    np.testing.assert_allclose(ens.q_values(enc), scale * enc.nodes[:, 0].astype(np.float64) + const, rtol=1e-6,
                               atol=1e-6)


def test_random_members_mean_equals_the_members_one_by_one(tmp_path):
    paths = [_member(tmp_path, "a", 1), _member(tmp_path, "b", 2, hidden=(8,)), _member(tmp_path, "c", 3)]
    enc = _encoded(200, 4)
    ens = load_model(_build(tmp_path, paths))
    qs = [load_model(p).q_values(enc) for p in paths]
    np.testing.assert_array_equal(ens.q_values(enc), np.mean(qs, axis=0))
    assert scorer_from_spec(f"dqn:{tmp_path / 'ens.npz'}").score(snapshot([[4, 16, 125, 200]] * 3), POD).shape == (3,)


def test_metadata_records_every_member_with_its_own_digest(tmp_path):
    paths = [_member(tmp_path, "a", 1, trained_steps=10), _member(tmp_path, "b", 2, trained_steps=20)]
    ens = load_model(_build(tmp_path, paths, name="pair"))
    meta = json.loads((tmp_path / "pair.json").read_text())
    assert meta["format"] == ENSEMBLE_FORMAT and meta["feature_version"] == FEATURE_VERSION
    assert meta["version"] == ens.version == "pair-k2"
    assert [m["version"] for m in meta["members"]] == ["a", "b"]
    assert [m["trained_steps"] for m in meta["members"]] == [10, 20]
    assert [m[DIGEST_KEY] for m in meta["members"]] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    assert meta[DIGEST_KEY] == hashlib.sha256((tmp_path / "pair.npz").read_bytes()).hexdigest()


def _rewrite(path, *, arrays=None, meta=None):
    """Replace the ensemble's weights and/or metadata, the pair's digest made to match (so the problem tested is
    the one named, not the digest)."""
    with np.load(path) as data:
        current = {k: data[k] for k in data.files}
    buf = io.BytesIO()
    np.savez(buf, **(arrays(current) if arrays else current))
    path.write_bytes(buf.getvalue())
    m = json.loads(path.with_suffix(".json").read_text())
    path.with_suffix(".json").write_bytes(meta_bytes(with_digest(meta(m) if meta else m, buf.getvalue())))


def _drop(key):
    return lambda a: {k: v for k, v in a.items() if k != key}


def _set(field, value):
    def edit(m):
        if "." in field:
            m["members"][1][field.split(".")[1]] = value
        else:
            m[field] = value
        return m
    return edit


@pytest.mark.parametrize(("arrays", "meta", "file", "problem"), [
    (_drop("m1_w1"), None, "ens.npz", r"member 1 \(b\): missing array m1_w1"),
    (lambda a: {**a, "m1_w1": a["m1_w1"][:3]}, None, "ens.npz", r"member 1 \(b\): layer 1 \(m1_w1\) has shapes"),
    (lambda a: {**a, "m0_b0": a["m0_b0"] * np.nan}, None, "ens.npz", r"member 0 \(a\): layer 0 .* non-finite"),
    (lambda a: {**a, "m1_w0": a["m1_w0"][: N_NODE]}, None, "ens.npz", r"member 1 \(b\): first layer takes"),
    (lambda a: {**a, "m2_w0": a["m0_w0"], "m2_b0": a["m0_b0"]}, None, "ens.npz",
     r"holds networks \['m0', 'm1', 'm2'\], but ens.json lists 2 members"),
    (None, _set("members.activation", "gelu"), "ens.json", r"members\[1\].activation: unknown activation 'gelu'"),
    (None, _set("members", []), "ens.json", "members: expected a non-empty list"),
    (None, _set("combine", "median"), "ens.json", "combine is 'median', expected 'mean'"),
    (None, _set("feature_version", FEATURE_VERSION + 1), "ens.json", f"feature_version is {FEATURE_VERSION + 1}"),
])
def test_a_malformed_ensemble_names_the_file_the_member_and_the_field(tmp_path, arrays, meta, file, problem):
    path = _build(tmp_path, [_member(tmp_path, "a", 1), _member(tmp_path, "b", 2)])
    _rewrite(path, arrays=arrays, meta=meta)
    with pytest.raises(ModelError, match=problem) as info:
        load_model(path)
    assert info.value.path == str(tmp_path / file)


def test_the_digest_covers_every_member(tmp_path):
    path = _build(tmp_path, [_member(tmp_path, "a", 1), _member(tmp_path, "b", 2)])
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["m1_w2"] = arrays["m1_w2"] + 1.0  # the last member changed, the metadata not rewritten
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.write_bytes(buf.getvalue())
    with pytest.raises(ModelError, match="weights do not match their metadata"):
        load_model(path)


def test_a_mismatched_member_stops_the_build_naming_its_file_and_field(tmp_path, capsys):
    good = _member(tmp_path, "a", 1)
    bad = _member(tmp_path, "b", 2)
    meta = json.loads(bad.with_suffix(".json").read_text())
    bad.with_suffix(".json").write_bytes(meta_bytes({**meta, "feature_version": FEATURE_VERSION + 1}))
    assert main(["--out", str(tmp_path / "ens.npz"), str(good), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'b.json'}: feature_version is {FEATURE_VERSION + 1}" in err
    assert not (tmp_path / "ens.npz").exists() and not (tmp_path / "ens.json").exists()


def test_an_ensemble_is_not_a_member(tmp_path, capsys):
    inner = _build(tmp_path, [_member(tmp_path, "a", 1), _member(tmp_path, "b", 2)], name="inner")
    assert main(["--out", str(tmp_path / "outer.npz"), str(inner)]) == 2
    assert "inner.npz: format is an ensemble (2 members); list its members' files instead" in capsys.readouterr().err


def test_save_ensemble_then_load_round_trips_the_weights(tmp_path):
    members = [load_model(_member(tmp_path, n, s)) for n, s in (("a", 1), ("b", 2))]
    ens = load_model(save_ensemble(tmp_path / "e", members, meta={"version": "e"}))
    for got, want in zip(ens.members, members, strict=True):
        for x, y in zip(got.weights + got.biases, want.weights + want.biases, strict=True):
            np.testing.assert_array_equal(x, y)


def test_loading_an_ensemble_never_imports_torch_or_gymnasium(tmp_path):
    path = _build(tmp_path, [_member(tmp_path, "a", 1), _member(tmp_path, "b", 2)])
    code = (f"import sys, policy.model; policy.model.load_model({str(path)!r}); "
            "bad = [m for m in ('torch', 'gymnasium', 'stable_baselines3') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
