"""The versioned calibration file: which contention parameters the simulator uses by default.

Why it exists: the parameters of ``policy.sim.sharing`` are measured, not chosen, so they live in one file
(``calibration.yaml`` beside this module) together with the runs and errors they were fitted on, and every
simulator loads the same set unless a caller passes its own. ``DRSCHED_SIM_CALIBRATION`` names another file
(tests, experiments). The module caches the loaded set per path; it owns nothing else. It lives outside
``policy.sim`` (which re-exports it as ``policy.sim.calibration``), beside ``policy.sharing``, so that shadow
mode in the extender predicts with the same active set as ``policy.offline`` without loading the simulator.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import yaml

from policy.errors import ConfigError
from policy.sharing import ContentionParams

DEFAULT_PATH = Path(__file__).parent / "sim" / "calibration.yaml"
ENV = "DRSCHED_SIM_CALIBRATION"
VERSION = 1
REFERENCE_SETS = ("original", "no-sharing")
"""Sets written by hand, not fitted (no ``fits`` record): the simulator's first rule, and no sharing loss at all
(every job as fast as alone on its node, the null a fitted set must beat)."""


def read(path: Path) -> dict:
    """The calibration file as a dict, checked for its version and its ``active`` set."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError("calibration", f"{path}: cannot read: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise ConfigError("calibration", f"{path}: need a mapping with version: {VERSION}")
    sets = doc.get("sets")
    if not isinstance(sets, dict) or doc.get("active") not in sets:
        raise ConfigError("calibration", f"{path}: 'active' must name one of 'sets' ({sorted(sets or {})})")
    return doc


def params_of(doc: dict, name: str | None = None) -> ContentionParams:
    """Parameter set ``name`` (default: the active one) of a calibration document."""
    name = doc["active"] if name is None else name
    raw = doc["sets"].get(name)
    if not isinstance(raw, dict):
        raise ConfigError("calibration", f"no parameter set {name!r}; known: {', '.join(doc['sets'])}")
    try:
        return ContentionParams(**raw)
    except TypeError as exc:
        raise ConfigError("calibration", f"set {name!r}: {exc}") from None


def shipped(name: str) -> ContentionParams:
    """Parameter set ``name`` of the shipped ``calibration.yaml``, whichever set is active."""
    return params_of(read(DEFAULT_PATH), name)


@functools.cache
def _load(path: str) -> ContentionParams:
    return params_of(read(Path(path)))


def default_params() -> ContentionParams:
    """The active set of ``$DRSCHED_SIM_CALIBRATION`` or the shipped ``calibration.yaml``."""
    return _load(os.environ.get(ENV) or str(DEFAULT_PATH))
