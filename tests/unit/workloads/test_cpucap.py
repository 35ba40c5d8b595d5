"""The compute jobs' CPU cap: sleep only what keeps CPU time under cores x elapsed, never when starved."""

from __future__ import annotations

import pytest

from workloads.cli import main
from workloads.jobs.cpucap import CpuCap


class Clock:
    def __init__(self) -> None:
        self.wall, self.cpu, self.slept = 0.0, 0.0, []

    def sleep(self, s: float) -> None:
        self.slept.append(round(s, 9))
        self.wall += s


def _cap(cores: float, c: Clock) -> CpuCap:
    return CpuCap(cores, clock=lambda: c.wall, cpu=lambda: c.cpu, sleep=c.sleep)


def test_a_job_alone_sleeps_down_to_its_cap() -> None:
    c = Clock()
    cap = _cap(0.25, c)
    cap.account()  # the budget starts here
    for _ in range(3):
        c.wall += 1.0
        c.cpu += 1.0  # a whole core for a second: 4 s of budget at 0.25 cores
        cap.account()
    assert c.slept == [3.0, 3.0, 3.0] and abs(c.cpu / c.wall - 0.25) < 1e-9


def test_a_starved_job_never_sleeps_and_no_cap_means_no_sleep() -> None:
    c = Clock()
    cap = _cap(0.5, c)
    cap.account()
    for _ in range(4):
        c.wall += 1.0
        c.cpu += 0.2  # a busy node gives it less than its cap: it just runs slower
        cap.account()
    assert c.slept == []
    free = Clock()
    uncapped = _cap(0.0, free)
    for _ in range(3):
        free.wall += 1.0
        free.cpu += 1.0
        uncapped.account()
    assert free.slept == []


@pytest.mark.parametrize("kind", ["cpu", "train"])
def test_a_negative_cap_is_refused_with_its_value(kind, tmp_path, capsys) -> None:
    rc = main([kind, f"--state-dir={tmp_path}", "--units=1", "--cores=-1"])
    assert rc != 0 and "--cores must be >= 0, got -1.0" in capsys.readouterr().err


@pytest.mark.parametrize("kind,extra", [("cpu", ["--work=50"]), ("train", ["--samples=64", "--features=4"])])
def test_the_cap_changes_how_fast_not_what_a_job_writes(kind, extra, tmp_path) -> None:
    outs = []
    for cores in ("0", "0.9"):
        state = tmp_path / cores
        state.mkdir()
        assert main([kind, f"--state-dir={state}", "--units=3", f"--cores={cores}", "--log-level=WARNING", *extra]) == 0
        outs.append((state / "output.json").read_bytes())
    assert outs[0] == outs[1]
