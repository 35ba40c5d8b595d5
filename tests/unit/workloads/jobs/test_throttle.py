"""The bandwidth cap of the io and net jobs."""

from workloads.jobs.throttle import MIB, Throttle


def test_sleeps_to_hold_the_rate():
    now = [0.0]
    slept = []

    def sleep(seconds):
        slept.append(seconds)
        now[0] += seconds

    throttle = Throttle(2.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(4):
        throttle.account(MIB)
    assert now[0] == 2.0 and len(slept) == 4


def test_zero_means_unlimited():
    throttle = Throttle(0.0, clock=lambda: 0.0, sleep=lambda s: (_ for _ in ()).throw(AssertionError("slept")))
    throttle.account(10 * MIB)
