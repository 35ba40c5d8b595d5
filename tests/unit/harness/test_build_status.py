"""harness.procs.build_status: a build's progress line says its own latest step, never go's stale last line."""

from __future__ import annotations

from pathlib import Path

from harness.procs import build_status


def test_status_names_the_scripts_step_and_counts_downloads(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("build.sh: building k8s v1.34.0, etcd v3.6.0, kwok v0.8.0 into /x\n"
                   "build.sh: go go1.26.8, GOMODCACHE=/m, GOCACHE=/c\n"
                   + "".join(f"go: downloading example.com/m{i} v1.0.{i}\n" for i in range(412)))
    line = build_status("build.sh", log, elapsed_s=250.4)
    assert line.startswith("build.sh: 4m10s elapsed, step: go go1.26.8, GOMODCACHE=/m, GOCACHE=/c; ")
    assert "412 Go modules downloaded" in line and "example.com" not in line
    log.write_text(log.read_text() + "build.sh: k8s + etcd built at 900s\n")
    assert "step: k8s + etcd built at 900s" in build_status("build.sh", log, elapsed_s=901)


def test_status_before_any_output_or_without_a_log(tmp_path: Path) -> None:
    assert "step: starting" in build_status("build-nodes.sh", tmp_path / "missing.log", elapsed_s=3)
    assert "Go modules" not in build_status("build-nodes.sh", tmp_path / "missing.log", elapsed_s=3)
