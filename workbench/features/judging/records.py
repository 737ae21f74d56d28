"""What a judge run hands back, typed: the run's summary, and a batch the store holds for the run."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from workbench.judges.runner import RunReport
from workbench.judges.sink import PendingBatch


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """A provider batch submitted for a run (``Store.pending_batches``), its keys parsed from JSON by the store."""

    id: int
    run_id: int
    provider: str
    batch_id: str
    keys: list[list]
    status: str
    created_at: str

    def pending(self) -> PendingBatch:
        return PendingBatch(self.provider, self.batch_id, tuple(tuple(k) for k in self.keys))


@dataclass(frozen=True, slots=True)
class RunSummary:
    """A judge run as it ended: which run, whether every judgment is in, and the engine's report of it
    (a ``RunReport``, or the batch engine's report in batch mode)."""

    run: str
    judge: str
    model: str
    complete: bool
    report: Any
    lease_lost: bool = False  # another process took the run over while this one worked

    def to_json(self) -> dict[str, Any]:
        """The summary as `judge run` and the pages have always had it: the run, then each field of the report."""
        out = {"run": self.run, "judge": self.judge, "model": self.model, "complete": self.complete}
        out.update({f.name: getattr(self.report, f.name) for f in fields(self.report)})
        if isinstance(self.report, RunReport):
            out["n_done"] = self.report.n_done
        if self.lease_lost:
            out["lease_lost"] = True
        return out


@dataclass(frozen=True, slots=True)
class CostCheck:
    """The estimated cost of judging the items of the judge's last run again, beside what that run recorded.

    ``estimated_usd`` covers the same judgments as the recorded run (its items and repeats); ``why`` says why the
    two differ by more than ``TOLERANCE`` of the recorded cost, or why they cannot be compared (else None)."""

    TOLERANCE = 0.25

    run: str | None                 # the last run's name (None: no run yet)
    source: str | None              # "run" (here) or "import"
    n_judgments: int                # judgments the last run holds
    recorded_usd: float | None      # their recorded cost (None: no judgment has a price)
    n_unpriced: int                 # judgments recorded without a price
    estimated_usd: float | None     # the estimate for the same judgments (None: the model has no price)
    recorded_tokens: tuple[float, float] | None = None   # mean (input, output) tokens per judgment, recorded
    estimated_tokens: tuple[float, float] | None = None  # the same, estimated
    why: str | None = None

    @property
    def comparable(self) -> bool:
        return self.recorded_usd is not None and self.estimated_usd is not None

    @property
    def within(self) -> bool:
        """The estimate is within the tolerance of the recorded cost (both $0 counts as within)."""
        if not self.comparable:
            return False
        if self.recorded_usd == 0:
            return self.estimated_usd == 0
        return abs(self.estimated_usd / self.recorded_usd - 1) <= self.TOLERANCE
