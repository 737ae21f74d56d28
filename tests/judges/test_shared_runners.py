"""Runners on many machines (issue 30 item 4): several `workbench judge run` processes share one run.

Real processes of the CLI, the real openai SDK over HTTP to the loopback server (which counts the requests per
item), on a real SQLite file and on a real Postgres server (tests/pg.py; the processes' runs on Postgres are
marked slow, run by CI's `-m ""`; the claims themselves are tested on both in the quick loop). Each (item, repeat) is claimed before its
request: N runners send each request once; a runner killed with SIGKILL mid-run leaves its claims to the others,
who finish the run with every judgment stored once, and only the requests the killed runner had in flight are sent
again.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from loopback_server import LoopbackServer
from workbench.store import Store, claims, leases
from workbench.store.db import now

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = """name: loop-rubric
judges:
  - id: loop
    model: openai-api/loopback/loop-model
    family: meta
"""
N_ITEMS, REPEATS, CONCURRENCY = 30, 2, 4
PLANNED = N_ITEMS * REPEATS


def postgres_target() -> str:
    try:
        from workbench.store.engines.urls import parse_target  # noqa: F401 - the store's Postgres support
    except ImportError:
        pytest.skip("this store does not open Postgres yet (no workbench.store.engines)")
    sys.path.insert(0, str(ROOT / "tests"))
    from pg import postgres_url  # skips with a sentence when no Postgres is installed

    return postgres_url()


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path: Path) -> str:
    return str(tmp_path / "w.db") if request.param == "sqlite" else postgres_target()


# the runs of several CLI processes take 10-20 s each on Postgres: there they run with the slow tests (CI runs all)
@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def cli_target(request, tmp_path: Path) -> str:
    return str(tmp_path / "w.db") if request.param == "sqlite" else postgres_target()


def _cli(db: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workbench.cli", "--db", db, *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=ROOT)


@pytest.fixture
def golden(cli_target: str, tmp_path: Path) -> str:
    target = cli_target
    (tmp_path / "r.yaml").write_text(RUBRIC)
    items = "".join(json.dumps({"id": f"i{n}", "input": f"Fix it. ITEM-MARKER i{n} EXPECT-SCORE {n % 3 - 1}",
                                "output": "done"}) + "\n" for n in range(N_ITEMS))
    (tmp_path / "items.jsonl").write_text(items)
    for args in (["rubric", "add", str(tmp_path / "r.yaml")], ["import", "items", str(tmp_path / "items.jsonl"),
                                                               "-g", "g"]):
        out = _cli(target, *args)
        assert out.returncode == 0, out.stderr
    return target


def _runner(db: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "workbench.cli", "--db", db, "judge", "run", "-g", "g", "-r",
                             "loop-rubric", "-j", "loop", "--repeats", str(REPEATS), "--concurrency",
                             str(CONCURRENCY)], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _recorded(stdout: str) -> int:
    """'Run run-1 of loop: 17 judgments recorded ...' -> 17."""
    return int(stdout.split(" judgments recorded")[0].rsplit(" ", 1)[1])


def _stored(db: str) -> tuple[int, int, str, int]:
    """(judgments, distinct (item, repeat), the run's status, claims taken over)."""
    with Store(db) as s:
        n, distinct = s.conn.execute(
            "SELECT count(*), count(DISTINCT item_content_hash || ':' || repeat) FROM judgments").fetchone()
        [run] = s.runs(s.golden_set("g").id)
        return n, distinct, run["status"], claims.takeovers(s, run["id"])


def test_four_runners_send_each_request_once(golden):
    with LoopbackServer(latency=0.02) as server:
        env = {**os.environ, **server.env()}
        server.hold(after=CONCURRENCY)  # everyone joins before the first runner can finish alone
        procs = [_runner(golden, env) for _ in range(4)]
        deadline = time.monotonic() + 60
        while server.held < 3 * CONCURRENCY and time.monotonic() < deadline:
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.05)  # polling the server's counters
        server.release()
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, outs
        requests = sum(server.received.values())
        per_item = set(server.received.values())
    n, distinct, status, taken = _stored(golden)
    assert requests == n == distinct == PLANNED  # total requests == judgments, each (item, repeat) once
    assert per_item == {REPEATS} and taken == 0
    recorded = [_recorded(out) for out, _ in outs]
    assert sum(recorded) == PLANNED and sum(r > 0 for r in recorded) >= 3, outs  # the work was shared
    assert status == "done"
    with Store(golden) as s:
        assert s.conn.execute("SELECT count(*) FROM leases").fetchone()[0] == 0  # every runner left


