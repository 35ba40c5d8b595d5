"""policy.model: loading refuses every broken artifact with a ModelError naming file and mismatch."""

import hashlib
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from policy.features import FEATURE_VERSION, encode
from policy.model import DIGEST_KEY, N_INPUTS, ModelError, ModelScorer, load_model, save_model
from policy.state import PodView
from tests.unit.policy.helpers import snapshot


def _write(tmp_path, n_in=N_INPUTS, **meta):
    rng = np.random.default_rng(0)
    return save_model(tmp_path / "m", [rng.normal(size=(n_in, 8)), rng.normal(size=(8, 1))],
                      [np.zeros(8), np.zeros(1)], meta=meta)


def test_missing_file(tmp_path):
    with pytest.raises(ModelError, match="m.npz: model file not found"):
        load_model(tmp_path / "m.npz")


def test_truncated_weights(tmp_path):
    path = _write(tmp_path)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ModelError, match="truncated or not an .npz"):
        load_model(path)


def test_other_feature_version(tmp_path):
    path = _write(tmp_path)
    meta = json.loads(path.with_suffix(".json").read_text())
    meta["feature_version"] = FEATURE_VERSION + 1
    path.with_suffix(".json").write_text(json.dumps(meta))
    with pytest.raises(ModelError, match=f"feature_version is {FEATURE_VERSION + 1}"):
        load_model(path)


def test_feature_count_mismatch(tmp_path):
    with pytest.raises(ModelError, match=f"first layer takes {N_INPUTS - 1} features.*makes {N_INPUTS}"):
        load_model(_write(tmp_path, n_in=N_INPUTS - 1))


def test_garbled_metadata(tmp_path):
    path = _write(tmp_path)
    path.with_suffix(".json").write_text("{not json")
    with pytest.raises(ModelError, match="m.json: metadata is not valid JSON"):
        load_model(path)


def test_scores_any_cluster_size(tmp_path):
    model = load_model(_write(tmp_path))
    for n in (1, 3, 500):
        snap = snapshot([[4, 16, 125, 200]] * n, usage=np.random.default_rng(n).random((n, 4)))
        q = model.q_values(encode(snap, PodView.from_requests(0.5, 1)))
        assert q.shape == (n,) and np.all(np.isfinite(q))


def test_importing_the_serving_path_never_imports_torch_or_gymnasium():
    code = ("import sys, policy.model, policy.features, policy.baselines, policy.state; "
            "bad = [m for m in ('torch', 'gymnasium', 'stable_baselines3') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_model_scorer_scores_by_q_values_of_the_one_encoder(tmp_path):
    model = load_model(_write(tmp_path))
    snap = snapshot([[4, 16, 125, 200], [8, 32, 250, 400]], usage=[[1, 2, 3, 4], [4, 3, 2, 1]])
    pod = PodView(requests=[0.5, 1], demand=[1, 1, 10, 10], demand_source="learned")
    scorer = ModelScorer(model, name="dqn:m")
    assert scorer.name == "dqn:m"
    np.testing.assert_array_equal(scorer.score(snap, pod), model.q_values(encode(snap, pod)))
    np.testing.assert_array_equal(scorer.score_encoded(encode(snap, pod)), scorer.score(snap, pod))


def _strip_digest(path):
    meta = json.loads(path.with_suffix(".json").read_text())
    del meta[DIGEST_KEY]
    path.with_suffix(".json").write_text(json.dumps(meta))


def test_save_records_the_digest_of_the_bytes_it_wrote_and_load_verifies_it(tmp_path, caplog):
    path = _write(tmp_path, version="v")
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta[DIGEST_KEY] == hashlib.sha256(path.read_bytes()).hexdigest()
    with caplog.at_level(logging.INFO, logger="policy.model"):
        assert load_model(path).meta[DIGEST_KEY] == meta[DIGEST_KEY]
    assert "not verified" not in caplog.text
    moved = tmp_path / "moved"  # the pair copied together still loads
    moved.mkdir()
    for suffix in (".npz", ".json"):
        shutil.copy(path.with_suffix(suffix), moved / f"x{suffix}")
    assert load_model(moved / "x.npz").version == "v"


def test_weights_swapped_under_the_metadata_are_refused_naming_both_files_and_digests(tmp_path):
    a = _write(tmp_path / "a")
    rng = np.random.default_rng(1)
    b = save_model(tmp_path / "b" / "m", [rng.normal(size=(N_INPUTS, 8)), rng.normal(size=(8, 1))],
                   [np.zeros(8), np.zeros(1)])
    expected = json.loads(a.with_suffix(".json").read_text())[DIGEST_KEY]
    shutil.copy(b, a)  # same shapes, so only the digest can tell
    actual = hashlib.sha256(a.read_bytes()).hexdigest()
    with pytest.raises(ModelError) as err:
        load_model(a)
    msg = str(err.value)
    assert str(a) in msg and str(a.with_suffix(".json")) in msg and expected in msg and actual in msg
    assert "copy the .npz and .json of one save together" in msg and "m.prev.npz" in msg


def test_an_artifact_saved_before_digests_still_loads_and_says_it_is_unverified(tmp_path, caplog):
    path = _write(tmp_path, version="legacy")
    _strip_digest(path)
    with caplog.at_level(logging.INFO, logger="policy.model"):
        assert load_model(path).version == "legacy"
    assert f"has no {DIGEST_KEY}" in caplog.text and "not verified" in caplog.text


def test_every_shipped_artifact_records_its_weights_digest():
    paths = sorted(Path("policy/models").glob("**/*.npz"))
    assert paths
    for path in paths:
        assert load_model(path).meta[DIGEST_KEY] == hashlib.sha256(path.read_bytes()).hexdigest(), path
