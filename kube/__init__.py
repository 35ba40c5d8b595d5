"""The Kubernetes layer the extender and the migration controller share (no HTTP server, no decisions).

Both shells must read the cluster the same way, so the code that does lives here once and each imports it;
``extender`` and ``migration`` never import each other (import-linter contract).

    errors.py     the typed errors of this layer (one ``ConfigError``; API outcomes that say what happens next)
    quantity.py   Kubernetes quantities -> policy units (pure)
    objects.py    v1.Pod / v1.Node JSON -> requests, capacity, readiness, taints and tolerations, labels, workload
                  key, DaemonSet pods, terminal phases (pure)
    affinity.py   which node labels a pod's nodeSelector and required node affinity allow (pure)
    selectors.py  equality label selectors: parse ``k=v,k2=v2``, match labels (pure)
    profiles.py   a pod's expected demand: the ``drsched.io/profile`` annotation, a learned store, or requests
    pool.py       a pod's pool: the nodes its taints and cordons leave it, grouped once per taint change (pure)
    cache.py      ClusterCache: per-node rows of nodes, pods, usage and assumed pods -> one ``CacheView``
    logs.py       the logging convention: ``extra=kv(...)`` fields, JSON and text formatters (stdlib only)
    events.py     the one rate-limited, best-effort Kubernetes Event recorder
    config.py     settings -> CLI flags, validation errors -> one line, the default model path
    atomic.py     crash-safe file replacement (temp file, fsync, rename, fsync the directory)
    asgi.py       the listeners' shared ASGI rule: drain an unread request body before answering (stdlib only)
    client.py     the layer's only module that imports ``kubernetes``: client, HTTP status -> error, Event sink

Importing ``kube`` imports none of these: ``kube.logs``, ``kube.atomic`` and ``kube.asgi`` stay stdlib-only, so the node
monitor and the workloads can use them without numpy, pydantic or the Kubernetes client.
"""
