"""A pre-registered protocol: one YAML file, committed before the runs it governs, that fixes what an experiment
runs and how its answer is judged. Pure: it parses text (``load_protocol`` reads one file); no cluster.

Why it exists: issue #21's lab chose seeds, arms and the reading of its numbers after the fact. A protocol
names the scenario (with its world, ``policy.labworld.WORLDS``: ``drs`` when unnamed), the seeds, the arms
(``default``, ``model``, ``demand-aware``, an A/A copy of ``default`` and a positive control; in the straggler
regime ``model``, its A/A copy, ``migration``, ``taint`` and ``restart``: ``STRAGGLER_ARMS``), the arm order
(randomised per seed), the solo repetitions, the primary endpoint (``lab.endpoint``) and any secondary ones
(``endpoint.also``), the pilot that sized the
seeds (``policy.paired``), the simulator's predicted ratio per arm and the gates (``lab.gates``). ``python -m lab run
--protocol FILE`` runs it (resumably) and copies it into the output directory; ``python -m lab report`` judges
the results against it (``lab.verdict``).

Kinds: ``main`` (the full rules: the five arms, >= 48 jobs a seed (16 in the straggler regime), randomised order,
>= 3 solo runs, and a ``pilot`` sd and the simulator's ``predicted`` ratios stated before it runs), ``pilot``
(the A/A pair at least, same job rules, >= 3 seeds: its per-seed sd of the log ratio sizes a main protocol)
and ``smoke`` (CI: any size, any arms). A prediction within 10 % of 1 must come with ``predicted.note``, the
advance statement that this scenario is not expected to show that arm's difference. Every error names the
file, line and field (``ProtocolError``); nothing in a malformed file gives a traceback.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from lab import arms as arm_names
from lab.errors import LabError
from lab.gates import MAX_SHARE
from lab.schedule import REGIMES, SEEDED_RULES, STRAGGLER_NODE
from lab.stats import METRICS
from policy.labworld import DEFAULT_WORLD, SHAPES, VARIANTS, WORLDS

KINDS = ("main", "pilot", "smoke")
ORDERS = ("random", "rollouts")
MIN_JOBS = 48
"""Jobs a seed in a main or pilot protocol (issue #21)."""
MIN_STRAGGLER_JOBS = 16
"""Jobs a seed in a main or pilot protocol of the straggler regime. Its question is whether moving a slow job helps,
and a job can only move where another node has room for its requests: with 48 small jobs submitted within 30 s
every node is full by request while about 35 wait, and the simulator put migration at 0.99x there
(results/policy/lab-straggler). SpeCon's premise is a few long jobs per node; the design sweep
(results/policy/lab-straggler-room) looked at 16-48 jobs, so 16 is the floor. A departure from issue #21's "at
least 48 jobs a seed", which was written for the placement scenarios; fewer jobs make each seed's mean noisier,
which the seeds must pay for (the protocol's pilot and prediction say how)."""
MIN_SOLO_RUNS = 3
"""Solo runs per job and node type in a main or pilot protocol; the report uses their median."""
MIN_PILOT_SEEDS = 3
SMALL_PREDICTION = 0.10
"""A predicted ratio within this of 1 must be declared in advance (``predicted.note``)."""
REQUIRED_ARMS = ("default", "model", "demand-aware")
STRAGGLER_ARMS = ("model", "migration", "taint", "restart")
"""A main protocol of the straggler regime's arms instead (issue #21's straggler target: migration against drsched
without it and against both baselines). Its compared arms differ from the baseline in the controller alone, on one
placement, so it needs no positive control: that a bad placement can be told apart is the placement protocols'
question (``REQUIRED_ARMS``)."""
NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")


class ProtocolError(LabError, ValueError):
    """A protocol file that cannot be used; the message names the file, line and field."""


@dataclass(frozen=True)
class Scenario:
    variant: str
    regime: str
    job_shape: str
    jobs: int
    window_s: float
    scale: float
    """The work factor (``lab run --scale``); the world's (``policy.labworld.World.scale``) when the file names none."""
    note: str = ""
    world: str = DEFAULT_WORLD
    """The world it runs on (``policy.labworld.WORLDS``: nodes and job mix); ``drs`` when the file names none."""
    straggler_node: str = STRAGGLER_NODE
    """The straggler regime's degraded node: a node of the world, or a rule by which each seed draws node, cut and
    transience (``seed``, ``seed-loaded``: ``policy.straggler.RULES``, ``lab.schedule.draw_straggler``); ``lab
    run``'s default when the file names none."""
    tenants: int = 0
    """Long-running tenants on that many distinct seed-chosen nodes, placed before every arm's jobs (the ``tenants``
    scenario, ``lab.tenants``); none when the file names none. A scenario key, like ``straggler_node``, since it is
    neither how the jobs ask (``variant``) nor what nodes and jobs there are (``world``), and goes with any of them."""


@dataclass(frozen=True)
class Protocol:
    name: str
    kind: str
    scenario: Scenario
    seeds: tuple[int, ...]
    arms: tuple[str, ...]
    baseline: str
    aa_arm: str | None
    positive_control: str | None
    order: str
    order_key: str
    solo_runs: int
    metric: str
    """The primary endpoint's metric (``lab.stats.METRICS``)."""
    effect: float
    power: float
    alpha: float
    pilot_sd: float | None = None
    pilot_source: str = ""
    predicted: dict[str, float] = field(default_factory=dict)
    predicted_by: str = ""
    predicted_note: str = ""
    interference_max: float = MAX_SHARE
    require_scored: bool = True
    arm_timeout_s: float | None = None
    """None: ``lab run``'s own default."""
    isolate: bool = True
    """Run on an isolated cluster where the machine allows it (``lab.experiment.choose_isolation``)."""
    note: str = ""
    path: str = ""
    sha256: str = ""
    also: tuple[str, ...] = ()
    """Secondary endpoints, fixed in advance: metrics judged as the primary is (per-seed log ratio, paired, 95 %
    interval), each reported in a table of its own; the seeds are sized by the primary."""

    def small_predictions(self) -> dict[str, float]:
        """Arms the simulator predicts within 10 % of the baseline."""
        return {a: r for a, r in self.predicted.items() if abs(r - 1.0) < SMALL_PREDICTION}


# ---- a YAML walker that keeps line numbers ---------------------------------------------------------------


class _Doc:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        self.loader = yaml.SafeLoader(text)
        try:
            self.root = self.loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            line = f":{mark.line + 1}" if mark else ""
            raise ProtocolError(f"{path}{line}: not valid YAML: {exc.problem or exc}") from None
        except yaml.YAMLError as exc:
            raise ProtocolError(f"{path}: not valid YAML: {exc}") from None

    def fail(self, node: yaml.Node | None, where: str, message: str) -> ProtocolError:
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        return ProtocolError(f"{self.path}{line}: field {where!r}: {message}")

    def mapping(self, node: yaml.Node | None, where: str, *, required: tuple[str, ...],
                optional: tuple[str, ...] = ()) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, where or "(top)", "must be a mapping of keys to values")
        out: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            sub = f"{where}.{name}" if where else str(name)
            if name not in required + optional:
                raise self.fail(key, sub, f"unknown key; known: {', '.join(required + optional)}")
            if name in out:
                raise self.fail(key, sub, "given twice")
            out[name] = value
        for name in required:
            if name not in out:
                raise self.fail(node, f"{where}.{name}" if where else name, "missing")
        return out

    def value(self, node: yaml.Node, where: str, kind: type | tuple[type, ...], what: str):
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise self.fail(node, where, f"cannot be read: {exc}") from None
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):  # YAML's true is an int
            raise self.fail(node, where, f"{value!r} is not {what}")
        return value

    def number(self, node: yaml.Node, where: str, *, low: float, high: float = float("inf"),
               integer: bool = False, open_low: bool = True) -> float:
        value = self.value(node, where, int if integer else (int, float), "an integer" if integer else "a number")
        if not (low < value if open_low else low <= value) or not value < high:
            bounds = f"{'>' if open_low else '>='} {low:g}" + (f" and < {high:g}" if high != float("inf") else "")
            raise self.fail(node, where, f"{value!r} must be {bounds}")
        return value

    def choice(self, node: yaml.Node, where: str, choices: tuple[str, ...]) -> str:
        value = self.value(node, where, str, "a string")
        if value not in choices:
            raise self.fail(node, where, f"{value!r} is not one of {', '.join(choices)}")
        return value


