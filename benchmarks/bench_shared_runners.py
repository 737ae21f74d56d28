"""Runners on many machines (issue 30 items 4 and 7): 4 `workbench judge run` processes on one run against the
loopback server, against 1 runner: requests sent vs judgments stored, and wall time.

Each runner is the CLI in its own process (`--concurrency 8`), started together on the same `--db`; the loopback
server (in this process) answers after `--latency` seconds and counts the requests per item. A third measurement
kills one of the 4 runners with SIGKILL once half the judgments are stored: the others finish the run, and the
requests sent twice are only those the killed runner had in flight.

Two times: the wall time from starting the processes to the last one's exit (each process imports the workbench
and its SDK first, 1-3 s on a loaded machine), and the judging time the server saw, from the first request to the
last answer; the ideal is the planned judgments x latency / (runners x concurrency).

    python benchmarks/bench_shared_runners.py [--items 2000] [--latency 0.1] [--engine sqlite|postgres|both]

Postgres: the server ``WORKBENCH_BENCH_PG`` names, else a throw-away server started with tests/pg.py.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUBRIC = """name: bench-shared
judges:
  - id: loop
    model: openai-api/loopback/loop-model
"""
CONCURRENCY = 8


@dataclass(frozen=True)
class Measured:
    engine: str
    runners: int
    killed: bool
    planned: int
    requests: int
    judgments: int
    distinct: int
    takeovers: int
    status: str
    wall_s: float
    judging_s: float
    ideal_s: float

    @property
    def ok(self) -> bool:
        once = self.judgments == self.distinct == self.planned and self.status == "done"
        return once and (self.requests - self.judgments <= self.takeovers if self.killed
                         else self.requests == self.judgments)


def _cli(db: str, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "workbench.cli", "--db", db, *args], check=True, capture_output=True,
                   cwd=ROOT)


def setup(db: str, folder: Path, n_items: int) -> str:
    """The rubric and a fresh golden set of ``n_items``; returns the golden set's name."""
    name = f"g-{secrets.token_hex(3)}"
    (folder / "r.yaml").write_text(RUBRIC)
    (folder / f"{name}.jsonl").write_text("".join(
        json.dumps({"id": f"i{n}", "input": f"Fix it. ITEM-MARKER {name}-{n} EXPECT-SCORE {n % 3 - 1}",
                    "output": "done"}) + "\n" for n in range(n_items)))
    _cli(db, "rubric", "add", str(folder / "r.yaml"))
    _cli(db, "import", "items", str(folder / f"{name}.jsonl"), "-g", name)
    return name


def _stored(db: str, golden_set: str) -> tuple[int, int, str, int]:
    from workbench.store import Store, claims

    with Store(db) as s:
        [run] = s.runs(s.golden_set(golden_set).id)
        n, distinct = s.conn.execute(
            "SELECT count(*), count(DISTINCT item_content_hash || ':' || repeat) FROM judgments WHERE run_id = ?",
            (run["id"],)).fetchone()
        return n, distinct, run["status"], claims.takeovers(s, run["id"])


def _timed_server(latency: float):
    """The loopback server, noting when the first request came and the last answer went."""
    from workbench.features.demo.loopback_server import LoopbackServer

    class Timed(LoopbackServer):
        first = last = 0.0

        async def _handle(self, *args, **kwargs):
            self.first = self.first or time.perf_counter()
            out = await super()._handle(*args, **kwargs)
            self.last = time.perf_counter()
            return out

    return Timed(latency=latency)


def measure(db: str, folder: Path, *, runners: int, n_items: int, latency: float, kill: bool = False) -> Measured:
    golden_set = setup(db, folder, n_items)
    cmd = [sys.executable, "-m", "workbench.cli", "--db", db, "judge", "run", "-g", golden_set, "-r",
           "bench-shared", "-j", "loop", "--concurrency", str(CONCURRENCY)]
    with _timed_server(latency) as server:
        env = {**os.environ, **server.env()}
        started = time.perf_counter()
        procs = [subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                 for _ in range(runners)]
        if kill:
            while sum(server.answered.values()) < n_items // 2:
                time.sleep(0.02)
            procs[0].send_signal(signal.SIGKILL)
            procs[0].wait()
        for p in procs[1:] if kill else procs:
            if p.wait() != 0:
                raise SystemExit(f"a runner failed: {p.stderr.read().decode()[-2000:]}")
        wall = time.perf_counter() - started
        requests = sum(server.received.values())
        judging = server.last - server.first
    n, distinct, status, taken = _stored(db, golden_set)
    return Measured("postgres" if "://" in db else "sqlite", runners, kill, n_items, requests, n, distinct, taken,
                    status, wall, judging, n_items * latency / (runners * CONCURRENCY))


def postgres_target() -> str:
    """WORKBENCH_BENCH_PG, else a fresh database on a throw-away server (tests/pg.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import pg

    return pg.benchmark_url()


def row(m: Measured, latency: float) -> str:
    what = (f"{m.runners} runner{'s' if m.runners > 1 else ''} on one run"
            + (", one killed with SIGKILL halfway" if m.killed else "")
            + f", {m.planned:,} judgments, loopback at {latency * 1000:.0f} ms, concurrency {CONCURRENCY} each, "
              f"{m.engine}")
    paid = m.requests - m.judgments
    verdict = "each stored once" if m.ok else "NOT EACH STORED ONCE"
    return (f"| {what}: requests / judgments, wall time | {m.requests:,} / {m.judgments:,} ({paid} sent twice, "
            f"{m.takeovers} claims taken over); judging {m.judging_s:.1f} s (ideal {m.ideal_s:.1f} s), wall "
            f"{m.wall_s:.1f} s with the processes' start; {verdict} | "
            + ("requests - judgments <= claims the killed runner held |" if m.killed else "requests = judgments |"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds the loopback server takes per answer")
    ap.add_argument("--engine", choices=["postgres", "sqlite", "both"], default="both")
    args = ap.parse_args()
    rows: list[Measured] = []
    with tempfile.TemporaryDirectory() as d:
        for engine in (["sqlite", "postgres"] if args.engine == "both" else [args.engine]):
            for runners, kill in ((1, False), (4, False), (4, True)):
                folder = Path(d) / f"{engine}-{runners}-{kill}"
                folder.mkdir()
                db = postgres_target() if engine == "postgres" else str(folder / "bench.db")
                rows.append(measure(db, folder, runners=runners, n_items=args.items, latency=args.latency,
                                    kill=kill))
                print(row(rows[-1], args.latency), file=sys.stderr, flush=True)
    print("| benchmark | result | target |\n|---|---|---|")
    for m in rows:
        print(row(m, args.latency))
    return 0 if all(m.ok for m in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
