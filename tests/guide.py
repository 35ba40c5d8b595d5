"""The commands of docs/deploy.md that its tests run: the fenced blocks whose info string is ``sh e2e``.

Why it exists: the deploy guide is tested by running its own commands as written (the unit test renders its
kustomization, the real-node e2e test runs all of them), so the guide cannot drift from what works. One
parser, so both read the same blocks in the same order; ``run_block`` runs one with bash, ``set -euo
pipefail`` and the caller's environment.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.helpers import REPO

GUIDE = REPO / "docs" / "deploy.md"
_FENCE = re.compile(r"^```sh e2e\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


def e2e_blocks(path: Path = GUIDE) -> list[str]:
    """The ``sh e2e`` blocks of the guide, in order."""
    return [match["body"] for match in _FENCE.finditer(path.read_text())]


def block_with(blocks: list[str], needle: str) -> str:
    """The one block containing ``needle`` (a test names the step it runs, not its position)."""
    found = [block for block in blocks if needle in block]
    if len(found) != 1:
        raise LookupError(f"{len(found)} e2e blocks of {GUIDE} contain {needle!r}")
    return found[0]


def run_block(block: str, *, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``block`` from the repository root with bash (errexit, nounset, pipefail) and ``env`` over os.environ."""
    return subprocess.run(["bash", "-c", "set -euo pipefail\n" + block], cwd=REPO, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=timeout, check=False)  # fmt: skip
