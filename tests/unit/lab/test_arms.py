"""Arm names with a hot-filter mode: parsed once, sorted for reports, run in the order that needs fewest rollouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import arms
from lab.kube import MIGRATION_ARGS, extender_args, migration_args
from lab.records import job_rows, usage_rows
from lab.report import append_rows, summarise
from lab.schedule import make_schedule
from tests.unit.lab.test_records import _result


def test_a_suffix_sets_the_extenders_hot_filter_and_a_plain_arm_keeps_the_shipped_one() -> None:
    fit = arms.parse("model@prefer-fit")
    assert (fit.base, fit.scheduler, fit.policy, fit.migration, fit.hot_filter) == (
        "model", "drsched", "model", False, "prefer-fit")
    assert arms.parse("model").hot_filter is None
    assert arms.parse("migration@off").extender == ("model", "off") and arms.parse("migration@off").migration
    assert arms.parse("default").extender is None


@pytest.mark.parametrize("name, says", [
    ("fastest", "unknown arm 'fastest'"),
    ("model@coolest", "must be one of prefer-cool, prefer-fit, strict, off"),
    ("default@off", "runs without the extender"),
    ("model@", "hot-filter mode"),
])
def test_bad_arm_names_say_what_is_wrong(name, says) -> None:
    with pytest.raises(arms.ArmError, match=says):
        arms.parse(name)


def test_each_extender_setting_costs_one_rollout_per_seed() -> None:
    names = ["model@prefer-fit", "demand-aware@off", "migration", "default", "model", "demand-aware",
             "migration@prefer-fit"]
    order = arms.run_order(names, ("model", None))
    assert order[:3] == ["default", "model", "migration"]  # the extender as deployed: no rollout
    settings = [arms.parse(a).extender for a in order if arms.parse(a).extender is not None]
    changes = sum(1 for before, after in zip([("model", None), *settings], settings, strict=False)
                  if before != after)
    assert changes == len(set(settings) - {("model", None)}) == 3
    # the arms already served by the current setting come first, whatever it is
    assert arms.run_order(names, ("model", "prefer-fit"))[:3] == ["default", "model@prefer-fit",
                                                                 "migration@prefer-fit"]
    # with the controller on, the migration arm of the current setting runs before it is scaled down
    assert arms.run_order(["model", "migration"], ("model", None), migration_on=True) == ["migration", "model"]


def test_reports_sort_modes_after_their_base_and_files_avoid_the_at_sign() -> None:
    names = {"migration", "model@prefer-fit", "default", "model", "demand-aware@off", "demand-aware"}
    assert sorted(names, key=arms.sort_key) == ["default", "model", "model@prefer-fit", "demand-aware",
                                                "demand-aware@off", "migration"]
    assert arms.file_part("model@prefer-fit") == "model+prefer-fit"


def test_extender_args_replace_the_policy_and_set_or_drop_the_hot_filter() -> None:
    shipped = ["--host=0.0.0.0", "--policy=model", "--usage-provider=monitor"]
    fit = extender_args(shipped, policy="demand-aware", hot_filter="prefer-fit")
    assert fit == ["--host=0.0.0.0", "--policy=demand-aware", "--usage-provider=monitor", "--hot-filter=prefer-fit"]
    assert extender_args(fit, policy="model", hot_filter="off").count("--hot-filter=off") == 1
    assert extender_args(fit, policy="model", hot_filter=None) == shipped


def test_the_summary_tables_and_plots_carry_arms_with_a_mode(tmp_path: Path) -> None:
    jobs = make_schedule(seed=1, jobs=2)
    result = _result(jobs)
    result.usage = [(t, "rn-large", {"cpu_m": 100.0 * t, "mem_mi": 10.0}) for t in (1.0, 2.0)]
    for arm in ("model@prefer-fit", "default", "model"):
        append_rows(tmp_path, "jobs.csv", job_rows(result, jobs, seed=1, arm=arm, variant="under",
                                                  node_type=lambda n: n, solo=lambda job, nt: (5.0, 900.0)))
        append_rows(tmp_path, "usage.csv", usage_rows(result, seed=1, arm=arm, variant="under"))
    append_rows(tmp_path, "nodes.csv", [{"node": n, "node_type": n, "cpu_quota_m": 500, "mem_mi": 1024,
                                         "net_mbit": 40} for n in ("rn-large", "rn-small", "rn-medium")])
    text = summarise(tmp_path)
    ratios = text[text.index("Ratio to `default`"):]
    assert ratios.index("| model | 1 |") < ratios.index("| model@prefer-fit | 1 |")
    assert sorted(p.name for p in tmp_path.glob("usage-*.png")) == ["usage-default.png", "usage-model+prefer-fit.png",
                                                                    "usage-model.png"]


def test_a_replicate_runs_what_its_arm_runs_and_sorts_after_it() -> None:
    copy, arm = arms.parse("default#2"), arms.parse("default")
    assert (copy.scheduler, copy.policy, copy.extender, copy.replicate) == (arm.scheduler, arm.policy, None, 2)
    assert arms.parse("model@off#3").extender == ("model", "off") and arms.parse("model").replicate == 1
    assert sorted(["model", "default#2", "worst-fit", "default"], key=arms.sort_key) == [
        "default", "default#2", "model", "worst-fit"]
    assert arms.file_part("default#2") == "default_2"
    assert arms.parse("worst-fit").policy == "worst-fit"


@pytest.mark.parametrize("name", ["default#1", "default#", "default#x", "nope#2"])
def test_bad_replicates_are_refused(name) -> None:
    with pytest.raises(arms.ArmError):
        arms.parse(name)


def test_the_random_order_is_seeded_by_key_and_seed_and_ignores_the_input_order() -> None:
    names = ["default", "model", "demand-aware", "default#2", "worst-fit@off"]
    first = arms.random_order(names, seed=1, key="p")
    assert first == arms.random_order(list(reversed(names)), seed=1, key="p")
    assert sorted(first) == sorted(names)
    orders = {tuple(arms.random_order(names, seed=s, key="p")) for s in range(1, 9)}
    assert len(orders) > 1  # it does vary from seed to seed


@pytest.mark.parametrize(("name", "controller"), [
    ("migration", ()), ("taint", ("--mode=taint",)), ("restart", ("--resume=scratch",)),
    ("taint@off", ("--mode=taint",)), ("restart#2", ("--resume=scratch",)),
])  # fmt: skip
def test_the_straggler_baselines_run_the_controller_in_their_own_mode(name: str, controller: tuple) -> None:
    arm = arms.parse(name)
    assert (arm.scheduler, arm.policy, arm.migration, arm.controller) == ("drsched", "model", True, controller)
    assert migration_args(controller) == [*MIGRATION_ARGS, *controller]
    assert not any(a.startswith(("--mode=", "--resume=")) for a in MIGRATION_ARGS)  # the arm's flag is the only one


def test_arms_without_the_controller_add_no_controller_args() -> None:
    for name in ("default", "model", "demand-aware", "worst-fit@off"):
        arm = arms.parse(name)
        assert not arm.migration and arm.controller == ()


def test_the_baselines_are_other_settings_than_migration_so_a_protocol_tells_them_apart() -> None:
    from lab.protocol import _same_setting

    assert _same_setting("migration", "migration#2") and _same_setting("taint", "taint#2")
    assert not _same_setting("migration", "taint") and not _same_setting("migration", "restart")
    assert not _same_setting("taint", "model")


def test_every_controller_arg_is_a_setting_the_controller_accepts() -> None:
    from migration.settings import Settings

    for base, (_, _, controller) in arms.BASES.items():
        for arg in controller or ():
            name, _, value = arg.removeprefix("--").partition("=")
            assert getattr(Settings(**{name.replace("-", "_"): value}), name.replace("-", "_")) == value, base


def test_an_arm_s_degraded_taints_are_cleared_and_other_taints_kept() -> None:
    from types import SimpleNamespace as NS

    from lab.kube import Lab

    def node(name, *taints):
        return NS(metadata=NS(name=name), spec=NS(taints=[NS(key=k, value=v, effect=e) for k, v, e in taints] or None))

    patched = {}
    core = NS(list_node=lambda: NS(items=[
        node("rn-small"),
        node("rn-large", ("drsched.io/degraded", None, "NoSchedule"), ("team", "a", "NoExecute")),
        node("rn-medium", ("drsched.io/degraded", None, "NoSchedule")),
    ]), patch_node=lambda name, body: patched.__setitem__(name, body))
    lab = Lab.__new__(Lab)  # no deploy: only the node calls below are exercised
    lab.cluster = NS(core=core)
    assert lab.clear_degraded_taints() == ["rn-large", "rn-medium"]
    assert patched == {"rn-large": {"spec": {"taints": [{"key": "team", "value": "a", "effect": "NoExecute"}]}},
                       "rn-medium": {"spec": {"taints": None}}}


def test_a_run_s_host_state_is_removed_and_nothing_else(tmp_path, monkeypatch) -> None:
    import lab.kube

    monkeypatch.setattr(lab.kube, "STATE_ROOT", tmp_path)
    (tmp_path / "def-un314-1" / "j000").mkdir(parents=True)
    (tmp_path / "decisions").mkdir()
    lab.kube.Lab.remove_run_state("def-un314-1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decisions"]
    lab.kube.Lab.remove_run_state("def-un314-1")  # already gone: no error
