"""The trainer's saved output as the warm-start table scripts read it."""

from pathlib import Path

import pytest

from policy.trainlog import EVAL, SERVED, imitation_seconds, plot_curves

LOG = """\
2026-12-07 05:01:02,250 INFO policy.train: effective config steps=30000
2026-12-07 05:01:03,000 INFO policy.train: eval steps=2500 dqn=0.0512 default-k8s=0.2190 demand-aware=0.0489
2026-12-07 05:01:04,750 INFO policy.warmstart: warm start: 2815 decisions, held-out agreement 0.61
2026-12-07 05:09:00,000 INFO policy.train: eval steps=5000 dqn=0.0440 default-k8s=0.2190 demand-aware=0.0489
"""


def test_eval_lines_and_the_warm_start_s_seconds(tmp_path: Path) -> None:
    log = tmp_path / "warm-1.trainer-output.txt"
    log.write_text(LOG)
    assert [m.groups() for m in EVAL.finditer(LOG)] == [("2500", "0.0512", "0.2190", "0.0489"),
                                                       ("5000", "0.0440", "0.2190", "0.0489")]
    assert imitation_seconds(log) == pytest.approx(2.5)
    log.write_text(LOG.replace("warm start:", "cold start"))
    assert imitation_seconds(log) is None  # a cold run has no warm start line


def test_served_check_lines():
    text = ("2026-12-07 08:00:00,000 INFO policy.train: served check steps=0 ratio=1.0266\n"
            "2026-12-07 08:00:09,000 INFO policy.train: served check steps=2500 ratio=nan\n")
    assert [m.groups() for m in SERVED.finditer(text)] == [("0", "1.0266"), ("2500", "nan")]


def test_the_curves_picture_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    arms = [("cold", "tab:blue", [{0: 1.0, 2500: 0.1}, {0: 0.8, 2500: 0.2, 5000: 0.05}])]
    plot_curves(tmp_path / "c.png", arms, [("rule", 0.05, "--")], title="t", xlabel="x", ylabel="y", markers=True)
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"


def test_collect_writes_each_runs_checks_and_the_runners_times(tmp_path: Path) -> None:
    from policy.trainlog import collect, spread, times_table

    src, dest = tmp_path / "runs", tmp_path / "per-run"
    src.mkdir()
    served = ("2026-12-07 05:01:02,900 INFO policy.train: served check steps=2500 ratio=1.2000\n"
              "2026-12-07 05:01:03,000 INFO policy.train: trained 5000 steps in 61 s (82 steps/s)\n")
    (src / "cal-A-1.log").write_text(LOG + served)
    (src / "cal-A-1.warm-start.json").write_text("{}")
    (src / "cold-2.log").write_text(LOG.replace("warm start:", "cold start"))
    (src / "times.txt").write_text("cal-A-1 start=05:01:02 end=05:09:00 wall_s=478 rc=0\nstop clock: x\n"
                                   "cold-2 start=05:09:01 end=05:10:00 wall_s=59 rc=1\n")
    collect(src, dest)
    assert (dest / "cal-A-1.eval.csv").read_text().splitlines() == [
        "steps,dqn,default-k8s,demand-aware", "2500,0.0512,0.2190,0.0489", "5000,0.0440,0.2190,0.0489"]
    assert (dest / "cal-A-1.served.csv").read_text().splitlines() == ["steps,served_ratio", "2500,1.2000"]
    assert not (dest / "cold-2.served.csv").exists() and (dest / "cold-2.trainer-output.txt").is_file()
    assert (dest / "times.csv").read_text().splitlines() == ["run,wall_s,rc,train_seconds", "cal-A-1,478,0,61",
                                                             "cold-2,59,1,"]
    table = times_table(dest, "here")
    assert table[0] == "## Wall time (one run at a time, here)" and "| cal-A-1 | 478 | 61 | 2.5 |" in table
    assert "| cold-2 (rc 1) | 59 |  |  |" in table
    assert (spread([]), spread([1.0]), spread([1.0, 2.0, 3.0], ".1f")) == ("n/a", "1.00", "2.0 (1.0-3.0)")
