"""Import 300,000 items while 8 reviewers save labels and a judge run writes: the longest any writer waits.

Each reviewer is its own process saving a label every 50 ms (far faster than
a person); the judge run is its own process running the real runner against
the loopback OpenAI-compatible server, starting a new run whenever one ends.
The import goes into a new golden set (the common case for a big file). Every
wait is the wall time of one write call: a reviewer's ``submit_label``, the
run's ``SqliteRunSink.record`` (from the verdict in hand to its commit).

Afterwards: every verdict the server sent is in the database exactly once,
every reviewer's last score of every item is the stored label, and the whole
file landed. A second row times adding the same file to an existing set,
which lands in one transaction (the write lock is held for the copy only).

    python benchmarks/bench_concurrent_import.py [N_ITEMS]
"""

from __future__ import annotations

import json
import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUBRIC = "bench-rubric"
RUBRIC_YAML = f"""name: {RUBRIC}
judges:
  - id: loop
    model: openai-api/loopback/bench-model
"""
LIVE_ITEMS = 400  # the golden set the reviewers label and the run judges


def write_items(path: Path, n: int, prefix: str) -> None:
    with path.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"{prefix}{i}", "task_id": f"t{i // 3}", "category": "abcd"[i % 4],
                                 "input": f"Fix bug {i}. ITEM-MARKER {prefix}{i} EXPECT-SCORE {i % 3 - 1}",
                                 "output": f"patched {i}", "producer": {"model": "m", "family": "openai"}}) + "\n")


def setup(tmp: Path) -> Path:
    from workbench.features.importing.service import import_items
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.store import Store

    db = tmp / "bench.db"
    (tmp / "rubric.yaml").write_text(RUBRIC_YAML)
    write_items(tmp / "live.jsonl", LIVE_ITEMS, "live")
    with Store(db) as s:
        add_rubric(s, tmp / "rubric.yaml")
        import_items(s, tmp / "live.jsonl", "live")
    return db


# -- the writers (each in its own process) ----------------------------------------

def _importer(db: str, items: str, golden_set: str, out: mp.Queue) -> None:
    from workbench.features.importing.service import import_items
    from workbench.store import Store

    t0 = time.perf_counter()
    with Store(db) as s:
        r = import_items(s, items, golden_set)
    out.put(("import", {"added": r.added, "seconds": time.perf_counter() - t0,
                        "write_lock_s": r.details["write_lock_s"]}))


