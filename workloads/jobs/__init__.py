"""The job kinds, by name. Imported lazily, so only ``train`` pays for importing numpy."""

from __future__ import annotations

import importlib

from workloads.jobs.base import Job

KINDS: dict[str, tuple[str, str]] = {
    "cpu": ("workloads.jobs.cpu:CpuJob", "compute-bound: an iterated SHA-256 chain, --work hashes per unit"),
    "io": ("workloads.jobs.io:IoJob", "disk-bound: copy an input file in chunks (generated if absent), fsync"),
    "net": ("workloads.jobs.net:NetJob", "network-bound: push seeded data to a sink or pull it from a source"),
    "train": ("workloads.jobs.train:TrainJob", "training-like: numpy mini-batch SGD on a seeded synthetic dataset"),
}
"""kind -> (import path, one-line help)."""


def job_class(kind: str) -> type[Job]:
    module, _, name = KINDS[kind][0].partition(":")
    return getattr(importlib.import_module(module), name)
