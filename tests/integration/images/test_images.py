"""The drsched images as built by `make images`: names, users, contents, entry points, and import.

Each image is checked from the inside (buildah runs commands in a throwaway working container, as the
image's own user) and its archive is imported into a throwaway containerd, the way a real node gets it.
The first run builds everything (minutes); later runs reuse the cache.
"""

from __future__ import annotations

import json
import re
import tarfile
import time

import httpx
import pytest

from harness.images import IMAGES, ensure_images
from harness.procs import free_port

pytestmark = [pytest.mark.images, pytest.mark.slow]

NAMES = [spec.name for spec in IMAGES]
ENTRY_MODULE = {"extender": "extender", "monitor": "monitor", "migration": "migration", "workloads": "workloads"}
COMPILERS = ("gcc", "cc", "g++", "c++", "clang", "ld", "as", "make")
# What each component needs to be non-root (the manifests use the same numbers).
EXPECTED_UID = {"extender": 65534, "monitor": 65534, "migration": 65534, "workloads": 10001}
TRAINING_STACK = ("torch", "gymnasium", "stable_baselines3", "tensorboard", "matplotlib")


def test_every_image_is_tagged_fully_qualified_in_storage_and_archive(built_images):
    assert sorted(built_images) == sorted(NAMES)
    for name, image in built_images.items():
        assert re.fullmatch(rf"localhost/drsched/{name}:\d+\.\d+\.\d+", image.tag), image.tag
        with tarfile.open(image.archive) as archive:
            manifest = json.load(archive.extractfile("manifest.json"))
        assert [entry["RepoTags"] for entry in manifest] == [[image.tag]]
        assert image.archive.stat().st_size == image.archive_bytes
        assert image.image_id.startswith("sha256:")


@pytest.mark.parametrize("name", NAMES)
def test_image_runs_as_its_non_root_user(built_images, in_image, name):
    done = in_image(built_images[name].tag, "id", "-u")
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) == EXPECTED_UID[name]


@pytest.mark.parametrize("name", NAMES)
def test_image_carries_no_compiler_and_no_pip(built_images, in_image, name):
    probe = "import shutil, sys; print(' '.join(c for c in sys.argv[1:] if shutil.which(c)))"
    done = in_image(built_images[name].tag, "python", "-c", probe, "python3", *COMPILERS, "pip", "pip3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["python3"]  # the probe finds what is there, and nothing else


def test_extender_image_has_no_training_stack(built_images, in_image):
    probe = "import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] if importlib.util.find_spec(m)))"
    done = in_image(built_images["extender"].tag, "python", "-c", probe, *TRAINING_STACK, "numpy", "fastapi")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["numpy", "fastapi"]


@pytest.mark.parametrize("name", NAMES)
def test_entry_point_help_runs_inside_the_image(built_images, in_image, name):
    done = in_image(built_images[name].tag, "python", "-m", ENTRY_MODULE[name], "--help")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"python -m {ENTRY_MODULE[name]}" in done.stdout or "usage:" in done.stdout


IMPORT_ALL = """
import importlib, pkgutil, sys
package = sys.argv[1]
names = [m.name for m in pkgutil.walk_packages([f"/app/{package}"], prefix=f"{package}.")]
failed = []
for name in names:
    if not name.endswith(".__main__"):
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed.append(f"{name}: {exc!r}")
print(len(names), "modules;", "failed:", failed)
"""


@pytest.mark.parametrize("name", NAMES)
def test_every_module_of_the_component_imports_inside_its_image(built_images, in_image, name):
    # --help alone imports little; a dependency the Dockerfile forgot shows up here.
    done = in_image(built_images[name].tag, "python", "-c", IMPORT_ALL, ENTRY_MODULE[name])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("failed: []"), done.stdout
    assert int(done.stdout.split()[0]) >= 5, done.stdout  # the walk found the package


def test_a_second_ensure_reuses_every_image(built_images):
    again = ensure_images(progress=lambda line: None)
    assert all(image.reused for image in again)
    assert {i.name: i.image_id for i in again} == {n: i.image_id for n, i in built_images.items()}


def test_archives_import_into_containerd_and_run(built_images, containerd):
    for image in built_images.values():
        done = containerd.ctr("images", "import", str(image.archive))
        assert done.returncode == 0, done.stderr
    listed = containerd.ctr("images", "ls", "--quiet")
    assert listed.returncode == 0, listed.stderr
    assert sorted(listed.stdout.split()) == sorted(image.tag for image in built_images.values())
    workloads = built_images["workloads"].tag
    ran = containerd.ctr("run", "--rm", workloads, "drsched-images-test", "python", "-m", "workloads", "--help")
    assert ran.returncode == 0, ran.stderr
    assert "cpu" in ran.stdout


def test_monitor_image_serves_usage_as_nobody_on_a_read_only_root(built_images, containerd):
    # The DaemonSet's constraints: uid 65534, read-only root filesystem, host network, the host's /proc
    # and cgroup tree mounted read-only.
    monitor = built_images["monitor"]
    assert containerd.ctr("images", "import", str(monitor.archive)).returncode == 0
    port = free_port()
    started = containerd.ctr(
        "run", "--detach", "--read-only", "--net-host",
        "--mount", "type=bind,src=/proc,dst=/host/proc,options=rbind:ro",
        "--mount", "type=bind,src=/sys/fs/cgroup,dst=/host/sys/fs/cgroup,options=rbind:ro",
        monitor.tag, "drsched-monitor-test",
        "python", "-m", "monitor", "--host=127.0.0.1", f"--port={port}", "--interval=0.5",
        "--node-name=image-test", "--proc-root=/host/proc", "--cgroup-root=/host/sys/fs/cgroup",
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    deadline = time.monotonic() + 60
    report = None
    while time.monotonic() < deadline:
        try:
            report = httpx.get(f"http://127.0.0.1:{port}/usage", timeout=2).json()
            if report["node"]["cpu_cores"]["current"] is not None:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    assert report is not None, "the monitor in the image never answered /usage"
    assert report["node_name"] == "image-test"
    assert report["node"]["capacity_cores"] >= 1
    assert report["node"]["memory_bytes"]["current"] > 0
    assert containerd.ctr("tasks", "kill", "--signal", "SIGTERM", "drsched-monitor-test").returncode == 0
