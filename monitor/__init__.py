"""drsched node monitor: a per-node agent that samples host and per-pod usage and serves it.

The agent reads the host's /proc and the pods' cgroups at a fixed interval, turns kernel
counters into rates over that interval, keeps a smoothed window (EWMA plus mean/max over
the last N samples) and serves the latest record as JSON (``GET /usage``), as Prometheus
metrics (``GET /metrics``) and as a health check (``GET /healthz``).

Layout (pure core inside thin I/O shells):

* ``procfs``, ``cgroups``, ``rates``, ``counters`` -- pure parsers, counter snapshots and the
  rate/window math, no I/O.
* ``node``, ``cgroupfs`` -- the only modules that read the host (files under the proc
  and cgroup roots).
* ``sampler`` -- owns the previous counters and the per-series windows; one stoppable loop.
* ``models``, ``metrics``, ``server`` -- the wire shapes and the HTTP shell.
* ``settings``, ``__main__`` -- configuration and the process entry point.
* ``errors``, ``logs`` -- typed errors; key=value and warn-once logging helpers.
"""
