"""The decision log writer: rows land readable, segments rotate within the disk bound, a full queue drops
and counts without blocking, and no existing file is ever written to."""

import time

from extender.decision_log import DecisionLog
from extender.telemetry import Telemetry
from policy.decisionlog import outcome_row, read_log


def row(i: int) -> dict:
    return outcome_row(ts=float(i), replica="r", pod=("ns", f"pod-{i:06d}", f"uid-{i}"), node="n1",
                       phase="Succeeded", created=0.0, started=1.0, finished=2.0)


def make(tmp_path, telemetry=None, **over) -> DecisionLog:
    kw = {"max_file_bytes": 1 << 20, "max_total_bytes": 1 << 22, "flush_interval_s": 0.05, "queue_size": 1000}
    return DecisionLog(directory=tmp_path, telemetry=telemetry or Telemetry(), **{**kw, **over})


def test_rows_are_written_in_order_and_read_back(tmp_path):
    log = make(tmp_path)
    log.start()
    for i in range(100):
        assert log.submit(row, i)
    log.stop(timeout=60)
    got = read_log(tmp_path)
    assert [r["uid"] for r in got.outcomes.values()] == [f"uid-{i}" for i in range(100)] and not got.torn


def test_rows_reach_the_file_within_the_flush_interval_while_running(tmp_path):
    log = make(tmp_path, flush_interval_s=0.05)
    log.start()
    log.submit(row, 1)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not log.path.read_bytes():
        time.sleep(0.01)
    assert len(read_log(log.path).outcomes) == 1  # on disk with the writer still running
    log.stop(timeout=60)


def test_segments_rotate_and_the_oldest_go_so_the_log_stays_within_its_bound(tmp_path):
    t = Telemetry()
    log = make(tmp_path, t, max_file_bytes=4096, max_total_bytes=16384)
    log.start()
    for i in range(1000):  # ~280 bytes a row: ~70 segments' worth
        log.submit(row, i)
        if i % 100 == 0:
            time.sleep(0.02)
    log.stop(timeout=60)
    segs = sorted(tmp_path.glob("decisions-*.jsonl"))
    assert 3 <= len(segs) <= 4 and sum(p.stat().st_size for p in segs) <= 16384
    assert all(p.stat().st_size <= 4096 for p in segs)
    kept = [int(r["uid"].split("-")[1]) for r in read_log(tmp_path).outcomes.values()]
    assert kept == list(range(kept[0], 1000))  # the newest rows, none missing in between
    assert t.metrics.decision_log_rows._value.get() == 1000


def test_a_full_queue_drops_and_counts_without_blocking_and_is_reported_once(tmp_path, caplog):
    t = Telemetry()
    log = make(tmp_path, t, queue_size=10)  # not started: nothing drains the queue
    start = time.perf_counter()
    accepted = [log.submit(row, i) for i in range(50)]
    assert time.perf_counter() - start < 0.05
    assert accepted == [True] * 10 + [False] * 40 and t.metrics.decision_log_dropped._value.get() == 40
    log.start()
    log.stop(timeout=60)
    assert len(read_log(tmp_path).outcomes) == 10
    assert t.metrics.fallbacks.labels(reason="decision_log_full")._value.get() == 1
    assert [r.kv["dropped"] for r in caplog.records if getattr(r, "kv", {}).get("reason") == "decision_log_full"] \
        == [40]


def test_a_restart_starts_a_new_segment_and_never_touches_the_old_one(tmp_path):
    old = tmp_path / "decisions-20200101T000000.000000Z.jsonl"
    old.write_bytes(b'{"torn by a kill')
    for _ in range(2):
        log = make(tmp_path)
        log.start()
        log.submit(row, 1)
        log.stop(timeout=60)
    assert old.read_bytes() == b'{"torn by a kill' and len(list(tmp_path.glob("decisions-*.jsonl"))) == 3
    got = read_log(sorted(tmp_path.glob("decisions-*.jsonl"))[1:])
    assert len(got.outcomes) == 1  # both runs wrote uid-1: the reader keeps the first outcome


def test_a_row_builder_that_fails_loses_that_row_only(tmp_path):
    def broken() -> dict:
        raise RuntimeError("bug")

    log = make(tmp_path)
    log.start()
    log.submit(row, 1)
    log.submit(broken)
    log.submit(row, 2)
    log.stop(timeout=60)
    assert sorted(read_log(tmp_path).outcomes) == ["uid-1", "uid-2"]
