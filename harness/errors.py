"""The harness's typed errors: the local real cluster, its nodes or its images could not be brought up.

Every error the harness raises on purpose is a ``HarnessError``, so a command (``python -m harness.realnodes``,
``python -m harness.images``, ``python -m lab``) turns any of them into one line naming what failed and exits
2, instead of a traceback. The subclass says where: a component that would not start or finish
(``procs.ComponentError``), certificates (``pki.PkiError``), a node's network (``nodenet.NodeNetError``), a
deploy (``deploy.DeployError``), an image build or spec (``images``), the host itself (``HostError``: a missing
route, cgroup or tool), or a wait that ran out (``WaitTimeout``). They keep the stdlib base they had
(RuntimeError, ValueError, TimeoutError), so existing ``except`` clauses still hold.
"""

from __future__ import annotations


class HarnessError(Exception):
    """Base class of every error the harness raises on purpose."""


class HostError(HarnessError, RuntimeError):
    """The host cannot do what a real node needs (no default route, a cgroup that will not empty, ...)."""


class WaitTimeout(HarnessError, TimeoutError):
    """Something awaited (a node Ready, a pod phase) did not happen in time; the message names it."""
