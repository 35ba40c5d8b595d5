"""drsched's scheduler extender: the HTTP shell kube-scheduler calls to filter, score, bind and preempt.

What it shares with the migration controller -- quantities, pod and node objects, profile parsing, the
cluster cache, the client, Events, logging -- is the ``kube`` layer; the extender never imports ``migration``.
Layout (each file says what it owns):

    settings.py          the one typed config object (pydantic-settings, YAML file + DRSCHED_ env vars)
    __main__.py          ``python -m extender``: flags generated from the settings, then uvicorn
    service.py           the FastAPI app: lifespan, routes, refusing bodies that do not decode
    verbs.py             one verb's answer for both entry paths: the call, the one error map, the counting
    listeners.py         the service and loopback debug listeners, mTLS termination, who may call the verbs
    debug_routes.py      /debug/* as an app of its own, served on the debug listener only
    annotation_trust.py  whether a profile annotation is believed against a trusted learned profile
    guard.py             the last resort of both listeners: no bare 500, every HTTP error as {"Error": ...}
    fastwire.py          filter and prioritize as raw ASGI + orjson in front of the app, same wire semantics
    heap.py              glibc thresholds that keep freed request buffers mapped (no page faults per request)
    node_infos.py        Nodes mode: each full v1.Node read once per distinct JSON
    runtime.py           what a request needs, built once: cache, policy, profiles, binder; the verbs' logic
    wire.py              ExtenderArgs in, ExtenderFilterResult / HostPriority / ... out; any key casing on input;
                         the prioritize reply written as bytes (HostPriorities, its per-node prefixes memoised)
    decide.py            filter reasons, scoring and the 0-10 score rule on one snapshot (pure)
    context.py           the cluster a pod is encoded over in names mode: its pool (kube.pool) and its candidates
    row_cache.py         the cluster's encoded rows kept across prioritize requests; only changed nodes re-encoded
    filter_memo.py       filter reasons kept across filter requests; only failing nodes whose inputs moved rewritten
    static_cluster.py    the --static-cluster YAML loader with file:line:field errors
    usage.py             UsageProvider interface, the static and none providers, the stoppable poller
    providers/           the monitor (node agents) and prometheus providers, their parsing and per-node health
    profile_learning.py  the learning rule for workload demand profiles (pure)
    profile_store.py     the learned profile store, its JSON file backend, the learner; the in-memory store
    pod_index.py         agents, pod workloads and node addresses kept from the watch's pod and node events
    node_events.py       node watch events decoded to the members read; heartbeats told apart from changes
    pod_events.py        pod watch events decoded to the members read
    pruned_events.py     a watch line decoded into a schema of the members read; anything else whole
    kube_index.py        the watch that feeds the cache and the PodIndex from the same events
    kube.py              the only module of this package that talks to the Kubernetes API: list+watch, Binding
    recording.py         decision log + outcomes + shadow + exploration + canary, built once, three doors
    decision_log.py      the decision log writer: bounded queue, one thread, rotated segments, the kill -9 bound
    shadow.py            shadow mode: other schedulers' bindings against drsched's choice, once across replicas
    outcomes.py          how a decided pod ended (phase, times, JCT), from the watch's pod events
    selection.py         which pods an option applies to (namespaces, labels, scheduler names; pure)
    telemetry.py         Prometheus metrics and the one "log + Event + counter" fallback helper
    errors.py            the extender's own typed errors (bad settings are ``kube.errors.ConfigError``)

The extender never imports torch, gymnasium or stable-baselines3 (import-linter contract).
"""
