"""Calibrating the simulator against real runs: replay measured schedules, compare, fit the contention model.

Why it exists: every policy figure drsched reports comes from its simulator, so how far the simulator's
contention model is from real co-located processes must be measured, and its parameters
(``policy.sim.sharing``) fitted where it is wrong. The real runs are CSV files the lab experiment writes;
this package reads them (``labdata``), replays each run in the simulator with the measured placements and
start times (``replay``) on a model of the measuring machine's host (``host``, replay-only), or one job at a
time against its co-runners' measured windows (``stay``), fits the parameters on some seeds and scores them on
the others (``fit``), and writes the table, the scatter plot and the calibration file (``output``). Pure: no
Kubernetes, no HTTP.

    python -m policy.calibrate replay --results DIR        # measured vs predicted under the active set
    python -m policy.calibrate fit --results DIR --write   # fit, score on held-out seeds, record the fit
"""
