"""Per-day aggregates of each monitoring stream, kept up to date at ingest, so that the report reads one row per day
(and per category, input length and sampling rate) instead of every trace; and each trace's content hash."""

from __future__ import annotations

import json

from workbench.store.migrations import Conn, migration, script


@migration
def m016_monitor_windows(conn: Conn) -> None:
    """A day (UTC, ``YYYY-MM-DD``) of a stream's epoch holds its trace count, scored count and the judge's passes;
    beside it the day's category counts, input-length histogram and (scored traces by inclusion probability and
    judge pass) the counts the weighted estimate needs. A week is the sum of its days. Ingest adds to these in the
    transaction that lands the traces; pruning raw traces leaves them as they are. Streams ingested before this
    migration get their aggregates computed here from their traces.

    ``pruned_before`` (YYYY-MM-DD) is a stream's retention horizon: ``monitor prune`` dropped the raw unsampled
    traces of the days before it, and ingest takes no trace timed before it (its day's aggregates are closed, and
    the ids that would say it is known are gone).

    ``content_sha256`` is the SHA-256 of a trace's input and output: the text itself is kept only for the sampled
    traces (as items of the stream's golden set), the hash says whether a later trace is the same content."""
    script(conn, """
ALTER TABLE monitor_traces ADD COLUMN content_sha256 TEXT;
ALTER TABLE monitor_streams ADD COLUMN pruned_before TEXT;
CREATE INDEX monitor_traces_sampled ON monitor_traces(stream_id, sampled, ts);
CREATE TABLE monitor_days (
    stream_id INTEGER NOT NULL REFERENCES monitor_streams(id),
    epoch_id INTEGER NOT NULL REFERENCES monitor_epochs(id),
    day TEXT NOT NULL CHECK (length(day) = 10),
    n_items INTEGER NOT NULL CHECK (n_items >= 0),
    n_scored INTEGER NOT NULL CHECK (n_scored >= 0),
    n_pass INTEGER NOT NULL CHECK (n_pass >= 0),
    n_pruned INTEGER NOT NULL DEFAULT 0 CHECK (n_pruned >= 0),
    PRIMARY KEY (stream_id, epoch_id, day)
) STRICT;
CREATE TABLE monitor_day_categories (
    stream_id INTEGER NOT NULL,
    epoch_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    category TEXT NOT NULL,
    n INTEGER NOT NULL CHECK (n > 0),
    PRIMARY KEY (stream_id, epoch_id, day, category),
    FOREIGN KEY (stream_id, epoch_id, day) REFERENCES monitor_days(stream_id, epoch_id, day)
) STRICT;
CREATE TABLE monitor_day_lengths (
    stream_id INTEGER NOT NULL,
    epoch_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    input_chars INTEGER NOT NULL CHECK (input_chars >= 0),
    n INTEGER NOT NULL CHECK (n > 0),
    PRIMARY KEY (stream_id, epoch_id, day, input_chars),
    FOREIGN KEY (stream_id, epoch_id, day) REFERENCES monitor_days(stream_id, epoch_id, day)
) STRICT;
CREATE TABLE monitor_day_rates (
    stream_id INTEGER NOT NULL,
    epoch_id INTEGER NOT NULL,
    day TEXT NOT NULL,
    inclusion_prob REAL NOT NULL CHECK (inclusion_prob >= 0 AND inclusion_prob <= 1),
    judge_pass INTEGER NOT NULL CHECK (judge_pass IN (0, 1)),
    n INTEGER NOT NULL CHECK (n > 0),
    PRIMARY KEY (stream_id, epoch_id, day, inclusion_prob, judge_pass),
    FOREIGN KEY (stream_id, epoch_id, day) REFERENCES monitor_days(stream_id, epoch_id, day)
) STRICT;
""")
    backfill(conn)


def backfill(conn: Conn) -> None:
    """The aggregates of the traces already stored (the judge's pass needs each epoch's own bundle threshold)."""
    for epoch, stream, bundle in conn.execute("SELECT id, stream_id, bundle FROM monitor_epochs").fetchall():
        threshold = int(((json.loads(bundle).get("rubric") or {}).get("content") or {}).get("pass_threshold", 0))
        args = (threshold, stream, epoch)
        conn.execute("""
            INSERT INTO monitor_days (stream_id, epoch_id, day, n_items, n_scored, n_pass)
            SELECT stream_id, epoch_id, substr(ts, 1, 10), count(*), count(score),
                   coalesce(sum(CASE WHEN score >= ? THEN 1 ELSE 0 END), 0)
            FROM monitor_traces WHERE stream_id = ? AND epoch_id = ? GROUP BY stream_id, epoch_id, substr(ts, 1, 10)""",
                     args)
        conn.execute("""
            INSERT INTO monitor_day_categories (stream_id, epoch_id, day, category, n)
            SELECT stream_id, epoch_id, substr(ts, 1, 10), category, count(*) FROM monitor_traces
            WHERE stream_id = ? AND epoch_id = ? GROUP BY stream_id, epoch_id, substr(ts, 1, 10), category""",
                     args[1:])
        conn.execute("""
            INSERT INTO monitor_day_lengths (stream_id, epoch_id, day, input_chars, n)
            SELECT stream_id, epoch_id, substr(ts, 1, 10), input_chars, count(*) FROM monitor_traces
            WHERE stream_id = ? AND epoch_id = ? GROUP BY stream_id, epoch_id, substr(ts, 1, 10), input_chars""",
                     args[1:])
        conn.execute("""
            INSERT INTO monitor_day_rates (stream_id, epoch_id, day, inclusion_prob, judge_pass, n)
            SELECT stream_id, epoch_id, day, inclusion_prob, judge_pass, count(*) FROM (
                SELECT stream_id, epoch_id, substr(ts, 1, 10) AS day, inclusion_prob,
                       CASE WHEN score >= ? THEN 1 ELSE 0 END AS judge_pass
                FROM monitor_traces WHERE stream_id = ? AND epoch_id = ? AND score IS NOT NULL) scored
            GROUP BY stream_id, epoch_id, day, inclusion_prob, judge_pass""", args)
