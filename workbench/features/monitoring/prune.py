"""Retention: drop a stream's raw traces older than N days, keeping the day aggregates the report reads and every
sampled trace (the reviewers' items, labeled or still waiting, and what promote and the validity test read)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from workbench.core.errors import InputError
from workbench.features.monitoring import queries
from workbench.features.monitoring.records import utc_text
from workbench.store import Store


@dataclass(frozen=True, slots=True)
class PruneResult:
    stream: str
    before: str  # YYYY-MM-DD: traces timed before this day were considered
    removed: int
    days: tuple[str, ...]  # the days that lost raw traces
    kept_sampled: int

    def summary(self) -> str:
        if not self.removed:
            return (f"stream '{self.stream}': no unsampled trace timed before {self.before} left to remove; "
                    f"{self.kept_sampled} sampled traces kept.")
        span = self.days[0] if len(self.days) == 1 else f"{self.days[0]} to {self.days[-1]}"
        return (f"stream '{self.stream}': removed {self.removed} raw traces timed before {self.before} ({span}, "
                f"{len(self.days)} days); kept their day aggregates, which the report reads, and the "
                f"{self.kept_sampled} sampled traces of those days (the reviewers' items). Ingest now takes no "
                f"trace timed before {self.before}.")


def prune(store: Store, stream: str, keep_days: int, now: datetime) -> PruneResult:
    """Keep the raw traces of the last ``keep_days`` UTC days up to ``now`` (its day counts; ``now`` at midnight,
    as ``clock`` gives the end of a day, ends the day before): remove the unsampled traces of the days before, whole
    days, so each pruned day's aggregates are complete. One transaction."""
    if isinstance(keep_days, bool) or not isinstance(keep_days, int) or keep_days < 1:
        raise InputError(f"--keep-days must be a whole number of days, at least 1, got {keep_days}",
                         fix="write e.g. --keep-days 30 (today's traces are always kept)")
    sid = queries.require_stream(store, stream)
    today = now - timedelta(microseconds=1)
    before = utc_text(today - timedelta(days=keep_days - 1))[:10]
    with store.transaction():
        removed = queries.prune_traces(store, sid, before)
        kept = queries.count_sampled(store, sid, before)
    return PruneResult(stream, before, sum(removed.values()), tuple(sorted(removed)), kept)
