"""Queries of the active labeling queue: the golden set's queue order, its design, and labels' inclusion probabilities.

Functions over a ``Store`` (they share its connection and transactions). The
design is one inclusion probability and one queue priority per item; a label
served by the active queue records its item's probability.
"""

from __future__ import annotations

import json
from typing import Iterable

from .store import Store, now


def queue_order(store: Store, golden_set_id: int) -> str:
    return store._one("SELECT queue_order FROM golden_sets WHERE id = ?", (golden_set_id,))["queue_order"]


def design(store: Store, golden_set_id: int) -> dict | None:
    row = store._one("SELECT * FROM active_designs WHERE golden_set_id = ?", (golden_set_id,))
    if row:
        row["checks"] = json.loads(row["checks"])
    return row


def set_random(store: Store, golden_set_id: int) -> None:
    """Back to each reviewer's own random order; the stored design stays for the labels it served."""
    store.conn.execute("UPDATE golden_sets SET queue_order = 'random' WHERE id = ?", (golden_set_id,))


def save_design(store: Store, golden_set_id: int, *, rubric_name: str, judge_id: str, expected_labels: float,
                labeled_before: float, checks: list[str], created_by: str | None, rows: Iterable[dict]) -> None:
    """Replace the set's design (``rows``: item_pk, stratum, probability, priority) and switch it to active."""
    store.conn.execute("DELETE FROM active_inclusion WHERE golden_set_id = ?", (golden_set_id,))
    store.conn.executemany(
        "INSERT INTO active_inclusion (item_pk, golden_set_id, stratum, probability, priority) "
        "VALUES (:item_pk, :gs, :stratum, :probability, :priority)",
        [{**r, "gs": golden_set_id} for r in rows])
    store.conn.execute(
        """INSERT INTO active_designs (golden_set_id, rubric_name, judge_id, expected_labels, labeled_before, checks,
                                      created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (golden_set_id) DO UPDATE SET rubric_name = excluded.rubric_name, judge_id = excluded.judge_id,
               expected_labels = excluded.expected_labels, labeled_before = excluded.labeled_before,
               checks = excluded.checks, created_by = excluded.created_by, created_at = excluded.created_at""",
        (golden_set_id, rubric_name, judge_id, expected_labels, labeled_before, json.dumps(checks), created_by,
         now()))
    store.conn.execute("UPDATE golden_sets SET queue_order = 'active' WHERE id = ?", (golden_set_id,))


def served_threshold(store: Store, golden_set_id: int, rubric_name: str) -> float | None:
    """The largest queue priority among items whose labels the active queue served (None: none yet)."""
    row = store._one("""
        SELECT max(a.priority) AS s FROM active_inclusion a
        WHERE a.golden_set_id = ? AND EXISTS (SELECT 1 FROM labels l WHERE l.item_pk = a.item_pk
                                              AND l.rubric_name = ? AND l.inclusion_probability IS NOT NULL)""",
                     (golden_set_id, rubric_name))
    return row["s"] if row else None


def labeled_share(store: Store, golden_set_id: int, rubric_name: str) -> float:
    """Share of the set's items with at least one label under the rubric."""
    row = store._one("""
        SELECT (SELECT count(DISTINCT l.item_pk) FROM labels l JOIN items i ON i.pk = l.item_pk
                WHERE i.golden_set_id = :gs AND l.rubric_name = :r) * 1.0
               / max(1, (SELECT count(*) FROM items WHERE golden_set_id = :gs)) AS share""",
                     {"gs": golden_set_id, "r": rubric_name})
    return float(row["share"])


def priorities(store: Store, golden_set_id: int) -> dict[str, float]:
    """item_id -> queue priority (lowest first) under the set's design."""
    return {r[0]: r[1] for r in store.conn.execute(
        "SELECT i.item_id, a.priority FROM active_inclusion a JOIN items i ON i.pk = a.item_pk "
        "WHERE a.golden_set_id = ?", (golden_set_id,))}


def design_rates(store: Store, golden_set_id: int) -> dict[str, float]:
    """item_id -> the design's inclusion probability (rate) of every item."""
    return {r[0]: r[1] for r in store.conn.execute(
        "SELECT i.item_id, a.probability FROM active_inclusion a JOIN items i ON i.pk = a.item_pk "
        "WHERE a.golden_set_id = ?", (golden_set_id,))}


def inclusion_probability(store: Store, item_pk: int) -> float | None:
    row = store._one("SELECT probability FROM active_inclusion WHERE item_pk = ?", (item_pk,))
    return row["probability"] if row else None


def design_summary(store: Store, golden_set_id: int) -> list[dict]:
    """Per stratum: items, mean inclusion probability, labeled items."""
    return store._all("""
        SELECT a.stratum, count(*) AS n_items, avg(a.probability) AS probability,
               sum(EXISTS (SELECT 1 FROM labels l WHERE l.item_pk = a.item_pk)) AS n_labeled
        FROM active_inclusion a WHERE a.golden_set_id = ? GROUP BY a.stratum ORDER BY a.stratum""", (golden_set_id,))


def record_inclusion(store: Store, rows: Iterable[dict]) -> None:
    """Set labels' inclusion probabilities (``rows``: item_pk, rater, rubric_name, inclusion_probability).

    Not a change of the label (score and rationale stay), so no label event is written.
    """
    store.conn.executemany(
        "UPDATE labels SET inclusion_probability = :inclusion_probability "
        "WHERE item_pk = :item_pk AND rater = :rater AND rubric_name = :rubric_name", list(rows))


def label_inclusion(store: Store, golden_set_id: int, rubric_name: str) -> dict[tuple[str, str], float]:
    """(item_id, rater) -> inclusion probability, for labels that have one."""
    return {(r[0], r[1]): r[2] for r in store.conn.execute(
        "SELECT i.item_id, l.rater, l.inclusion_probability FROM labels l JOIN items i ON i.pk = l.item_pk "
        "WHERE i.golden_set_id = ? AND l.rubric_name = ? AND l.inclusion_probability IS NOT NULL",
        (golden_set_id, rubric_name))}
