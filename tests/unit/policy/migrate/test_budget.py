"""Table tests of the budget: caps, cooldown, max per job, dry run; typed refusals."""

import pytest

from policy.migrate import Budget, BudgetState, ConfigError, Limit, MigrationIntent, apply_budget


def intent(job, source="n0", target="n1"):
    return MigrationIntent(job, source, target, (), "test", 100.0, 10.0, 5.0, 0.0, 0.1, 3)


B = Budget(max_concurrent=3, max_per_node=2, max_fraction=0.5, cooldown=60.0, max_per_job=2)


@pytest.mark.parametrize("intents,state,allowed,refused", [
    ([intent("a")], BudgetState(100.0, 10), ["a"], []),
    # in flight already
    ([intent("a")], BudgetState(100.0, 10, in_flight={"a": ("n0", "n1")}), [], [Limit.IN_FLIGHT]),
    # max per job
    ([intent("a")], BudgetState(1e4, 10, migrations={"a": 2}, last_migrated={"a": 0.0}), [], [Limit.MAX_PER_JOB]),
    # cooldown: 30 s ago < 60 s; 61 s ago is fine
    ([intent("a")], BudgetState(130.0, 10, migrations={"a": 1}, last_migrated={"a": 100.0}), [], [Limit.COOLDOWN]),
    ([intent("a")], BudgetState(161.0, 10, migrations={"a": 1}, last_migrated={"a": 100.0}), ["a"], []),
    # total cap 3: two in flight, two intents -> one allowed
    ([intent("a", "n2", "n3"), intent("b", "n4", "n5")],
     BudgetState(0.0, 100, in_flight={"x": ("n6", "n7"), "y": ("n8", "n9")}), ["a"], [Limit.TOTAL]),
    # fraction: 0.5 of 2 running = 1
    ([intent("a", "n0", "n1"), intent("b", "n2", "n3")], BudgetState(0.0, 2), ["a"], [Limit.FRACTION]),
    # fraction never blocks the first migration
    ([intent("a")], BudgetState(0.0, 1), ["a"], []),
    # per node: n0 already source of one and target of one
    ([intent("a", "n0", "n5")], BudgetState(0.0, 100, in_flight={"x": ("n0", "n1"), "y": ("n2", "n0")}),
     [], [Limit.SOURCE_NODE]),
    ([intent("a", "n5", "n1"), intent("b", "n6", "n1"), intent("c", "n7", "n1")], BudgetState(0.0, 100),
     ["a", "b"], [Limit.TARGET_NODE]),
])
def test_caps(intents, state, allowed, refused):
    res = apply_budget(intents, B, state)
    assert [i.job_id for i in res.allowed] == allowed
    assert [r.limit for r in res.refused] == refused
    assert all(r.detail for r in res.refused)


def test_dry_run_refuses_everything():
    res = apply_budget([intent("a"), intent("b")], Budget(dry_run=True), BudgetState(0.0, 10))
    assert res.allowed == () and {r.limit for r in res.refused} == {Limit.DRY_RUN}


def test_the_first_cap_hit_is_reported():
    state = BudgetState(10.0, 10, in_flight={"a": ("n0", "n1")}, migrations={"a": 5}, last_migrated={"a": 5.0})
    assert apply_budget([intent("a")], B, state).refused[0].limit is Limit.IN_FLIGHT


@pytest.mark.parametrize("kw", [dict(max_concurrent=-1), dict(max_fraction=1.5), dict(cooldown=-1)])
def test_bad_budget(kw):
    with pytest.raises(ConfigError):
        Budget(**kw)