# ---- the protocol ----------------------------------------------------------------------------------------

_TOP = ("protocol", "kind", "scenario", "seeds", "arms", "baseline", "order", "solo_runs", "endpoint")
_TOP_OPTIONAL = ("aa_arm", "positive_control", "order_key", "pilot", "predicted", "gates", "arm_timeout_s", "note",
                 "isolate")


def parse_protocol(text: str, *, path: str) -> Protocol:
    """The protocol in ``text`` (``path`` names it in errors)."""
    doc = _Doc(text, path)
    top = doc.mapping(doc.root, "", required=_TOP, optional=_TOP_OPTIONAL)
    name = doc.value(top["protocol"], "protocol", str, "a string")
    if not NAME.match(name):
        raise doc.fail(top["protocol"], "protocol", f"{name!r} must be lower-case letters, digits, '.' and '-'")
    kind = doc.choice(top["kind"], "kind", KINDS)
    strict = kind != "smoke"
    scenario = _scenario(doc, top["scenario"], strict=strict)
    seeds = _seeds(doc, top["seeds"], kind)
    arms = _arms(doc, top["arms"])
    baseline = _arm_in(doc, top["baseline"], "baseline", arms)
    if arm_names.parse(baseline).replicate != 1:
        raise doc.fail(top["baseline"], "baseline", f"{baseline!r} is a replicate; the baseline is the arm itself")
    aa = _arm_in(doc, top["aa_arm"], "aa_arm", arms) if "aa_arm" in top else None
    if aa is not None and not _same_setting(aa, baseline):
        raise doc.fail(top["aa_arm"], "aa_arm", f"{aa!r} must be a replicate of {baseline!r} (e.g. {baseline}#2)")
    control = _arm_in(doc, top["positive_control"], "positive_control", arms) if "positive_control" in top else None
    if control is not None and _same_setting(control, baseline):
        raise doc.fail(top["positive_control"], "positive_control", f"{control!r} runs what {baseline!r} runs")
    if kind == "main" and scenario.regime == "straggler":
        for need, what in [(a, f"arm {a!r}") for a in STRAGGLER_ARMS] + [(aa, "aa_arm")]:
            if need is None or need not in arms:
                raise doc.fail(top["arms"], "arms", f"a main protocol of the straggler regime needs {what} "
                                                    f"({', '.join(STRAGGLER_ARMS)} and an A/A copy)")
    elif kind == "main":
        for need, what in [(a, f"arm {a!r}") for a in REQUIRED_ARMS] + [(aa, "aa_arm"), (control, "positive_control")]:
            if need is None or need not in arms:
                raise doc.fail(top["arms"], "arms", f"a main protocol needs {what} "
                                                    f"({', '.join(REQUIRED_ARMS)}, an A/A copy and a positive control)")
    if kind == "pilot" and aa is None:
        raise doc.fail(top["arms"], "aa_arm", "a pilot protocol needs its A/A arm (e.g. default#2)")
    order = doc.choice(top["order"], "order", ORDERS)
    if strict and order != "random":
        raise doc.fail(top["order"], "order", f"a {kind} protocol randomises the arm order per seed ('random')")
    order_key = doc.value(top["order_key"], "order_key", str, "a string") if "order_key" in top else name
    solo_runs = int(doc.number(top["solo_runs"], "solo_runs", low=1, integer=True, open_low=False))
    if strict and solo_runs < MIN_SOLO_RUNS:
        raise doc.fail(top["solo_runs"], "solo_runs", f"a {kind} protocol takes the median of at least "
                                                      f"{MIN_SOLO_RUNS} solo runs, got {solo_runs}")
    end = doc.mapping(top["endpoint"], "endpoint", required=("metric", "effect", "power", "alpha"), optional=("also",))
    metric = doc.choice(end["metric"], "endpoint.metric", METRICS)
    effect, power, alpha = (doc.number(end[k], f"endpoint.{k}", low=0, high=1) for k in ("effect", "power", "alpha"))
    extra: dict = {}
    if "also" in end:
        extra["also"] = _also(doc, end["also"], metric)
    if "pilot" in top:
        pilot = doc.mapping(top["pilot"], "pilot", required=("sd_log_ratio", "source"))
        extra["pilot_sd"] = doc.number(pilot["sd_log_ratio"], "pilot.sd_log_ratio", low=0)
        extra["pilot_source"] = doc.value(pilot["source"], "pilot.source", str, "a string")
    if "predicted" in top:
        extra.update(_predicted(doc, top["predicted"], arms, baseline))
    if "gates" in top:
        gates = doc.mapping(top["gates"], "gates", required=(), optional=("interference_max", "scored"))
        if "interference_max" in gates:
            extra["interference_max"] = doc.number(gates["interference_max"], "gates.interference_max", low=0, high=1)
        if "scored" in gates:
            extra["require_scored"] = doc.value(gates["scored"], "gates.scored", bool, "true or false")
    if "arm_timeout_s" in top:
        extra["arm_timeout_s"] = doc.number(top["arm_timeout_s"], "arm_timeout_s", low=0)
    if "isolate" in top:
        extra["isolate"] = doc.value(top["isolate"], "isolate", bool, "true or false")
    if kind == "main":
        for need in ("pilot", "predicted"):
            if need not in top:
                raise doc.fail(doc.root, need, f"a main protocol states its {need} before it runs (module docstring)")
    if "note" in top:
        extra["note"] = doc.value(top["note"], "note", str, "a string")
    return Protocol(name=name, kind=kind, scenario=scenario, seeds=seeds, arms=arms, baseline=baseline, aa_arm=aa,
                    positive_control=control, order=order, order_key=order_key, solo_runs=solo_runs, metric=metric,
                    effect=effect, power=power, alpha=alpha, path=path,
                    sha256=hashlib.sha256(text.encode()).hexdigest(), **extra)


