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

A sink of a run that several runners share (processes on one or many
machines) also offers `aclaim`: the runner claims each key before it sends
the request, so no other runner sends it; keys claimed by another live runner
are looked at again until they are stored, or their runner is gone and they
can be claimed. Its `record` returns False for a verdict another runner
stored first (dropped: each judgment is stored once).
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


@dataclass(frozen=True)
class ClaimOutcome:
    """What a shared run's sink found for the keys a claim looked at (a prefix of those offered, in order)."""

    claimed: tuple[WorkKey, ...] = ()  # this runner's to request now
    done: tuple[WorkKey, ...] = ()  # stored by another runner meanwhile: skip
    held: tuple[WorkKey, ...] = ()  # another live runner's: look again later

    @property
    def n_seen(self) -> int:
        return len(self.claimed) + len(self.done) + len(self.held)


@runtime_checkable
class RunSink(Protocol):
    def done_keys(self) -> set[WorkKey]:
        """Keys (judge config hash, item content hash, repeat) that already have a judgment."""

    def record(self, key: WorkKey, judgment: Judgment) -> None:
        """Persist one judgment now (commit before returning)."""

    # Optional: ``async def arecord(self, key, judgment) -> bool | None``, the same as ``record`` without blocking
    # the event loop; the runner prefers it when the sink has it. ``record`` may return False: not stored, another
    # runner stored that key first.
    # Optional (shared runs): ``async def aclaim(self, keys, want) -> ClaimOutcome | None`` claims up to ``want``
    # of ``keys`` in order (None: this runner lost the run and must stop), and ``async def arelease(self, keys)``
    # gives back claims it will not request (given up after retries).

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
