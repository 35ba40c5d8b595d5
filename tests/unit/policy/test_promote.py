"""The promotion gate's deciding: the floored ratio, pairing, the interval, the rule, the log summary, install."""

import json
import math
from hashlib import sha256

import numpy as np
import pytest

from policy.baselines import make_scorer
from policy.comparison import MIN_EXCESS
from policy.decisionlog import decision_row, outcome_row, read_log
from policy.model import DIGEST_KEY, N_INPUTS, SHIPPED_MODEL, ModelError, load_model, meta_bytes, save_model
from policy.promote import (
    REFUSED,
    Decision,
    Interval,
    build_report,
    decide,
    describe,
    excess_ratio,
    install,
    interval,
    log_rows,
    log_summary,
    log_veto,
    main,
    pair_rows,
    prev_path,
    verdict,
)


@pytest.mark.parametrize(("candidate", "served", "ratio"), [
    (0.1, 0.2, 0.5),
    (0.2, 0.1, 2.0),
    (0.0, 0.1, MIN_EXCESS / 0.1),        # a candidate that loses nothing: floored, finite
    (0.0, 0.0, 1.0),                      # both below the floor: a tie
    (0.001, 0.004, 1.0),
    (0.1, 0.0, 0.1 / MIN_EXCESS),
])
def test_excess_ratio_floors_both_sides(candidate, served, ratio):
    assert excess_ratio(candidate, served) == pytest.approx(ratio)
    assert excess_ratio(served, candidate) == pytest.approx(1 / ratio)  # symmetric: swapping gives the reciprocal


@pytest.mark.parametrize(("ratios", "promote", "geomean"), [
    ([1.0] * 24, False, 1.0),                          # identical models: [1, 1], not below 1
    ([0.8] * 10, True, 0.8),                           # better everywhere by the same margin
    ([0.7, 0.8, 0.75, 0.85, 0.8, 0.9], True, None),    # better, and the spread keeps the interval below 1
    ([0.5, 1.2, 0.6, 1.3], False, None),               # better on average (0.81) but the interval crosses 1
    ([1.1, 1.3, 1.2, 1.25], False, None),              # worse
    ([0.5], False, 0.5),                               # one pair: no interval, never promoted
    ([], False, None),
])
def test_decide_promotes_only_when_the_whole_interval_is_below_one(ratios, promote, geomean):
    iv = interval(ratios)
    d = decide(iv)
    assert d.promote is promote, (iv, d)
    if geomean is not None:
        assert iv.geomean == pytest.approx(geomean)
    if len(ratios) >= 2:
        assert iv.lo <= iv.geomean <= iv.hi
    assert ("below 1" in d.reason or "no interval" in d.reason) is (not promote)


def test_an_episode_that_finished_no_job_leaves_no_interval():
    assert math.isnan(excess_ratio(math.nan, 0.1)) and math.isnan(excess_ratio(0.1, math.nan))
    iv = interval([0.5, 0.6, math.nan, 0.55])
    assert iv.n == 4 and math.isnan(iv.hi)  # not the interval of the three others: that would unpair it
    assert not decide(iv).promote and "no interval" in decide(iv).reason


def test_a_faster_candidate_that_strands_more_jobs_is_not_promoted():
    iv = interval([0.5, 0.6, 0.55, 0.5])
    assert decide(iv, unfinished=(3, 3)).promote
    d = decide(iv, unfinished=(4, 3))
    assert not d.promote and "left 4 jobs unfinished" in d.reason


def test_pair_rows_counts_unfinished_jobs():
    pairs = pair_rows([_row("a", 1, 0.1, unfinished=2)], [_row("a", 1, 0.2)])
    assert (pairs[0].candidate_unfinished, pairs[0].served_unfinished) == (2, 0)


def test_better_on_average_but_crossing_one_is_not_promoted():
    iv = interval([0.5, 1.2, 0.6, 1.3])
    assert iv.geomean < 1 < iv.hi
    assert not decide(iv).promote
    assert "not below 1" in decide(iv).reason and f"{iv.geomean:.3f}" in decide(iv).reason


def test_interval_is_the_t_interval_of_the_log_ratios():
    logs = np.log([0.5, 0.7, 0.9])
    half = 4.303 * logs.std(ddof=1) / math.sqrt(3)  # t(0.975, 2 dof)
    iv = interval([0.5, 0.7, 0.9])
    assert iv.geomean == pytest.approx(math.exp(logs.mean()))
    assert (iv.lo, iv.hi) == pytest.approx((math.exp(logs.mean() - half), math.exp(logs.mean() + half)), rel=1e-3)


def _row(scenario, seed, excess, jct=10.0, unfinished=0):
    return {"scenario": scenario, "workload": "drs", "load": 0.9, "seed": seed, "excess_slowdown": excess,
            "mean_jct": jct, "unfinished": unfinished, "unschedulable": 0}


