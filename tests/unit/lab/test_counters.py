"""The counter readers: both cgroup layouts, every pod under a node, and no sampler where the files are not there."""

from __future__ import annotations

from pathlib import Path

from lab.counters import pod_cgroups, pod_sampler, sampler
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


def _pod(fs: Path, root: str, rel: str, *, stat: str, usage: str | None) -> None:
    """A pod cgroup at ``<root>/<rel>``: v1 (cpu.stat under cpu/, cpuacct.usage under cpuacct/) or v2 (usage None)."""
    if usage is None:
        (fs / root / rel).mkdir(parents=True)
        (fs / root / rel / "cpu.stat").write_text(stat)
        return
    for ctrl, name, text in (("cpu", "cpu.stat", stat), ("cpuacct", "cpuacct.usage", usage)):
        (fs / ctrl / root / rel).mkdir(parents=True)
        (fs / ctrl / root / rel / name).write_text(text)


def test_every_pod_cgroup_under_each_node_is_read_in_both_layouts(tmp_path: Path) -> None:
    v1 = "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"
    _pod(tmp_path, "rn-small", "kubepods/burstable/podaaa", stat=v1, usage="500\n")
    _pod(tmp_path, "rn-small", "kubepods/besteffort/podbbb", stat=v1, usage="7\n")
    _pod(tmp_path, "rn-small", "kubepods/podccc", stat=v1, usage="9\n")  # guaranteed: straight under kubepods
    _pod(tmp_path, "rn-small", "kubepods/burstable/podaaa/0123abcd", stat=v1, usage="400\n")  # a container: not a pod
    _pod(tmp_path, "rn-large", "kubepods/burstable/podddd", stat="usage_usec 2\nnr_periods 0\nnr_throttled 0\n"
         "throttled_usec 0\n", usage=None)
    assert pod_cgroups("/rn-small", fs=tmp_path) == {"aaa": "rn-small/kubepods/burstable/podaaa",
                                                     "bbb": "rn-small/kubepods/besteffort/podbbb",
                                                     "ccc": "rn-small/kubepods/podccc"}
    sample = pod_sampler({"rn-small": "/rn-small", "rn-large": "/rn-large", "rn-gone": "/rn-gone"}, fs=tmp_path)
    assert [(s.node, s.uid, s.usage_ns, s.stat.nr_throttled, s.t_s) for s in sample(3.0)] == [
        ("rn-large", "ddd", 2000, 0, 3.0), ("rn-small", "aaa", 500, 0, 3.0), ("rn-small", "bbb", 7, 0, 3.0),
        ("rn-small", "ccc", 9, 0, 3.0)]
    (tmp_path / "cpuacct" / "rn-small" / "kubepods" / "besteffort" / "podbbb" / "cpuacct.usage").unlink()
    assert [s.uid for s in sample(4.0)] == ["ddd", "aaa", "ccc"]  # a pod going away drops out of that read only
