"""Fixtures for the real-node e2e tests: one `RealCluster` (real kubelets + containerd) for the package.

On a machine that cannot run real nodes (not root, no cgroup v1, no containerd/runc/CNI plugins) every
test marked `realnodes` is skipped with one reason, `SKIP_REASON_PREFIX: <why>`, and the terminal
summary repeats it in a banner: a skipped real-node suite must never look like a passing one.
`DRSCHED_REALNODES=0` turns them off on purpose (same banner).
The node binaries are built right after collection, before any test's timeout starts, and so are the
drsched images (`harness.images.ensure_images`: a no-op when they match the checkout), so a test never
runs images older than the code; where images cannot be built, the tests that need them skip saying why.
The archives just built are copied aside for this run (`drsched.pin_images`): the shared image cache holds
one archive per tag, and a run from another checkout may rebuild it while this one's tests still go on.
drsched itself is deployed once for the package (`deployed`, `harness.deploy`); tests that deploy it
themselves (the lab's run) are moved before the first test that uses it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import deploy as harness_deploy
from harness import nodes
from harness.cluster import Binaries
from harness.images import ImageBuildError, ImagesUnavailable, ensure_images
from harness.procs import ComponentError
from harness.realcluster import NodeBinaries, RealCluster, ensure_node_binaries, node_bin_dir

from . import drsched

SKIP_REASON_PREFIX = "REAL NODES UNAVAILABLE"
_NODE_BINARIES = pytest.StashKey[NodeBinaries]()
_NODE_BUILD_ERROR = pytest.StashKey[str]()
_SKIPPED = pytest.StashKey[int]()
_PINNED_IMAGES = pytest.StashKey[Path]()


def skip_reason() -> str | None:
    if os.environ.get("DRSCHED_REALNODES") == "0":
        return f"{SKIP_REASON_PREFIX}: turned off with DRSCHED_REALNODES=0"
    reason = nodes.unavailable_reason()
    return None if reason is None else f"{SKIP_REASON_PREFIX}: {reason}"


def _realnode_items(session: pytest.Session) -> list[pytest.Item]:
    return [item for item in session.items if item.get_closest_marker("realnodes")]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that start their own cluster (no `real_cluster`: the teardown and isolation tests) first, while
    the machine's real-node lock is free; then tests that deploy drsched themselves (the lab run deploys and
    removes it) before those on the package's `deployed` one, which must stay deployed until the package
    ends; file order otherwise. Only this package's items move, in their own slots (the package's cluster
    must not be set up twice)."""
    slots = [i for i, item in enumerate(items) if Path(__file__).parent in item.path.parents]

    def order(item: pytest.Item) -> tuple[bool, bool]:
        fixtures = getattr(item, "fixturenames", ())
        return "real_cluster" in fixtures, "deployed" in fixtures

    ours = sorted((items[i] for i in slots), key=order)
    for slot, item in zip(slots, ours, strict=True):
        items[slot] = item


def pytest_collection_finish(session: pytest.Session) -> None:
    items = _realnode_items(session)
    if session.config.option.collectonly or not items:
        return
    reason = skip_reason()
    if reason is not None:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=reason))
        session.config.stash[_SKIPPED] = len(items)
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"realnodes: checking node binaries (log: {node_bin_dir().parent / 'build.log'})")
    try:
        session.config.stash[_NODE_BINARIES] = ensure_node_binaries(
            progress=reporter.write_line if reporter is not None else None)
    except ComponentError as exc:
        session.config.stash[_NODE_BUILD_ERROR] = str(exc)
    if reporter is not None:
        reporter.write_line("realnodes: checking the drsched images (a first build takes minutes)")
    try:
        built = ensure_images(progress=reporter.write_line if reporter is not None else None)
        pinned = Path(tempfile.mkdtemp(prefix="drsched-images-", dir="/var/tmp"))
        session.config.stash[_PINNED_IMAGES] = drsched.pin_images(built, pinned)
    except (ImagesUnavailable, ImageBuildError, drsched.ImagesMissing) as exc:  # those tests skip, naming why
        if reporter is not None:
            reporter.write_line(f"realnodes: images not built: {exc}", red=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    pinned = config.stash.get(_PINNED_IMAGES, None)
    if pinned is not None:
        shutil.rmtree(pinned, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    skipped = config.stash.get(_SKIPPED, 0)
    if skipped:
        terminalreporter.write_sep("!", f"{skipped} real-node tests SKIPPED", red=True, bold=True)
        terminalreporter.write_line(skip_reason() or "", red=True, bold=True)


@pytest.fixture(scope="session")
def node_binaries(pytestconfig: pytest.Config) -> NodeBinaries:
    if _NODE_BUILD_ERROR in pytestconfig.stash:
        pytest.fail(f"building the node binaries failed:\n{pytestconfig.stash[_NODE_BUILD_ERROR]}", pytrace=False)
    if _NODE_BINARIES not in pytestconfig.stash:
        pytestconfig.stash[_NODE_BINARIES] = ensure_node_binaries()
    return pytestconfig.stash[_NODE_BINARIES]


@pytest.fixture(scope="package")
def real_cluster(
    controlplane_binaries: Binaries, node_binaries: NodeBinaries, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealCluster]:
    cluster = RealCluster(
        workdir=tmp_path_factory.mktemp("realcluster"), binaries=controlplane_binaries, node_binaries=node_binaries
    )
    try:
        cluster.start()
    except ComponentError as exc:
        pytest.fail(f"the real-node cluster did not start:\n{exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def rcluster(real_cluster: RealCluster) -> RealCluster:
    """The package's real cluster, checked alive before the test."""
    real_cluster.check_alive()
    return real_cluster


@pytest.fixture(scope="session")
def pinned_images(pytestconfig: pytest.Config) -> Path | None:
    """This run's own copies of the images built for this checkout (None: use the shared image cache)."""
    return pytestconfig.stash.get(_PINNED_IMAGES, None)


@pytest.fixture(scope="package")
def deployed(real_cluster: RealCluster, pinned_images: Path | None) -> Iterator[RealCluster]:
    """drsched deployed (`harness.deploy`, through `drsched.deploy`), for the rest of the package."""
    try:
        drsched.deploy(real_cluster, images=pinned_images)
    except drsched.ImagesMissing as exc:
        pytest.skip(str(exc))
    try:
        yield real_cluster
    finally:
        harness_deploy.undeploy(real_cluster)


@pytest.fixture(scope="package")
def acting_migration(deployed: RealCluster) -> str:
    """The deployed migration controller made to act (not dry-run) with short-test settings; its metrics URL."""
    pod = drsched.activate_migration(deployed)
    return f"http://{pod.status.pod_ip}:{drsched.MIGRATION_PORT}/metrics"


@pytest.fixture(scope="package")
def workloads_image(real_cluster: RealCluster, pinned_images: Path | None) -> str:
    try:
        return drsched.import_images(real_cluster, "workloads", root=pinned_images)["workloads"]
    except drsched.ImagesMissing as exc:
        pytest.skip(str(exc))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    report = yield
    cluster = getattr(item, "funcargs", {}).get("rcluster")
    if report.failed and isinstance(cluster, RealCluster):
        report.sections.append(("real cluster log tails", cluster.log_tails()))
    return report
