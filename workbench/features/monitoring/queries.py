"""SQL of monitoring: streams, their epochs (one per approved bundle), ingests and traces.

Written in the subset SQLite and Postgres share (``?`` placeholders, ``RETURNING id``, ``ON CONFLICT``); every
write runs in the caller's ``store.transaction()``.
"""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from workbench.core.errors import NotFound
from workbench.features.monitoring.records import DayAggregate, StoredTrace, StreamBundle
from workbench.store.db import now
from workbench.store.store import Store

PAGE = 5000  # ids a lookup names at once (SQLite allows 32,766 parameters a statement, Postgres 65,535)
TRACE_COLUMNS = ("stream_id", "epoch_id", "ingest_id", "trace_id", "ts", "category", "input_chars", "score",
                 "unscored_reason", "sampled", "inclusion_prob", "content_sha256")


def stream_id(store: Store, name: str) -> int | None:
    row = store.conn.execute("SELECT id FROM monitor_streams WHERE name = ?", (name,)).fetchone()
    return None if row is None else int(row[0])


def ensure_stream(store: Store, name: str) -> int:
    store.conn.execute("INSERT INTO monitor_streams (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                       (name, now()))
    return int(store.conn.execute("SELECT id FROM monitor_streams WHERE name = ?", (name,)).fetchone()[0])


def stream_names(store: Store) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT name FROM monitor_streams ORDER BY name").fetchall()]


def ensure_epoch(store: Store, stream: int, bundle: dict, file: str) -> int:
    """The stream's epoch of this bundle (a new bundle starts a new one)."""
    sha = str(bundle.get("sha256"))
    store.conn.execute("""INSERT INTO monitor_epochs (stream_id, bundle_sha256, bundle_file, bundle, started_at)
                          VALUES (?, ?, ?, ?, ?) ON CONFLICT (stream_id, bundle_sha256) DO NOTHING""",
                       (stream, sha, file, json.dumps(bundle, sort_keys=True), now()))
    return int(store.conn.execute("SELECT id FROM monitor_epochs WHERE stream_id = ? AND bundle_sha256 = ?",
                                  (stream, sha)).fetchone()[0])


def current_epoch(store: Store, name: str) -> tuple[int, int, StreamBundle]:
    """(stream id, epoch id, bundle) of the stream's newest epoch."""
    sid = stream_id(store, name)
    row = None if sid is None else store.conn.execute(
        "SELECT id, bundle, bundle_file FROM monitor_epochs WHERE stream_id = ? ORDER BY id DESC LIMIT 1",
        (sid,)).fetchone()
    if row is None:
        known = ", ".join(stream_names(store)) or "none yet"
        raise NotFound(f"no monitoring stream '{name}' (streams: {known}); ingest traces into it first with "
                       f"'workbench monitor ingest --stream {name} --bundle BUNDLE --from jsonl FILE'")
    return sid, int(row[0]), StreamBundle.from_bundle(json.loads(row[1]), row[2])


def epochs_of_bundle(store: Store, sha256: str) -> list[tuple[str, int, StreamBundle]]:
    """(stream name, epoch id, bundle) of every stream whose newest epoch grades with this bundle."""
    rows = store.conn.execute("""
        SELECT s.name, e.id, e.bundle, e.bundle_file FROM monitor_epochs e JOIN monitor_streams s ON s.id = e.stream_id
        WHERE e.bundle_sha256 = ? AND e.id = (SELECT max(e2.id) FROM monitor_epochs e2 WHERE e2.stream_id = s.id)
        ORDER BY s.name""", (sha256,)).fetchall()
    return [(r[0], int(r[1]), StreamBundle.from_bundle(json.loads(r[2]), r[3])) for r in rows]


def existing_ids(store: Store, stream: int, ids: Sequence[str]) -> dict[str, int]:
    """trace id -> the ingest that landed it, for those of ``ids`` the stream holds (looked up a page at a time)."""
    out: dict[str, int] = {}
    for k in range(0, len(ids), PAGE):
        page = ids[k:k + PAGE]
        out.update((r[0], int(r[1])) for r in store.conn.execute(
            f"SELECT trace_id, ingest_id FROM monitor_traces WHERE stream_id = ? AND trace_id IN "
            f"({', '.join('?' * len(page))})", (stream, *page)).fetchall())
    return out


def insert_ingest(store: Store, *, stream: int, epoch: int, source: str, file: str, label_rate: float, seed: int,
                  counts: Sequence[int]) -> int:
    """counts: (read, added, sampled, graded)."""
    return int(store.conn.execute("""
        INSERT INTO monitor_ingests (stream_id, epoch_id, source, file, label_rate, seed, n_read, n_added, n_sampled,
                                     n_graded, at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
        (stream, epoch, source, file, label_rate, seed, *counts, now())).fetchone()[0])


def finish_ingest(store: Store, ingest: int, counts: Sequence[int]) -> None:
    """counts: (read, added, sampled, graded), known once the file is read."""
    store.conn.execute("UPDATE monitor_ingests SET n_read = ?, n_added = ?, n_sampled = ?, n_graded = ? WHERE id = ?",
                       (*counts, ingest))


def insert_traces(store: Store, *, stream: int, epoch: int, ingest: int,
                  rows: Sequence[tuple[str, str, str, int, int | None, str | None, int, float, str | None]]) -> None:
    """rows: (trace_id, ts, category, input_chars, score, unscored_reason, sampled, inclusion_prob, content_sha256),
    none of them in the stream yet (the caller looked them up in this transaction, under the write lock).

    Postgres takes them by COPY (a page of 5,000 rows by executemany costs about three times as long)."""
    if not rows:
        return
    if store.dialect == "postgres":
        with store.conn.raw.cursor().copy(f"COPY monitor_traces ({', '.join(TRACE_COLUMNS)}) FROM STDIN") as cp:
            for r in rows:
                cp.write_row((stream, epoch, ingest, *r))
        return
    store.conn.executemany(f"""
        INSERT INTO monitor_traces ({', '.join(TRACE_COLUMNS)}) VALUES ({', '.join('?' * len(TRACE_COLUMNS))})""",
        [(stream, epoch, ingest, *r) for r in rows])


def set_scores(store: Store, stream: int, rows: Sequence[tuple[str, int | None, str | None]]) -> None:
    """rows: (trace_id, score, unscored_reason) of traces the bundle's judge graded after they landed."""
    store.conn.executemany("UPDATE monitor_traces SET score = ?, unscored_reason = ? WHERE stream_id = ? AND "
                           "trace_id = ?", [(score, reason, stream, tid) for tid, score, reason in rows])


def add_days(store: Store, stream: int, epoch: int, days: Sequence[DayAggregate]) -> None:
    """Add the days' counts to the stream's aggregates (ingest calls it with its new traces only)."""
    key = (stream, epoch)
    conn = store.conn
    conn.executemany("""
        INSERT INTO monitor_days (stream_id, epoch_id, day, n_items, n_scored, n_pass) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (stream_id, epoch_id, day) DO UPDATE SET n_items = monitor_days.n_items + excluded.n_items,
            n_scored = monitor_days.n_scored + excluded.n_scored, n_pass = monitor_days.n_pass + excluded.n_pass""",
        [(*key, d.day, d.n_items, d.n_scored, d.n_pass) for d in days])
    conn.executemany("""
        INSERT INTO monitor_day_categories (stream_id, epoch_id, day, category, n) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (stream_id, epoch_id, day, category) DO UPDATE SET n = monitor_day_categories.n + excluded.n""",
        [(*key, d.day, c, n) for d in days for c, n in d.categories.items()])
    conn.executemany("""
        INSERT INTO monitor_day_lengths (stream_id, epoch_id, day, input_chars, n) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (stream_id, epoch_id, day, input_chars) DO UPDATE SET n = monitor_day_lengths.n + excluded.n""",
        [(*key, d.day, v, n) for d in days for v, n in d.lengths.items()])
    conn.executemany("""
        INSERT INTO monitor_day_rates (stream_id, epoch_id, day, inclusion_prob, judge_pass, n) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (stream_id, epoch_id, day, inclusion_prob, judge_pass) DO UPDATE
        SET n = monitor_day_rates.n + excluded.n""",
        [(*key, d.day, p, ok, n) for d in days for (p, ok), n in d.rates.items()])


def days(store: Store, stream: int, epoch: int, *, lengths: bool = True, before: str | None = None) \
        -> list[DayAggregate]:
    """The epoch's per-day aggregates in day order (``lengths``: with the input-length histograms, which only the
    length test reads; ``before``: only days before this one, YYYY-MM-DD)."""
    cut, args = ("AND day < ?", (stream, epoch, before)) if before else ("", (stream, epoch))
    conn = store.conn
    base = conn.execute(f"SELECT day, n_items, n_scored, n_pass FROM monitor_days WHERE stream_id = ? AND epoch_id = ? "
                        f"{cut} ORDER BY day", args).fetchall()
    cats: dict[str, dict[str, int]] = {}
    for d, c, n in conn.execute(f"SELECT day, category, n FROM monitor_day_categories WHERE stream_id = ? AND "
                                f"epoch_id = ? {cut}", args).fetchall():
        cats.setdefault(d, {})[c] = int(n)
    lens: dict[str, dict[int, int]] = {}
    if lengths:
        for d, v, n in conn.execute(f"SELECT day, input_chars, n FROM monitor_day_lengths WHERE stream_id = ? AND "
                                    f"epoch_id = ? {cut}", args).fetchall():
            lens.setdefault(d, {})[int(v)] = int(n)
    rates: dict[str, dict[tuple[float, int], int]] = {}
    for d, p, ok, n in conn.execute(f"SELECT day, inclusion_prob, judge_pass, n FROM monitor_day_rates WHERE "
                                    f"stream_id = ? AND epoch_id = ? {cut}", args).fetchall():
        rates.setdefault(d, {})[(float(p), int(ok))] = int(n)
    return [DayAggregate(d, int(a), int(b), int(c), cats.get(d, {}), lens.get(d, {}), rates.get(d, {}))
            for d, a, b, c in base]


def labeled_traces(store: Store, stream: int, epoch: int, ids: Sequence[str]) -> list[StoredTrace]:
    """The epoch's sampled traces among ``ids`` (the items the reviewers labeled), in time order."""
    out: list[StoredTrace] = []
    for k in range(0, len(ids), PAGE):
        page = list(ids[k:k + PAGE])
        out += _stored(store.conn.execute(f"""
            SELECT trace_id, ts, category, input_chars, score, sampled, inclusion_prob FROM monitor_traces
            WHERE stream_id = ? AND epoch_id = ? AND sampled = 1 AND trace_id IN ({', '.join('?' * len(page))})""",
            (stream, epoch, *page)).fetchall())
    return sorted(out, key=lambda t: (t.ts, t.trace_id))


def _stored(rows) -> list[StoredTrace]:
    return [StoredTrace(r[0], r[1], r[2], int(r[3]), None if r[4] is None else int(r[4]), bool(r[5]), float(r[6]))
            for r in rows]


def traces(store: Store, stream: int, epoch: int, *, since: str | None = None) -> list[StoredTrace]:
    """Every raw trace the epoch still holds (``since``: from this time on), in time order: the full
    recomputation the aggregates are checked against, and the day a report cuts in two."""
    cut, args = ("AND ts >= ?", (stream, epoch, since)) if since else ("", (stream, epoch))
    return _stored(store.conn.execute(f"""
        SELECT trace_id, ts, category, input_chars, score, sampled, inclusion_prob FROM monitor_traces
        WHERE stream_id = ? AND epoch_id = ? {cut} ORDER BY ts, trace_id""", args).fetchall())


def sampled_scores(store: Store, stream: int) -> dict[str, int | None]:
    """trace id -> the judge's verdict, for every sampled trace of the stream (any epoch)."""
    return {r[0]: None if r[1] is None else int(r[1]) for r in store.conn.execute(
        "SELECT trace_id, score FROM monitor_traces WHERE stream_id = ? AND sampled = 1", (stream,)).fetchall()}


def prune_traces(store: Store, stream: int, before: str) -> dict[str, int]:
    """Delete the stream's unsampled traces timed before day ``before`` (YYYY-MM-DD); their counts go to
    ``monitor_days.n_pruned`` and the stream's horizon moves to ``before`` (never back). day -> traces removed."""
    conn = store.conn
    by_epoch = conn.execute("""
        SELECT epoch_id, substr(ts, 1, 10), count(*) FROM monitor_traces WHERE stream_id = ? AND ts < ? AND sampled = 0
        GROUP BY epoch_id, substr(ts, 1, 10)""", (stream, before)).fetchall()
    conn.execute("DELETE FROM monitor_traces WHERE stream_id = ? AND ts < ? AND sampled = 0", (stream, before))
    conn.executemany("UPDATE monitor_days SET n_pruned = n_pruned + ? WHERE stream_id = ? AND epoch_id = ? AND day = ?",
                     [(int(n), stream, epoch, day) for epoch, day, n in by_epoch])
    removed: dict[str, int] = {}
    for _, day, n in by_epoch:
        removed[day] = removed.get(day, 0) + int(n)
    conn.execute("UPDATE monitor_streams SET pruned_before = ? WHERE id = ? AND (pruned_before IS NULL OR "
                 "pruned_before < ?)", (before, stream, before))
    return removed


def count_sampled(store: Store, stream: int, before: str) -> int:
    return int(store.conn.execute("SELECT count(*) FROM monitor_traces WHERE stream_id = ? AND ts < ? AND sampled = 1",
                                  (stream, before)).fetchone()[0])


def pruned_before(store: Store, stream: int) -> str | None:
    row = store.conn.execute("SELECT pruned_before FROM monitor_streams WHERE id = ?", (stream,)).fetchone()
    return None if row is None else row[0]


def require_stream(store: Store, name: str) -> int:
    sid = stream_id(store, name)
    if sid is None:
        current_epoch(store, name)  # raises NotFound with the known streams
    return int(sid)  # type: ignore[arg-type]
