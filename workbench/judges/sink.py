"""Where a run puts its judgments: the `RunSink` protocol and an in-memory sink for tests.

The service layer implements RunSink over SQLite, committing each judgment in
`record` as it arrives, so an interrupted run loses nothing and a resumed run
(which asks `done_keys` first) sends no request for work already done. Batch
mode also persists the submitted batch ids so polling resumes after a restart.

A sink whose write may have to wait (a database another process is writing)
also offers `arecord`, a coroutine the runner awaits instead of `record`: it
does the waiting off the event loop, so replies still arriving are read while
a verdict waits for the database, and it keeps trying until the verdict is
written rather than drop one that has been paid for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from workbench.core.models import Judgment
from workbench.judges.types import WorkKey


@dataclass(frozen=True)
class PendingBatch:
    provider: str  # the judge's provider prefix, e.g. "anthropic"
    batch_id: str
    keys: tuple[WorkKey, ...]


@runtime_checkable
class RunSink(Protocol):
    def done_keys(self) -> set[WorkKey]:
        """Keys (judge config hash, item content hash, repeat) that already have a judgment."""

    def record(self, key: WorkKey, judgment: Judgment) -> None:
        """Persist one judgment now (commit before returning)."""

    # Optional: ``async def arecord(self, key, judgment) -> None``, the same as ``record`` without blocking the
    # event loop; the runner prefers it when the sink has it.

    def save_batch(self, provider: str, batch_id: str, keys: Sequence[WorkKey]) -> None:
        """Persist a submitted batch and the keys it holds."""

    def pending_batches(self) -> list[PendingBatch]:
        """Submitted batches whose results are not imported yet."""

    def mark_batch_done(self, batch_id: str) -> None:
        """All results of this batch are imported (or it ended without them)."""


class InMemorySink:
    """A RunSink in a dict: for tests, benchmarks and one-off scripts."""

    def __init__(self, done: dict[WorkKey, Judgment] | None = None):
        self.judgments: dict[WorkKey, Judgment] = dict(done or {})
        self.batches: dict[str, PendingBatch] = {}
        self.finished_batches: set[str] = set()
        self.record_calls = 0

    def done_keys(self) -> set[WorkKey]:
        return set(self.judgments)

    def record(self, key: WorkKey, judgment: Judgment) -> None:
        self.record_calls += 1
        self.judgments[key] = judgment

    def save_batch(self, provider: str, batch_id: str, keys: Sequence[WorkKey]) -> None:
        self.batches[batch_id] = PendingBatch(provider, batch_id, tuple(keys))

    def pending_batches(self) -> list[PendingBatch]:
        return [b for bid, b in self.batches.items() if bid not in self.finished_batches]

    def mark_batch_done(self, batch_id: str) -> None:
        self.finished_batches.add(batch_id)
