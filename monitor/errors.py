"""Typed errors of the node monitor.

The type says what happens next: a ``ConfigError`` stops the process at start (bad
flags or environment); a ``SourceUnavailable`` is one failed read of one source in one
sample -- the sampler logs it, counts it and carries on with the other sources.
"""


class MonitorError(Exception):
    """Base class of every error the monitor raises on purpose."""


class ConfigError(MonitorError):
    """The configuration is invalid; the agent refuses to start."""


class SourceUnavailable(MonitorError):
    """A host source (a /proc file, a cgroup file) could not be read or parsed this sample.

    ``source`` names the source (``proc_stat``, ``meminfo``, ``net_dev``, ``diskstats``,
    ``cgroup``) so the sampler can count failures per source.
    """

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(f"{source}: {detail}")
        self.source = source
        self.detail = detail
