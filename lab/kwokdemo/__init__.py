"""The KWOK demo (``python -m lab demo --kwok``): drsched next to the default-scheduler on KWOK nodes, modelled load.

Why it exists: ``make demo`` needs real nodes (root, cgroups); on a machine without them this demo still shows
drsched deciding, on a real control plane with KWOK nodes where no pod runs and every load figure comes from
a usage model, and it says so. ``lab.demo`` runs it in-process as ``demo.main(argv)``.

    workload.py  nodes, their background load, the seeded pods, each node's load at a moment (pure)
    report.py    progress lines and the report tables (pure text)
    watch.py     the demo's pods read back from the API server each tick, and the usage file they imply
    demo.py      the processes (control plane, extender, second scheduler), the steps, flags and ``main``

Importing this package starts nothing and imports no cluster code.
"""
