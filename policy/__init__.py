"""drsched's deciding core: features, scorers, numpy inference, the simulator and the RL entry points.

Nothing in this package does I/O against a cluster: it never imports fastapi, kubernetes or httpx, and
importing ``policy.state``, ``policy.features``, ``policy.baselines`` or ``policy.model`` pulls in numpy only
(the extender serves without torch or gymnasium).
"""
