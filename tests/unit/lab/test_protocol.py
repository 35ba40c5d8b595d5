"""Protocol files: a valid main protocol, the committed ones, and every malformed file refused naming its line and
field, never with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.protocol import ProtocolError, load_protocol, parse_protocol

ROOT = Path(__file__).resolve().parents[3]
MAIN = """\
protocol: under-main
kind: main
scenario:
  variant: under
  regime: drs
  job_shape: core
  jobs: 48
  window_s: 240.0
  scale: 1.0
seeds: [1, 2, 3, 4, 5, 6, 7]
arms: [default, default#2, model, demand-aware, worst-fit@off]
baseline: default
aa_arm: default#2
positive_control: worst-fit@off
order: random
solo_runs: 3
endpoint:
  metric: mean_jct_s
  effect: 0.15
  power: 0.8
  alpha: 0.05
pilot:
  sd_log_ratio: 0.1
  source: results/lab/aa-pilot
predicted:
  by: python -m policy.evaluate --lab-world --seeds 20
  ratios:
    model: 0.97
    demand-aware: 0.8
    worst-fit@off: 1.4
  note: the simulator expects model within 3 % of default here; a null result is the expected one
"""


def test_a_main_protocol_parses_into_what_the_run_and_the_report_need() -> None:
    p = parse_protocol(MAIN, path="under-main.yaml")
    assert (p.name, p.kind, p.scenario.jobs, p.seeds[-1], p.baseline, p.aa_arm, p.positive_control) == (
        "under-main", "main", 48, 7, "default", "default#2", "worst-fit@off")
    assert (p.order, p.order_key, p.solo_runs, p.metric, p.effect, p.pilot_sd) == (
        "random", "under-main", 3, "mean_jct_s", 0.15, 0.1)
    assert p.small_predictions() == {"model": 0.97}
    assert len(p.sha256) == 64 and p.arm_timeout_s is None


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "lab" / "protocols").glob("*.yaml")))
def test_the_committed_protocols_parse(name) -> None:
    p = load_protocol(ROOT / "lab" / "protocols" / name)
    assert p.name == name.removesuffix(".yaml")


def test_the_smoke_protocol_is_ci_sized() -> None:
    p = load_protocol(ROOT / "lab" / "protocols" / "ci-smoke.yaml")
    assert (len(p.seeds), len(p.arms), p.scenario.jobs) == (1, 2, 16)


def _with(old: str, new: str) -> str:
    assert old in MAIN, old
    return MAIN.replace(old, new, 1)


@pytest.mark.parametrize("text, says", [
    ("protocol: [unclosed\n", "x.yaml:2: not valid YAML"),
    ("- a\n- b\n", "x.yaml:1: field '(top)': must be a mapping"),
    ("", "x.yaml: field '(top)': must be a mapping"),
    ("protocol: a\n---\nprotocol: b\n", "x.yaml:2: not valid YAML"),
    (_with("kind: main\n", "kind: main\ncolour: blue\n"), "x.yaml:3: field 'colour': unknown key"),
    (_with("kind: main\n", "kind: main\nkind: pilot\n"), "x.yaml:3: field 'kind': given twice"),
    (_with("kind: main\n", ""), "x.yaml:1: field 'kind': missing"),
    (_with("kind: main", "kind: big"), "x.yaml:2: field 'kind': 'big' is not one of main, pilot, smoke"),
    (_with("  jobs: 48", "  jobs: 16"), "x.yaml:7: field 'scenario.jobs': 16 jobs: a main or pilot protocol runs at "
                                        "least 48"),
    (_with("  jobs: 48", "  jobs: many"), "x.yaml:7: field 'scenario.jobs': 'many' is not an integer"),
    (_with("  jobs: 48", "  jobs: true"), "x.yaml:7: field 'scenario.jobs': True is not an integer"),
    (_with("  variant: under", "  variant: over"), "x.yaml:4: field 'scenario.variant': 'over' is not one of"),
    (_with("  window_s: 240.0", "  window_s: 0"), "x.yaml:8: field 'scenario.window_s': 0 must be > 0"),
    (_with("  scale: 1.0", "  scale: -1"), "x.yaml:9: field 'scenario.scale': -1 must be > 0"),
    (_with("seeds: [1, 2, 3, 4, 5, 6, 7]", "seeds: [1, 1]"), "x.yaml:10: field 'seeds': a seed is listed twice"),
    (_with("seeds: [1, 2, 3, 4, 5, 6, 7]", "seeds: [1]"), "x.yaml:10: field 'seeds': a main protocol runs at least 2"),
    (_with("seeds: [1, 2, 3, 4, 5, 6, 7]", "seeds: [1, -2]"), "x.yaml:10: field 'seeds[1]': -2 must be >= 0"),
    (_with("worst-fit@off]", "worst-fit@hot]"), "x.yaml:11: field 'arms[4]': arm 'worst-fit@hot': hot-filter mode"),
    (_with("default#2, model", "default#2, default#2, model"), "field 'arms[2]': 'default#2' is listed twice"),
    (_with("arms: [default, default#2, model, demand-aware, worst-fit@off]",
           "arms: [default, default#2, model, worst-fit@off]"), "x.yaml:11: field 'arms': a main protocol needs arm "
                                                                "'demand-aware'"),
    (_with("baseline: default", "baseline: model#3"), "x.yaml:12: field 'baseline': 'model#3' is not one of"),
    (_with("aa_arm: default#2", "aa_arm: model"), "x.yaml:13: field 'aa_arm': 'model' must be a replicate of"),
    (_with("positive_control: worst-fit@off", "positive_control: default#2"),
     "x.yaml:14: field 'positive_control': 'default#2' runs what 'default' runs"),
    (_with("order: random", "order: rollouts"), "x.yaml:15: field 'order': a main protocol randomises"),
    (_with("solo_runs: 3", "solo_runs: 1"), "x.yaml:16: field 'solo_runs': a main protocol takes the median of at "
                                            "least 3"),
    (_with("  metric: mean_jct_s", "  metric: speed"), "x.yaml:18: field 'endpoint.metric': 'speed' is not one of"),
    (_with("  effect: 0.15", "  effect: 15"), "x.yaml:19: field 'endpoint.effect': 15 must be > 0 and < 1"),
    (_with("  sd_log_ratio: 0.1", "  sd_log_ratio: -1"), "x.yaml:23: field 'pilot.sd_log_ratio': -1 must be > 0"),
    (_with("    model: 0.97", "    migration: 0.97"), "x.yaml:28: field 'predicted.ratios.migration': 'migration' is "
                                                      "not one of"),
    (_with("  note: the simulator expects model within 3 % of default here; a null result is the expected one\n",
           ""), "x.yaml:28: field 'predicted.note': the simulator predicts under 10 % for model: say so in advance"),
    (MAIN.split("pilot:")[0], "x.yaml:1: field 'pilot': a main protocol states its pilot"),
])
def test_a_malformed_protocol_names_file_line_and_field(text, says) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_protocol(text, path="x.yaml")
    assert says in str(err.value)


def test_a_pilot_needs_its_aa_arm_and_three_seeds_and_a_missing_file_is_a_protocol_error(tmp_path: Path) -> None:
    pilot = (ROOT / "lab" / "protocols" / "aa-pilot.yaml").read_text()
    with pytest.raises(ProtocolError, match="a pilot protocol runs at least 3 seeds"):
        parse_protocol(pilot.replace("seeds: [201, 202, 203]", "seeds: [201, 202]"), path="p.yaml")
    with pytest.raises(ProtocolError, match="a pilot protocol needs its A/A arm"):
        parse_protocol(pilot.replace("aa_arm: default#2\n", ""), path="p.yaml")
    with pytest.raises(ProtocolError, match="cannot read the protocol"):
        load_protocol(tmp_path / "nope.yaml")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe")
    with pytest.raises(ProtocolError, match="cannot read the protocol"):
        load_protocol(tmp_path / "bin.yaml")


def test_isolation_is_on_unless_the_protocol_turns_it_off() -> None:
    assert parse_protocol(MAIN, path="x.yaml").isolate is True
    assert parse_protocol(MAIN + "isolate: false\n", path="x.yaml").isolate is False
    with pytest.raises(ProtocolError, match=r"x.yaml:32: field 'isolate': 'sometimes' is not true or false"):
        parse_protocol(MAIN + "isolate: sometimes\n", path="x.yaml")


def test_the_world_is_drs_unless_the_scenario_names_another() -> None:
    assert parse_protocol(MAIN, path="x.yaml").scenario.world == "drs"
    named = parse_protocol(_with("  scale: 1.0\n", "  scale: 1.0\n  world: multi-resource\n"), path="x.yaml")
    assert named.scenario.world == "multi-resource"


def test_the_scale_is_the_worlds_unless_the_scenario_names_one() -> None:
    assert parse_protocol(MAIN, path="x.yaml").scenario.scale == 1.0  # named, though the drs world's is 0.5
    unnamed = {w: parse_protocol(_with("  scale: 1.0\n", f"  world: {w}\n"), path="x.yaml").scenario.scale
               for w in ("drs", "multi-resource")}
    assert unnamed == {"drs": 0.5, "multi-resource": 1.0}


@pytest.mark.parametrize("world, says", [
    ("flat-earth", "x.yaml:10: field 'scenario.world': 'flat-earth' is not one of drs, multi-resource"),
    ("[drs]", "x.yaml:10: field 'scenario.world': ['drs'] is not a string"),
    ("3", "x.yaml:10: field 'scenario.world': 3 is not a string"),
])
def test_a_world_that_is_not_one_of_the_worlds_is_refused_naming_the_field(world, says) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_protocol(_with("  scale: 1.0\n", f"  scale: 1.0\n  world: {world}\n"), path="x.yaml")
    assert says in str(err.value)


def test_the_straggler_node_is_lab_run_s_unless_the_scenario_names_one_or_the_seed() -> None:
    assert parse_protocol(MAIN, path="x.yaml").scenario.straggler_node == "rn-large"
    for name in ("seed", "rn-small"):
        text = _with("  scale: 1.0\n", f"  scale: 1.0\n  straggler_node: {name}\n")
        assert parse_protocol(text, path="x.yaml").scenario.straggler_node == name
    with pytest.raises(ProtocolError) as err:
        parse_protocol(_with("  scale: 1.0\n", "  scale: 1.0\n  straggler_node: rn-huge\n"), path="x.yaml")
    assert ("x.yaml:10: field 'scenario.straggler_node': 'rn-huge' is not one of seed, seed-loaded, rn-small"
            in str(err.value))


def test_tenants_are_none_unless_the_scenario_names_how_many_and_at_most_one_a_node() -> None:
    assert parse_protocol(MAIN, path="x.yaml").scenario.tenants == 0
    assert parse_protocol(_with("  scale: 1.0\n", "  scale: 1.0\n  tenants: 2\n"), path="x.yaml").scenario.tenants == 2
    for bad, says in (("5", "5 must be >= 0 and < 5"), ("-1", "-1 must be >= 0"), ("two", "'two' is not an integer")):
        with pytest.raises(ProtocolError) as err:
            parse_protocol(_with("  scale: 1.0\n", f"  scale: 1.0\n  tenants: {bad}\n"), path="x.yaml")
        assert f"x.yaml:10: field 'scenario.tenants': {says}" in str(err.value)


STRAGGLER_MAIN = (MAIN.replace("  regime: drs", "  regime: straggler\n  straggler_node: seed-loaded")
                  .replace("arms: [default, default#2, model, demand-aware, worst-fit@off]",
                           "arms: [model, model#2, migration, taint, restart]")
                  .replace("baseline: default\naa_arm: default#2\npositive_control: worst-fit@off",
                           "baseline: model\naa_arm: model#2")
                  .replace("  metric: mean_jct_s\n", "  metric: mean_jct_s\n  also: [makespan_s]\n")
                  .replace("    model: 0.97\n    demand-aware: 0.8\n    worst-fit@off: 1.4",
                           "    migration: 0.99\n    taint: 1.0\n    restart: 1.0"))


def test_a_straggler_main_protocol_needs_its_own_arms_and_no_positive_control() -> None:
    p = parse_protocol(STRAGGLER_MAIN, path="s.yaml")
    assert (p.baseline, p.aa_arm, p.positive_control, p.also) == ("model", "model#2", None, ("makespan_s",))
    assert p.scenario.straggler_node == "seed-loaded"
    with pytest.raises(ProtocolError) as err:
        parse_protocol(STRAGGLER_MAIN.replace(", taint, restart]", ", restart]").replace("    taint: 1.0\n", ""),
                       path="s.yaml")
    assert "a main protocol of the straggler regime needs arm 'taint'" in str(err.value)
    with pytest.raises(ProtocolError) as err:  # the placement regime still needs the five placement arms
        parse_protocol(STRAGGLER_MAIN.replace("regime: straggler", "regime: drs"), path="s.yaml")
    assert "a main protocol needs arm 'default'" in str(err.value)


def test_a_straggler_protocol_may_run_fewer_jobs_down_to_its_own_floor() -> None:
    assert parse_protocol(STRAGGLER_MAIN.replace("  jobs: 48", "  jobs: 24"), path="s.yaml").scenario.jobs == 24
    with pytest.raises(ProtocolError) as err:
        parse_protocol(STRAGGLER_MAIN.replace("  jobs: 48", "  jobs: 15"), path="s.yaml")
    assert "field 'scenario.jobs': 15 jobs: a main or pilot protocol of the straggler regime runs at least 16" in str(
        err.value)


@pytest.mark.parametrize(("also", "says"), [("[mean_jct_s]", "lists a metric twice or the primary one"),
                                            ("[makespan_s, makespan_s]", "lists a metric twice"),
                                            ("[speed]", "'speed' is not one of"), ("[]", "non-empty list")])
def test_a_bad_secondary_endpoint_is_refused_naming_its_field(also: str, says: str) -> None:
    with pytest.raises(ProtocolError) as err:
        parse_protocol(STRAGGLER_MAIN.replace("also: [makespan_s]", f"also: {also}"), path="s.yaml")
    assert "field 'endpoint.also" in str(err.value) and says in str(err.value)
