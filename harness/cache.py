"""Where drsched keeps what outlives a checkout on this machine: ``$DRSCHED_CACHE``, else ``~/.cache/drsched``.

Why it exists: the image builder and the image cache's readers (``images/``), and the lab's solo runtimes
(``lab/``) live under one root, which used to be computed in each of their files. The control-plane and node
build scripts (``harness/controlplane/build.sh``, ``build-nodes.sh``) compute the same root in bash, as
``${DRSCHED_CACHE:-$HOME/.cache/drsched}``. The environment is read when a path is asked for, never at import,
so a test or a process that sets ``DRSCHED_CACHE`` first is obeyed.
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_ENV = "DRSCHED_CACHE"


def cache_root() -> Path:
    """The cache root: ``$DRSCHED_CACHE`` if set, else ``~/.cache/drsched``."""
    return Path(os.environ.get(CACHE_ENV, Path.home() / ".cache" / "drsched"))


def images_dir() -> Path:
    """The image cache: buildah's storage, the base root filesystem and one ``<version>/`` per build
    (``harness.images.build``; its index is ``harness.images.store``)."""
    return cache_root() / "images"


def lab_dir() -> Path:
    """The lab's cache: solo runtimes (``lab.solo``)."""
    return cache_root() / "lab"