def test_a_runner_killed_mid_run_is_finished_by_the_others(golden):
    with LoopbackServer(latency=0.01) as server:
        env = {**os.environ, **server.env()}
        server.hold(after=PLANNED // 3)  # a third answered, then every runner's requests wait in flight
        procs = [_runner(golden, env) for _ in range(3)]
        deadline = time.monotonic() + 60
        while server.held < 3 * CONCURRENCY and time.monotonic() < deadline:
            assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
            time.sleep(0.05)
        assert server.held == 3 * CONCURRENCY  # each runner has its 4 requests in flight
        victim = procs[0]
        with Store(golden) as s:  # the victim's claims not stored, at the moment it dies
            [holder] = [h for h in leases.holders(s, "run:") if h.pid == victim.pid]
            in_flight = s.conn.execute("SELECT count(*) FROM run_claims WHERE token = ? AND done = 0",
                                       (holder.token,)).fetchone()[0]
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)  # reaped: its process id names no process, so its claims are free at once
        stored_at_kill = _stored(golden)[0]
        assert PLANNED // 3 <= stored_at_kill < PLANNED
        server.release()
        outs = [p.communicate(timeout=120) for p in procs[1:]]
        assert [p.returncode for p in procs[1:]] == [0, 0], outs
        requests = sum(server.received.values())
        abandoned = sum(server.abandoned.values())
    n, distinct, status, taken = _stored(golden)
    assert n == distinct == PLANNED and status == "done"  # every judgment stored exactly once, run done
    # paid twice: only the victim's requests in flight (sent, never answered to it), each at most once more
    assert CONCURRENCY <= in_flight <= 2 * CONCURRENCY  # its 4 sent + at most a claim batch not yet sent
    assert requests - n == abandoned == CONCURRENCY <= taken == in_flight
    assert max(server.received.values()) <= 2 * REPEATS
    with Store(golden) as s:
        assert s.conn.execute("SELECT count(*) FROM leases").fetchone()[0] == 0


