"""The counter reader: both cgroup layouts, and no sampler at all where the files are not there."""

from __future__ import annotations

from pathlib import Path

from lab.counters import sampler
from lab.gates import CpuStat


def test_v1_and_v2_layouts_are_read_and_a_missing_node_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "cpu" / "rn-small").mkdir(parents=True)
    (tmp_path / "cpuacct" / "rn-small").mkdir(parents=True)
    (tmp_path / "cpu" / "rn-small" / "cpu.stat").write_text("nr_periods 5\nnr_throttled 2\nthrottled_time 10\n")
    (tmp_path / "cpuacct" / "rn-small" / "cpuacct.usage").write_text("777\n")
    (tmp_path / "rn-large").mkdir()
    (tmp_path / "rn-large" / "cpu.stat").write_text("usage_usec 3\nnr_periods 1\nnr_throttled 0\nthrottled_usec 0\n")
    sample = sampler({"rn-small": "/rn-small", "rn-large": "/rn-large", "rn-gone": "/rn-gone"}, fs=tmp_path)
    got = sample(1.5)
    assert [(s.node, s.t_s, s.usage_ns, s.stat) for s in got] == [
        ("rn-large", 1.5, 3000, CpuStat(1, 0, 0, 3000)), ("rn-small", 1.5, 777, CpuStat(5, 2, 10))]
    (tmp_path / "cpuacct" / "rn-small" / "cpuacct.usage").write_text("garbage")
    assert [s.node for s in sample(2.5)] == ["rn-large"]  # a file that stops parsing drops that sample only


def test_no_counters_anywhere_means_no_sampler(tmp_path: Path) -> None:
    assert sampler({"rn-small": "/rn-small"}, fs=tmp_path) is None
