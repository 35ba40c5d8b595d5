"""The gates: the kernel files' parsers, host interference from cgroup counters, scored pods, gates.csv rows."""

from __future__ import annotations

import pytest

from lab.gates import (
    CpuStat,
    CpuTimes,
    GateError,
    NodeSample,
    SystemSample,
    busy_share,
    demand_from_jobs,
    flagged_runs,
    gate_rows,
    interference,
    node_cpu_busy,
    parse_cpu_stat,
    parse_cpuacct_usage,
    parse_proc_stat,
    unscored,
)

V1 = "nr_periods 120\nnr_throttled 7\nthrottled_time 350000000\n"
V2 = ("usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 90\nnr_throttled 3\n"
      "throttled_usec 12000\nnr_bursts 0\nburst_usec 0\n")
PROC = ("cpu  300 0 100 1000 20 0 0 0 0 0\ncpu0 100 0 50 500 10 0 0 0 0 0\ncpu1 200 0 50 500 10 0 0 0 0 0\n"
        "intr 1 2 3\nctxt 99\n")


@pytest.mark.parametrize("text, expected", [
    (V1, CpuStat(120, 7, 350_000_000)),
    (V2, CpuStat(90, 3, 12_000_000, usage_ns=2_500_000_000, nr_bursts=0, burst_ns=0)),
    (V1 + "nr_bursts 4\nburst_time 9000\n", CpuStat(120, 7, 350_000_000, nr_bursts=4, burst_ns=9000)),  # 6.x v1
])
def test_cpu_stat_v1_and_v2(text, expected) -> None:
    assert parse_cpu_stat(text) == expected


@pytest.mark.parametrize("text, says", [
    ("nr_periods 1\nthrottled_time 0\n", "'nr_throttled' missing"),
    ("nr_periods 1\nnr_throttled x\n", "cpu.stat:2: field 'nr_throttled': 'x' is not an integer"),
    ("nr_periods 1 2\n", "cpu.stat:1: expected 'key value'"),
    ("nr_periods 1\nnr_throttled 0\n", "'throttled_time' (v1) or 'throttled_usec' (v2) missing"),
])
def test_a_bad_cpu_stat_names_file_line_and_field(text, says) -> None:
    with pytest.raises(GateError, match=says.replace("(", r"\(").replace(")", r"\)")):
        parse_cpu_stat(text)


@pytest.mark.parametrize("text, expected", [("123456789\n", 123456789), ("0", 0)])
def test_cpuacct_usage(text, expected) -> None:
    assert parse_cpuacct_usage(text) == expected


@pytest.mark.parametrize("text", ["", "-5", "12 ns"])
def test_a_bad_cpuacct_usage_is_refused(text) -> None:
    with pytest.raises(GateError, match="cpuacct.usage:1: field 'usage'"):
        parse_cpuacct_usage(text)


def test_proc_stat_per_cpu_busy_and_idle() -> None:
    cpus = parse_proc_stat(PROC)
    assert cpus == {"cpu0": CpuTimes(busy=150, idle=510), "cpu1": CpuTimes(busy=250, idle=510)}
    later = {"cpu0": CpuTimes(busy=240, idle=520), "cpu1": CpuTimes(busy=260, idle=600)}
    assert busy_share(cpus, later, ["cpu0"]) == pytest.approx(0.9)
    assert busy_share(cpus, later, ["cpu0", "cpu1"]) == pytest.approx(100 / 200)
    assert busy_share(cpus, cpus, ["cpu0"]) is None


@pytest.mark.parametrize("text, says", [("intr 1\n", "no per-CPU lines"), ("cpu0 1 2 x 4\n", ":1: field 'cpu0'"),
                                        ("cpuX 1 2 3 4\n", ":1: expected 'cpuN")])
def test_a_bad_proc_stat_is_refused(text, says) -> None:
    with pytest.raises(GateError, match=says):
        parse_proc_stat(text)


def _series(node, used_m_per_s, throttles_per_s, n=5):
    """n samples a second apart, using ``used_m_per_s`` millicores and throttled ``throttles_per_s`` times a s."""
    return [NodeSample(t_s=float(i), node=node, stat=CpuStat(10 * i, throttles_per_s * i, 0),
                       usage_ns=int(i * used_m_per_s * 1e6)) for i in range(n)]


QUOTA = {"rn-large": 1000, "rn-small": 250}


@pytest.mark.parametrize("samples, demand, busy, starved", [
    # wants its quota, gets 600 m, never throttled: starved in all 4 intervals
    (_series("rn-large", 600, 0), 1000, 4, 4),
    # wants its quota, throttled each second: its own quota held it back, not the host
    (_series("rn-large", 600, 1), 1000, 4, 0),
    # gets 950 m of 1000 (above 90 %): not starved
    (_series("rn-large", 950, 0), 1000, 4, 0),
    # its jobs want only 500 m: not busy, whatever it got
    (_series("rn-large", 100, 0), 500, 0, 0),
    # a counter that goes backwards drops that interval only
    ([*_series("rn-small", 100, 0, n=3), NodeSample(3.0, "rn-small", CpuStat(0, 0, 0), 0)], 250, 2, 2),
    # a node without a quota is not judged
    (_series("rn-other", 10, 0), 5000, 0, 0),
])
def test_host_interference_counts_starved_among_busy_intervals(samples, demand, busy, starved) -> None:
    found = interference(samples, quota_m=QUOTA, demand_m=lambda node, t: demand)
    assert (found.busy, found.starved) == (busy, starved)


