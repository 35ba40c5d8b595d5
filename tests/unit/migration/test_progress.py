"""Progress sources and skip reasons: missing, garbled, bad or stale progress is skipped with a counted reason."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from migration.controller import Controller, CycleConfig
from migration.executor import Executor
from migration.progress import (
    AnnotationSource,
    AutoSource,
    ExpectedRates,
    HttpSource,
    SkipReason,
    read_or_skip,
    running_job,
)
from migration.protocol import Timeouts
from migration.telemetry import Metrics, Telemetry
from policy.baselines import make_scorer
from policy.migrate import Budget, RuleParams
from policy.state import PodView

from .fakes import FakeKube, node, pod, progress_doc

NOW = time.time()


@pytest.mark.parametrize("annotation,reason", [
    (None, SkipReason.NO_PROGRESS),
    ("{not json", SkipReason.GARBLED_PROGRESS),
    ("[1, 2]", SkipReason.GARBLED_PROGRESS),
    (json.dumps({**json.loads(progress_doc()), "rate": "fast"}), SkipReason.BAD_PROGRESS),
    (json.dumps({k: v for k, v in json.loads(progress_doc()).items() if k != "units_total"}), SkipReason.BAD_PROGRESS),
    (json.dumps({**json.loads(progress_doc()), "schema": 9}), SkipReason.BAD_PROGRESS),
    (progress_doc(updated_at=NOW - 500), SkipReason.STALE_PROGRESS),
    (progress_doc(state="done"), SkipReason.JOB_NOT_RUNNING),
    (progress_doc(), None),
])
def test_annotation_source_reasons(annotation, reason):
    p = pod("j", node="a", progress=annotation)
    progress, got, detail = read_or_skip(AnnotationSource(), p, now=NOW, stale_after_s=120)
    assert got == reason
    assert (progress is None) == (reason is not None)
    if reason in (SkipReason.BAD_PROGRESS,):
        assert "pod default/j annotation drsched.io/progress" in detail


class _Handler(BaseHTTPRequestHandler):
    body = b""
    status = 200

    def do_GET(self):  # noqa: N802
        self.send_response(self.status)
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()


def _http_pod(port: int | None) -> dict:
    p = pod("j", node="a", annotations={"drsched.io/progress-port": str(port)} if port else None)
    p["status"]["podIP"] = "127.0.0.1"
    return p


def test_http_source_reads_the_progress_endpoint(server):
    _Handler.body, _Handler.status = progress_doc().encode(), 200
    progress, reason, _ = read_or_skip(HttpSource(), _http_pod(server.server_port), now=NOW, stale_after_s=60)
    assert reason is None and progress.units_done == 200
    auto, reason, _ = read_or_skip(AutoSource(), _http_pod(server.server_port), now=NOW, stale_after_s=60)
    assert reason is None and auto == progress


@pytest.mark.parametrize("body,status,reason", [(b"garbage", 200, SkipReason.GARBLED_PROGRESS),
                                                (b"", 404, SkipReason.NO_PROGRESS),
                                                (b"", 500, SkipReason.UNREACHABLE)])
def test_http_source_failures(server, body, status, reason):
    _Handler.body, _Handler.status = body, status
    assert read_or_skip(HttpSource(), _http_pod(server.server_port), now=NOW, stale_after_s=60)[1] is reason


def test_http_source_without_port_or_listener():
    assert read_or_skip(HttpSource(), _http_pod(None), now=NOW, stale_after_s=60)[1] is SkipReason.NO_PROGRESS
    closed = _http_pod(1)  # nothing listens on port 1
    assert read_or_skip(HttpSource(timeout_s=0.5), closed, now=NOW, stale_after_s=60)[1] is SkipReason.UNREACHABLE


def test_running_job_rates_and_checkpoint():
    from workloads.progress import parse_progress

    p = pod("j", node="a")
    progress = parse_progress(progress_doc(units_done=400, rate=2.0, checkpoint=300, started_at=NOW - 60))
    job = running_job(job="default/j", pod=p, node="a", progress=progress, view=PodView.from_requests(0.5, 0.25),
                      now=NOW, rates=ExpectedRates(), default_restore_cost_s=9)
    assert job.rate == pytest.approx(0.002) and job.expected_rate == pytest.approx(0.01)   # 1 / 100 s
    assert job.checkpoint_progress == pytest.approx(0.3) and job.restore_cost == 1.0
    assert job.running_for == pytest.approx(60, abs=1)
    p["metadata"]["annotations"].pop("drsched.io/expected-duration")
    rates = ExpectedRates()
    rates.observe("default/j", 0.004)
    job = running_job(job="default/j", pod=p, node="a", progress=progress, view=PodView.from_requests(0.5, 0.25),
                      now=NOW, rates=rates, default_restore_cost_s=9)
    assert job.expected_rate == pytest.approx(0.004), "the highest rate seen"
    scratch = running_job(job="default/j", pod=p, node="a", progress=progress, view=PodView.from_requests(0.5, 0.25),
                          now=NOW, rates=rates, default_restore_cost_s=9, checkpointed=False)
    assert scratch.checkpoint_progress == 0.0, "resume scratch: a move loses all the work done"


def _controller(kube: FakeKube) -> tuple[Telemetry, Controller]:
    """A controller that acts at the first slow check, with no cooldown or fraction limit, on ``kube``."""
    tele = Telemetry(Metrics())
    ex = Executor(kube, tele, budget=Budget(cooldown=0, max_fraction=1), timeouts=Timeouts(),
                  source=AnnotationSource(), grace_period_s=None, identity="t")
    return tele, Controller(kube, ex, tele, scorer=make_scorer("default-k8s"),
                            params=RuleParams(slow_checks=1, min_running=0), source=AnnotationSource(),
                            config=CycleConfig(namespace=None, node_selector={}, stale_after_s=120,
                                               restore_cost_s=1))


def test_cycle_counts_every_skip_reason_and_proposes_the_slow_job():
    pods = [pod("ok", node="a", progress=progress_doc()),
            pod("none", node="a"),
            pod("garbled", node="a", progress="{{"),
            pod("stale", node="a", progress=progress_doc(updated_at=NOW - 1000)),
            pod("pending", node=None, phase="Pending"),
            pod("owned", node="a", progress=progress_doc()),
            pod("other", node="a", labels={"drsched.io/migrate": "false"})]
    pods[5]["metadata"]["ownerReferences"] = [{"kind": "Job", "name": "x", "controller": True}]
    kube = FakeKube([node("a", cpu="2"), node("b", cpu="16")], pods)
    kube.evict_refusals = 99
    tele, ctl = _controller(kube)
    ctl.cycle()

    def skipped(reason: str) -> float:
        return tele.metrics.registry.get_sample_value("drsched_migration_skipped_total", {"reason": reason}) or 0

    assert {r: skipped(r) for r in ("no-progress", "garbled-progress", "stale-progress", "pod-not-running",
                                    "has-controller")} == dict.fromkeys(
        ("no-progress", "garbled-progress", "stale-progress", "pod-not-running", "has-controller"), 1.0)
    assert len(kube.leases) == 1 and kube.calls[0] == ("evict", "ok")
    ctl.cycle()
    assert skipped("in-flight") == 1
    assert tele.metrics.registry.get_sample_value("drsched_migration_in_flight") == 1


def test_slow_jobs_on_a_not_ready_node_are_skipped_not_moved_nor_lost():
    # A dead kubelet: its node turns NotReady, its pods still say Running and their jobs still report progress.
    dead = node("dead", cpu="2")
    dead["status"]["conditions"] = [{"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown"}]
    pods = [pod(f"j{i}", node="dead", progress=progress_doc()) for i in range(3)]
    kube = FakeKube([dead, node("b", cpu="16")], pods)
    tele, ctl = _controller(kube)
    for _ in range(3):
        ctl.cycle()
    sample = tele.metrics.registry.get_sample_value
    assert sample("drsched_migration_skipped_total", {"reason": "node-not-ready"}) == 9
    assert kube.leases == {} and not [c for c in kube.calls if c[0] == "evict"]
    assert (sample("drsched_migration_started_total") or 0) == 0
    # Back to Ready: the same slow jobs are offered to the rule again (and one is moved at once).
    dead["status"]["conditions"][0]["status"] = "True"
    ctl.cycle()
    assert [c for c in kube.calls if c[0] == "evict"]


def test_a_window_held_by_a_pdb_rolls_back_once_only_the_source_fits():
    kube = FakeKube([node("a", cpu="2"), node("b", cpu="16")], [pod("job", node="a", progress=progress_doc())])
    kube.evict_refusals = 99  # a PodDisruptionBudget says not yet
    tele, ctl = _controller(kube)
    ctl.cycle()
    assert len(kube.leases) == 1 and kube.calls == [("evict", "job")]
    ctl.cycle()
    assert len(kube.leases) == 1 and kube.calls[-1] == ("evict", "job"), "still room on b: it keeps trying"
    filler = pod("fill", node="b", cpu="15.8")
    filler["metadata"]["labels"] = {}
    kube.pods[("default", "fill")] = filler
    evictions = kube.calls.count(("evict", "job"))
    ctl.cycle()
    assert kube.leases == {} and kube.calls.count(("evict", "job")) == evictions, "rolled back, not evicted again"
    assert tele.metrics.registry.get_sample_value("drsched_migration_released_total",
                                                  {"outcome": "rolled-back"}) == 1
    assert kube.pods[("default", "job")]["spec"]["nodeName"] == "a", "it keeps running where it is"
