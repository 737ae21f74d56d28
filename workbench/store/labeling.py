"""Queries of the reviewer workflow: the labeling queue, reservations, flags, recent labels.

``LabelingQueries`` runs them on a store's connection (``Store.labeling``), so
they share its transactions. The queue and reservation queries are meant to run
inside ``store.transaction()`` (``BEGIN IMMEDIATE``) so that reading the free
slots and claiming one are one atomic step: two reviewers asking at the same
moment cannot both take the last slot of an item.

The reviewer-facing reads select only the fields a blind reviewer may see:
never the producing model, the metadata or any judgment.
"""

from __future__ import annotations

import json

from typing import Callable

from workbench.store.db import Connection, now, query, query_one
from workbench.store.mapping import from_json


# Items of the golden set this rater may take now. The counts are aggregated once per query (GROUP BY), not
# looked up per item: about 0.15 s for a golden set of 50,000 items.
_FREE_FOR_RATER = """
    WITH lab AS (SELECT item_pk, count(*) AS n, max(CASE WHEN rater = :rater THEN 1 ELSE 0 END) AS mine FROM labels
                 WHERE rubric_name = :rubric GROUP BY item_pk),
         held AS (SELECT item_pk, count(*) AS n FROM reservations
                  WHERE rubric_name = :rubric AND rater != :rater AND expires_at > :at GROUP BY item_pk),
         aside AS (SELECT DISTINCT item_pk FROM flags WHERE rubric_name = :rubric AND rater = :rater)
    SELECT {columns} FROM items i
    LEFT JOIN lab ON lab.item_pk = i.pk
    LEFT JOIN held ON held.item_pk = i.pk
    WHERE i.golden_set_id = :gs
      AND coalesce(lab.mine, 0) = 0
      AND i.pk NOT IN (SELECT item_pk FROM aside)
      AND coalesce(lab.n, 0) + coalesce(held.n, 0) < :overlap
"""


