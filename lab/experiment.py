"""An experiment: one real-node cluster, drsched deployed once, every seed's schedule run under every arm.

Why it exists: the order of work matters for fairness and cost. Arms are interleaved seed by seed (so a
slow spell of the shared machine hits every arm, not one), ordered to need one extender rollout per extender
setting (``lab.arms.run_order``) or, under a protocol (``Plan.order_key``), in a seeded random order per seed
(``lab.arms.random_order``, written to order.csv before the first arm runs), and every arm's rows are appended
to the output directory as soon as it ends; an arm already in jobs.csv is skipped, so an interrupted or
extended experiment resumes where it stopped, in the same order. A protocol run keeps a copy of its protocol
as ``protocol.yaml`` and refuses to continue a directory started under a different one.

Arms (``lab.arms``): ``default`` (the stock default-scheduler), ``model`` (drsched, shipped model),
``demand-aware`` (drsched with that heuristic), ``migration`` (drsched model + the migration controller, which
is scaled to 0 in every other arm), each drsched arm optionally with ``@<hot-filter mode>``. At the end of a
migration arm the controller's counters (why each job-cycle was skipped, verdicts, steps, outcomes) go to
``controller.csv`` and its log (every skip, at DEBUG) to ``controller-<arm>-<variant>-<seed>.log`` (``@``
written ``+``), so a run says why jobs did or did not move.

World: the plan's world (``policy.labworld.WORLDS``) gives the cluster's nodes and links and the schedules' mix;
``world.json`` records it and a directory is never resumed in another. Where a schedule has pulling net jobs, the
data source (``lab.source``) runs on the host for the whole run, solo runs included.

Isolation: a cluster this module starts is isolated (``harness.isolation``: the system on its own CPUs, the
nodes' quotas scaled to the rest) wherever ``Isolation.for_this_machine()`` fits the machine, unless
``Plan.isolate`` is off. The jobs follow the shapes the cluster really got (``lab.schedule.make_schedule``).
``isolation.json`` records whether the run was isolated, why not, the CPU sets and the node quotas; a
directory is only resumed with the same (nodes.csv, isolation.json). ``placement.json`` says where every
process and pod ran after drsched was deployed, and ``placement/`` at the end of each arm, where the
placement gate is checked; the scored gate reads the extender's decision log after each drsched arm.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness.cluster import COLD_BUILD, ensure_binaries
from harness.deploy import IMAGES, find_images
from harness.images import ensure_images
from harness.isolation import SYSTEM_CGROUP, Isolation, IsolationUnavailable, parse_cpu_list
from harness.realcluster import RealCluster, ensure_node_binaries
from lab import arms, counters, report, solo
from lab.errors import RunError
from lab.gates import (
    flagged_runs,
    gate_rows,
    host_gate,
    off_policy,
    system_pods_on_job_nodes,
    system_rows,
)
from lab.kube import DECISIONS_KEPT, JOBS_NS, Lab
from lab.plan import Plan
from lab.records import controller_rows, counter_rows, event_rows, job_rows, node_rows, pod_counter_rows, usage_rows
from lab.runner import run_arm
from lab.schedule import Job, make_schedule, schedule_csv, uses_source
from lab.source import start_source, stop_source
from lab.tenants import TENANT_FILE, TENANT_STARTED, demand_rows, lab_tenants
from policy.labworld import DEFAULT_WORLD, WORLDS, World, node_scale

log = logging.getLogger(__name__)

ISOLATION_FILE = "isolation.json"
"""The run's record of its host isolation: isolated or not (and why not), CPU sets, node quotas."""
PLACEMENT_FILE = "placement.json"
PLACEMENT_DIR = "placement"


def choose_isolation(isolate: bool) -> tuple[Isolation | None, str]:
    """The isolation a lab cluster starts with, and why there is none ("" when there is one)."""
    if not isolate:
        return None, "turned off (--no-isolate, or the protocol's isolate: false)"
    try:
        return Isolation.for_this_machine(), ""
    except IsolationUnavailable as exc:
        return None, str(exc)