def load_protocol(path: Path) -> Protocol:
    """The protocol in file ``path``; an unreadable file is a ``ProtocolError`` too."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{path}: cannot read the protocol: {exc}") from None
    return parse_protocol(text, path=str(path))


def _scenario(doc: _Doc, node: yaml.Node, *, strict: bool) -> Scenario:
    s = doc.mapping(node, "scenario", required=("variant", "regime", "job_shape", "jobs", "window_s"),
                    optional=("scale", "note", "world", "straggler_node", "tenants"))
    regime = doc.choice(s["regime"], "scenario.regime", REGIMES)
    jobs = int(doc.number(s["jobs"], "scenario.jobs", low=1, integer=True, open_low=False))
    least = MIN_STRAGGLER_JOBS if regime == "straggler" else MIN_JOBS
    if strict and jobs < least:
        what = "a main or pilot protocol" + (" of the straggler regime" if regime == "straggler" else "")
        raise doc.fail(s["jobs"], "scenario.jobs", f"{jobs} jobs: {what} runs at least {least}")
    world = doc.choice(s["world"], "scenario.world", tuple(WORLDS)) if "world" in s else DEFAULT_WORLD
    nodes = len(WORLDS[world].nodes)
    tenants = int(doc.number(s["tenants"], "scenario.tenants", low=0, high=nodes + 1, integer=True, open_low=False)
                  ) if "tenants" in s else 0
    return Scenario(variant=doc.choice(s["variant"], "scenario.variant", VARIANTS),
                    regime=regime,
                    job_shape=doc.choice(s["job_shape"], "scenario.job_shape", tuple(SHAPES)), jobs=jobs,
                    window_s=doc.number(s["window_s"], "scenario.window_s", low=0),
                    scale=doc.number(s["scale"], "scenario.scale", low=0) if "scale" in s else WORLDS[world].scale,
                    note=doc.value(s["note"], "scenario.note", str, "a string") if "note" in s else "",
                    world=world, tenants=tenants,
                    straggler_node=doc.choice(s["straggler_node"], "scenario.straggler_node", (
                        *SEEDED_RULES, *(n.name for n in WORLDS[world].nodes)))
                    if "straggler_node" in s else STRAGGLER_NODE)


def _seeds(doc: _Doc, node: yaml.Node, kind: str) -> tuple[int, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise doc.fail(node, "seeds", "must be a non-empty list of integers")
    seeds = tuple(int(doc.number(n, f"seeds[{i}]", low=0, integer=True, open_low=False))
                  for i, n in enumerate(node.value))
    if len(set(seeds)) != len(seeds):
        raise doc.fail(node, "seeds", "a seed is listed twice")
    least = {"main": 2, "pilot": MIN_PILOT_SEEDS, "smoke": 1}[kind]
    if len(seeds) < least:
        raise doc.fail(node, "seeds", f"a {kind} protocol runs at least {least} seeds, got {len(seeds)}")
    return seeds


def _arms(doc: _Doc, node: yaml.Node) -> tuple[str, ...]:
    if not isinstance(node, yaml.SequenceNode) or len(node.value) < 2:
        raise doc.fail(node, "arms", "must be a list of at least two arm names")
    names = []
    for i, n in enumerate(node.value):
        name = doc.value(n, f"arms[{i}]", str, "an arm name")
        try:
            arm_names.parse(name)
        except arm_names.ArmError as exc:
            raise doc.fail(n, f"arms[{i}]", str(exc)) from None
        if name in names:
            raise doc.fail(n, f"arms[{i}]", f"{name!r} is listed twice")
        names.append(name)
    return tuple(names)


def _arm_in(doc: _Doc, node: yaml.Node, where: str, arms: tuple[str, ...]) -> str:
    name = doc.value(node, where, str, "an arm name")
    if name not in arms:
        raise doc.fail(node, where, f"{name!r} is not one of the protocol's arms ({', '.join(arms)})")
    return name


def _same_setting(a: str, b: str) -> bool:
    x, y = arm_names.parse(a), arm_names.parse(b)
    return (x.scheduler, x.extender, x.migration, x.controller) == (y.scheduler, y.extender, y.migration, y.controller)


def _also(doc: _Doc, node: yaml.Node, primary: str) -> tuple[str, ...]:
    if not isinstance(node, yaml.SequenceNode) or not node.value:
        raise doc.fail(node, "endpoint.also", "must be a non-empty list of metrics")
    also = tuple(doc.choice(n, f"endpoint.also[{i}]", METRICS) for i, n in enumerate(node.value))
    if primary in also or len(set(also)) != len(also):
        raise doc.fail(node, "endpoint.also", "lists a metric twice or the primary one")
    return also


def _predicted(doc: _Doc, node: yaml.Node, arms: tuple[str, ...], baseline: str) -> dict:
    p = doc.mapping(node, "predicted", required=("by", "ratios"), optional=("note",))
    ratios_node = p["ratios"]
    if not isinstance(ratios_node, yaml.MappingNode):
        raise doc.fail(ratios_node, "predicted.ratios", "must map arm names to predicted ratios")
    ratios: dict[str, float] = {}
    for key, value in ratios_node.value:
        where = f"predicted.ratios.{key.value}"
        arm = _arm_in(doc, key, where, tuple(a for a in arms if a != baseline))
        if arm in ratios:
            raise doc.fail(key, where, "given twice")
        ratios[arm] = doc.number(value, where, low=0)
    note = doc.value(p["note"], "predicted.note", str, "a string") if "note" in p else ""
    small = sorted(a for a, r in ratios.items() if abs(r - 1.0) < SMALL_PREDICTION)
    if small and not note.strip():
        raise doc.fail(ratios_node, "predicted.note", f"the simulator predicts under {100 * SMALL_PREDICTION:.0f} % "
                                                      f"for {', '.join(small)}: say so in advance in predicted.note")
    return {"predicted": ratios, "predicted_by": doc.value(p["by"], "predicted.by", str, "a string"),
            "predicted_note": note}
