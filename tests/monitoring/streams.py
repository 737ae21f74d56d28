"""Production streams made of real rows: traces with timestamps, the judge's verdict (optionally flipped from a
given day: planted drift), and the human label each sampled trace would get."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from tests.monitoring import realdata

START = datetime(2026, 12, 1, tzinfo=timezone.utc)


def flip(verdict: int) -> int:
    """A wrong verdict: pass (+1) becomes fail (-1), anything else becomes +1."""
    return -1 if verdict == 1 else 1


def stream_rows(*, days: int, per_day: int, seed: int, drift_day: int | None = None, drift_share: float = 0.0,
                exclude: np.ndarray | None = None, shift_day: int | None = None, shift_category: str | None = None):
    """(trace dicts, human label by id, drifted ids): ``per_day`` real rows a day, in a random order of
    the rows not in ``exclude`` (cycling when a source runs out); from ``drift_day`` on, each verdict is flipped with probability ``drift_share``;
    from ``shift_day`` on, the day's traces come from ``shift_category`` only."""
    rows = realdata.load()
    rng = np.random.default_rng(seed)
    pool = np.setdiff1d(np.arange(len(rows.key)), exclude if exclude is not None else [])
    pool = rng.permutation(pool)
    shifted = pool[rows.category[pool] == shift_category] if shift_category else pool[:0]
    traces, humans, drifted = [], {}, set()
    taken = {"pool": 0, "shifted": 0}  # rows are drawn in order from each source, cycling when one runs out
    for day in range(days):
        name = "shifted" if shift_day is not None and day >= shift_day else "pool"
        source = shifted if name == "shifted" else pool
        picks = [int(source[(taken[name] + k) % len(source)]) for k in range(per_day)]
        taken[name] += per_day
        for n, i in enumerate(picks):
            tid = f"d{day}-{n}-{rows.key[i]}"
            verdict = int(rows.judge[i])
            if drift_day is not None and day >= drift_day and rng.random() < drift_share:
                verdict = flip(verdict)
                drifted.add(tid)
            when = START + timedelta(days=day, seconds=int(n * 86_000 / per_day))
            traces.append({"id": tid, "timestamp": when.isoformat(), "category": str(rows.category[i]),
                           "input": "x" * int(rows.length[i]), "output": "answer", "score": verdict})
            humans[tid] = int(rows.human[i])
    return traces, humans, drifted


def write_jsonl(path: Path, traces) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in traces))
    return path