def test_pair_rows_matches_by_case_whatever_the_order():
    cand = [_row("a", 1, 0.1), _row("b", 2, 0.3)]
    served = [_row("b", 2, 0.3), _row("a", 1, 0.2)]
    pairs = pair_rows(cand, served)
    assert [(p.scenario, p.ratio) for p in pairs] == [("a", 0.5), ("b", 1.0)]
    assert pairs[0].served_excess == 0.2 and pairs[0].candidate_excess == 0.1


def test_pair_rows_refuses_unpaired_runs():
    with pytest.raises(ValueError, match="paired"):
        pair_rows([_row("a", 1, 0.1)], [_row("a", 2, 0.1)])


def test_verdict_words():
    yes, no = Decision(True, ""), Decision(False, "")
    assert verdict(yes, applied=True) == "promoted"
    assert verdict(yes, applied=False) == "would promote (dry run)"
    assert verdict(no, applied=False) == "not promoted"
    assert not decide(Interval(0.5, 0.4, math.nan, 1)).promote


def _log(path, versions, jcts):
    lines = []
    for i, (v, jct) in enumerate(zip(versions, jcts, strict=True)):
        pod = ("ns", f"p{i}", f"u{i}")
        lines.append(decision_row(ts=i, replica="r", mode="serve", pod=pod, requests=[1, 1], demand=[1, 1, 0, 0],
                                  demand_source="requests", policy="model", model_version=v, nodes=["a", "b"],
                                  scores=[10, 0], raw=[1.0, 0.0], chosen="a"))
        lines.append(outcome_row(ts=i + 1, replica="r", pod=pod, node="a", phase="Succeeded", created=0.0,
                                 started=0.0, finished=jct))
    (path / "decisions-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return read_log(path).joined()


def test_log_summary_reports_the_on_policy_mean_and_other_versions(tmp_path):
    rules = {"candidate": make_scorer("lookahead"), "served": make_scorer("worst-fit")}
    s = log_summary(_log(tmp_path, ["v1", "v1", "v0"], [10.0, 20.0, 30.0]), served_version="v1", **rules)
    # the on-policy mean is the served version's own pods: v0's 30 s pod is another policy's outcome
    assert s["on_policy_mean_jct_s"] == pytest.approx(15.0) and s["with_outcome"] == 2
    assert (s["serve_decisions"], s["served_version_decisions"], s["judged_decisions"]) == (3, 2, 3)
    assert s["model_versions"] == {"v0": 1, "v1": 2} and s["other_versions"] == ["v0"]
    # rows without recorded inputs: the contention model has no decision to rebuild, and says so
    assert s["model_based"]["n"] == 0 and s["model_based"]["skipped"]["no_inputs"] == 3
    assert log_summary(_log(tmp_path, ["v1"] * 2, [5.0, 7.0]), served_version="v1",
                       **rules)["other_versions"] == []


def _mixed(path):
    """A serve row of each of two versions and a shadow row, no outcomes."""
    rows = [decision_row(ts=i, replica="r", mode=mode, pod=("ns", f"p{i}", f"u{i}"), requests=[1, 1],
                         demand=[1, 1, 0, 0], demand_source="requests", policy="model", model_version=v,
                         nodes=["a", "b"], scores=[10, 0], raw=[1.0, 0.0], chosen="a")
            for i, (mode, v) in enumerate([("serve", "v1"), ("serve", "v0"), ("shadow", "v0")])]
    (path / "decisions-1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return read_log(path).joined()


def test_log_rows_picks_the_served_versions_serve_rows_or_the_shadow_rows(tmp_path):
    pairs = _mixed(tmp_path)
    assert [d["name"] for d, _ in log_rows(pairs, "all", "v1")] == ["p0", "p1", "p2"]
    assert [d["name"] for d, _ in log_rows(pairs, "served", "v1")] == ["p0"]
    assert [d["name"] for d, _ in log_rows(pairs, "shadow", "v1")] == ["p2"]
    with pytest.raises(ValueError, match="--log-rows"):
        log_rows(pairs, "some", "v1")
    s = log_summary(pairs, served_version="v1", candidate=make_scorer("lookahead"), served=make_scorer("worst-fit"),
                    rows="shadow", hot_filter="prefer-cool", nodes=frozenset({"b"}), daemon_pods=1)
    assert (s["rows"], s["judged_decisions"], s["nodes"], s["hot_filter"]) == ("shadow", 1, ["b"], "prefer-cool")
    assert s["other_versions"] == ["v0"]  # serve rows only: a shadow row's writer does not matter


def _mb(ratio, lo, hi, n=40):
    return {"model_based": {"n": n, "ratio": ratio, "lo": lo, "hi": hi}}


def test_the_log_can_only_stop_a_promotion_when_its_whole_interval_says_the_candidate_loses():
    yes, no = Decision(True, "candidate loses less: ..."), Decision(False, "upper bound is not below 1")
    vetoed = log_veto(yes, _mb(1.12, 1.04, 1.21))
    assert not vetoed.promote and "on the log's 40 pods" in vetoed.reason and "1.040-1.210" in vetoed.reason
    assert log_veto(yes, _mb(1.12, 0.97, 1.30)) is yes  # the log cannot tell: the simulator's verdict stands
    assert log_veto(yes, _mb(None, None, None, n=0)) is yes and log_veto(yes, None) is yes
    assert log_veto(no, _mb(0.5, 0.4, 0.6)) is no  # the log never promotes on its own


def _artifact(path, version, *, legacy=False):
    """A small valid artifact of ``version``; ``legacy``: its metadata without the digest (saved before it)."""
    rng = np.random.default_rng(sum(version.encode()))  # other versions, other weights
    path = save_model(path, [rng.normal(size=(N_INPUTS, 4)), rng.normal(size=(4, 1))], [np.zeros(4), np.zeros(1)],
                      meta={"version": version})
    if legacy:
        meta = json.loads(path.with_suffix(".json").read_text())
        del meta[DIGEST_KEY]
        path.with_suffix(".json").write_bytes(meta_bytes(meta))
    return path


def _files(directory):
    return {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}


def test_install_keeps_the_previous_files_and_replaces_both(tmp_path):
    served = _artifact(tmp_path / "served" / "default.npz", "old")
    cand = _artifact(tmp_path / "cand.npz", "new")
    old, new = _files(served.parent), _files(cand.parent)
    prev = install(cand, served)
    assert prev == prev_path(served) == tmp_path / "served" / "default.prev.npz"
    assert served.read_bytes() == new["cand.npz"] and served.with_suffix(".json").read_bytes() == new["cand.json"]
    assert prev.read_bytes() == old["default.npz"] and prev.with_suffix(".json").read_bytes() == old["default.json"]
    assert load_model(served).version == "new" and load_model(prev).version == "old"
    assert sorted(p.name for p in served.parent.iterdir()) == ["default.json", "default.npz", "default.prev.json",
                                                               "default.prev.npz"]  # no temp file left


def test_install_gives_pairs_saved_before_digests_one(tmp_path):
    served = _artifact(tmp_path / "served" / "default.npz", "old", legacy=True)
    cand = _artifact(tmp_path / "cand.npz", "new", legacy=True)
    install(cand, served)
    for path in (served, prev_path(served)):
        assert json.loads(path.with_suffix(".json").read_text())[DIGEST_KEY] == sha256(path.read_bytes()).hexdigest()


def test_install_refuses_a_half_replaced_candidate_before_writing_anything(tmp_path):
    served = _artifact(tmp_path / "served" / "default.npz", "old")
    cand = _artifact(tmp_path / "cand.npz", "new")
    cand.write_bytes(served.read_bytes())
    before = _files(served.parent)
    with pytest.raises(ModelError, match="weights do not match their metadata"):
        install(cand, served)
    assert _files(served.parent) == before


# A crash before write k (0-based; order: prev.json, prev.npz, served.json, served.npz): what the served and the
# kept pair then are. "refused": load_model raises the digest mismatch.
@pytest.mark.parametrize(("crash_before", "served_is", "prev_is"), [
    (0, "old", "older"),
    (1, "old", "refused"),
    (2, "old", "old"),
    (3, "refused", "old"),
])
@pytest.mark.parametrize("legacy", [False, True])
def test_a_crash_between_the_writes_leaves_the_old_pair_the_new_one_or_a_refused_one(
        tmp_path, monkeypatch, crash_before, served_is, prev_is, legacy):
    import kube.atomic

    served = _artifact(tmp_path / "served" / "default.npz", "old", legacy=legacy)
    _artifact(prev_path(served), "older", legacy=legacy)  # an earlier --apply's kept pair
    cand = _artifact(tmp_path / "cand.npz", "new", legacy=legacy)
    real, calls = kube.atomic.atomic_write, []

    def crashing(path, data, **kw):
        calls.append(path.name)
        if len(calls) == crash_before + 1:
            raise OSError("simulated crash")
        real(path, data, **kw)

    monkeypatch.setattr(kube.atomic, "atomic_write", crashing)
    with pytest.raises(OSError, match="simulated crash"):
        install(cand, served)
    assert calls[-1] == ["default.prev.json", "default.prev.npz", "default.json", "default.npz"][crash_before]

    def state(path):
        try:
            return load_model(path).version
        except ModelError as exc:
            assert "weights do not match their metadata" in exc.problem
            return "refused"

    assert (state(served), state(prev_path(served))) == (served_is, prev_is)
    monkeypatch.setattr(kube.atomic, "atomic_write", real)
    if served_is == "old":  # rerun --apply from where it stopped: the new pair
        install(cand, served)
        assert load_model(served).version == "new"


@pytest.mark.parametrize("split", sorted(REFUSED))
def test_main_refuses_splits_other_than_validation_before_loading_anything(split, capsys):
    assert main(["--candidate", "/nonexistent.npz", "--split", split]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"error: --split {split}: ") and "never chosen on" in err


def test_report_writes_null_for_figures_that_are_not_numbers():
    iv = interval([0.5])
    r = build_report(pairs=pair_rows([_row("a", 1, math.nan)], [_row("a", 1, 0.2)]), iv=iv, decision=decide(iv),
                     models={}, setup={}, applied=False, log_info=None)
    text = json.dumps(r, allow_nan=False)  # raises on a NaN left in
    assert r["interval"]["hi"] is None and r["pairs"][0]["ratio"] is None and r["decision"] == "not promoted"
    assert json.loads(text)["pairs"][0]["candidate_excess"] is None


def test_main_refuses_a_report_path_it_could_not_write_before_evaluating(tmp_path, capsys):
    assert main(["--candidate", "/nonexistent.npz", "--report", str(tmp_path / "no" / "r.json")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_both_models_are_scored_as_served_unless_asked_for_the_raw_argmax():
    """A promoted model is served through the value-to-score mapping and the hot filter, and the two views can
    disagree (a model better by argmax can lose as served), so the gate scores as served by default."""
    from policy.cli import from_namespace
    from policy.promote import _setup, build_parser
    from policy.served import DEFAULT_WEIGHT

    default = from_namespace(build_parser().parse_args(["--candidate", "c.npz"]))
    raw = from_namespace(build_parser().parse_args(["--candidate", "c.npz", "--as-served", "0"]))
    heavier = from_namespace(build_parser().parse_args(["--candidate", "c.npz", "--as-served", "10"]))
    assert _setup(default)["as_served"] == DEFAULT_WEIGHT
    assert _setup(raw)["as_served"] is None
    assert _setup(heavier)["as_served"] == 10


def test_seed_base_offsets_the_validation_seeds_as_evaluate_does():
    """``--seed-base`` moves both models onto other validation episodes (an offset into the split's own range,
    as ``policy.evaluate --split validation --seed-base``); unset, the evaluation's default block."""
    from policy.cli import from_namespace
    from policy.grid import split_cases
    from policy.promote import _setup, build_parser
    from policy.splits import seeds

    default = _setup(from_namespace(build_parser().parse_args(["--candidate", "c.npz"])))
    fresh = _setup(from_namespace(build_parser().parse_args(["--candidate", "c.npz", "--seed-base", "60",
                                                             "--seeds", "40"])))
    assert default["seed_offset"] == 0
    assert (fresh["seed_offset"], fresh["seeds"]) == (60, 40)
    cases = split_cases("validation", fresh["families"], fresh["loads"], fresh["seeds"], fresh["seed_offset"])
    assert sorted({c.seed for c in cases}) == seeds("validation", 40, 60)
    assert not {c.seed for c in cases} & set(seeds("validation", 60))


def test_main_refuses_a_negative_seed_base_before_loading_anything(capsys):
    assert main(["--candidate", "/nonexistent.npz", "--seed-base", "-1"]) == 2
    assert capsys.readouterr().err.startswith("error: --seed-base: ")


def test_the_report_names_a_model_of_the_checkout_from_its_root_and_any_other_as_given(tmp_path, monkeypatch):
    # promote's default --served is an absolute path; a committed report must not record the machine's directory
    shipped = load_model(SHIPPED_MODEL)
    assert describe(shipped, "d")["path"] == "policy/models/default.npz"
    monkeypatch.chdir(tmp_path)  # a relative path is resolved from where the command ran
    (tmp_path / "models").mkdir()
    outside = _artifact(tmp_path / "models" / "mine.npz", "mine")
    assert describe(load_model("models/mine.npz"), "d")["path"] == "models/mine.npz"
    assert describe(load_model(outside), "d") == {"path": str(outside), "version": "mine", "sha256": "d"}


def test_the_log_context_is_logged_unless_asked_for_and_recorded_in_the_report(tmp_path):
    from policy.cli import from_namespace
    from policy.promote import build_parser

    assert from_namespace(build_parser().parse_args(["--candidate", "c.npz"])).log_context == "logged"
    kept = build_parser().parse_args(["--candidate", "c.npz", "--log-context", "kept"])
    assert from_namespace(kept).log_context == "kept"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--candidate", "c.npz", "--log-context", "pool"])
    s = log_summary(_log(tmp_path, ["v1"], [5.0]), served_version="v1", candidate=make_scorer("lookahead"),
                    served=make_scorer("worst-fit"))
    assert s["context"] == "logged"