def test_a_restart_finishes_the_run_of_a_killed_lone_runner(golden):
    with LoopbackServer(latency=0.01) as server:
        env = {**os.environ, **server.env()}
        server.hold(after=PLANNED // 2)
        victim = _runner(golden, env)
        deadline = time.monotonic() + 60
        while server.held < CONCURRENCY and time.monotonic() < deadline:
            assert victim.poll() is None, victim.communicate()
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        server.release()
        restart = _runner(golden, env)
        out, err = restart.communicate(timeout=120)
        assert restart.returncode == 0, err
        requests = sum(server.received.values())
    n, distinct, status, taken = _stored(golden)
    assert n == distinct == PLANNED and status == "done"
    assert requests - n == CONCURRENCY <= taken <= 2 * CONCURRENCY
    assert f"{PLANNED - PLANNED // 2} judgments recorded" in out


# --------------------------------------------------------------------------- the claims, in one process


@pytest.fixture
def run_store(target: str):
    """A store with one run to claim in (the demo's rubric and golden set are not needed: a bare run row)."""
    from workbench.calibration.rubric_versions import add_rubric, judge_row

    s = Store(target)
    add_rubric(s, ROOT / "rubrics" / "demo-patch-quality.yaml", actor="setup")
    gs = s.ensure_golden_set("g")
    pk = judge_row(s, s.conn.execute("SELECT id FROM rubrics").fetchone()[0], "test-results").pk
    run_id, _ = s.ensure_run(pk, gs, source="run", name="run-1")
    try:
        yield s, run_id
    finally:
        s.close()


KEYS = [(f"h{n}", r) for r in range(2) for n in range(5)]


def _foreign_runner(store: Store, run_id: int, *, pid: int, host: str, heartbeat_age_s: float) -> leases.Holder:
    at = datetime.now(timezone.utc)
    h = leases.Holder(key=claims.runner_prefix(run_id) + "other", token="other", pid=pid, host=host,
                      acquired_at=(at - timedelta(minutes=5)).isoformat(timespec="milliseconds"),
                      heartbeat_at=(at - timedelta(seconds=heartbeat_age_s)).isoformat(timespec="milliseconds"))
    with store.transaction():
        leases.write(store, h)
    return h


def test_a_live_runners_claims_are_never_taken(run_store):
    s, run_id = run_store
    other = _foreign_runner(s, run_id, pid=os.getpid(), host="another-machine", heartbeat_age_s=5)
    assert claims.claim(s, run_id, other, KEYS, want=3).claimed == tuple(KEYS[:3])
    me, blocker = claims.join(s, run_id)
    assert blocker is None
    got = claims.claim(s, run_id, me, KEYS, want=3)
    assert got.held == tuple(KEYS[:3]) and got.claimed == tuple(KEYS[3:6]) and got.taken_over == ()
    with s.transaction():
        assert claims.settle(s, run_id, KEYS[0], other)
        assert not claims.settle(s, run_id, KEYS[0], me)  # stored once: the second verdict is dropped
    again = claims.claim(s, run_id, me, KEYS, want=10)
    assert again.done == (KEYS[0],) and again.held == tuple(KEYS[1:3]) and again.claimed == tuple(KEYS[3:])
    # a batch run (alone on its run) is refused while shared runners are alive, and refuses them
    _, blocker = claims.join(s, run_id, exclusive=True)
    assert blocker is not None and blocker.token == other.token
    assert claims.takeovers(s, run_id) == 0


@pytest.mark.parametrize("gone", ["heartbeat stale on another host", "process gone on this host"])
def test_the_claims_of_a_runner_that_is_gone_are_taken_over_once(run_store, gone):
    s, run_id = run_store
    if gone.startswith("heartbeat"):
        other = _foreign_runner(s, run_id, pid=os.getpid(), host="another-machine",
                                heartbeat_age_s=leases.LEASE_STALE_S + 15)
    else:
        child = subprocess.Popen([sys.executable, "-c", "pass"])
        child.wait()
        other = _foreign_runner(s, run_id, pid=child.pid, host=socket.gethostname(), heartbeat_age_s=1)
    with s.transaction():  # claimed while it was alive
        for h, r in KEYS[:4]:
            s.conn.execute("INSERT INTO run_claims (run_id, content_hash, repeat, token, claimed_at) "
                           "VALUES (?, ?, ?, ?, ?)", (run_id, h, r, other.token, now()))
        claims.settle(s, run_id, KEYS[0], other)  # one of them it stored before it went
    me, _ = claims.join(s, run_id)
    got = claims.claim(s, run_id, me, KEYS, want=10)
    assert got.done == (KEYS[0],) and got.taken_over == tuple(KEYS[1:4]) and got.claimed == tuple(KEYS[1:])
    assert leases.current(s, other.key) is None  # its lease is gone: were it alive after all, it stops
    assert claims.claim(s, run_id, other, KEYS, want=1) is None
    assert claims.takeovers(s, run_id) == 3
    with s.transaction():
        assert claims.leave(s, run_id, me)
    assert s.conn.execute("SELECT count(*) FROM run_claims WHERE done = 0").fetchone()[0] == 0


# --------------------------------------------------------------------------- the service: status and leaving


def test_a_runner_that_stops_leaves_the_run_to_the_others_and_the_last_one_marks_it_done(demo_store):
    from workbench.features.judging import service as judging
    from workbench.judges.runner import plan_work

    def run(**kw):
        return judging.run(demo_store, "demo", "demo-patch-quality", "test-results", concurrency=1, **kw)

    p = judging.prepare_run(demo_store, "demo", "demo-patch-quality", "test-results")
    work, _ = plan_work(p.items, p.rubric.rubric, p.spec)
    other = _foreign_runner(demo_store, p.run_id, pid=os.getpid(), host=socket.gethostname(), heartbeat_age_s=1)
    with demo_store.transaction():  # a live runner holds the first 3 keys, their requests in flight
        for (_, h, r), _item in work[:3]:
            demo_store.conn.execute("INSERT INTO run_claims (run_id, content_hash, repeat, token, claimed_at) "
                                    "VALUES (?, ?, ?, ?, ?)", (p.run_id, h, r, other.token, now()))
    done = []
    first = run(progress=lambda n, total, cost: done.append(n), should_stop=lambda: len(done) >= 5)
    assert first["stopped"] == "stopped" and first["n_recorded"] == 5 and not first["complete"]
    [row] = demo_store.runs(demo_store.golden_set("demo").id, judge_row_pk(demo_store))
    assert row["status"] == "running"  # another runner still works on it: not 'stopped'
    unsent = demo_store.conn.execute("SELECT token FROM run_claims WHERE done = 0").fetchall()
    assert [t[0] for t in unsent] == [other.token] * 3  # none of this runner's left: only the other's
    with demo_store.transaction():  # the other runner's machine goes quiet
        demo_store.conn.execute("UPDATE leases SET host = 'another-machine', heartbeat_at = ? WHERE token = ?",
                                ((datetime.now(timezone.utc) - timedelta(minutes=5)).isoformat(), other.token))
    second = run()
    assert second["complete"] and second["n_recorded"] == len(work) - 5 and second["n_skipped"] == 5
    [row] = demo_store.runs(demo_store.golden_set("demo").id, judge_row_pk(demo_store))
    assert row["status"] == "done" and row["n_judgments"] == len(work)
    assert claims.takeovers(demo_store, p.run_id) == 3
    assert demo_store.conn.execute("SELECT count(*) FROM leases").fetchone()[0] == 0


def judge_row_pk(store: Store) -> int:
    from workbench.calibration.rubric_versions import get_rubric, judge_row

    return judge_row(store, get_rubric(store, "demo-patch-quality").id, "test-results").pk


# --------------------------------------------------------------------------- the runner and a shared sink


def test_the_runner_waits_for_keys_another_runner_holds_and_gives_back_what_it_gives_up(rubric):
    """Keys another live runner holds are looked at again until stored (never requested here) or given back
    (requested here then); a key this runner gives up on after its retries goes back to the others."""
    import asyncio
    import re

    from judge_fakes import ScriptedProvider, make_items, turn, verdict

    from workbench.core.models import JudgeSpec
    from workbench.judges import InMemorySink, ProviderError, plan_work, run_judge
    from workbench.judges.sink import ClaimOutcome

    spec = JudgeSpec(id="sonnet", model="anthropic/claude-sonnet-4-5")
    items = make_items(6)
    keys = {item.id: key for key, item in plan_work(items, rubric, spec)[0]}

    class SharedSink(InMemorySink):
        def __init__(self) -> None:
            super().__init__()
            self.owner = {keys["i1"]: "other", keys["i2"]: "other"}
            self.released: list = []

        async def aclaim(self, offered, want):
            claimed, done, held = [], [], []
            for k in offered:
                if len(claimed) >= want:
                    break
                if k in self.judgments:
                    done.append(k)
                elif self.owner.setdefault(k, "me") == "me":
                    claimed.append(k)
                else:
                    held.append(k)
            return ClaimOutcome(tuple(claimed), tuple(done), tuple(held))

        async def arelease(self, given_back):
            self.released += given_back
            for k in given_back:
                self.owner.pop(k, None)

    sink = SharedSink()
    overloaded = ProviderError("scripted", "overloaded", kind="overloaded", status_code=529)

    def reply(request, n):
        return overloaded if "ITEM-MARKER i0 " in request.messages[0]["content"] else turn(verdict_args=verdict(0))

    provider = ScriptedProvider(reply, delay=0.05)

    async def other_runner() -> None:
        await asyncio.sleep(0.3)
        sink.judgments[keys["i1"]] = "stored by the other runner"  # it stores i1 ...
        sink.owner.pop(keys["i2"])  # ... and gives i2 back

    async def main():
        other = asyncio.ensure_future(other_runner())

        async def no_wait(_s: float) -> None:
            return None

        report = await run_judge(items, rubric, spec, sink, provider=provider, concurrency=2, max_attempts=2,
                                 sleep=no_wait)
        await other
        return report

    report = asyncio.run(main())
    asked = [re.search(r"ITEM-MARKER (\S+)", r.messages[0]["content"]).group(1) for r in provider.requests]
    assert "i1" not in asked and asked.count("i2") == 1  # held: never asked; given back: asked once
    assert sorted(set(asked)) == ["i0", "i2", "i3", "i4", "i5"] and asked.count("i0") == 2  # tried twice
    assert report.n_recorded == 4 and report.n_elsewhere == 1 and report.n_failed == 1
    assert sink.released == [keys["i0"]]  # given up here: another runner may try it
