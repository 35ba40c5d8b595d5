"""Fixtures for the e2e tests: one real control plane per session, with three KWOK nodes of unequal size.

The control-plane binaries are built (or found in the cache) right after collection, before any test
starts, so a cold build (10-30 min) does not count against a test's timeout. When a test that uses
the cluster fails, the tail of every component's log is attached to its report.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.cluster import COLD_BUILD, Binaries, ControlPlane, cached_bin_dir, ensure_binaries
from harness.extender_double import ExtenderDouble
from harness.extender_proc import Extenders
from harness.objects import HETEROGENEOUS_NODES, fake_node
from harness.procs import Component, ComponentError

_BINARIES = pytest.StashKey[Binaries]()
_BUILD_ERROR = pytest.StashKey[str]()


def _build(config: pytest.Config) -> None:
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    try:
        if reporter is not None:
            log_path = cached_bin_dir().parent / "build.log"
            reporter.write_line(f"e2e: checking control-plane binaries ({COLD_BUILD}; log: {log_path})")
        config.stash[_BINARIES] = ensure_binaries(progress=reporter.write_line if reporter is not None else None)
    except ComponentError as exc:
        config.stash[_BUILD_ERROR] = str(exc)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return
    if any(item.get_closest_marker("e2e") for item in session.items):
        _build(session.config)


@pytest.fixture(scope="session")
def controlplane_binaries(pytestconfig: pytest.Config) -> Binaries:
    if _BINARIES not in pytestconfig.stash and _BUILD_ERROR not in pytestconfig.stash:
        _build(pytestconfig)
    if _BUILD_ERROR in pytestconfig.stash:
        pytest.fail(f"building the e2e control plane failed:\n{pytestconfig.stash[_BUILD_ERROR]}", pytrace=False)
    return pytestconfig.stash[_BINARIES]


@pytest.fixture(scope="session")
def control_plane(controlplane_binaries: Binaries, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    cp = ControlPlane(workdir=tmp_path_factory.mktemp("cluster"), binaries=controlplane_binaries)
    try:
        cp.start()
        for shape in HETEROGENEOUS_NODES:
            cp.create_node(fake_node(shape))
    except ComponentError as exc:
        cp.close()
        pytest.fail(f"the e2e control plane did not start:\n{exc}", pytrace=False)
    except BaseException:
        cp.close()
        raise
    try:
        yield cp
    finally:
        cp.close()


@pytest.fixture
def cluster(control_plane: ControlPlane) -> ControlPlane:
    """The session's control plane, checked alive before the test (a crash in one test shows up early)."""
    control_plane.check_alive()
    return control_plane


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Object names unique to this test, so tests sharing the cluster never collide."""
    suffix = uuid.uuid4().hex[:6]
    return lambda prefix: f"{prefix}-{suffix}"


@pytest.fixture
def drsched_scheduler(cluster: ControlPlane) -> Iterator[Callable[[Path], Component]]:
    """Start (or restart) the second scheduler, `drsched`, with a rendered config; stopped after the test."""

    def start(config_path: Path) -> Component:
        return cluster.start_scheduler("drsched-scheduler", config_path=config_path)

    yield start
    cluster.stop_component("drsched-scheduler")


@pytest.fixture
def extender_double() -> Iterator[ExtenderDouble]:
    """The recording TEST DOUBLE extender (extender_double.py), for tests that must see raw request payloads."""
    double = ExtenderDouble().start()
    yield double
    double.close()


@pytest.fixture
def extenders(cluster: ControlPlane, tmp_path: Path) -> Iterator[Extenders]:
    """Start REAL extenders (`python -m extender --kubeconfig <cluster>`); every one is stopped after the test."""
    started = Extenders(kubeconfig=cluster.kubeconfig, workdir=tmp_path)
    yield started
    started.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    cp = getattr(item, "funcargs", {}).get("cluster") or getattr(item, "funcargs", {}).get("control_plane")
    if report.failed and isinstance(cp, ControlPlane):
        report.sections.append(("control-plane log tails", cp.log_tails()))
    extenders = getattr(item, "funcargs", {}).get("extenders")
    if report.failed and isinstance(extenders, Extenders) and extenders.procs:
        report.sections.append(("extender log tails", extenders.log_tails()))
    return report
