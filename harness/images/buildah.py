"""The one module that runs the image tools (buildah, mmdebstrap) for the harness.

Every command's output goes to one build log; lines buildah prints per Dockerfile step (``STEP n/m: ...``)
are also passed to the caller's progress callback, so a long build shows where it is. Buildah keeps its
storage under the drsched cache (outside the clone), which is what makes its layer cache survive between
runs and checkouts; its run root (locks, mounts) is under /run, which a reboot clears.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import subprocess
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.errors import HarnessError

log = logging.getLogger(__name__)

Progress = Callable[[str], None]
TOOLS = ("buildah", "mmdebstrap")
_LOG_TAIL = 25
# The lines that start a step: buildah's "STEP 2/5: RUN ..." ("[1/2] STEP ..." in a multi-stage build)
# and mmdebstrap's "I: downloading packages with apt...".
STEP_LINE = re.compile(r"^((\[\d+/\d+\] )?STEP \d+/\d+: |I: )")


class ImageBuildError(HarnessError, RuntimeError):
    """A build tool failed; the message names the command and ends with the tail of its output."""


def missing_tools() -> list[str]:
    """The image tools this machine lacks (Debian packages buildah and mmdebstrap)."""
    return [tool for tool in TOOLS if shutil.which(tool) is None]


def run_logged(cmd: Sequence[str], *, log_file: Path, progress: Progress | None = None, prefix: str = "") -> str:
    """Run ``cmd``, appending its output to ``log_file``; returns stdout+stderr, raises ImageBuildError on failure."""
    with log_file.open("a") as out:
        out.write(f"$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        lines: list[str] = []
        tail: deque[str] = deque(maxlen=_LOG_TAIL)
        for line in proc.stdout or ():
            out.write(line)
            out.flush()  # the log can be followed while a long step runs
            lines.append(line)
            tail.append(line)
            if progress is not None and STEP_LINE.match(line):
                progress(f"{prefix}{line.strip()}")
        code = proc.wait()
        out.write(f"# exit {code}\n")
    if code != 0:
        raise ImageBuildError(
            f"{cmd[0]} failed (exit {code}): {' '.join(cmd[:6])} ... (full log {log_file})\n" + "".join(tail)
        )
    return "".join(lines)


class Buildah:
    """buildah with this cache's storage and the build log; keyword-only helpers for what the harness needs."""

    def __init__(self, *, storage: Path, runroot: Path, driver: str, log_file: Path) -> None:
        self.storage = storage
        self.runroot = runroot
        self.driver = driver
        self.log_file = log_file

    def _base(self) -> list[str]:
        return ["buildah", "--root", str(self.storage), "--runroot", str(self.runroot), "--storage-driver", self.driver]

    def run(self, *args: str, progress: Progress | None = None, prefix: str = "") -> str:
        return run_logged([*self._base(), *args], log_file=self.log_file, progress=progress, prefix=prefix)

    def quiet(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A read-only query whose failure is an answer (e.g. the image does not exist), not an error."""
        return subprocess.run([*self._base(), *args], capture_output=True, text=True, check=False)

    def image_info(self, tag: str) -> dict | None:
        """``buildah inspect`` of a local image, or None when the storage does not hold it."""
        done = self.quiet("inspect", "--type", "image", tag)
        if done.returncode != 0:
            return None
        return json.loads(done.stdout)

    def image_id(self, tag: str) -> str | None:
        """``sha256:<digest of the image config>``: the id containerd and the kubelet show after an import."""
        info = self.image_info(tag)
        return None if info is None else f"sha256:{info['FromImageID']}"

    def label(self, tag: str, key: str) -> str | None:
        info = self.image_info(tag)
        if info is None:
            return None
        labels = (info.get("OCIv1") or {}).get("config", {}).get("Labels") or {}
        return labels.get(key)