class LabelingQueries:
    """The reviewer workflow's queries on one store's connection (``Store.labeling``)."""

    def __init__(self, store: Connection):
        self.conn = store.conn

    def _params(self, golden_set_id: int, rubric_name: str, rater: str, **more: object) -> dict:
        return {"gs": golden_set_id, "rubric": rubric_name, "rater": rater, **more}

    # -- queue and reservations ------------------------------------------------------------

    def queue_candidates(self, golden_set_id: int, rubric_name: str, rater: str, *, overlap: int,
                         at: str) -> list[dict]:
        """Items this rater may take now: not labeled, skipped or flagged by them, and with a free slot.

        A slot is free when the item's labels plus the live reservations of other
        raters are fewer than the golden set's overlap. Rows are ``{pk, item_id}``.
        """
        return query(self.conn, _FREE_FOR_RATER.format(columns="i.pk, i.item_id"),
                     self._params(golden_set_id, rubric_name, rater, overlap=overlap, at=at))

    def first_candidate(self, golden_set_id: int, rubric_name: str, rater: str, *, overlap: int, at: str,
                        order_key: Callable[[str, str], bytes]) -> dict | None:
        """The free item that comes first: one another reviewer has started, else the first in this rater's order
        (``order_key(rater, item_id)``, lowest first).

        Finishing the overlap of started items first gives every item its reviewers while labels come in (the
        gate wants 30% of the items with 2+ raters); in each rater's own random order alone, two reviewers
        share an item only after labeling about half the pool each.
        """
        params = self._params(golden_set_id, rubric_name, rater, overlap=overlap, at=at)
        free = _FREE_FOR_RATER.format(columns="i.pk, i.item_id")
        if getattr(self.conn, "dialect", "sqlite") == "postgres":
            # Postgres runs no Python inside a query: the rater's order picks among the free items here
            for started in (" AND coalesce(lab.n, 0) > 0", ""):
                if rows := query(self.conn, free + started, params):
                    return min(rows, key=lambda r: order_key(rater, r["item_id"]))
            return None
        self.conn.create_function("queue_order", 2, order_key, deterministic=True)
        # two queries: the started items are few, and one sort of every free item by both keys costs twice
        return (query_one(self.conn, free + " AND coalesce(lab.n, 0) > 0 ORDER BY queue_order(:rater, i.item_id) "
                          "LIMIT 1", params)
                or query_one(self.conn, free + " ORDER BY queue_order(:rater, i.item_id) LIMIT 1", params))

    def count_queue(self, golden_set_id: int, rubric_name: str, rater: str, *, overlap: int, at: str) -> int:
        return self.conn.execute(_FREE_FOR_RATER.format(columns="count(*)"),
                                 self._params(golden_set_id, rubric_name, rater, overlap=overlap, at=at)).fetchone()[0]

    def live_reservation(self, golden_set_id: int, rubric_name: str, rater: str, *, at: str) -> dict | None:
        """The rater's unexpired reservation on an item they have not yet labeled, skipped or flagged."""
        return query_one(self.conn, """
            SELECT i.pk, i.item_id, v.expires_at FROM reservations v JOIN items i ON i.pk = v.item_pk
            WHERE i.golden_set_id = :gs AND v.rubric_name = :rubric AND v.rater = :rater AND v.expires_at > :at
              AND NOT EXISTS (SELECT 1 FROM labels l
                              WHERE l.item_pk = i.pk AND l.rater = :rater AND l.rubric_name = :rubric)
              AND NOT EXISTS (SELECT 1 FROM flags f
                              WHERE f.item_pk = i.pk AND f.rubric_name = :rubric AND f.rater = :rater)
            ORDER BY v.expires_at DESC LIMIT 1""", self._params(golden_set_id, rubric_name, rater, at=at))

    def reserve(self, item_pk: int, rubric_name: str, rater: str, *, expires_at: str) -> None:
        self.conn.execute(
            """INSERT INTO reservations (item_pk, rubric_name, rater, expires_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (item_pk, rubric_name, rater) DO UPDATE SET expires_at = excluded.expires_at""",
            (item_pk, rubric_name, rater, expires_at))

    def release(self, item_pk: int, rubric_name: str, rater: str) -> None:
        self.conn.execute("DELETE FROM reservations WHERE item_pk = ? AND rubric_name = ? AND rater = ?",
                          (item_pk, rubric_name, rater))

    def purge_expired_reservations(self, rubric_name: str, *, at: str) -> int:
        return self.conn.execute("DELETE FROM reservations WHERE rubric_name = ? AND expires_at <= ?",
                                 (rubric_name, at)).rowcount

    # -- what a blind reviewer sees ------------------------------------------------------------

    def golden_set_names(self) -> list[str]:
        """Names only: the pickers of reviewer pages must not touch judgment tables."""
        return [r[0] for r in self.conn.execute("SELECT name FROM golden_sets WHERE importing IS NULL ORDER BY name")]

    def blind_item(self, golden_set_id: int, item_id: str) -> dict | None:
        """Task, trajectory, output and reference of an item; never producer, metadata or judgments."""
        row = query_one(self.conn, "SELECT pk, item_id, content FROM items WHERE golden_set_id = ? AND item_id = ?",
                        (golden_set_id, item_id))
        if row is None:
            return None
        content = from_json(row.pop("content"), {})
        texts = {k: _as_text(content.get(k)) for k in ("input", "output", "reference")}
        return {**row, **texts, "trajectory": content.get("trajectory")}

    def rater_label(self, item_pk: int, rubric_name: str, rater: str) -> dict | None:
        return query_one(self.conn, """SELECT score, rationale, created_at, updated_at FROM labels
                                       WHERE item_pk = ? AND rubric_name = ? AND rater = ?""",
                         (item_pk, rubric_name, rater))

    def recent_labels(self, golden_set_id: int, rubric_name: str, rater: str, *, limit: int = 10) -> list[dict]:
        """The rater's latest labels (most recently saved first), with how often each was changed."""
        return query(self.conn, """
            SELECT i.item_id, l.score, l.rationale, l.created_at, l.updated_at,
                   (SELECT count(*) FROM label_events e WHERE e.label_id = l.id AND e.event = 'update') AS n_changes
            FROM labels l JOIN items i ON i.pk = l.item_pk
            WHERE i.golden_set_id = ? AND l.rubric_name = ? AND l.rater = ?
            ORDER BY l.updated_at DESC, l.id DESC LIMIT ?""", (golden_set_id, rubric_name, rater, limit))

    def progress(self, golden_set_id: int, rubric_name: str, rater: str, *, overlap: int) -> dict:
        """Counts for the progress bar: items, items with enough labels, this rater's labels and flags."""
        return query_one(self.conn, """
            WITH lab AS (SELECT l.item_pk, count(*) AS n, max(CASE WHEN l.rater = :rater THEN 1 ELSE 0 END) AS mine
                         FROM labels l JOIN items i ON i.pk = l.item_pk
                         WHERE l.rubric_name = :rubric AND i.golden_set_id = :gs GROUP BY l.item_pk)
            SELECT (SELECT count(*) FROM items WHERE golden_set_id = :gs) AS n_items,
                   coalesce(sum(CASE WHEN n >= :overlap THEN 1 ELSE 0 END), 0) AS n_complete,
                   coalesce(sum(n), 0) AS n_labels,
                   coalesce(sum(mine), 0) AS mine,
                   (SELECT count(DISTINCT f.item_pk) FROM flags f JOIN items i ON i.pk = f.item_pk
                     WHERE i.golden_set_id = :gs AND f.rubric_name = :rubric AND f.rater = :rater) AS set_aside
            FROM lab""", self._params(golden_set_id, rubric_name, rater, overlap=overlap))

    # -- flags ---------------------------------------------------------------------------------

    def has_flag(self, item_pk: int, rubric_name: str, rater: str, kind: str, note: str | None) -> bool:
        return query_one(self.conn, """SELECT 1 FROM flags WHERE item_pk = ? AND rubric_name = ? AND rater = ?
                                       AND kind = ? AND note IS NOT DISTINCT FROM ?""",
                         (item_pk, rubric_name, rater, kind, note)) is not None

    def add_flag(self, item_pk: int, rubric_name: str, rater: str, kind: str, note: str | None) -> int:
        return self.conn.execute(
            "INSERT INTO flags (item_pk, rater, rubric_name, kind, note, created_at) VALUES (?, ?, ?, ?, ?, ?) "
            "RETURNING id", (item_pk, rater, rubric_name, kind, note, now())).fetchone()[0]

    def flags(self, golden_set_id: int, rubric_name: str, *, kinds: tuple[str, ...] | None = None) -> list[dict]:
        sql = """SELECT i.item_id, f.rater, f.kind, f.note, f.created_at FROM flags f JOIN items i ON i.pk = f.item_pk
                 WHERE i.golden_set_id = ? AND f.rubric_name = ?"""
        params: list = [golden_set_id, rubric_name]
        if kinds:
            sql += f" AND f.kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        return query(self.conn, sql + " ORDER BY f.id", params)


    # -- gold items ----------------------------------------------------------------------------

    def gold_rate(self, golden_set_id: int, rubric_name: str) -> float:
        row = self.conn.execute("SELECT rate FROM gold_rates WHERE golden_set_id = ? AND rubric_name = ?",
                                (golden_set_id, rubric_name)).fetchone()
        return float(row[0]) if row else 0.0

    def set_gold_rate(self, golden_set_id: int, rubric_name: str, rate: float) -> None:
        self.conn.execute("""INSERT INTO gold_rates (golden_set_id, rubric_name, rate) VALUES (?, ?, ?)
                             ON CONFLICT (golden_set_id, rubric_name) DO UPDATE SET rate = excluded.rate""",
                          (golden_set_id, rubric_name, rate))

    def mark_gold(self, item_pks: list[int], rubric_name: str, *, marked_by: str | None) -> int:
        """Mark items gold (those already gold keep their first marking, and when it was made); returns how many
        were new."""
        at, added = now(), 0
        for pk in item_pks:
            added += self.conn.execute(
                """INSERT INTO gold_items (item_pk, rubric_name, marked_by, marked_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (item_pk, rubric_name) DO NOTHING""", (pk, rubric_name, marked_by, at)).rowcount
        return added

    def unmark_gold(self, item_pks: list[int], rubric_name: str) -> int:
        return sum(self.conn.execute("DELETE FROM gold_items WHERE item_pk = ? AND rubric_name = ?",
                                     (pk, rubric_name)).rowcount for pk in item_pks)

    def gold_items(self, golden_set_id: int, rubric_name: str) -> list[dict]:
        """The gold items with their answer (the adjudicated score now) and when they were marked; a gold item
        whose adjudication was removed has no answer and is left out."""
        return query(self.conn, """
            SELECT i.pk, i.item_id, a.score, g.marked_at, g.marked_by FROM gold_items g
            JOIN items i ON i.pk = g.item_pk
            JOIN adjudications a ON a.item_pk = g.item_pk AND a.rubric_name = g.rubric_name
            WHERE i.golden_set_id = ? AND g.rubric_name = ? ORDER BY i.position""", (golden_set_id, rubric_name))

    def rater_turns(self, golden_set_id: int, rubric_name: str, rater: str) -> int:
        """Items this rater has labeled or set aside here: the number of their next turn in the queue."""
        return self.conn.execute("""
            SELECT (SELECT count(*) FROM labels l JOIN items i ON i.pk = l.item_pk
                    WHERE i.golden_set_id = :gs AND l.rubric_name = :rubric AND l.rater = :rater)
                 + (SELECT count(DISTINCT f.item_pk) FROM flags f JOIN items i ON i.pk = f.item_pk
                    WHERE i.golden_set_id = :gs AND f.rubric_name = :rubric AND f.rater = :rater)""",
            self._params(golden_set_id, rubric_name, rater)).fetchone()[0]

    def gold_candidates(self, golden_set_id: int, rubric_name: str, rater: str) -> list[dict]:
        """Gold items with an answer this rater has not labeled, skipped or flagged (whatever their overlap: a gold
        item is served beyond it), as ``{pk, item_id}``."""
        return query(self.conn, """
            SELECT i.pk, i.item_id FROM gold_items g JOIN items i ON i.pk = g.item_pk
            JOIN adjudications a ON a.item_pk = g.item_pk AND a.rubric_name = g.rubric_name
            WHERE i.golden_set_id = :gs AND g.rubric_name = :rubric
              AND NOT EXISTS (SELECT 1 FROM labels l WHERE l.item_pk = i.pk AND l.rubric_name = :rubric
                              AND l.rater = :rater)
              AND NOT EXISTS (SELECT 1 FROM flags f WHERE f.item_pk = i.pk AND f.rubric_name = :rubric
                              AND f.rater = :rater)""", self._params(golden_set_id, rubric_name, rater))


    # -- assignments ---------------------------------------------------------------------------

    def assignments(self, golden_set_id: int, rubric_name: str) -> list[dict]:
        """``{rater, share, assigned_by, assigned_at, labeled}`` of each assigned reviewer, by name."""
        return query(self.conn, """
            SELECT a.rater, a.share, a.assigned_by, a.assigned_at,
                   (SELECT count(*) FROM labels l JOIN items i ON i.pk = l.item_pk
                    WHERE i.golden_set_id = a.golden_set_id AND l.rubric_name = a.rubric_name
                      AND l.rater = a.rater) AS labeled
            FROM assignments a WHERE a.golden_set_id = ? AND a.rubric_name = ? ORDER BY a.rater""",
                     (golden_set_id, rubric_name))

    def assign(self, golden_set_id: int, rubric_name: str, raters: list[str], share: float, *,
               assigned_by: str | None) -> None:
        at = now()
        for rater in raters:
            self.conn.execute(
                """INSERT INTO assignments (golden_set_id, rubric_name, rater, share, assigned_by, assigned_at)
                   VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (golden_set_id, rubric_name, rater)
                   DO UPDATE SET share = excluded.share, assigned_by = excluded.assigned_by,
                                 assigned_at = excluded.assigned_at""",
                (golden_set_id, rubric_name, rater, share, assigned_by, at))

    def unassign(self, golden_set_id: int, rubric_name: str, raters: list[str] | None) -> int:
        """Drop the named raters' assignments (None: every one, so the golden set serves everyone again)."""
        if raters is None:
            return self.conn.execute("DELETE FROM assignments WHERE golden_set_id = ? AND rubric_name = ?",
                                     (golden_set_id, rubric_name)).rowcount
        return sum(self.conn.execute("DELETE FROM assignments WHERE golden_set_id = ? AND rubric_name = ? "
                                     "AND rater = ?", (golden_set_id, rubric_name, r)).rowcount for r in raters)

    def rater_share(self, golden_set_id: int, rubric_name: str, rater: str) -> float | None:
        """The rater's share of the golden set's items: None when the set has no assignment (everyone labels it),
        0 when it has some and none for this rater."""
        rows = self.conn.execute("SELECT rater, share FROM assignments WHERE golden_set_id = ? AND rubric_name = ?",
                                 (golden_set_id, rubric_name)).fetchall()
        if not rows:
            return None
        return next((float(share) for name, share in rows if name == rater), 0.0)

    def rater_labels(self, golden_set_id: int, rubric_name: str, rater: str) -> int:
        return self.conn.execute("""SELECT count(*) FROM labels l JOIN items i ON i.pk = l.item_pk
                                    WHERE i.golden_set_id = ? AND l.rubric_name = ? AND l.rater = ?""",
                                 (golden_set_id, rubric_name, rater)).fetchone()[0]

def _as_text(value: object) -> object:
    """A field as SQLite's json_extract gave it: text and numbers as they are, an object or list as compact JSON."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) if isinstance(value, (dict, list)) else value
