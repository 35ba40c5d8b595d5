"""``python -m harness.images``: build (or reuse) the drsched images and print their sizes;
``python -m harness.images push --registry HOST[:PORT][/PATH] [--tag T]``: then push them there (``push.py``).

Progress goes to stderr, one line per step with the seconds since start; the size table goes to stdout.
Exit 0 when every image is there, 2 when this machine cannot build images, 1 when a build failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from harness.cache import images_dir
from harness.errors import HarnessError
from harness.images.build import REPO_ROOT, ImagesUnavailable, ensure_images, open_buildah
from harness.images.buildah import ImageBuildError
from harness.images.push import destination, push_images
from harness.images.spec import IMAGES, project_version
from harness.images.store import BuiltImage


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness.images",
        description="Build the drsched images (extender, monitor, migration, workloads) from the repository's "
        "Dockerfiles on a Debian bookworm base made by mmdebstrap, with buildah and no image registry, and "
        f"export them as docker-archives for `ctr -n k8s.io images import` under {images_dir()}/<version>/. "
        "Cached: nothing changed means nothing is built.",
    )
    parser.add_argument("--only", action="append", default=[], choices=[spec.name for spec in IMAGES],
                        metavar="NAME", help="build only this image (repeatable); default: all")  # fmt: skip
    parser.add_argument("--rebuild", action="store_true", help="ignore the index and rebuild (layer cache still used)")
    parser.add_argument("--json", action="store_true", help="print the index records as JSON instead of a table")
    return parser


def _push_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness.images push",
        description="Build (or reuse) the drsched images, then push each to REGISTRY/drsched/<name>:TAG with "
        "buildah (credentials: `buildah login`). TLS is verified except for a registry on 127.0.0.1/localhost.",
    )
    parser.add_argument("--registry", required=True, help="host[:port][/path] of the registry")
    parser.add_argument("--tag", default=None, help="the tag pushed; default: project.version (the local tag)")
    parser.add_argument("--only", action="append", default=[], choices=[spec.name for spec in IMAGES],
                        metavar="NAME", help="push only this image (repeatable); default: all")  # fmt: skip
    return parser


def _table(images: list[BuiltImage], elapsed: float) -> str:
    rows = [f"{'image':<38} {'size MiB':>9} {'user':>12}  {'image id':<19}  status"]
    for image in images:
        status = "cached" if image.reused else f"built in {image.built_s:.0f} s"
        rows.append(
            f"{image.tag:<38} {image.archive_bytes / 2**20:>9.1f} {image.user:>12}  {image.image_id[:19]:<19}  {status}"
        )
    if images:
        rows.append(f"size = the docker-archive (uncompressed layers); archives, images.json and build.log in "
                    f"{images[0].archive.parent}")
    rows.append(f"total {elapsed:.1f} s")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    pushing = argv[:1] == ["push"]
    args = _push_parser().parse_args(argv[1:]) if pushing else _parser().parse_args(argv)
    started = time.monotonic()

    def progress(message: str) -> None:
        sys.stderr.write(f"[images {time.monotonic() - started:6.1f}s] {message}\n")
        sys.stderr.flush()

    stage = "build"
    try:
        tag = None
        if pushing:  # a registry or tag that cannot name an image is refused before minutes of building
            tag = args.tag or project_version(REPO_ROOT)
            destination(args.registry, "extender", tag)
        images = ensure_images(progress=progress, rebuild=not pushing and args.rebuild, only=tuple(args.only))
        if pushing and tag is not None:
            stage = "push"
            chosen = [image for image in images if not args.only or image.name in args.only]
            buildah = open_buildah(log_file=images[0].archive.parent / "build.log")
            for pushed in push_images(buildah, chosen, registry=args.registry, tag=tag, progress=progress):
                sys.stdout.write(f"{pushed.destination}\n")
            return 0
    except ImagesUnavailable as exc:
        sys.stderr.write(f"images: cannot build here: {exc}\n")
        return 2
    except ImageBuildError as exc:
        sys.stderr.write(f"images: {stage} failed: {exc}\n")
        return 1
    except HarnessError as exc:  # a bad spec, a host problem: one line, no traceback
        sys.stderr.write(f"images: {exc}\n")
        return 2
    if args.json:
        sys.stdout.write(json.dumps([image.to_json() for image in images], indent=2) + "\n")
    else:
        sys.stdout.write(_table(images, time.monotonic() - started) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
