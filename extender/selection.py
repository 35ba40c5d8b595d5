"""Which pods an option applies to: namespaces, an equality label selector and scheduler names. Pure.

Shadow mode (which other schedulers' bindings to shadow) and the canary (which pods drsched decides for)
select pods the same way, so they share this one reading: every given part must match; an empty part
matches every pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kube.objects import child_map
from kube.selectors import matches, parse_selector


@dataclass(frozen=True, slots=True)
class PodSelector:
    namespaces: frozenset[str] = frozenset()
    labels: tuple[tuple[str, str], ...] = ()
    scheduler_names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, *, namespaces: Iterable[str] = (), selector: str = "",
           scheduler_names: Iterable[str] = ()) -> PodSelector:
        return cls(frozenset(namespaces), tuple(sorted(parse_selector(selector).items())), frozenset(scheduler_names))

    @property
    def everything(self) -> bool:
        return not (self.namespaces or self.labels or self.scheduler_names)

    def matches(self, pod: Mapping | None) -> bool:
        """Whether a v1.Pod (dict) is selected; a pod without a namespace is in ``default``."""
        if self.everything:
            return True
        meta = child_map(pod, "metadata")
        if self.namespaces and str(meta.get("namespace") or "default") not in self.namespaces:
            return False
        if self.scheduler_names and \
                str(child_map(pod, "spec").get("schedulerName") or "default-scheduler") not in self.scheduler_names:
            return False
        return not self.labels or matches(child_map(meta, "labels"), dict(self.labels))
