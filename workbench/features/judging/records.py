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
