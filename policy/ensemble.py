"""``python -m policy.ensemble --out X.npz a.npz b.npz ...``: K exported Q-networks as one served artifact.

Why it exists: the DQN's served figures differ widely between training seeds of one recipe (issue #22,
``results/policy/dqfd-long``: one family at 0.45 on one seed, 1.40 on the next), and a mean over members is
the usual cure for that variance. The artifact is ``policy.model``'s ensemble format (its docstring says how the
members combine and why); the extender, ``policy.evaluate --policies dqn:X.npz``, ``policy.promote`` and the
migration controller load it with ``load_model`` as they load one network, numpy only.

Each member is loaded and checked as the extender would (``load_model``: format, feature version, shapes, its
weights against its own digest); one that fails stops the command, naming its file and what is wrong, and
nothing is written. An ensemble is not accepted as a member: list its members instead. Exit status 0 written,
2 bad input (one line naming the file).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from policy.cli import command_parser, from_namespace, option
from policy.model import EnsembleModel, ModelError, QModel, load_model, save_ensemble

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class EnsembleArgs:
    """What ``python -m policy.ensemble`` runs; each field is the command-line flag of the same name."""

    members: list[Path] = option(positional=True, metavar="MEMBER.npz")
    """the exported models to combine (each with its .json beside it); one alone gives an ensemble that scores
    exactly as that model"""
    out: Path = option(metavar="PATH.npz")
    """where to write the ensemble (.npz and its .json metadata)"""
    version: str | None = None
    """the version the extender reports for it (unset: the --out file's stem and the member count, NAME-kK)"""


def load_members(paths: Sequence[Path]) -> list[QModel]:
    """Each path as a single network, checked by ``load_model``; ``ModelError`` naming the file otherwise."""
    members = []
    for path in paths:
        model = load_model(path)
        if isinstance(model, EnsembleModel):
            raise ModelError(path, f"format is an ensemble ({len(model.members)} members); list its members' "
                                   f"files instead: {', '.join(m.meta.get('source', '?') for m in model.members)}")
        members.append(model)
    return members


def build_parser() -> argparse.ArgumentParser:
    return command_parser("policy.ensemble", __doc__, EnsembleArgs)


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args: EnsembleArgs = from_namespace(build_parser().parse_args(argv))
    try:
        members = load_members(args.members)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201 -- a command's one-line answer
        return 2
    version = args.version or f"{args.out.with_suffix('').name}-k{len(members)}"
    path = save_ensemble(args.out, members, meta={"version": version})
    log.info("ensemble written path=%s version=%s members=%s", path, version, [m.version for m in members])
    return 0


if __name__ == "__main__":
    sys.exit(main())
