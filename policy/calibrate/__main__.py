"""``python -m policy.calibrate``: replay measured runs in the simulator, or fit its contention model.

Why it exists: one command per question — "how wrong is the simulator on these runs" (``replay``), "which
parameters make it least wrong, judged on seeds they were not fitted on" (``fit``), and the same from a
cluster's own decision log, judged on later pods (``log``; ``policy.calibrate.fromlog``). Bad input (a
malformed CSV or log row, an unknown parameter set, seeds not in the data) ends with exit 2 and one line
naming what was wrong.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from policy.calibrate.fit import GRID, Errors, fit, grid, predict
from policy.calibrate.fromlog import FIT_FRACTION, fit_from_log, samples, score, split, workloads
from policy.calibrate.host import HELD_MARGIN_M
from policy.calibrate.labdata import LabDataError, read_results
from policy.calibrate.output import pct, record_fit, record_host, write
from policy.calibrate.replay import DISK_MBPS, Machine
from policy.cli import add_arguments, from_namespace, option
from policy.decisionlog import LogError, read_log
from policy.paths import POLICY_RESULTS
from policy.sim import calibration
from policy.sim.calibration import DEFAULT_PATH as CALIBRATION_FILE
from policy.sim.errors import ConfigError
from policy.sim.sharing import ORIGINAL, ContentionParams

log = logging.getLogger("policy.calibrate")


@dataclass(kw_only=True)
class CalibrateArgs:
    """What both subcommands read; each field is the command-line flag of the same name."""

    results: Path
    """lab results directory with jobs.csv, nodes.csv and (optional) events.csv"""
    out: Path = POLICY_RESULTS / "calibration"
    """where calibration.md, predictions.csv and scatter.png go"""
    calibration: Path = CALIBRATION_FILE
    """the calibration file to read (and, with fit --write, to update)"""
    disk_mbps: float = DISK_MBPS
    """per-node disk bandwidth, MB/s"""
    host_cpu_m: str = option("none", fill={"margin": f"{HELD_MARGIN_M:g}"})
    """CPU the measuring host leaves to all nodes together, millicores, 'none' (unlimited), 'usage' (per sample,
    what the nodes used together, from usage.csv), 'usage:FLOOR' (never less than FLOOR), 'held[:MARGIN]' (what
    the nodes used together, only in the samples where the jobs running through it wanted MARGIN millicores more
    than that, default {margin}; else unlimited) or 'node-held[:MARGIN]' (the same per node), or the name of a
    host the calibration file records (fit --write-host); fit takes a comma-separated list and picks jointly"""
    host_speed: str = "none"
    """how much work a node CPU-second does against the solo runs: 'none' (the same throughout) or 'sys:K' (1 − K·b
    while the system CPUs are b busy, from system.csv: policy.calibrate.host.system_speed); fit takes a
    comma-separated list and picks jointly with --host-cpu-m"""
    cpu_bound: str = option("", metavar="KINDS")
    """comma-separated job kinds that would use a whole core if the host let them (their solo run is kept as CPU
    work), e.g. cpu,train"""
    ignore_links: bool = False
    """node links are no constraint (the jobs' traffic stays in the pod, as the lab's net jobs)"""
    no_plot: bool = False
    """skip scatter.png (no matplotlib needed)"""


@dataclass(kw_only=True)
class ReplayArgs(CalibrateArgs):
    """``replay``: measured vs predicted run slowdown under one parameter set."""

    set: str | None = None
    """parameter sets of the calibration file, comma-separated (unset: the active one)"""


@dataclass(kw_only=True)
class FitArgs(CalibrateArgs):
    """``fit``: grid-search the contention parameters on some seeds, score them on the rest."""

    fit_seeds: str | None = None
    """seeds to fit on, e.g. 1,2,5 or 1-12 (unset: the first half of the data's seeds)"""
    grid: list[str] = option(default_factory=list, action="append", metavar="NAME=V1,V2")
    """replace one dimension of the search grid, e.g. interference=0 (repeatable)"""
    name: str = "fitted"
    """name of the parameter set --write records"""
    write: bool = False
    """record the fitted set and its errors in the calibration file (its active set is kept)"""
    write_host: str | None = option(None, metavar="NAME")
    """record the picked --host-cpu-m value and its errors as host NAME in the calibration file's 'hosts'
    (replay-only: the simulator never reads them); --host-cpu-m NAME then means it"""


@dataclass(kw_only=True)
class LogArgs:
    """``log``: fit the contention parameters from a decision log's outcomes, score them on its later pods."""

    log: Path = option(metavar="DIR")
    """the decision log directory (the extender's decision_log_dir)"""
    fit_fraction: float = FIT_FRACTION
    """the share of the usable pods, earliest first, that the fit sees; the later ones are held out"""
    grid: list[str] = option(default_factory=list, action="append", metavar="NAME=V1,V2")
    """replace one dimension of the search grid, e.g. interference=0 (repeatable)"""
    calibration: Path = CALIBRATION_FILE
    """the calibration file to read (its active set is reported beside the fit) and, with --write, to update"""
    daemon_pods: int = 0
    """pods on every node that are no job (DaemonSets: 1 in the lab, its monitor), left out of the pods a node's
    usage is split among, for rows that did not count them (decision log schema 2)"""
    name: str = "from-log"
    """name of the parameter set --write records"""
    write: bool = False
    """record the fitted set and its errors in the calibration file (its active set is kept)"""
    report: Path | None = None
    """write the JSON report here instead of standard output"""
    progress: bool = True
    """a progress bar over the parameter sets, on standard error"""


def parse_args(argv: Sequence[str]) -> ReplayArgs | FitArgs | LogArgs:
    p = argparse.ArgumentParser(prog="python -m policy.calibrate", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, cls in (("replay", ReplayArgs), ("fit", FitArgs), ("log", LogArgs)):
        text = cls.__doc__.split(": ", 1)[1].rstrip(".")
        add_arguments(sub.add_parser(name, help=text, description=text), cls)
    return from_namespace(p.parse_args(argv))


def _range(part: str) -> range:
    lo, _, hi = part.strip().partition("-")
    return range(int(lo), int(hi or lo) + 1)


def _seeds(text: str | None, known: list[int]) -> tuple[list[int], list[int]]:
    if text is None:
        fit_seeds = known[: max(1, len(known) // 2)]
    else:
        try:
            fit_seeds = sorted({s for part in text.split(",") if part.strip() for s in _range(part)})
        except ValueError:
            raise ConfigError("--fit-seeds", f"must be comma-separated integers or ranges a-b, got {text!r}") from None
        if not fit_seeds or not set(fit_seeds) <= set(known):
            raise ConfigError("--fit-seeds", f"{text!r}: need seeds of the data {known}")
    return fit_seeds, [s for s in known if s not in fit_seeds]


def _grid(items: list[str]) -> dict[str, tuple]:
    grid = dict(GRID)
    for item in items:
        name, _, values = item.partition("=")
        if name not in ContentionParams.__slots__ or not values:
            known = ", ".join(ContentionParams.__slots__)
            raise ConfigError("--grid", f"{item!r}: need NAME=V1,V2 with NAME one of {known}")
        text = [v.strip() for v in values.split(",")]
        try:
            grid[name] = tuple(text if name.endswith("_share") else map(float, text))
        except ValueError:
            raise ConfigError("--grid", f"{item!r}: values must be numbers") from None
    return grid


def _hosts(text: str, recorded: dict | None = None) -> list[dict]:
    """``Machine`` fields per value of ``--host-cpu-m``: ``none``, ``800``, ``usage``, ``usage:600``, ``held``,
    ``held:50``, ``node-held``, ``node-held:50``, or a name of ``recorded`` (the calibration file's ``hosts``)."""
    hosts = []
    recorded = recorded or {}
    for h in (h.strip() for h in text.split(",") if h.strip()):
        h = str(recorded[h]["host_cpu_m"]) if isinstance(recorded.get(h), dict) else h
        kind, _, value = h.partition(":")
        try:
            if kind in ("held", "node-held"):
                margin = float(value) if value else HELD_MARGIN_M
                if not margin >= 0:
                    raise ValueError
                hosts.append({"host_held": "node" if kind == "node-held" else "total", "held_margin_m": margin})
                continue
            usage = kind == "usage"
            number = value if usage else h
            m = None if number in ("", "none") else float(number)
        except ValueError:
            raise ConfigError("--host-cpu-m", f"{h!r}: need millicores, 'none', 'usage', 'usage:FLOOR', "
                                              "'held', 'held:MARGIN', 'node-held' or 'node-held:MARGIN'") from None
        if m is not None and not m > 0:
            raise ConfigError("--host-cpu-m", f"need values > 0 or 'none', got {text!r}")
        hosts.append({"host_from_usage": usage, "host_cpu_m": m})
    if not hosts:
        raise ConfigError("--host-cpu-m", f"need values > 0 or 'none', got {text!r}")
    return hosts


def _speeds(text: str) -> list[float]:
    """K per value of ``--host-speed``: ``none`` (0) or ``sys:K`` with K in [0, 1)."""
    out = []
    for h in (h.strip() for h in text.split(",") if h.strip()):
        kind, _, value = h.partition(":")
        try:
            k = 0.0 if h == "none" else float(value) if kind == "sys" else math.nan
        except ValueError:
            k = math.nan
        if not 0 <= k < 1:
            raise ConfigError("--host-speed", f"{h!r}: need 'none' or 'sys:K' with K in [0, 1)")
        out.append(k)
    if not out:
        raise ConfigError("--host-speed", f"need 'none' or 'sys:K', got {text!r}")
    return out


_HOST_NAME = re.compile(r"[a-z][a-z0-9-]*")
_RESERVED = ("none", "usage", "held", "node-held")


def _host_name(name: str) -> bool:
    """Whether ``name`` can name a recorded host: lower-case words, never a ``--host-cpu-m`` value itself."""
    return bool(_HOST_NAME.fullmatch(name)) and name not in _RESERVED


def _summary(errs: Errors) -> dict:
    return {"jobs": errs.n, "median": round(errs.median, 4), "p90": round(errs.p90, 4)}


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if isinstance(args, LogArgs):
        return from_log(args)
    try:
        doc = calibration.read(args.calibration)
        bound = tuple(k.strip() for k in args.cpu_bound.split(",") if k.strip())
        machines = [Machine(disk_mbps=args.disk_mbps, links=not args.ignore_links, cpu_bound=bound,
                            system_slowdown=k, **h)
                    for h in _hosts(args.host_cpu_m, doc.get("hosts")) for k in _speeds(args.host_speed)]
        machine = machines[0]
        runs = read_results(args.results)
        if any(m.system_slowdown for m in machines):
            sampled = {r for r, ticks in runs.system_ticks.items() if len(ticks) > 1}
            missing = sorted({j.run for j in runs.jobs} - sampled)
            if missing:
                raise ConfigError("--host-speed", f"{args.results}/system.csv has no system CPU samples for runs "
                                                  f"{missing[:3]}{' ...' if len(missing) > 3 else ''}")
        if isinstance(args, ReplayArgs):
            if len(machines) > 1:
                raise ConfigError("--host-cpu-m/--host-speed", "replay takes one value each")
            names = [n.strip() for n in (args.set or doc["active"]).split(",") if n.strip()]
            cols = {name: predict(runs, calibration.params_of(doc, name), machine=machine) for name in names}
            write(args.out, {"": cols}, title=f"Replay of {args.results}", notes=f"Machine: `{machine}`.\n",
                  plot=not args.no_plot)
            for name, preds in cols.items():
                e = Errors.of(preds)
                log.info("replay done set=%s jobs=%d median=%s p90=%s", name, e.n, pct(e.median), pct(e.p90))
            return 0
        fit_seeds, held = _seeds(args.fit_seeds, runs.seeds)
        if args.write and args.name in calibration.REFERENCE_SETS:
            raise ConfigError("--name", f"{args.name!r} is a reference rule, not a fit; fit into another name")
        if args.write_host is not None and any(m.system_slowdown for m in machines):
            raise ConfigError("--write-host", "records a --host-cpu-m model only; leave --host-speed at 'none'")
        if args.write_host is not None and not _host_name(args.write_host):
            raise ConfigError("--write-host", f"{args.write_host!r}: need a lower-case name like 'lab', not one "
                                              f"of {', '.join(_RESERVED)}")
        candidates = grid(_grid(args.grid))
    except (LabDataError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    log.info("fit start results=%s fit_seeds=%s held_out=%s", args.results, fit_seeds, held)
    best, machine, _ = fit(runs, fit_seeds, candidates=candidates, machines=machines)
    sections = {f"{part} seeds {seeds}": {label: predict(runs, params, seeds, machine=machine)
                                           for label, params in (("original", ORIGINAL), ("fitted", best))}
                for part, seeds in (("held-out", held), ("fitting", fit_seeds)) if seeds}
    notes = (f"Fitted on seeds {fit_seeds}, held out {held or 'none'}; fitted set: `{best.as_dict()}`.\n"
             f"Machine: `{machine}`; host speed `{machine.speed}` (tried: "
             f"{', '.join(dict.fromkeys(m.speed for m in machines))}).\n")
    write(args.out, sections, title=f"Calibration on {args.results}", notes=notes, plot=not args.no_plot)
    errors = {f"{label} {sec.split()[0]}": _summary(Errors.of(preds))
              for sec, cols in sections.items() for label, preds in cols.items()}
    for k, v in errors.items():
        log.info("errors set=%r jobs=%d median=%s p90=%s", k, v["jobs"], pct(v["median"]), pct(v["p90"]))
    tried = list(dict.fromkeys(m.host if m.host_held else f"usage:{m.host_cpu_m}" if m.host_from_usage
                               else m.host_cpu_m for m in machines))
    if args.write_host is not None:
        record_host(args.calibration, args.write_host, machine.host, {
            "results": str(args.results), "fit_seeds": fit_seeds, "held_out_seeds": held, "params": best.as_dict(),
            "cpu_bound": list(machine.cpu_bound), "host_cpu_m_tried": tried, "errors": errors})
        log.info("host recorded path=%s name=%s host=%s", args.calibration, args.write_host, machine.host)
    if args.write:
        record_fit(args.calibration, args.name, best.as_dict(), {
            "results": str(args.results), "fit_seeds": fit_seeds, "held_out_seeds": held,
            "grid": {k: list(v) for k, v in _grid(args.grid).items()}, "disk_mbps": machine.disk_mbps,
            "links": machine.links, "host_cpu_m": machine.host_cpu_m,
            "host_from_usage": machine.host_from_usage,
            **({"host": machine.host} if machine.host_held else {}),
            **({"host_speed": machine.speed} if machine.system_slowdown else {}),
            "cpu_bound": list(machine.cpu_bound),
            "host_cpu_m_tried": tried, "host_speed_tried": list(dict.fromkeys(m.speed for m in machines)),
            "errors": errors})
        log.info("fit recorded path=%s active=%s", args.calibration, doc["active"])
    return 0


def _errors_of(s) -> dict:
    return {"fit": _summary(s.fit), "held_out": _summary(s.held)}


def from_log(args: LogArgs) -> int:
    """``log``: the fit from a decision log (``policy.calibrate.fromlog``); the JSON report to ``--report`` or
    standard output."""
    try:
        if not 0 < args.fit_fraction < 1:
            raise ConfigError("--fit-fraction", f"must be between 0 and 1 (exclusive), got {args.fit_fraction}")
        if args.write and args.name in calibration.REFERENCE_SETS:
            raise ConfigError("--name", f"{args.name!r} is a reference rule, not a fit; fit into another name")
        if args.report is not None and not args.report.parent.is_dir():
            raise ConfigError("--report", f"{args.report}: no such directory {args.report.parent}")
        doc = calibration.read(args.calibration)
        active = calibration.params_of(doc, doc["active"])
        candidates = grid(_grid(args.grid))
        items, skipped = samples(read_log(args.log).joined(), daemon_pods=args.daemon_pods)
        sp = split(items, args.fit_fraction)
        if len(sp.fit) < 2 or not sp.held:
            raise ConfigError("--log", f"{args.log}: {len(items)} usable pods ({len(sp.fit)} to fit, {len(sp.held)} "
                                       f"held out of workloads the fit saw; left out: "
                                       f"{ {k: v for k, v in skipped.items() if v} }): too few to fit and judge")
    except (LogError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)  # noqa: T201
        return 2
    log.info("log fit start log=%s pods=%d fit=%d held_out=%d sets=%d", args.log, len(items), len(sp.fit),
             len(sp.held), len(candidates))
    best = fit_from_log(sp, candidates, progress=args.progress)
    scored = {"fitted": best, f"active ({doc['active']})": score(sp, active), "no contention": score(sp, None)}
    errors = {label: _errors_of(s) for label, s in scored.items()}
    null, fitted = scored["no contention"].held, best.held
    report = {"log": str(args.log), "fitted": best.params.as_dict(), "errors": errors, "daemon_pods": args.daemon_pods,
              "pods": {"usable": len(items), "fit": len(sp.fit), "held_out": len(sp.held),
                       "held_out_unseen_workload": sp.unseen, "workloads": len(workloads(items))},
              "left_out": skipped, "fit_fraction": args.fit_fraction,
              "beats_no_contention": bool(fitted.loss < null.loss),
              "error": "median and p90 of |predicted run / observed run - 1| per pod; held_out: the later pods"}
    for label, e in errors.items():
        log.info("errors set=%r held_out_pods=%d median=%s p90=%s", label, e["held_out"]["jobs"],
                 pct(e["held_out"]["median"]), pct(e["held_out"]["p90"]))
    if not report["beats_no_contention"]:
        log.warning("the fitted set does not beat 'no contention' on the held-out pods: this log cannot tell "
                    "the contention model's sets apart (too little contention or too few pods per workload)")
    text = json.dumps(report, indent=2) + "\n"
    if args.report is not None:
        args.report.write_text(text)
    else:
        sys.stdout.write(text)
    if args.write:
        record_fit(args.calibration, args.name, best.params.as_dict(), {
            "decision_log": str(args.log), "fit_fraction": args.fit_fraction, "daemon_pods": args.daemon_pods,
            "pods": report["pods"],
            "grid": {k: list(v) for k, v in _grid(args.grid).items()}, "errors": errors})
        log.info("fit recorded path=%s name=%s active=%s", args.calibration, args.name, doc["active"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
