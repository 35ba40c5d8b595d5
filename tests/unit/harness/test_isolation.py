"""harness.isolation: CPU lists, the default split of a machine, quota scaling, cpu.shares, typed refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import isolation
from harness.errors import HarnessError
from harness.isolation import Isolation, IsolationError, IsolationUnavailable
from policy.labworld import REAL_NODES, RealNodeShape


@pytest.mark.parametrize(("text", "cpus"), [
    ("0", (0,)), ("0-1", (0, 1)), ("0-2,5", (0, 1, 2, 5)), ("3,1", (1, 3)), ("0-1\n", (0, 1)), ("", ()),
])  # fmt: skip
def test_cpu_lists_parse_and_format_back(text: str, cpus: tuple[int, ...]) -> None:
    assert isolation.parse_cpu_list(text) == cpus
    assert isolation.parse_cpu_list(isolation.format_cpu_list(cpus)) == cpus


@pytest.mark.parametrize(("cpus", "text"), [((0, 1, 2, 5), "0-2,5"), ((7,), "7"), ((), ""), ((4, 2, 3), "2-4")])
def test_format_joins_ranges(cpus: tuple[int, ...], text: str) -> None:
    assert isolation.format_cpu_list(cpus) == text


@pytest.mark.parametrize("bad", ["a", "1-", "3-1", "-1", "0;1"])
def test_a_bad_cpu_list_is_a_typed_error(bad: str) -> None:
    with pytest.raises(IsolationError, match="not a CPU list"):
        isolation.parse_cpu_list(bad)


@pytest.mark.parametrize(("cpus", "system", "nodes", "budget"), [
    ((0, 1), "0", "1", 900),  # this machine: one core each, 100/200/200/400 m on the node core
    ((0, 1, 2, 3), "0", "1-3", 2700),
    ((0, 1, 2, 3, 4, 5, 6, 7), "0-1", "2-7", 5400),
    ((2, 3, 6), "2", "3,6", 1800),  # a cpuset root with gaps
])  # fmt: skip
def test_the_default_split_gives_the_system_a_quarter_and_at_least_one_cpu(
    cpus: tuple[int, ...], system: str, nodes: str, budget: int
) -> None:
    iso = Isolation.for_cpus(cpus)
    assert (iso.system_cpus, iso.node_cpus, iso.node_budget_millis) == (system, nodes, budget)


def test_one_cpu_cannot_be_isolated_and_says_so() -> None:
    with pytest.raises(IsolationUnavailable, match="at least 2 CPUs.*offers 1") as caught:
        Isolation.for_cpus([0])
    assert isinstance(caught.value, HarnessError)


@pytest.mark.parametrize(("system", "nodes", "headroom", "match"), [
    ("0-1", "1", 0.1, "overlap on 1"),
    ("", "1", 0.1, "non-empty"),
    ("0", "1", 1.0, "headroom"),
    ("0", "x", 0.1, "not a CPU list"),
])  # fmt: skip
def test_bad_isolations_are_refused(system: str, nodes: str, headroom: float, match: str) -> None:
    with pytest.raises(IsolationError, match=match):
        Isolation(system_cpus=system, node_cpus=nodes, headroom=headroom)


def test_cpu_lists_are_kept_in_normal_form() -> None:
    assert Isolation(system_cpus="1,0", node_cpus="3,2,4") == Isolation(system_cpus="0-1", node_cpus="2-4")


@pytest.mark.parametrize(("budget", "want"), [
    (900, (100, 200, 200, 400)),  # the one-core node set of a 2-core machine
    (1000, (111, 222, 222, 444)),  # no headroom: still 1:2:2:4
    (2700, (250, 500, 500, 1000)),  # fits already: unchanged, never scaled up
    (4, (1, 1, 1, 1)),
])  # fmt: skip
def test_quotas_scale_to_the_budget_keeping_their_ratio(budget: int, want: tuple[int, ...]) -> None:
    scaled = isolation.scale_shapes(REAL_NODES, budget)
    assert tuple(s.cpu_millis for s in scaled) == want
    assert sum(want) <= budget
    assert [(s.name, s.memory_mib, s.net_mbit) for s in scaled] == [(s.name, s.memory_mib, s.net_mbit)
                                                                    for s in REAL_NODES]  # fmt: skip


def test_uneven_quotas_keep_their_ratio_to_a_millicore() -> None:
    shapes = [RealNodeShape("a", "a", 300, 512), RealNodeShape("b", "b", 700, 512)]
    assert [s.cpu_millis for s in isolation.scale_shapes(shapes, 333)] == [99, 233]


def test_a_budget_below_a_millicore_a_node_is_refused() -> None:
    with pytest.raises(IsolationError, match="cannot give 4 nodes"):
        isolation.scale_shapes(REAL_NODES, 3)


@pytest.mark.parametrize(("millis", "shares"), [(100, 1024), (200, 2048), (400, 4096), (250, 2560), (0, 2)])
def test_cpu_shares_are_in_proportion_to_quota(millis: int, shares: int) -> None:
    assert isolation.cpu_shares(millis) == shares


def test_the_system_node_takes_the_whole_system_set() -> None:
    shape = Isolation(system_cpus="0-1", node_cpus="2-7").system_shape()
    assert (shape.name, shape.cpu_millis, shape.net_mbit) == (isolation.SYSTEM_NODE, 2000, 0)


def test_a_machine_without_the_cpuset_hierarchy_is_named(tmp_path: Path) -> None:
    with pytest.raises(IsolationUnavailable, match=f"cpuset hierarchy at {tmp_path}.*cpuset.cpus"):
        isolation.machine_cpus(tmp_path)


def test_the_machine_cpus_come_from_the_cpuset_root(tmp_path: Path) -> None:
    for name, text in (("cgroup.procs", ""), ("cpuset.cpus", "0-3\n"), ("cpuset.mems", "0\n")):
        (tmp_path / name).write_text(text)
    assert isolation.machine_cpus(tmp_path) == (0, 1, 2, 3)


def test_an_isolation_naming_cpus_the_machine_lacks_is_refused() -> None:
    with pytest.raises(IsolationUnavailable, match="wants CPUs 2-3.*has 0-1"):
        isolation.check_fits(Isolation(system_cpus="0", node_cpus="1-3"), (0, 1))
    isolation.check_fits(Isolation(system_cpus="0", node_cpus="1"), (0, 1))