def isolation_record(cluster: RealCluster, why_not: str) -> dict:
    """What ``isolation.json`` holds for a run on ``cluster``."""
    iso = cluster.isolation
    return {"isolated": iso is not None, "why_not": why_not or None,
            "isolation": iso.describe() if iso is not None else None,
            "node_quotas_m": {s.name: s.cpu_millis for s in cluster.shapes},
            "node_scale": node_scale(cluster.shapes)}


def keep_isolation(out: Path, record: dict) -> None:
    """Write ``isolation.json``; a directory whose earlier arms ran isolated differently (or not) is refused,
    so one results directory never mixes node sizes or isolations."""
    path = out / ISOLATION_FILE
    if path.exists():
        try:
            before = json.loads(path.read_text())
        except ValueError:
            raise RunError(f"{path}: not JSON; it records how the arms here ran, so it is not replaced") from None
        for key in ("isolated", "node_quotas_m"):
            if before.get(key) != record[key]:
                raise RunError(f"{out} ran with {key}={before.get(key)}, this cluster has {record[key]}: use a new "
                               "output directory (or the same isolation: --no-isolate or not)")
    path.write_text(json.dumps(record, indent=1) + "\n")  # node quotas in the nodes' order


def keep_world(out: Path, world: World) -> None:
    """Write ``world.json``; a directory whose arms ran in another world is refused, so one results directory never
    mixes worlds (a directory with runs and no world.json ran before worlds existed: in ``drs``, the only one)."""
    path = out / report.WORLD_FILE
    before = DEFAULT_WORLD if (out / "nodes.csv").exists() else None
    if path.exists():
        try:
            before = json.loads(path.read_text())["world"]
        except (ValueError, KeyError, TypeError):
            raise RunError(f"{path}: not a world record; it says which world the arms here ran in, so it is not "
                           "replaced") from None
    if before is not None and before != world.name:
        raise RunError(f"{out} ran in world {before!r}, this run is in {world.name!r}: use a new output directory")
    path.write_text(json.dumps({"world": world.name, "note": world.note,
                                "links_mbit": {s.name: s.net_mbit for s in world.nodes}}, indent=1) + "\n")


def check_links(cluster: RealCluster, world: World) -> None:
    """A cluster given to the lab must have the world's nodes and links (its quotas may be scaled: isolation)."""
    have = {s.name: s.net_mbit for s in cluster.shapes}
    want = {s.name: s.net_mbit for s in world.nodes}
    if have != want:
        raise RunError(f"the cluster's nodes and links {have} are not world {world.name!r}'s {want}")


def _images(progress: Callable[[str], None]) -> tuple[str, list, str]:
    ensure_images(progress=progress)
    found = find_images(*IMAGES, "workloads")
    workloads = found["workloads"]
    # The build key hashes the image's inputs: a rebuild of the same inputs (another checkout's build in
    # between) keeps it, so the solo cache survives; the image id would not.
    digest = workloads.key or workloads.image_id or workloads.tag
    return workloads.tag, [image.archive for image in found.values()], digest


def done_runs(out: Path) -> set[tuple[int, str, str]]:
    return {(int(r["seed"]), r["arm"], r["variant"]) for r in report.read_rows(out / "jobs.csv")}


def keep_protocol(out: Path, protocol: Path, registration: str = "") -> None:
    """Copy ``protocol`` into ``out`` as protocol.yaml and log this start and its registration in
    protocol-runs.txt; a directory started under another protocol is refused (that one governs its runs)."""
    kept, text = out / report.PROTOCOL_FILE, protocol.read_bytes()
    if kept.exists() and kept.read_bytes() != text:
        raise RunError(f"{out} was started under another protocol ({kept} differs from {protocol}): use a new "
                       "output directory, or the protocol the directory was started with")
    kept.write_bytes(text)
    with (out / report.PROTOCOL_RUNS_FILE).open("a") as fh:
        fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} started {protocol}, registered at "
                 f"commit {registration or 'unknown'}\n")


