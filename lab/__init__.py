"""The real-node experiment: the same seeded schedule of real jobs under several schedulers, measured.

    schedule.py  the seeded job schedule and its CSV file (pure); the nodes, job templates, request variants
                 and CSV columns it draws on are the lab's world, ``policy.labworld``
    solo.py      each job template's runtime alone on each node type, measured once and cached
    stats.py     per-run metrics, ratios to the default scheduler, intervals over seeds (pure)
    report.py    jobs.csv / nodes.csv / events.csv / usage.csv, summary.md and plots
    kube.py      the only module that talks to the cluster: deploy drsched, switch arms, submit, observe
    runner.py    one arm on one schedule: submit on time, record every pod, sample usage
    cli.py       ``python -m lab run | report | schedule | demo``
"""
