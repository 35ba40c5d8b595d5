"""The Debian bookworm base image, made from the Debian package registry instead of an image registry.

mmdebstrap writes a minimal root filesystem (variant minbase plus python3, Python 3.11 like the project's)
as a tarball; buildah turns it into ``localhost/drsched/base:bookworm`` (``from scratch`` + the tarball +
commit). Documentation, man pages and translations are left out by dpkg path filters, which stay in the
image, so packages a Dockerfile installs later are slimmed the same way. Merged /usr comes from
mmdebstrap's hook rather than the usrmerge package, which would pull the whole of perl in.

The image carries a label with the key of the recipe below; a changed recipe builds a new base and, since
every image key includes it, rebuilds every image.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from harness.images.buildah import Buildah, Progress, run_logged
from harness.images.spec import BASE_TAG, BUILD_FORMAT

SUITE = "bookworm"
MIRRORS = (
    "deb http://deb.debian.org/debian bookworm main",
    "deb http://deb.debian.org/debian bookworm-updates main",
    "deb http://deb.debian.org/debian-security bookworm-security main",
)
MMDEBSTRAP_OPTIONS = (
    "--variant=minbase",
    "--include=python3",
    "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
    '--aptopt=APT::Install-Recommends "false"',
    "--dpkgopt=path-exclude=/usr/share/man/*",
    "--dpkgopt=path-exclude=/usr/share/info/*",
    "--dpkgopt=path-exclude=/usr/share/locale/*",
    "--dpkgopt=path-include=/usr/share/locale/locale.alias",
    "--dpkgopt=path-exclude=/usr/share/doc/*",
    # Licences stay: an image that ships Debian packages ships their copyright files.
    "--dpkgopt=path-include=/usr/share/doc/*/copyright",
)
KEY_LABEL = "io.drsched.base-key"


def base_key() -> str:
    """The key of the base recipe: suite, mirrors, mmdebstrap options and the harness build format."""
    recipe = "\n".join([f"format={BUILD_FORMAT}", SUITE, *MIRRORS, *MMDEBSTRAP_OPTIONS])
    return hashlib.sha256(recipe.encode()).hexdigest()


def _rootfs(*, cache_dir: Path, key: str, log_file: Path, progress: Progress) -> Path:
    tarball = cache_dir / "base" / f"{SUITE}-{key[:16]}.tar"
    if tarball.is_file():
        progress(f"base: reusing root filesystem {tarball}")
        return tarball
    tarball.parent.mkdir(parents=True, exist_ok=True)
    for stale in tarball.parent.glob(f"{SUITE}-*.tar*"):
        stale.unlink()
    partial = tarball.with_suffix(".tar.partial")
    progress("base: mmdebstrap minbase + python3 from deb.debian.org (about 2 min)")
    cmd = ["mmdebstrap", *MMDEBSTRAP_OPTIONS, "--format=tar", SUITE, str(partial), *MIRRORS]
    run_logged(cmd, log_file=log_file, progress=progress, prefix="base: mmdebstrap ")
    os.replace(partial, tarball)
    return tarball


def ensure_base(buildah: Buildah, *, cache_dir: Path, progress: Progress) -> str:
    """Make ``localhost/drsched/base:bookworm`` exist in the buildah storage; returns its recipe key."""
    key = base_key()
    if buildah.label(BASE_TAG, KEY_LABEL) == key:
        progress(f"base: {BASE_TAG} is current")
        return key
    tarball = _rootfs(cache_dir=cache_dir, key=key, log_file=buildah.log_file, progress=progress)
    progress(f"base: importing {tarball.name} as {BASE_TAG}")
    container = buildah.run("from", "--quiet", "scratch").strip().splitlines()[-1]
    try:
        buildah.run("add", container, str(tarball), "/")
        buildah.run(
            "config",
            "--env", "LANG=C.UTF-8",
            "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "--cmd", '["python3"]',
            "--label", f"{KEY_LABEL}={key}",
            "--label", "org.opencontainers.image.description=Debian bookworm minbase + python3, made by mmdebstrap",
            container,
        )  # fmt: skip
        buildah.run("commit", "--quiet", "--rm", container, BASE_TAG)
    except BaseException:
        buildah.quiet("rm", container)
        raise
    return key