def record_order(out: Path, seeds: list[int], arm_list: list[str], key: str) -> dict[int, list[str]]:
    """Each seed's arms in their random order, appended to order.csv for seeds it does not hold yet."""
    orders = {seed: arms.random_order(arm_list, seed=seed, key=key) for seed in seeds}
    have = {int(r["seed"]) for r in report.read_rows(out / "order.csv")}
    report.append_rows(out, "order.csv", [{"seed": seed, "position": i, "arm": arm, "order_key": key}
                                          for seed in seeds if seed not in have
                                          for i, arm in enumerate(orders[seed], start=1)])
    return orders


def run(plan: Plan, progress: Callable[[str], None], *, cluster: RealCluster | None = None) -> Path:
    """Run every (seed, arm) not yet in ``plan.out``. Starts its own real-node cluster unless ``cluster`` is
    given (a running one: drsched is deployed on it and removed again, the cluster is left running)."""
    plan.out.mkdir(parents=True, exist_ok=True)
    world = WORLDS[plan.world]
    if plan.protocol is not None:
        keep_protocol(plan.out, plan.protocol, plan.registration)
    keep_world(plan.out, world)
    orders = None if plan.order_key is None else record_order(plan.out, plan.seeds, plan.arms, plan.order_key)
    for key in flagged_runs(report.read_rows(plan.out / "gates.csv")):
        if key[0] in plan.seeds and key[1] in plan.arms and key[2] == plan.variant:
            moved = report.retire_run(plan.out, key)
            progress(f"seed {key[0]} arm {key[1]}: flagged by a gate; its {moved} rows moved to "
                     f"{plan.out / report.RETIRED_DIR}, rerunning it")
    done = done_runs(plan.out)
    todo = [(s, a) for s in plan.seeds for a in plan.arms if (s, a, plan.variant) not in done]
    if not todo:
        progress(f"every arm is already in {plan.out / 'jobs.csv'}; nothing to run")
        return plan.out
    image, archives, digest = _images(progress)
    pinned = archives[0].parent / f".lab-{os.getpid()}"
    archives = _pin(archives, pinned)
    own = cluster is None
    why_not = ""
    if cluster is None:
        isolation, why_not = choose_isolation(plan.isolate)
        progress("starting the real-node cluster (waits for the machine's real-node lock if another cluster runs); "
                 + (f"isolated: system CPUs {isolation.system_cpus}, node CPUs {isolation.node_cpus}"
                    if isolation is not None else f"NOT isolated: {why_not}"))
        workdir = plan.workdir or Path(tempfile.mkdtemp(prefix="drsched-lab-"))
        progress(f"checking the control-plane and node binaries ({COLD_BUILD}; a line every 30 s)")
        cluster = RealCluster(workdir=workdir, binaries=ensure_binaries(progress=progress),
                              node_binaries=ensure_node_binaries(progress=progress), shapes=world.nodes,
                              isolation=isolation)
    else:
        check_links(cluster, world)
        if cluster.isolation is None:
            why_not = "the cluster was given to the lab without an isolation"
    lab: Lab | None = None
    try:
        keep_isolation(plan.out, isolation_record(cluster, why_not))
        for seed in plan.seeds:  # the jobs follow the nodes this cluster really has (scaled under isolation)
            plan.schedules[seed] = make_schedule(seed=seed, jobs=plan.jobs, window_s=plan.window_s,
                                                 regime=plan.regime, variant=plan.variant, scale=plan.scale,
                                                 shape=plan.shape, world=world, shapes=cluster.shapes)
            shape = "" if plan.shape == "core" else f"-{plan.shape}"
            where = "" if world.name == DEFAULT_WORLD else f"{world.name}-"  # drs: the names it always had
            (plan.out / f"schedule-{where}{plan.regime}{shape}-{plan.variant}-{seed}.csv").write_text(
                schedule_csv(plan.schedules[seed]))
            plan.tenant_draws[seed] = lab_tenants(seed, cluster.shapes, plan.tenants)
        keep_tenants(plan.out, plan.tenant_draws)
        started = time.monotonic()
        if own:
            cluster.start()
        lab = Lab(cluster)
        all_jobs = [j for s in plan.seeds for j in plan.schedules[s]]
        if uses_source(all_jobs):  # before the solo runs: they pull too
            lab.source_port = start_source(cluster)
            progress(f"world {world.name}: the data source listens on {cluster.api_host}:{lab.source_port} (host, "
                     "system CPUs under isolation); pulling net jobs reach it through their node's link")
        progress(f"cluster up in {time.monotonic() - started:.0f} s; deploying drsched (kubectl apply -k)")
        lab.deploy(archives)
        progress(f"drsched deployed; {time.monotonic() - started:.0f} s since start")
        if not (plan.out / "nodes.csv").exists():
            report.append_rows(plan.out, "nodes.csv", node_rows(cluster.shapes))
        misplaced = cluster.write_placement(plan.out / PLACEMENT_FILE)
        if misplaced:
            progress(f"placement after deploy: {len(misplaced)} processes off their CPU set ({misplaced[0]}; "
                     f"{plan.out / PLACEMENT_FILE}); every arm's placement gate checks again")
        # Isolated, the nodes' quotas fit their CPU set, so measuring one job per node at once costs no node
        # another's CPU (memory bandwidth, caches and the disk are still shared: harness/README.md).
        solos = solo.measure(lab, all_jobs, shapes=cluster.shapes, image=image, image_digest=digest,
                             progress=progress, runs=plan.solo_runs,
                             parallel=len(cluster.shapes) if cluster.isolation is not None else 1)
        types = {s.name: s.node_type for s in cluster.shapes}
        largest = max(cluster.shapes, key=lambda s: s.cpu_millis).node_type
        for seed in plan.seeds:
            left = [a for s, a in todo if s == seed]
            order = (arms.run_order(left, (lab.policy, lab.hot_filter), lab.migration_on) if orders is None
                     else [a for a in orders[seed] if a in left])
            for arm in order:
                _one(plan, lab, cluster, seed=seed, arm=arm, image=image, solos=solos, types=types, largest=largest,
                     progress=progress)
                report.summarise(plan.out)
    finally:
        if lab is not None and lab.source_port is not None:
            stop_source(cluster)
        if own:
            progress("tearing the cluster down")
            cluster.close()  # the extender stops first: its log is flushed
            if lab is not None:
                lab.keep_decision_log(plan.out / DECISIONS_KEPT)
                lab.remove_decision_log()
        elif lab is not None:
            lab.undeploy(keep_log=plan.out / DECISIONS_KEPT)
        shutil.rmtree(pinned, ignore_errors=True)
    return plan.out


