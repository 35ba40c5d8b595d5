"""The sharing rule over one job's stay: rates recomputed at each co-runner's start and finish, work integrated
at them, a speed factor on the focal job only."""

from __future__ import annotations

import math

import pytest

from policy.calibrate.stay import CoRunner, rate_schedule, run_time
from policy.errors import ConfigError
from policy.sim.sharing import ContentionParams

EQUAL = ContentionParams(cpu_share="equal")
CAP = (1.0, 4.0, 10.0, 100.0)  # one core, 4 GiB, 10 MB/s, 100 MB/s
CORE = (1.0, 0.1, 0.0, 0.0)  # a whole-core compute job
REQ = (0.5, 0.1)


def other(start: float, finish: float, dem=CORE) -> CoRunner:
    return CoRunner(start, finish, dem, REQ)


@pytest.mark.parametrize(("others", "work", "speed", "run"), [
    ([], 10.0, 1.0, 10.0),  # alone: its work at rate 1
    ([], 10.0, 0.8, 12.5),  # a slower CPU-second: 1 / 0.8 longer
    ([other(0, math.inf)], 10.0, 1.0, 20.0),  # a core shared for the whole stay: half rate
    ([other(0, 4)], 10.0, 1.0, 12.0),  # 4 s at half rate (2 s of work), then 8 s alone
    ([other(6, 8)], 10.0, 1.0, 11.0),  # 6 s alone, 2 s at half rate (1 s of work), 3 s alone
    ([other(-5, 2), other(1, 3)], 6.0, 1.0, 3 + 14 / 3),  # 1 s at 1/2, 1 s at 1/3, 1 s at 1/2, then alone
    ([other(20, 30)], 10.0, 1.0, 10.0),  # arrives after the job is done: no effect
    ([other(0, 4, dem=(0.0, 0.1, 10.0, 0.0))], 10.0, 1.0, 10.0),  # a net job does not share the core
])
def test_run_time(others, work, speed, run):
    sched = rate_schedule(0.0, CORE, REQ, others, CAP, EQUAL)
    assert run_time(sched, work, speed=speed) == pytest.approx(run)


def test_schedule_entries_at_start_and_each_later_event():
    sched = rate_schedule(0.0, CORE, REQ, [other(-5, 2), other(1, math.inf)], CAP, EQUAL)
    assert [t for t, _ in sched] == [0.0, 1.0, 2.0]
    assert [r for _, r in sched] == pytest.approx([0.5, 1 / 3, 0.5])


def test_speed_must_be_positive():
    with pytest.raises(ConfigError):
        run_time([(0.0, 1.0)], 1.0, speed=0.0)
