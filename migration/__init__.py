"""drsched's speculative migration controller: moves slow, checkpointed jobs to better nodes.

The decision is ``policy.migrate`` (pure, shared with the simulator); this package is the shell around it.
It reads the cluster through the shared ``kube`` layer (the same objects, profiles and cache the extender
uses) and never imports the extender. Layout (each file says what it owns):

    settings.py     the one typed config object (pydantic-settings, DRSCHED_MIGRATION_* env vars)
    __main__.py     ``python -m migration``: flags generated from the settings, exit 2 on bad options
    app.py          wiring: settings -> client, telemetry, scorer, executor, controller, leader election
    controller.py   the cycle: fetch once, advance in-flight windows, decide on one snapshot, hand intents over
    snapshot.py     one cycle's ClusterSnapshot and PodViews, built with ``kube.cache`` (pure)
    progress.py     pluggable progress sources (annotation, HTTP) and the counted skip reasons
    executor.py     budget, dry run and the protocol's effects on the cluster
    protocol.py     the pure step function of the write-ahead migration protocol
    record.py       the one ``drsched.io/migration`` record (immutable; parse / store)
    podspec.py      the successor pod built from the running one
    telemetry.py    metrics and the one reporting helper (log line + Event + counter)
    errors.py       the controller's own typed errors (the API's are ``kube.errors``)
    kube.py         the only module of this package that talks to the Kubernetes API

``python -m migration --help``; see README.md.
"""
