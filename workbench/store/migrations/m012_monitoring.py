"""Production monitoring: streams of traces an approved bundle grades, their ingests and their sampled share."""

from __future__ import annotations

from workbench.store.migrations import Conn, migration, script


@migration
def m012_monitoring(conn: Conn) -> None:
    """A stream is production traffic one approved bundle grades; a new bundle starts a new epoch of it.

    Each trace is kept once per stream (its id is the idempotency key) with its time, category, input length and
    the judge's verdict; the ``sampled`` share went to reviewers as items of the golden set named after the stream,
    with the inclusion probability of its Bernoulli draw, and each ingest records the seed of its draws. The
    traces' texts live only in that golden set (for the sampled ones): the rest needs no more than this row.
    """
    script(conn, """
CREATE TABLE monitor_streams (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    created_at TEXT NOT NULL
) STRICT;
CREATE TABLE monitor_epochs (
    id INTEGER PRIMARY KEY,
    stream_id INTEGER NOT NULL REFERENCES monitor_streams(id),
    bundle_sha256 TEXT NOT NULL CHECK (length(bundle_sha256) = 64),
    bundle_file TEXT NOT NULL,
    bundle TEXT NOT NULL CHECK (json_valid(bundle)),
    started_at TEXT NOT NULL,
    UNIQUE (stream_id, bundle_sha256)
) STRICT;
CREATE TABLE monitor_ingests (
    id INTEGER PRIMARY KEY,
    stream_id INTEGER NOT NULL REFERENCES monitor_streams(id),
    epoch_id INTEGER NOT NULL REFERENCES monitor_epochs(id),
    source TEXT NOT NULL CHECK (source IN ('jsonl', 'otel')),
    file TEXT NOT NULL,
    label_rate REAL NOT NULL CHECK (label_rate >= 0 AND label_rate <= 1),
    seed INTEGER NOT NULL,
    n_read INTEGER NOT NULL,
    n_added INTEGER NOT NULL,
    n_sampled INTEGER NOT NULL,
    n_graded INTEGER NOT NULL,
    at TEXT NOT NULL
) STRICT;
CREATE TABLE monitor_traces (
    id INTEGER PRIMARY KEY,
    stream_id INTEGER NOT NULL REFERENCES monitor_streams(id),
    trace_id TEXT NOT NULL CHECK (length(trace_id) > 0),
    epoch_id INTEGER NOT NULL REFERENCES monitor_epochs(id),
    ingest_id INTEGER NOT NULL REFERENCES monitor_ingests(id),
    ts TEXT NOT NULL,
    category TEXT NOT NULL,
    input_chars INTEGER NOT NULL CHECK (input_chars >= 0),
    score INTEGER,
    unscored_reason TEXT,
    sampled INTEGER NOT NULL CHECK (sampled IN (0, 1)),
    inclusion_prob REAL NOT NULL CHECK (inclusion_prob >= 0 AND inclusion_prob <= 1),
    UNIQUE (stream_id, trace_id)
) STRICT;
CREATE INDEX monitor_traces_time ON monitor_traces(stream_id, epoch_id, ts);
""")
