"""Usage providers that talk to the outside world: the drsched node agents and Prometheus.

Each provider answers ``UsageProvider.fetch`` (``extender.usage``) with ``{node: NodeUsage}`` in policy
units and keeps a ``UsageHealth`` (``health``): per node, the time of its last good sample and, while it
fails, why. The parsing and mapping rules are pure functions in their own modules (``monitor_report``,
``promql``) with table tests; ``monitor`` and ``prometheus`` are the thin httpx shells around them.
"""