def keep_tenants(out: Path, draws: dict) -> None:
    """Append each seed's tenants (``lab.tenants``) to tenants.csv, for the seeds it does not hold yet."""
    have = {int(r["seed"]) for r in report.read_rows(out / TENANT_FILE)}
    report.append_rows(out, TENANT_FILE, [t.row(seed) for seed, tenants in draws.items() if seed not in have
                                          for t in tenants])


def _pin(archives: list[Path], into: Path) -> list[Path]:
    """Hard links to the image archives built for this run. The image cache is shared: another checkout may
    rebuild an image while this run waits for the real-node lock, and the builder replaces an archive by
    rename, so a link keeps this run's bytes (a copy where links cannot be made)."""
    into.mkdir(parents=True, exist_ok=True)
    out = []
    for archive in archives:
        pinned = into / archive.name
        pinned.unlink(missing_ok=True)
        try:
            os.link(archive, pinned)
        except OSError:
            shutil.copy2(archive, pinned)
        out.append(pinned)
    return out


def _one(plan: Plan, lab: Lab, cluster: RealCluster, *, seed: int, arm: str, image: str, solos: dict,
         types: dict[str, str], largest: str, progress: Callable[[str], None]) -> None:
    setting = arms.parse(arm)
    scheduler, migration = setting.scheduler, setting.migration
    lab.set_arm(policy=setting.policy, hot_filter=setting.hot_filter, migration=migration,
                controller=setting.controller)
    jobs = plan.schedules[seed]
    run_id = f"{arm[:3]}-{plan.variant[:2]}{seed}-{int(time.time()) % 100000}"
    report.append_rows(plan.out, "runs.csv", [{"seed": seed, "arm": arm, "variant": plan.variant, "run_id": run_id}])
    progress(f"seed {seed} arm {arm} variant {plan.variant} regime {plan.regime}: {len(jobs)} jobs")
    actions = []
    fault = plan.straggler(seed, cluster.shapes) if plan.regime == "straggler" else None
    if fault is not None:
        node = cluster.node(fault.node)

        def cut() -> tuple[str, str, str]:
            node.set_cpu_quota(fault.quota_m)
            return node.name, "cpu_quota_cut", f"{node.shape.cpu_millis}->{fault.quota_m}"

        def restore() -> tuple[str, str, str]:
            node.set_cpu_quota(node.shape.cpu_millis)
            return node.name, "cpu_quota_restored", f"{fault.quota_m}->{node.shape.cpu_millis}"

        actions.append((fault.at_s, cut))
        if fault.restore_s is not None:
            actions.append((fault.restore_s, restore))
    started = time.monotonic()
    tenants = plan.tenant_draws.get(seed, [])
    try:
        tenants_at = lab.start_tenants(tenants, run_id=run_id, image=image)  # placed first: the jobs arrive on top
        if tenants:
            progress(f"  tenants running on {', '.join(t.node_name for t in tenants)}")
        result = run_arm(lab, jobs, run_id=run_id, image=image, scheduler=scheduler,
                         expected_s=lambda j: solos[(j.template, j.units, largest)].seconds,
                         timeout_s=plan.arm_timeout_s, actions=actions, progress=progress,
                         counters=counters.sampler({s.name: cluster.node(s.name).cgroup_root
                                                    for s in cluster.shapes}),
                         system=_system_sampler(cluster),
                         pods=counters.pod_sampler({s.name: cluster.node(s.name).cgroup_root for s in cluster.shapes}))
    except BaseException:  # interrupted mid-arm (Ctrl-C): its pods go with the cluster, its host state goes here
        lab.remove_run_state(run_id)
        raise
    finally:
        if tenants:
            lab.delete_tenants(run_id)
        if fault is not None:
            cluster.node(fault.node).set_cpu_quota(cluster.node(fault.node).shape.cpu_millis)
        if migration:  # the taint baseline's marks end with its arm
            lab.clear_degraded_taints()
    started_s = [round(at - result.t0, 2) for at in tenants_at]  # each tenant's cycle's time 0, in the arm's time
    result.events.extend((at, t.node_name, TENANT_STARTED, t.cycle()) for t, at in zip(tenants, started_s,
                                                                                      strict=True))

    def solo_of(job: Job, ntype: str) -> tuple[float, float] | None:
        found = solos.get((job.template, job.units, ntype))
        return None if found is None else (found.seconds, found.cpu_m)

    rows = job_rows(result, jobs, seed=seed, arm=arm, variant=plan.variant, node_type=lambda n: types.get(n, ""),
                    solo=solo_of, node_types=sorted(set(types.values())))
    report.append_rows(plan.out, "jobs.csv", rows)
    report.append_rows(plan.out, "usage.csv", usage_rows(result, seed=seed, arm=arm, variant=plan.variant))
    report.append_rows(plan.out, "events.csv", event_rows(result, seed=seed, arm=arm))
    if migration:
        samples, logs = lab.controller_report()
        report.append_rows(plan.out, "controller.csv", controller_rows(samples, seed=seed, arm=arm,
                                                                       variant=plan.variant))
        (plan.out / f"controller-{arms.file_part(arm)}-{plan.variant}-{seed}.log").write_text(logs)
    report.append_rows(plan.out, "host.csv", [{"seed": seed, "arm": arm, "variant": plan.variant, "t_s": t,
                                               "load1": round(v, 2)} for t, v in result.load])
    if result.system:
        report.append_rows(plan.out, "system.csv", system_rows(result.system, seed=seed, arm=arm,
                                                               variant=plan.variant))
    if result.pod_counters:
        report.append_rows(plan.out, "pod-counters.csv", pod_counter_rows(result, seed=seed, arm=arm,
                                                                          variant=plan.variant))
    host = None
    if result.counters:  # no counters (no cgroup files): the gate is not checked, and no row says it passed
        report.append_rows(plan.out, "counters.csv", counter_rows(result, seed=seed, arm=arm, variant=plan.variant))
        # what the tenants want counts as demand too: a tenant's node is busy when its jobs and its tenant want it
        wanted = demand_rows(list(zip(tenants, started_s, strict=True)), until_s=max(c.t_s for c in result.counters))
        host = host_gate(result.counters, result.system, rows + wanted,
                         quota_m={s.name: s.cpu_millis for s in cluster.shapes}, max_share=plan.interference_max)
    missing = None
    if scheduler is not None and plan.require_scored:  # a drsched arm: each of its pods scored by the extender
        scored = lab.scored_uids()
        missing = sorted(p.name for p in result.pods.values() if p.uid not in scored)
        served = lab.served_versions()
        other = off_policy({p.name: served[p.uid] for p in result.pods.values() if p.uid in served})
        missing += [f"{pod} (scored by {versions})" for pod, versions in other.items()]
    misplaced = None
    if cluster.isolation is not None:  # without one, system pods share the job nodes by design: nothing to check
        where = plan.out / PLACEMENT_DIR / f"{arms.file_part(arm)}-{plan.variant}-{seed}.json"
        misplaced = cluster.write_placement(where) + system_pods_on_job_nodes(
            lab.placed_pods(), job_nodes=[n.name for n in cluster.nodes], jobs_namespace=JOBS_NS)
    gates = gate_rows(seed=seed, arm=arm, variant=plan.variant, host=host, missing=missing,
                      pods=len(result.pods), misplaced=misplaced)
    if gates:
        report.append_rows(plan.out, "gates.csv", gates)
    for gate in gates:
        if gate["flagged"]:
            progress(f"seed {seed} arm {arm}: FLAGGED {gate['gate']}: {gate['detail']}; it is left out of the "
                     "summary and rerun by the next `lab run`")
    failed = [r["job"] for r in rows if r["exit_code"] != 0]
    progress(f"seed {seed} arm {arm}: done in {time.monotonic() - started:.0f} s"
             + (" (TIMED OUT)" if result.timed_out else "") + (f"; not exit 0: {failed}" if failed else ""))
    lab.delete_run(run_id)


def _system_sampler(cluster: RealCluster):
    """The system CPU set's recorder for ``cluster``: the system cgroups (control plane, each node's runtime,
    the system node) and every CPU, labelled with its CPU set under isolation."""
    iso = cluster.isolation
    cgroups = [*([SYSTEM_CGROUP] if iso is not None else []), *(n.runtime_cgroup for n in cluster.all_nodes()),
               *([cluster.system_node.cgroup_root] if cluster.system_node is not None else [])]
    roles = {} if iso is None else {**{c: "system" for c in parse_cpu_list(iso.system_cpus)},
                                    **{c: "node" for c in parse_cpu_list(iso.node_cpus)}}
    return counters.system_sampler(cgroups, cpu_roles=roles)
