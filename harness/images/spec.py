"""What the drsched images are and the cache key of each.

An image is rebuilt only when something that goes into it changed: its Dockerfile, the files its
``COPY`` lines take from the build context (read from the Dockerfile itself, so a new ``COPY`` is in the
key without touching this module), the constraints, the project version in ``pyproject.toml`` (the rest of
that file goes into no image), ``.dockerignore``, the base image and the build flags. Pure functions over
the checkout; no process is started here.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError

REGISTRY = "localhost/drsched"
BASE_TAG = f"{REGISTRY}/base:bookworm"
# Bumped when the harness builds differently (flags, archive format), so every cached image is rebuilt.
BUILD_FORMAT = 1
_SKIP_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache"}
_COPY = re.compile(r"^\s*(?:COPY|ADD)\s+(?P<args>.+)$", re.IGNORECASE)


@dataclass(frozen=True)
class ImageSpec:
    """One image: its short name, its Dockerfile (relative to the repository root) and the user it runs as."""

    name: str
    dockerfile: str
    user: str

    def tag(self, version: str) -> str:
        return f"{REGISTRY}/{self.name}:{version}"


IMAGES: tuple[ImageSpec, ...] = (
    ImageSpec("extender", "extender/Dockerfile", "65534:65534"),
    ImageSpec("monitor", "monitor/Dockerfile", "65534:65534"),
    ImageSpec("migration", "migration/Dockerfile", "65534:65534"),
    ImageSpec("workloads", "workloads/Dockerfile", "10001:10001"),
)


class SpecError(HarnessError, ValueError):
    """The checkout cannot describe an image (a missing Dockerfile or COPY source, no version)."""


def project_version(root: Path) -> str:
    """The drsched version in pyproject.toml: the tag every image gets."""
    try:
        return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise SpecError(f"cannot read project.version from {root / 'pyproject.toml'}: {exc}") from exc


def copy_sources(dockerfile_text: str) -> list[str]:
    """The build-context paths the Dockerfile's COPY/ADD lines read (not ``--from`` stage copies)."""
    text = re.sub(r"\\\n", " ", dockerfile_text)
    sources: list[str] = []
    for line in text.splitlines():
        match = _COPY.match(line)
        if not match:
            continue
        words = match["args"].split()
        if any(w.startswith("--from") for w in words):
            continue
        words = [w for w in words if not w.startswith("--")]
        sources.extend(words[:-1])
    return sources


def _context_files(root: Path, source: str) -> list[Path]:
    path = root / source.rstrip("/")
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise SpecError(f"COPY source {source!r} does not exist under {root}")
    return sorted(
        p for p in path.rglob("*") if p.is_file() and not _SKIP_PARTS.intersection(p.parts) and p.suffix != ".pyc"
    )


def image_key(root: Path, spec: ImageSpec, *, base_key: str) -> str:
    """A sha256 over everything that decides the image's content; equal keys mean the cached image is current."""
    dockerfile = root / spec.dockerfile
    try:
        text = dockerfile.read_text()
    except OSError as exc:
        raise SpecError(f"cannot read {dockerfile}: {exc}") from exc
    # The project's version (the tag), not all of pyproject.toml: no image copies it, and a lint setting changed
    # there rebuilt every image and, with the workloads image's new digest, threw away the lab's solo cache.
    digest = hashlib.sha256(f"format={BUILD_FORMAT} name={spec.name} base={base_key} "
                            f"version={project_version(root)}\n".encode())
    files = [dockerfile]
    ignore = root / ".dockerignore"
    if ignore.is_file():
        files.append(ignore)
    for source in copy_sources(text):
        files.extend(_context_files(root, source))
    for path in files:
        digest.update(f"{path.relative_to(root)}\0".encode())
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()
