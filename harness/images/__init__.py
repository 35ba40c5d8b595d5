"""The drsched images, built on this machine from the project's own Dockerfiles with no image registry.

A Debian bookworm base comes from the Debian package registry (mmdebstrap, ``harness.images.base``);
the extender, monitor, migration and workloads images are built from it by buildah (daemonless) and
exported as docker-archives that real nodes import with ``ctr -n k8s.io images import``
(``harness.images.build``). Everything is cached under ``~/.cache/drsched/images`` by a key over what
goes into each image, so a second ``ensure_images()`` with nothing changed only checks.

    from harness.images import ensure_images
    for image in ensure_images(progress=print):
        print(image.tag, image.archive)

``python -m harness.images --help`` is the command-line entry (``make images``).
"""

from harness.images.build import ImagesUnavailable, ensure_images, open_buildah, unavailable_reason
from harness.images.buildah import ImageBuildError
from harness.images.spec import IMAGES, ImageSpec
from harness.images.store import BuiltImage, read_index

__all__ = [
    "IMAGES",
    "BuiltImage",
    "ImageBuildError",
    "ImageSpec",
    "ImagesUnavailable",
    "ensure_images",
    "open_buildah",
    "read_index",
    "unavailable_reason",
]
