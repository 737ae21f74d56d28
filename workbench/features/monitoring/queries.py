"""SQL of monitoring: streams, their epochs (one per approved bundle), ingests and traces.

Written in the subset SQLite and Postgres share (``?`` placeholders, ``RETURNING id``, ``ON CONFLICT``); every
write runs in the caller's ``store.transaction()``.
"""

from __future__ import annotations

import json
from typing import Iterable, Sequence

from workbench.core.errors import NotFound
from workbench.features.monitoring.records import StoredTrace, StreamBundle
from workbench.store.db import now
from workbench.store.store import Store


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


def known_trace_ids(store: Store, stream: int) -> set[str]:
    return {r[0] for r in store.conn.execute("SELECT trace_id FROM monitor_traces WHERE stream_id = ?",
                                             (stream,)).fetchall()}


def insert_ingest(store: Store, *, stream: int, epoch: int, source: str, file: str, label_rate: float, seed: int,
                  counts: Sequence[int]) -> int:
    """counts: (read, added, sampled, graded)."""
    return int(store.conn.execute("""
        INSERT INTO monitor_ingests (stream_id, epoch_id, source, file, label_rate, seed, n_read, n_added, n_sampled,
                                     n_graded, at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
        (stream, epoch, source, file, label_rate, seed, *counts, now())).fetchone()[0])


def insert_traces(store: Store, *, stream: int, epoch: int, ingest: int,
                  rows: Iterable[tuple[str, str, str, int, int | None, str | None, int, float]]) -> None:
    """rows: (trace_id, ts, category, input_chars, score, unscored_reason, sampled, inclusion_prob); an id already
    in the stream (landed meanwhile by another ingest) is left as it is."""
    store.conn.executemany("""
        INSERT INTO monitor_traces (stream_id, epoch_id, ingest_id, trace_id, ts, category, input_chars, score,
                                    unscored_reason, sampled, inclusion_prob)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (stream_id, trace_id) DO NOTHING""",
        [(stream, epoch, ingest, *r) for r in rows])


def traces(store: Store, stream: int, epoch: int) -> list[StoredTrace]:
    rows = store.conn.execute("""
        SELECT trace_id, ts, category, input_chars, score, sampled, inclusion_prob FROM monitor_traces
        WHERE stream_id = ? AND epoch_id = ? ORDER BY ts, trace_id""", (stream, epoch)).fetchall()
    return [StoredTrace(r[0], r[1], r[2], int(r[3]), None if r[4] is None else int(r[4]), bool(r[5]), float(r[6]))
            for r in rows]


def sampled_scores(store: Store, stream: int) -> dict[str, int | None]:
    """trace id -> the judge's verdict, for every sampled trace of the stream (any epoch)."""
    return {r[0]: None if r[1] is None else int(r[1]) for r in store.conn.execute(
        "SELECT trace_id, score FROM monitor_traces WHERE stream_id = ? AND sampled = 1", (stream,)).fetchall()}


def require_stream(store: Store, name: str) -> int:
    sid = stream_id(store, name)
    if sid is None:
        current_epoch(store, name)  # raises NotFound with the known streams
    return int(sid)  # type: ignore[arg-type]
