"""The typed records the migration rule reads and writes: running jobs in, intents out.

Why it exists: the simulator and the Kubernetes controller (``migration/``) feed the same rule, so what a
running job looks like to it, and what a decision says, is written down once. The records are frozen and
validated on construction (``MigrationInputError`` names the job and the field); the module owns no state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from policy.state import PodView


class MigrationInputError(ValueError):
    """A running-job record holds an impossible value (progress outside [0, 1], negative rate or cost).

    Attributes:
        job_id: the job the record describes.
        field: the offending field.
    """

    def __init__(self, job_id: str, field: str, message: str) -> None:
        super().__init__(f"job {job_id!r}: field {field!r}: {message}")
        self.job_id = job_id
        self.field = field


@dataclass(frozen=True, slots=True)
class RunningJob:
    """One running, opted-in, checkpointed job as a progress reporter and the cluster cache show it.

    Attributes:
        job_id: stable id (pod or job name).
        node: name of the node it runs on (a name in the ``ClusterSnapshot``).
        progress: fraction of the job done, 0..1 (``progress.json``'s ``progress``).
        rate: smoothed progress rate of the current process, progress/s; ``None`` while unknown (fewer than
            two reports since the process started).
        expected_rate: progress/s the job makes alone on an unloaded node (1 / expected duration: an
            annotation or a per-class estimate; when unknown, the highest smoothed rate seen). The rule
            predicts its speed on a target as ``expected_rate × predicted_speed``.
        running_for: seconds the current process has been running (LATE's minimum runtime applies to it).
        checkpoint_progress: progress covered by the newest durable checkpoint (0 when none); a move loses
            ``progress − checkpoint_progress``. A controller that only knows the checkpoint's age uses
            ``policy.migrate.late.checkpoint_progress_from_age``.
        restore_cost: seconds from stopping on the source to progressing on the target (stop, pod start,
            checkpoint load).
        pod: requests and expected demand profile, for feasibility, the scorer and the speed model.
    """

    job_id: str
    node: str
    progress: float
    rate: float | None
    expected_rate: float
    running_for: float
    checkpoint_progress: float
    restore_cost: float
    pod: PodView

    def __post_init__(self) -> None:
        def bad(field: str, message: str) -> MigrationInputError:
            return MigrationInputError(self.job_id, field, message)

        if not 0.0 <= self.progress <= 1.0:
            raise bad("progress", f"must be in [0, 1], got {self.progress}")
        if not 0.0 <= self.checkpoint_progress <= self.progress + 1e-9:
            raise bad("checkpoint_progress",
                      f"must be in [0, progress={self.progress}], got {self.checkpoint_progress}")
        if self.rate is not None and not (self.rate >= 0.0 and math.isfinite(self.rate)):
            raise bad("rate", f"must be finite and >= 0 (or None when unknown), got {self.rate}")
        if not (self.expected_rate > 0.0 and math.isfinite(self.expected_rate)):
            raise bad("expected_rate", f"must be finite and > 0, got {self.expected_rate}")
        if not (self.running_for >= 0.0 and self.restore_cost >= 0.0 and math.isfinite(self.restore_cost)):
            raise bad("running_for/restore_cost", f"must be >= 0, got {self.running_for}, {self.restore_cost}")


@dataclass(frozen=True, slots=True)
class MigrationIntent:
    """The rule's proposal to move one job, with the numbers behind it (for the log line, the Event and tests).

    ``target`` is the scorer's best feasible node; ``fallbacks`` are the next best ones that also pass the
    time test, in order, for an executor whose first choice filled up meanwhile. Times are seconds.
    """

    job_id: str
    source: str
    target: str
    fallbacks: tuple[str, ...]
    reason: str
    time_left_here: float
    time_left_target: float
    restore_cost: float
    lost_work_time: float
    predicted_rate: float
    slow_checks: int

    @property
    def cost_on_target(self) -> float:
        """restore + redo the lost work + finish there: the right-hand side of the rule without the margin."""
        return self.restore_cost + self.lost_work_time + self.time_left_target

    @property
    def saving(self) -> float:
        """Seconds the move is predicted to save (positive for every intent the rule emits)."""
        return self.time_left_here - self.cost_on_target
