"""drsched's speculative migration controller (issue 7): moves slow, checkpointed jobs to better nodes.

The decision is ``policy.migrate`` (pure, shared with the simulator); this package is the shell around it:
``controller`` (the cycle), ``executor`` (budget, dry-run, the protocol's effects), ``protocol`` (the pure
step function), ``record`` (the one annotation), ``progress`` (pluggable progress sources), ``snapshot``
(the extender's cache code), ``podspec`` (the successor pod), ``telemetry`` (the one reporting helper) and
``kube`` (the only module that talks to the Kubernetes API). ``python -m migration --help``; see README.md.
"""
