"""The drsched images as built by `make images`: names, users, contents, entry points, and import.

Each image is checked from the inside (buildah runs commands in a throwaway working container, as the
image's own user) and its archive is imported into a throwaway containerd, the way a real node gets it.
The first run builds everything (minutes); later runs reuse the cache.
"""

from __future__ import annotations

import json
import re
import tarfile

import pytest

from harness.images import IMAGES, ensure_images

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