@pytest.mark.parametrize("starved_intervals, flagged", [(0, False), (1, False), (2, True)])
def test_an_arm_is_flagged_above_5_percent_of_busy_samples(starved_intervals, flagged) -> None:
    # 30 busy intervals on rn-large; the last ``starved_intervals`` of them at 500 m without throttling
    samples, usage = [], 0
    for i in range(31):
        if i:
            usage += int((500 if i > 30 - starved_intervals else 1000) * 1e6)
        samples.append(NodeSample(float(i), "rn-large", CpuStat(i, 0, 0), usage))
    found = interference(samples, quota_m=QUOTA, demand_m=lambda n, t: 1000)
    assert (found.busy, found.starved, found.flagged) == (30, starved_intervals, flagged)  # 2/30 = 6.7 % > 5 %


def _cpu_reads(cpu, role, busy_per_s, n=5, lag=0.004):
    """/proc/stat reads of one CPU a second apart (a few ms after the node counters), ``busy_per_s`` of 100
    ticks busy each second."""
    return [SystemSample(t_s=i + lag, source=cpu, role=role, times=CpuTimes(busy=busy_per_s * i,
                                                                           idle=(100 - busy_per_s) * i))
            for i in range(n)]


@pytest.mark.parametrize("node_cpu_busy_ticks, starved, idle_cpu", [
    (100, 4, 0),  # the node CPU had no idle tick: the host held the node back
    (97, 4, 0),   # 97 % busy is full (above 95 %)
    (60, 0, 4),   # 40 % idle: CFS would have run a waiting thread of the unthrottled node, so its jobs wanted less
])
def test_a_low_interval_is_starved_only_when_the_node_cpus_were_full(node_cpu_busy_ticks, starved, idle_cpu):
    # the system CPU (cpu0) is always full: only the nodes' CPU (cpu1) decides
    system = _cpu_reads("cpu0", "system", 100) + _cpu_reads("cpu1", "node", node_cpu_busy_ticks)
    found = interference(_series("rn-large", 600, 0), quota_m=QUOTA, demand_m=lambda n, t: 1000,
                         cpu_busy=node_cpu_busy(system))
    assert (found.busy, found.starved, found.idle_cpu) == (4, starved, idle_cpu)
    detail = gate_rows(seed=1, arm="model", variant="under", host=found)[0]["detail"]
    assert ("while the node CPUs had idle time (at most 60 % busy" in detail) == bool(idle_cpu)
    assert found.idle_cpu_busiest == (pytest.approx(0.6) if idle_cpu else None)


def test_the_node_cpus_are_every_cpu_without_isolation_and_unknown_without_reads() -> None:
    # no CPU has the "node" role (no isolation): both CPUs count, 100 + 50 of 200 ticks busy
    busy = node_cpu_busy(_cpu_reads("cpu0", "", 100) + _cpu_reads("cpu1", "", 50))
    assert busy(0.0, 1.0) == pytest.approx(0.75) and busy(1.0, 3.0) == pytest.approx(0.75)
    assert busy(2.0, 2.0) is None  # one read at both ends: no interval
    assert node_cpu_busy([SystemSample(0.0, "/drsched-system", "cgroup", usage_ns=5)]) is None
    # no CPU reads: judged as before, every low interval starved
    found = interference(_series("rn-large", 600, 0), quota_m=QUOTA, demand_m=lambda n, t: 1000, cpu_busy=None)
    assert (found.starved, found.idle_cpu) == (4, 0)


def test_demand_comes_from_the_arms_jobs_on_each_node() -> None:
    rows = [{"node": "rn-large", "start_s": 0, "finish_s": 10, "cpu_use_m": 600},
            {"node": "rn-large", "start_s": 5, "finish_s": 20, "cpu_use_m": 500},
            {"node": "rn-small", "start_s": "", "finish_s": "", "cpu_use_m": 900}]
    demand = demand_from_jobs(rows)
    assert [demand("rn-large", t) for t in (1, 7, 15, 20)] == [600, 1100, 500, 0]
    assert demand("rn-small", 1) == 0


def test_unscored_pods_and_the_gate_rows_and_what_is_flagged() -> None:
    assert unscored(["p1", "p2", "p3"], ["p2", "p9"]) == ["p1", "p3"]
    host = interference(_series("rn-large", 600, 0), quota_m=QUOTA, demand_m=lambda n, t: 1000)
    rows = gate_rows(seed=1, arm="model", variant="under", host=host, missing=["p1"], pods=3)
    assert [(r["gate"], r["flagged"], r["value"]) for r in rows] == [("host-interference", 1, 1.0), ("scored", 1, 1)]
    assert "4 of 4 busy samples" in rows[0]["detail"]
    assert "1 of 3 pods not scored by the arm's policy: p1" in rows[1]["detail"]
    ok = gate_rows(seed=2, arm="model", variant="under", missing=[], pods=3)
    flagged = flagged_runs([{k: str(v) for k, v in r.items()} for r in rows + ok])
    assert list(flagged) == [(1, "model", "under")] and len(flagged[(1, "model", "under")]) == 2


def test_off_policy_names_the_pods_another_policy_scored() -> None:
    from lab.gates import off_policy

    served = {"j001": {"heuristic:demand-aware"}, "j002": {"model-v1"}, "j003": {"model-v1"},
              "j004": {"model-v1", "heuristic:demand-aware"}}
    assert off_policy(served) == {"j001": "heuristic:demand-aware", "j004": "heuristic:demand-aware"}
    assert off_policy({"j001": {"model-v1"}, "j002": {"model-v1"}}) == {}
    assert off_policy({}) == {}
