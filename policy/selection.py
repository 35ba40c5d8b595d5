"""Which of a training run's checks becomes its export: the figure each rule reads, and when a check wins.

Why it exists: the trainer checks its network every ``--eval-every`` steps and keeps one export. Its own check
(``argmax``: mean validation excess slowdown, the network as a pure argmax on 24 episodes) and the figure issue
#22 is judged on (the served ratio: the network scored as the extender serves it, its excess over the best
heuristic's per case, geometric mean; ``policy.comparison``) disagree: in the strong-rule warm-start study
every warm run's kept export was better than its start on the check and worse served
(``results/policy/warm-start-strong/``). ``--select served`` keeps the check with the best served ratio instead.

State: none. Rows in, numbers out; standard library and ``policy.comparison`` only.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from policy.comparison import HEURISTICS, Excess, geometric_mean, ratios

RULES = {"argmax": "dqn", "served": "served_ratio"}
"""Selection rule -> the key of a check's scores it minimises: ``argmax`` the trainer's check (the mean
validation excess of the network as a pure argmax), ``served`` the served ratio to the best heuristic."""


def case_means(rows: Iterable[dict], metric: str = "excess_slowdown") -> Excess:
    """(family, load, policy) -> the mean of ``metric`` over the seeds of per-episode rows (``policy.grid.run_all``'s:
    ``scenario``, ``load``, ``policy`` and the metric)."""
    sums: dict[tuple[str, float, str], list[float]] = defaultdict(list)
    for r in rows:
        sums[(r["scenario"], float(r["load"]), r["policy"])].append(float(r[metric]))
    return {k: sum(v) / len(v) for k, v in sums.items()}


def served_ratio(ex: Excess, policy: str) -> float:
    """``policy``'s excess / the best heuristic's on each case of ``ex``, geometric mean (``policy.comparison``'s
    rule: cases whose best heuristic is at the noise floor left out); NaN when no case is left."""
    return geometric_mean(ratios(ex, policy, HEURISTICS).values())


def improves(figure: float, best: float | None) -> bool:
    """Whether a check with ``figure`` (lower is better) replaces the kept one, whose figure is ``best`` (None:
    nothing kept yet, so any check is kept and a run always exports). A tie keeps the earlier check; a NaN
    figure never replaces a kept one."""
    if best is None:
        return True
    return not math.isnan(figure) and (math.isnan(best) or figure < best)
