"""A judge run outlasts a database another connection holds locked, without losing a verdict.

Another connection holds the write lock for 3 s, ten times the busy timeout,
while the run's replies keep arriving from the loopback server: every verdict
the server sent is written once the lock is gone, and the event loop keeps
turning all the while (the writes wait in a worker thread, not on the loop).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import write
from tests.judges.loopback_server import LoopbackServer
from workbench.judges.runner import run_judge
from workbench.features.importing import service as importing
from workbench.features.judging import service as judging
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

N = 40
LOCK_S = 3.0
RUBRIC = """name: loop-rubric
judges:
  - id: loop
    model: openai-api/loopback/loop-model
"""


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    db = tmp_path / "w.db"
    with Store(db) as s:
        add_rubric(s, write(tmp_path / "r.yaml", RUBRIC))
        importing.import_items(s, write(tmp_path / "items.jsonl", "".join(
            json.dumps({"id": f"i{n}", "input": f"ITEM-MARKER i{n} EXPECT-SCORE 1", "output": "ok"}) + "\n"
            for n in range(N))), "g")
    return db


def _hold_write_lock(db: Path, locked: threading.Event, seconds: float) -> None:
    conn = sqlite3.connect(str(db), isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    locked.set()
    time.sleep(seconds)  # the fault itself: the lock is held this long
    conn.execute("COMMIT")
    conn.close()


def test_run_outlasts_a_locked_database_without_losing_a_verdict(golden, monkeypatch):
    monkeypatch.setenv("WORKBENCH_BUSY_TIMEOUT_MS", "300")  # each write attempt gives up after 0.3 s
    gaps: list[float] = []
    locker: list[threading.Thread] = []
    lock_window: list[float] = []

    def progress(done: int, total: int, cost: float) -> None:
        if done == 3 and not locker:
            locked = threading.Event()
            t = threading.Thread(target=_hold_write_lock, args=(golden, locked, LOCK_S))
            t.start()
            locked.wait(10)
            lock_window.append(time.monotonic())
            locker.append(t)

    with LoopbackServer(latency=0.02) as server, Store(golden) as store:
        p = judging.prepare_run(store, "g", "loop-rubric", "loop")

        async def main():
            stop = asyncio.Event()

            async def tick() -> None:  # how long the event loop goes without running a callback
                last = time.perf_counter()
                while not stop.is_set():
                    await asyncio.sleep(0.02)
                    now = time.perf_counter()
                    gaps.append(now - last)
                    last = now

            ticker = asyncio.create_task(tick())
            try:
                return await run_judge(p.items, p.rubric.rubric, p.spec, p.sink, concurrency=4, progress=progress,
                                       provider_options={"env": server.env(), "max_retries": 0})
            finally:
                stop.set()
                await ticker

        report = asyncio.run(main())
        locker[0].join()
        answered = sum(server.answered.values())
        finished = time.monotonic()

    assert finished - lock_window[0] >= LOCK_S  # the run was still writing when the lock went away
    assert answered == N and report.n_recorded == N and report.n_failed == 0
    with Store(golden) as s:
        rows = s.conn.execute("SELECT count(*), count(DISTINCT item_pk) FROM judgments").fetchone()
    assert tuple(rows) == (N, N)  # every verdict the server sent, once
    assert max(gaps) < 0.5, f"the event loop stalled {max(gaps):.2f} s on a database write"
