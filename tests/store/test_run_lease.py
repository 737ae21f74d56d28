"""A judge run is leased: runners of one run share it (each request once), a batch run is alone on its run, and
the lease of a runner that is gone is taken over.

Two `workbench judge run` processes started together against the loopback
server share the run and send each request once (until the shared runs of
issue 30 item 4, the second was refused; tests/judges/test_shared_runners.py
tests the sharing further).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.conftest import write
from tests.judges.loopback_server import LoopbackServer
from workbench.core.errors import Conflict
from workbench.features.judging import service as judging
from workbench.store import Store, leases

from tests.test_judge_run_e2e import N, RUBRIC, _judge_cmd  # the same loopback judge, size and command


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    db = tmp_path / "w.db"
    items = "".join(json.dumps({"id": f"i{n}", "input": f"Fix it. ITEM-MARKER i{n} EXPECT-SCORE {n % 3 - 1}",
                                "output": "done"}) + "\n" for n in range(N))
    for args in (["rubric", "add", write(tmp_path / "r.yaml", RUBRIC)],
                 ["import", "items", write(tmp_path / "items.jsonl", items), "-g", "g"]):
        subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(db), *map(str, args)], check=True,
                       capture_output=True)
    return db


def test_two_runner_processes_share_the_run_and_send_each_request_once(golden):
    with LoopbackServer(latency=0.01) as server:
        env = {**os.environ, **server.env()}
        server.hold(after=N // 4)  # the run that gets going stays busy until the other has sent requests too
        procs = [subprocess.Popen(_judge_cmd(golden), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        deadline = time.monotonic() + 90
        while server.held <= 4 and time.monotonic() < deadline:  # one runner holds at most 4 (--concurrency 4)
            assert all(p.poll() is None for p in procs)
            time.sleep(0.05)  # polling the server's counters
        server.release()
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        assert {k: v for k, v in server.received.items() if v != 1} == {}  # no request paid for twice
        assert len(server.received) == N
    recorded = [int(out.split(" judgments recorded")[0].rsplit(" ", 1)[1]) for out, _ in outs]
    assert sum(recorded) == N and min(recorded) > 0, outs  # both judged, each judgment once
    assert all("stored by other runners of the run" in out for out, _ in outs)
    with Store(golden) as s:
        [run] = s.runs(s.golden_set("g").id)
        assert run["status"] == "done" and run["n_judgments"] == N
        assert s.conn.execute("SELECT count(*) FROM leases").fetchone()[0] == 0  # released at the end


def _python_judge_run(store: Store, **kw):
    return judging.run(store, "demo", "demo-patch-quality", "test-results", **kw)


def _lease_row(store: Store, run_id: int, *, pid: int, host: str, heartbeat_age_s: float) -> None:
    at = datetime.now(timezone.utc)
    beat = (at - timedelta(seconds=heartbeat_age_s)).isoformat(timespec="milliseconds")
    with store.transaction():
        store.conn.execute("INSERT INTO leases (key, token, pid, host, acquired_at, heartbeat_at) "
                           "VALUES (?, 'someone-else', ?, ?, ?, ?)",
                           (f"run:{run_id}", pid, host, (at - timedelta(minutes=5)).isoformat(), beat))


def _current_run_id(store: Store) -> int:
    p = judging.prepare_run(store, "demo", "demo-patch-quality", "test-results")
    return p.run_id


def test_live_lease_refuses_a_second_runner_with_who_holds_it(demo_store):
    run_id = _current_run_id(demo_store)
    _lease_row(demo_store, run_id, pid=os.getpid(), host=socket.gethostname(), heartbeat_age_s=1)
    with pytest.raises(Conflict) as e:
        _python_judge_run(demo_store)
    msg = str(e.value)
    assert f"process {os.getpid()} on host '{socket.gethostname()}' since " in msg and "UTC" in msg
    assert "taken over" in msg and msg.count(";") == 1
    assert demo_store.conn.execute("SELECT count(*) FROM judgments WHERE run_id = ?", (run_id,)).fetchone()[0] == 0
    holder = judging.run_holder(demo_store, "demo", "demo-patch-quality", "test-results")
    assert holder["pid"] == os.getpid() and holder["run"] == judging.prepare_run(
        demo_store, "demo", "demo-patch-quality", "test-results").run_name


def test_stale_lease_is_taken_over(demo_store):
    run_id = _current_run_id(demo_store)
    # a live process id (ours) on another host whose heartbeat stopped 45 s ago
    _lease_row(demo_store, run_id, pid=os.getpid(), host="some-other-host", heartbeat_age_s=45)
    assert judging.run_holder(demo_store, "demo", "demo-patch-quality", "test-results") is None
    summary = _python_judge_run(demo_store)
    assert summary["complete"] and summary["n_recorded"] == 150
    assert demo_store.conn.execute("SELECT count(*) FROM leases").fetchone()[0] == 0


def test_lease_of_a_dead_process_on_this_host_is_taken_over_at_once(demo_store):
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # its process id now names no process
    run_id = _current_run_id(demo_store)
    _lease_row(demo_store, run_id, pid=child.pid, host=socket.gethostname(), heartbeat_age_s=1)
    assert _python_judge_run(demo_store)["n_recorded"] == 150


def test_a_runner_whose_lease_is_taken_over_stops(demo_store, monkeypatch):
    """If another process takes the lease (this one stalled past the limit), this one stops sending."""
    monkeypatch.setattr(leases, "HEARTBEAT_S", 0.05)
    keepers: list[leases.LeaseKeeper] = []

    class Recording(leases.LeaseKeeper):
        def start(self) -> leases.LeaseKeeper:
            keepers.append(self)
            return super().start()

    monkeypatch.setattr(leases, "LeaseKeeper", Recording)

    def progress(done: int, total: int, cost: float) -> None:
        if done == 5:  # someone else takes the run over mid-way
            with Store(demo_store.path) as other, other.transaction():
                other.conn.execute("UPDATE leases SET token = 'thief', pid = 1 WHERE key LIKE 'run:%'")
            assert keepers[0].lost.wait(10)  # the next heartbeat finds the lease gone

    summary = judging.run(demo_store, "demo", "demo-patch-quality", "test-results", concurrency=1,
                          progress=progress)
    assert summary.get("lease_lost") and summary["stopped"] == "stopped"
    assert summary["n_recorded"] == 5
    # the thief's lease is left alone, and the run's status is the thief's to set
    assert demo_store.conn.execute("SELECT token FROM leases").fetchone()[0] == "thief"
