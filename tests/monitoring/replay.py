"""Replays of a production stream on real rows, through the report's own computation (``windows_report``), for
the detection-delay, false-alarm and coverage figures."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from tests.monitoring import realdata, streams
from tests.monitoring.conftest import approval_indices
from workbench.features.monitoring.records import GoldenMix, StoredTrace, StreamBundle, parse_time, utc_text
from workbench.features.monitoring.report import windows_report


def golden() -> GoldenMix:
    rows, idx = realdata.load(), approval_indices()
    return GoldenMix(dict(Counter(str(c) for c in rows.category[idx])), tuple(int(n) for n in rows.length[idx]))


@dataclass
class Replay:
    windows: tuple
    traces: list[StoredTrace]
    humans: dict[str, int]
    labels: dict[str, int]
    drift_start: str | None

    def labels_after_drift_at_alarm(self) -> int | None:
        """Sampled labels timed at or after the drift's start, up to the end of the window that raised validity."""
        first = next((w for w in self.windows if any(a.kind == "validity" for a in w.alarms)), None)
        if first is None:
            return None
        return sum(1 for t in self.traces if t.trace_id in self.labels and t.ts >= (self.drift_start or "")
                   and t.ts < first.end)

    def alarms(self, kind: str) -> bool:
        return any(a.kind == kind for w in self.windows for a in w.alarms)


def replay(sb: StreamBundle, *, seed: int, days: int = 14, per_day: int = 300, label_rate: float = 0.1,
           drift_day: int | None = None, drift_share: float = 0.0, shift_day: int | None = None,
           shift_category: str | None = None, window: str = "day") -> Replay:
    traces, humans, _ = streams.stream_rows(days=days, per_day=per_day, seed=seed, drift_day=drift_day,
                                            drift_share=drift_share, exclude=approval_indices(),
                                            shift_day=shift_day, shift_category=shift_category)
    draws = np.random.default_rng(seed + 10_000).random(len(traces)) < label_rate
    stored = sorted((StoredTrace(t["id"], utc_text(parse_time(t["timestamp"])), t["category"], len(t["input"]),
                                 t["score"], bool(d), label_rate) for t, d in zip(traces, draws)),
                    key=lambda t: (t.ts, t.trace_id))
    labels = {t.trace_id: humans[t.trace_id] for t in stored if t.sampled}
    drift_start = utc_text(streams.START + timedelta(days=drift_day)) if drift_day is not None else None
    return Replay(windows_report(stored, labels, sb, golden(), window=window), stored, humans, labels, drift_start)


def window_truth(r: Replay, sb: StreamBundle) -> list[tuple[float, object]]:
    """(the window's true human pass rate over all its traces, its corrected estimate) per window."""
    out = []
    for w in r.windows:
        members = [t for t in r.traces if w.start <= t.ts < w.end]
        out.append((float(np.mean([sb.is_pass(r.humans[t.trace_id]) for t in members])), w.corrected_pass_rate))
    return out
