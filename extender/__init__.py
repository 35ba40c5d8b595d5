"""drsched's scheduler extender: the HTTP shell kube-scheduler calls to filter, score, bind and preempt.

Layout (each file says what it owns):

    settings.py       the one typed config object (pydantic-settings, YAML file + DRSCHED_ env vars)
    wire.py           ExtenderArgs in, ExtenderFilterResult / HostPriority / ... out; any key casing on input
    quantity.py       Kubernetes quantities -> policy units (pure)
    objects.py        v1.Pod / v1.Node JSON -> requests, capacity, readiness, workload key (pure)
    profiles.py       the pod's expected demand: annotation, learned ProfileStore, or requests
    cache.py          ClusterCache: nodes, pods, allocations, usage, assumed pods -> cached snapshot arrays
    decide.py         filter reasons, scoring and the 0-10 score rule on one snapshot (pure)
    usage.py          UsageProvider interface, registry, the static provider and the stoppable poller
    static_cluster.py the --static-cluster YAML loader with file:line:field errors
    kube.py           the only module that talks to the Kubernetes API: list+watch, Binding, Events
    telemetry.py      JSON logging, Prometheus metrics, the one "log + Event + counter" helper
    service.py        the FastAPI app: lifespan, routes, error mapping
    listeners.py      the service and loopback debug listeners, mTLS termination, who may call the verbs
    debug_routes.py   /debug/* as an app of its own, served on the debug listener only
    annotation_trust.py  whether a profile annotation is believed against a trusted learned profile
    __main__.py       ``python -m extender``: flags generated from the settings, then uvicorn

The extender never imports torch, gymnasium or stable-baselines3 (import-linter contract).
"""