def _reviewer(db: str, rater: str, stop, out: mp.Queue, pace_s: float) -> None:
    from workbench.features.labeling.service import submit_label
    from workbench.store import Store

    waits: list[float] = []
    last: dict[str, int] = {}
    offset = int(rater[1:]) * 37
    with Store(db) as s:
        n = 0
        while not stop.is_set():
            item = f"live{(offset + n) % LIVE_ITEMS}"
            score = (n // LIVE_ITEMS + int(rater[1:])) % 3 - 1  # each pass over the items changes every score
            t0 = time.perf_counter()
            submit_label(s, "live", RUBRIC, item, rater, score, "benchmark")
            waits.append(time.perf_counter() - t0)
            last[item] = score
            n += 1
            stop.wait(pace_s)
    out.put(("reviewer", {"rater": rater, "waits": waits, "last": last}))


def _runner(db: str, env: dict, stop, out: mp.Queue) -> None:
    from workbench.features.judging import service as judging
    from workbench.store import Store

    waits: list[float] = []
    record = judging.SqliteRunSink.record

    def timed(self, key, judgment) -> None:
        t0 = time.perf_counter()
        record(self, key, judgment)
        waits.append(time.perf_counter() - t0)

    judging.SqliteRunSink.record = timed
    recorded = runs = 0
    with Store(db) as s:
        while not stop.is_set():
            summary = judging.run(s, "live", RUBRIC, "loop", new_run=runs > 0, concurrency=8,
                                  should_stop=stop.is_set, provider_options={"env": env, "max_retries": 0})
            recorded += summary["n_recorded"]
            runs += 1
    out.put(("run", {"waits": waits, "recorded": recorded, "runs": runs}))


# -- the measurement -------------------------------------------------------------

def measure(n_items: int = 300_000, *, reviewers: int = 8, pace_s: float = 0.05, latency_s: float = 0.05,
            tmp: Path | None = None) -> dict:
    """Run the scenario once; returns the longest waits, the counts and whether anything was lost."""
    from tests.judges.loopback_server import LoopbackServer
    from workbench.store import Store

    own = tempfile.TemporaryDirectory() if tmp is None else None
    tmp = Path(own.name) if own else tmp
    try:
        db = setup(tmp)
        items = tmp / "big.jsonl"
        write_items(items, n_items, "b")
        ctx = mp.get_context("spawn")
        out = ctx.Queue()
        stop = ctx.Event()
        with LoopbackServer(latency=latency_s) as server:
            others = [ctx.Process(target=_reviewer, args=(str(db), f"r{k}", stop, out, pace_s))
                      for k in range(reviewers)]
            others.append(ctx.Process(target=_runner, args=(str(db), server.env(), stop, out)))
            for p in others:
                p.start()
            _wait_until_writing(db, server)
            importer = ctx.Process(target=_importer, args=(str(db), str(items), "big", out))
            importer.start()
            results = [out.get(timeout=1800)]  # the import's result: the others stop after it
            importer.join()
            stop.set()
            results += [out.get(timeout=300) for _ in others]
            for p in others:
                p.join(60)
            answered = sum(server.answered.values())
        by_kind: dict[str, list[dict]] = {}
        for kind, r in results:
            by_kind.setdefault(kind, []).append(r)
        [imp], [run] = by_kind["import"], by_kind["run"]
        review_waits = [w for r in by_kind["reviewer"] for w in r["waits"]]
        with Store(db) as s:
            judgments = s.conn.execute("SELECT count(*) FROM judgments").fetchone()[0]
            doubled = s.conn.execute("SELECT count(*) FROM (SELECT 1 FROM judgments GROUP BY run_id, item_pk, "
                                     "repeat HAVING count(*) > 1)").fetchone()[0]
            stored = {(l["rater"], l["item_id"]): l["score"] for l in s.labels(s.golden_set("live").id, RUBRIC)}
            big = s.conn.execute("SELECT count(*) FROM items i JOIN golden_sets g ON g.id = i.golden_set_id "
                                 "WHERE g.name = 'big'").fetchone()[0]
        expected = {(r["rater"], item): score for r in by_kind["reviewer"] for item, score in r["last"].items()}
        return {
            "n_items": n_items, "imported": big, "import_s": imp["seconds"], "import_lock_s": imp["write_lock_s"],
            "reviewers": reviewers, "saves": len(review_waits), "max_review_wait_s": max(review_waits),
            "run_writes": len(run["waits"]), "max_run_wait_s": max(run["waits"]), "runs": run["runs"],
            "answered": answered, "judgments": judgments, "doubled": doubled,
            "labels_ok": stored == expected, "lost_verdicts": answered - judgments,
        }
    finally:
        if own:
            own.cleanup()


def _wait_until_writing(db: Path, server) -> None:
    """Start the import only once the reviewers and the run are all writing."""
    from workbench.store import Store

    deadline = time.monotonic() + 120
    with Store(db) as s:
        while time.monotonic() < deadline:
            raters = s.conn.execute("SELECT count(DISTINCT rater) FROM labels").fetchone()[0]
            if raters >= 1 and sum(server.answered.values()) >= 8:
                return
            time.sleep(0.05)  # polling the database and the server's counters
    raise RuntimeError("the reviewers and the run did not start writing within 120 s")


def measure_append(n_items: int = 300_000) -> dict:
    """Add the file to a golden set that already exists: the single landing transaction."""
    from workbench.features.importing.service import import_items
    from workbench.store import Store

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        db = setup(tmp)
        write_items(tmp / "big.jsonl", n_items, "b")
        with Store(db) as s:
            t0 = time.perf_counter()
            r = import_items(s, tmp / "big.jsonl", "live")
            return {"added": r.added, "seconds": time.perf_counter() - t0, "write_lock_s": r.details["write_lock_s"]}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    m = measure(n)
    a = measure_append(n)
    ok = "nothing lost" if m["lost_verdicts"] == 0 and not m["doubled"] and m["labels_ok"] else "LOST WRITES"
    print("| benchmark | result | target |\n|---|---|---|")
    print(f"| import {n:,} items into a new golden set while {m['reviewers']} reviewers save ({m['saves']:,} saves) "
          f"and a judge run writes ({m['run_writes']:,} verdicts): longest reviewer wait | "
          f"{m['max_review_wait_s']:.3f} s | < 2 s |")
    print(f"| ... longest wait of a run's verdict for the database | {m['max_run_wait_s']:.3f} s | < 2 s, "
          f"{ok} ({m['answered']:,} answered, {m['judgments']:,} stored) |")
    print(f"| ... the import: longest hold of the write lock / wall time | {m['import_lock_s']:.3f} s / "
          f"{m['import_s']:.0f} s | |")
    print(f"| add {n:,} items to an existing golden set: write lock held once / wall time | "
          f"{a['write_lock_s']:.2f} s / {a['seconds']:.0f} s | |")


if __name__ == "__main__":
    main()
