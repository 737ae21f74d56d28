"""20 reviewers saving labels at once against one Postgres, and against one SQLite file for comparison (issue 30
item 7): the p95 latency of a save, and whether any label was lost or written twice.

Each reviewer is its own process with its own connection, released together; each saves its labels one after
another as fast as the database takes them (far faster than a person), through the reviewer's own
``submit_label`` (the save, its label event, its audit entry and the reservation's release: one transaction).
Reviewers label overlapping items (as a golden set's overlap asks) and change a share of their labels, so the
saves meet on the same rows. A save's latency is the wall time of that call.

Afterwards, in the database: one label per (reviewer, item) holding the reviewer's last score, one ``insert``
label event per label and one ``update`` event per change (no more, no fewer), and one audit entry per save that
changed something.

    python benchmarks/bench_concurrent_reviewers.py [--reviewers 20] [--labels 50] [--engine postgres|sqlite|both]

Postgres: the server ``WORKBENCH_BENCH_PG`` names (a URL of a database the run may add a golden set to), else a
throw-away server started with tests/pg.py (initdb/pg_ctl in a temporary folder; needs the postgresql binaries).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUBRIC = "bench-reviewers"
RUBRIC_YAML = f"""name: {RUBRIC}
judges:
  - id: none
    model: openai-api/loopback/bench-model
