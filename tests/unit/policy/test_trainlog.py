"""The trainer's saved output as the warm-start table scripts read it."""

from pathlib import Path

import pytest

from policy.trainlog import EVAL, imitation_seconds

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
