"""The compute jobs' CPU cap: sleep only what keeps CPU time under cores x elapsed, never when starved."""

from __future__ import annotations

import pytest

from workloads.cli import main
from workloads.jobs.cpucap import CpuCap, Cycle


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


# ---- --cores-cycle: a long-running tenant's two-level use (the lab's tenants scenario) ----------------------------


def _cycled(text: str, c: Clock) -> CpuCap:
    return CpuCap(0.0, cycle=Cycle.parse(text), clock=lambda: c.wall, cpu=lambda: c.cpu, sleep=c.sleep)


def test_a_cycled_job_alone_uses_its_high_level_then_its_low_one() -> None:
    c = Clock()
    cap = _cycled("0.5:0.125:20:10:0", c)  # 0.5 cores for 10 s, 0.125 for the next 10, and again
    cap.account()
    used = []
    while c.wall < 40:
        before = (c.wall, c.cpu)
        c.wall += 0.1
        c.cpu += 0.1  # each unit: 0.1 s on a whole core
        cap.account()
        used.append((before[0], (c.cpu - before[1]) / (c.wall - before[0])))
    busy = [u for t, u in used if 1 < t % 20 < 9]
    quiet = [u for t, u in used if 11 < t % 20 < 19]
    assert sum(busy) / len(busy) == pytest.approx(0.5, rel=0.05)
    assert sum(quiet) / len(quiet) == pytest.approx(0.125, rel=0.05)
    assert max(c.slept) <= 10  # never past an edge


def test_cpu_a_busy_node_withheld_in_one_phase_is_not_made_up_in_the_next() -> None:
    c = Clock()
    cap = _cycled("0.5:0.125:20:10:0", c)
    cap.account()
    for _ in range(100):  # 10 s of the busy phase on a node that gives it 0.05 cores: no sleep, it runs slower
        c.wall += 0.1
        c.cpu += 0.005
        cap.account()
    assert c.slept == []
    c.wall += 0.1
    c.cpu += 0.1  # the quiet phase, the node free again: held to 0.125 cores at once, not 0.5 to catch up
    cap.account()
    c.wall += 0.1
    c.cpu += 0.1
    cap.account()
    assert c.slept and c.slept[-1] == pytest.approx(0.1 / 0.125 - 0.1)


@pytest.mark.parametrize(("text", "t", "cores", "until_edge"), [
    ("1:0.25:30:10:0", 0.0, 1.0, 10.0),
    ("1:0.25:30:10:0", 10.0, 0.25, 20.0),
    ("1:0.25:30:10:25", 0.0, 0.25, 5.0),   # the phase: 25 s into the cycle at the start
    ("1:0.25:30:10:25", 5.0, 1.0, 10.0),
])  # fmt: skip
def test_the_cycle_table(text, t, cores, until_edge) -> None:
    cycle = Cycle.parse(text)
    assert cycle.cores(t) == cores and cycle.until_edge(t) == pytest.approx(until_edge)


@pytest.mark.parametrize("text", ["1:0.25:30:10", "1:0.25:30:40:0", "0:0.25:30:10:0", "a:b:c:d:e", "1:1:nan:1:0"])
def test_a_bad_cycle_is_refused_by_the_job_with_its_text(text, tmp_path, capsys) -> None:
    rc = main(["cpu", f"--state-dir={tmp_path}", "--units=1", f"--cores-cycle={text}"])
    assert rc != 0 and "--cores-cycle" in capsys.readouterr().err


def test_a_cycle_and_a_fixed_cap_together_are_refused(tmp_path, capsys) -> None:
    rc = main(["cpu", f"--state-dir={tmp_path}", "--units=1", "--cores=0.5", "--cores-cycle=1:0.25:30:10:0"])
    assert rc != 0 and "give one cap" in capsys.readouterr().err


def test_the_cycle_changes_how_fast_not_what_a_cpu_job_writes(tmp_path) -> None:
    outs = []
    for cap in ("--cores=0", "--cores-cycle=0.9:0.5:2:1:0"):
        state = tmp_path / str(len(outs))
        state.mkdir()
        assert main(["cpu", f"--state-dir={state}", "--units=3", "--work=50", cap, "--log-level=WARNING"]) == 0
        outs.append((state / "output.json").read_bytes())
    assert outs[0] == outs[1]