"""
CHANGE_EVERY = 5  # every 5th label is saved again with another score (a reviewer changing their mind)


def plan(reviewer: int, n_items: int, labels: int) -> list[tuple[str, int]]:
    """(item id, score) of one reviewer's saves, in order: ``labels`` items from the reviewer's own offset (so
    neighbours share items), then every CHANGE_EVERY-th of them again with the next score.

    >>> plan(1, 10, 3)
    [('item-0003', 0), ('item-0004', 1), ('item-0005', -1), ('item-0003', 1)]
    """
    items = [f"item-{(reviewer * 3 + k) % n_items:04d}" for k in range(labels)]
    first = [(item, (reviewer + k) % 3 - 1) for k, item in enumerate(items)]
    return first + [(item, (score + 2) % 3 - 1) for item, score in first[::CHANGE_EVERY]]


def setup(target: str, golden_set: str, n_items: int, folder: Path) -> None:
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.features.importing.service import import_items
    from workbench.store import Store

    (folder / "rubric.yaml").write_text(RUBRIC_YAML)
    items = folder / "items.jsonl"
    items.write_text("".join(f'{{"id": "item-{i:04d}", "input": "Fix bug {i}.", "output": "patched {i}"}}\n'
                             for i in range(n_items)))
    with Store(target) as s:
        add_rubric(s, folder / "rubric.yaml", actor="bench")
        import_items(s, items, golden_set)


def _reviewer(target: str, golden_set: str, rater: str, saves: list, ready, go, out) -> None:
    from workbench.features.labeling.service import submit_label
    from workbench.store import Store

    waits, changed, failed = [], 0, []
    with Store(target) as s:
        ready.put(rater)
        go.wait()
        for item, score in saves:
            t0 = time.perf_counter()
            try:
                changed += submit_label(s, golden_set, RUBRIC, item, rater, score, "benchmark")
            except Exception as e:  # noqa: BLE001 - a failed save is a result of the benchmark, not its end
                failed.append(f"{item}: {e}")
            waits.append(time.perf_counter() - t0)
    out.put((rater, waits, changed, failed))


def measure(target: str, *, reviewers: int = 20, labels: int = 50, tmp: Path | None = None) -> dict:
    """Run the scenario once on ``target`` (an SQLite path or a Postgres URL); returns latencies and the checks."""
    golden_set = f"reviewers-{secrets.token_hex(4)}"
    n_items = max(labels * 2, reviewers * 3)
    own = tempfile.TemporaryDirectory() if tmp is None else None
    folder = Path(own.name) if own else tmp
    try:
        setup(target, golden_set, n_items, folder)
        plans = {f"rev{k:02d}": plan(k, n_items, labels) for k in range(reviewers)}
        ctx = mp.get_context("spawn")
        ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
        procs = [ctx.Process(target=_reviewer, args=(target, golden_set, r, p, ready, go, out))
                 for r, p in plans.items()]
        for p in procs:
            p.start()
        for _ in procs:
            ready.get(timeout=300)  # every reviewer connected: release them together
        t0 = time.perf_counter()
        go.set()
        results = [out.get(timeout=900) for _ in procs]
        wall = time.perf_counter() - t0
        for p in procs:
            p.join(60)
        waits = sorted(w for _, ws, _, _ in results for w in ws)
        failed = [f for *_, fs in results for f in fs]
        return {"engine": "postgres" if "://" in target else "sqlite", "reviewers": reviewers,
                "saves": len(waits), "wall_s": wall, "p50_ms": 1000 * statistics.median(waits),
                "p95_ms": 1000 * waits[int(0.95 * (len(waits) - 1))], "max_ms": 1000 * waits[-1],
                "failed": failed, **check(target, golden_set, plans, sum(c for _, _, c, _ in results))}
    finally:
        if own:
            own.cleanup()


def check(target: str, golden_set: str, plans: dict[str, list], changed: int) -> dict:
    """What the database holds against what the reviewers saved: lost, doubled and wrong labels and events."""
    from workbench.store import Store

    expected: dict[tuple[str, str], int] = {}
    inserts = updates = 0
    for rater, saves in plans.items():
        for item, score in saves:
            key = (rater, item)
            if key not in expected:
                inserts += 1
            elif expected[key] != score:
                updates += 1
            expected[key] = score
    with Store(target) as s:
        gs = s.golden_set(golden_set).id
        stored = {(r["rater"], r["item_id"]): r["score"] for r in s.labels(gs, RUBRIC)}
        q = lambda sql: s.conn.execute(sql, (gs,)).fetchall()  # noqa: E731
        events = {tuple(r) for r in q("""SELECT e.event, count(*) FROM label_events e JOIN items i ON i.pk = e.item_pk
                                          WHERE i.golden_set_id = ? GROUP BY e.event""")}
        doubled = q("""SELECT count(*) FROM (SELECT e.label_id FROM label_events e JOIN items i ON i.pk = e.item_pk
                       WHERE i.golden_set_id = ? AND e.event = 'insert' GROUP BY e.label_id HAVING count(*) > 1) d""")
        audited = s.conn.execute("SELECT count(*) FROM audit_log WHERE action LIKE 'label.%' AND target LIKE ?",
                                 (f"{golden_set}/%",)).fetchone()[0]
    events = dict(events)
    return {"labels": len(stored), "expected_labels": len(expected),
            "lost": len(set(expected) - set(stored)), "wrong": sum(stored.get(k) != v for k, v in expected.items()),
            "doubled": doubled[0][0], "inserts": events.get("insert", 0), "expected_inserts": inserts,
            "updates": events.get("update", 0), "expected_updates": updates, "changed": changed,
            "audited": audited}


def ok(m: dict) -> bool:
    """No label lost, doubled or wrong; the events and the audit log count exactly the changes made."""
    return (not m["failed"] and m["lost"] == m["wrong"] == m["doubled"] == 0 and m["labels"] == m["expected_labels"]
            and m["inserts"] == m["expected_inserts"] and m["updates"] == m["expected_updates"]
            and m["changed"] == m["audited"] == m["inserts"] + m["updates"])


def postgres_target() -> str:
    """WORKBENCH_BENCH_PG, else a fresh database on a throw-away server (tests/pg.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import pg

    return pg.benchmark_url()


def row(m: dict) -> str:
    verdict = "nothing lost or doubled" if ok(m) else f"LOST OR DOUBLED: {m}"
    return (f"| {m['reviewers']} reviewers saving labels at once ({m['saves']:,} saves, {m['expected_labels']:,} "
            f"labels, {m['updates']:,} changed), {m['engine']}: save latency p50 / p95 / max | "
            f"{m['p50_ms']:.1f} / {m['p95_ms']:.1f} / {m['max_ms']:.0f} ms ({m['saves'] / m['wall_s']:.0f} "
            f"saves/s), {verdict} | p95 < 200 ms, nothing lost |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reviewers", type=int, default=20)
    ap.add_argument("--labels", type=int, default=50, help="labels each reviewer saves (plus every 5th changed)")
    ap.add_argument("--engine", choices=["postgres", "sqlite", "both"], default="both")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        if args.engine in ("postgres", "both"):
            rows.append(measure(postgres_target(), reviewers=args.reviewers, labels=args.labels))
        if args.engine in ("sqlite", "both"):
            rows.append(measure(str(Path(d) / "bench.db"), reviewers=args.reviewers, labels=args.labels))
    print("| benchmark | result | target |\n|---|---|---|")
    for m in rows:
        print(row(m))
    return 0 if all(ok(m) for m in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
