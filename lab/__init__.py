"""The real-node experiment: the same seeded schedule of real jobs under several schedulers, measured.

    schedule.py  the seeded job schedule and its CSV file (pure), drawn in one world (nodes + mix); the worlds,
                 job templates, request variants and CSV columns are ``policy.labworld``
    arms.py      arm names (base, @hot-filter, #replicate), report order, run order (pure)
    solo.py      each job template's runtime alone on each node type, the median of N runs, cached
    stats.py     per-run metrics, ratios to the default scheduler, intervals over seeds (pure)
    protocol.py  the pre-registered protocol file (lab/protocols/*.yaml) and its parser (pure)
    endpoint.py  the primary endpoint: a paired t-interval on per-seed log ratios, claims worded by it (pure)
    power.py     seeds for 80 % power at a 15 % effect from an A/A pilot's sd (pure)
    gates.py     host-interference, scored-pod and placement gates, the system CPU set's use, parsers for
                 cpu.stat / cpuacct.usage / /proc/stat (pure)
    counters.py  reads each node's cgroup cpu counters for the gate, and the system cgroups' and CPUs' use
    verdict.py   the report's pre-registered section: a run judged against its protocol (pure)
    report.py    jobs.csv / nodes.csv / events.csv / usage.csv / gates.csv ..., summary.md and plots
    kube.py      the only module that talks to the cluster: deploy drsched, switch arms, submit, observe, and
                 read the extender's decision log (the scored gate)
    source.py    the data source pulling net jobs read from (multi-resource world): started on the host, and
                 the pod variables that tell a job where it is
    tenants.py   the tenants scenario's long-running pods on the cluster's nodes: argv and tenants.csv (pure)
    runner.py    one arm on one schedule: submit on time, record every pod, sample usage
    plan.py      what one run runs (``Plan``) and its defaults, as data
    experiment.py  one cluster (isolated by default), every seed x arm, the gates after each arm
    compare.py   a rerun against a reference run: same schedules, placements, ratios inside the intervals
    demo.py      ``lab demo``: a short measured default vs drsched run, or the KWOK demo (``--kwok``)
    kwokdemo/    the KWOK demo: drsched next to the default-scheduler on KWOK nodes, modelled load
    cli.py       ``python -m lab run | report | compare | schedule | demo``
"""
