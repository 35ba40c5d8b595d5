"""Push the built drsched images to a registry the user names: ``python -m harness.images push --registry R``.

Why it exists: on a cluster of their own, users pull the images from a registry instead of importing
archives into every node (docs/deploy.md). Each image ``localhost/drsched/<name>:<version>`` in buildah's
storage goes to ``<registry>/drsched/<name>:<tag>`` (``<registry>`` is ``host[:port][/path]``) with
``buildah push``; credentials are buildah's own (``buildah login <host>`` first, or ``REGISTRY_AUTH_FILE``).
TLS is verified, except for a registry on the loopback address (the tests' plain-HTTP one): there and only
there ``--tls-verify=false`` is passed, and the push says so. The names are pure functions here; the one
call to buildah is ``push_images``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import HarnessError
from harness.images.buildah import Buildah, Progress
from harness.images.spec import IMAGES
from harness.images.store import BuiltImage

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_REGISTRY = re.compile(r"^(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(?::(?P<port>\d{1,5}))?(?P<path>(/[a-z0-9._-]+)*)$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")


class PushError(HarnessError, ValueError):
    """A registry or tag that cannot name an image, or an image that is not built."""


@dataclass(frozen=True)
class Pushed:
    """One image pushed: its local tag and where it went."""

    name: str
    source: str
    destination: str


def destination(registry: str, name: str, tag: str) -> str:
    """``<registry>/drsched/<name>:<tag>``; the overlay's images (docs/deploy.md) use the same names."""
    if not _REGISTRY.match(registry):
        raise PushError(f"registry {registry!r} is not host[:port][/path] (e.g. registry.example.com:5000/team)")
    if not _TAG.match(tag):
        raise PushError(f"tag {tag!r} is not a valid image tag")
    return f"{registry}/drsched/{name}:{tag}"


def is_loopback(registry: str) -> bool:
    """A registry on this machine's loopback address: the only one pushed to without TLS verification."""
    match = _REGISTRY.match(registry)
    return match is not None and match["host"] in LOOPBACK_HOSTS


def push_images(buildah: Buildah, images: list[BuiltImage], *, registry: str, tag: str,
                progress: Progress) -> list[Pushed]:  # fmt: skip
    """Push each image (already built, in ``buildah``'s storage) to ``registry``; returns what went where."""
    known = {spec.name for spec in IMAGES}
    tls = ["--tls-verify=false"] if is_loopback(registry) else []
    if tls:
        progress(f"{registry} is on loopback: pushing over plain HTTP (--tls-verify=false)")
    pushed = []
    for image in images:
        if image.name not in known:
            raise PushError(f"unknown image {image.name!r}")
        target = destination(registry, image.name, tag)
        if buildah.image_id(image.tag) != image.image_id:
            raise PushError(f"{image.tag} is not in buildah's storage as built; run `python -m harness.images`")
        progress(f"{image.name}: pushing {image.tag} to {target}")
        buildah.run("push", *tls, "--quiet", image.tag, f"docker://{target}")
        pushed.append(Pushed(name=image.name, source=image.tag, destination=target))
    return pushed
