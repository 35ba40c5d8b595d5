"""Build (or reuse) the drsched images and export them as archives real nodes import.

Layout under ``harness.cache.images_dir()`` (``${DRSCHED_CACHE:-~/.cache/drsched}/images/``):

    storage/<driver>/          buildah storage (images and the layer cache)
    base/bookworm-<key>.tar    the mmdebstrap root filesystem
    pip/                       pip's cache, mounted into the builder stages (if responses are cacheable)
    <version>/<name>.tar       one docker-archive per image, importable by ``ctr -n k8s.io images import``
    <version>/images.json      the index: tag, archive, sizes, image id and cache key per image
    <version>/build.log        everything the tools printed
    .lock                      one build at a time (flock), across processes and checkouts

An image is reused when the index has its current key, its archive is there with the recorded size and the
storage still holds the recorded image id; otherwise it is built (buildah's layer cache makes unchanged
steps instant) and exported again.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.cache import images_dir
from harness.images.base import ensure_base
from harness.images.buildah import Buildah, ImageBuildError, Progress, missing_tools
from harness.images.spec import IMAGES, ImageSpec, image_key, project_version
from harness.images.store import BuiltImage, read_index, write_index

log = logging.getLogger(__name__)

REPO_ROOT = Path(__file__).resolve().parents[2]
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
_CA_IN_BUILD = "/run/drsched-host-ca.crt"


class ImagesUnavailable(RuntimeError):
    """This machine cannot build images (not root, or buildah/mmdebstrap missing); the message says which."""


def open_buildah(*, log_file: Path) -> Buildah:
    """buildah on the images cache's storage (overlay; ``DRSCHED_BUILDAH_DRIVER=vfs`` where overlay cannot mount)."""
    driver = os.environ.get("DRSCHED_BUILDAH_DRIVER", "overlay")
    storage = images_dir() / "storage" / driver
    # One run root per storage: it holds that storage's locks and mount counts.
    runroot = Path("/run/drsched-buildah") / hashlib.sha256(str(storage).encode()).hexdigest()[:12]
    return Buildah(storage=storage, runroot=runroot, driver=driver, log_file=log_file)


def unavailable_reason() -> str | None:
    """Why images cannot be built here, or None when they can."""
    if os.geteuid() != 0:
        return "building images needs root (buildah storage and mmdebstrap's chroot)"
    missing = missing_tools()
    if missing:
        return f"missing Debian packages: {' '.join(missing)} (apt-get install buildah mmdebstrap)"
    return None


def _log_progress(message: str) -> None:
    log.info("images %s", message)


@contextmanager
def _locked(path: Path, progress: Progress) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"waiting for another image build to finish (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _current(buildah: Buildah, entry: BuiltImage | None, key: str) -> bool:
    return (
        entry is not None
        and entry.key == key
        and entry.archive.is_file()
        and entry.archive.stat().st_size == entry.archive_bytes
        and buildah.image_id(entry.tag) == entry.image_id
    )


def _build_one(buildah: Buildah, spec: ImageSpec, *, version: str, key: str, out: Path, root: Path,
               pip_cache: Path, progress: Progress) -> BuiltImage:  # fmt: skip
    tag = spec.tag(version)
    started = time.monotonic()
    args = ["bud", "--layers", "--pull=never", "--network", "host", "--format", "oci", "-f", spec.dockerfile,
            "-t", tag, "--label", f"io.drsched.key={key}", "-v", f"{pip_cache}:/root/.cache/pip"]  # fmt: skip
    if HOST_CA.is_file():
        args += ["-v", f"{HOST_CA}:{_CA_IN_BUILD}:ro", "--build-arg", f"HOST_CA_BUNDLE={_CA_IN_BUILD}"]
    buildah.run(*args, str(root), progress=progress, prefix=f"{spec.name}: ")
    user = ((buildah.image_info(tag) or {}).get("OCIv1") or {}).get("config", {}).get("User")
    if user != spec.user:
        raise ImageBuildError(f"{spec.dockerfile} sets USER {user!r}; the index promises {spec.user!r}")
    archive = out / f"{spec.name}.tar"
    partial = archive.with_suffix(".tar.partial")
    partial.unlink(missing_ok=True)
    progress(f"{spec.name}: exporting docker-archive {archive}")
    buildah.run("push", "--quiet", tag, f"docker-archive:{partial}:{tag}")
    os.replace(partial, archive)
    image = BuiltImage(
        name=spec.name, tag=tag, archive=archive, archive_bytes=archive.stat().st_size,
        archive_sha256=_sha256(archive), image_id=buildah.image_id(tag) or "",
        user=spec.user, key=key, built_s=round(time.monotonic() - started, 1), reused=False,
    )  # fmt: skip
    progress(f"{spec.name}: built {tag} ({image.archive_bytes / 2**20:.0f} MiB) in {image.built_s:.0f} s")
    return image


def ensure_images(*, progress: Progress | None = None, root: Path = REPO_ROOT, rebuild: bool = False,
                  only: tuple[str, ...] = ()) -> list[BuiltImage]:  # fmt: skip
    """Build the drsched images that are missing or stale, export their archives, and return all of them.

    ``progress`` gets one line per step (default: the module logger). ``only`` limits the work to some
    image names; ``rebuild`` ignores the index (buildah's layer cache still applies). Raises
    ImagesUnavailable when the machine cannot build, ImageBuildError when a tool fails.
    """
    report = progress or _log_progress
    reason = unavailable_reason()
    if reason:
        raise ImagesUnavailable(reason)
    unknown = set(only) - {spec.name for spec in IMAGES}
    if unknown:
        raise ValueError(f"unknown image name(s) {sorted(unknown)}; known: {[spec.name for spec in IMAGES]}")
    version = project_version(root)
    cache = images_dir()
    out = cache / version
    with _locked(cache / ".lock", report):
        out.mkdir(parents=True, exist_ok=True)
        buildah = open_buildah(log_file=out / "build.log")
        (cache / "pip").mkdir(exist_ok=True)
        base_key = ensure_base(buildah, cache_dir=cache, progress=report)
        index = read_index(out / "images.json")
        results: list[BuiltImage] = []
        for spec in IMAGES:
            if only and spec.name not in only:
                if spec.name in index:
                    results.append(index[spec.name])
                continue
            key = image_key(root, spec, base_key=base_key)
            entry = index.get(spec.name)
            if not rebuild and entry is not None and _current(buildah, entry, key):
                report(f"{spec.name}: {entry.tag} is current ({entry.archive})")
                results.append(entry.as_reused())
                continue
            report(f"{spec.name}: building {spec.tag(version)} from {spec.dockerfile}")
            image = _build_one(buildah, spec, version=version, key=key, out=out, root=root,
                               pip_cache=cache / "pip", progress=report)  # fmt: skip
            results.append(image)
            index[spec.name] = image
            write_index(out / "images.json", index)
    return results


__all__ = ["ImageBuildError", "ImagesUnavailable", "ensure_images", "open_buildah", "unavailable_reason"]
