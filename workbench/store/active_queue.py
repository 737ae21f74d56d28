"""Queries of the active labeling queue: the golden set's queue order, its design's phases, and labels'
inclusion probabilities.

Functions over a ``Store`` (they share its connection and transactions). A design phase is one inclusion
probability and one queue priority per item; a lead's re-plan adds a phase and keeps the earlier ones. A label
served by the active queue records its item's probability, and the phase that first served the item is kept.
"""

from __future__ import annotations

from typing import Iterable

from workbench.store.db import Connection, now, query, query_one
from workbench.store.mapping import from_json, to_json



def queue_order(store: Connection, golden_set_id: int) -> str:
    return query_one(store.conn, "SELECT queue_order FROM golden_sets WHERE id = ?", (golden_set_id,))["queue_order"]


def design(store: Connection, golden_set_id: int) -> dict | None:
    """The current design: phase, rubric_name, judge_id, expected_labels, labeled_before, checks, created_by/at."""
    row = query_one(store.conn, "SELECT * FROM active_designs WHERE golden_set_id = ?", (golden_set_id,))
    if row:
        row["checks"] = from_json(row["checks"])
    return row


def set_random(store: Connection, golden_set_id: int) -> None:
    """Back to each reviewer's own random order; the stored design stays for the labels it served."""
    store.conn.execute("UPDATE golden_sets SET queue_order = 'random' WHERE id = ?", (golden_set_id,))


def save_design(store: Connection, golden_set_id: int, *, phase: int, rubric_name: str, judge_id: str,
                expected_labels: float, labeled_before: float, checks: list[str], created_by: str | None,
                rows: Iterable[dict]) -> None:
    """Add design phase ``phase`` (``rows``: item_pk, stratum, probability, priority) and switch the set to active.

    Phase 1 replaces whatever an earlier design for another rubric or judge left behind.
    """
    if phase == 1:
        store.conn.execute("DELETE FROM active_inclusion WHERE golden_set_id = ?", (golden_set_id,))
        store.conn.execute("DELETE FROM active_served WHERE item_pk IN (SELECT pk FROM items WHERE golden_set_id = ?)",
                           (golden_set_id,))
    store.conn.executemany(
        "INSERT INTO active_inclusion (item_pk, phase, golden_set_id, stratum, probability, priority) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(r["item_pk"], phase, golden_set_id, r["stratum"], r["probability"], r["priority"]) for r in rows])
    store.conn.execute(
        """INSERT INTO active_designs (golden_set_id, phase, rubric_name, judge_id, expected_labels, labeled_before,
                                      checks, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (golden_set_id) DO UPDATE SET phase = excluded.phase, rubric_name = excluded.rubric_name,
               judge_id = excluded.judge_id, expected_labels = excluded.expected_labels,
               labeled_before = excluded.labeled_before, checks = excluded.checks, created_by = excluded.created_by,
               created_at = excluded.created_at""",
        (golden_set_id, phase, rubric_name, judge_id, expected_labels, labeled_before, to_json(checks, sort_keys=False),
         created_by, now()))
    store.conn.execute("UPDATE golden_sets SET queue_order = 'active' WHERE id = ?", (golden_set_id,))


def _current_phase(store: Connection, golden_set_id: int) -> int:
    row = query_one(store.conn, "SELECT phase FROM active_designs WHERE golden_set_id = ?", (golden_set_id,))
    return row["phase"] if row else 0


def priorities(store: Connection, golden_set_id: int) -> dict[str, float]:
    """item_id -> queue priority (lowest first) in the current phase."""
    return {r[0]: r[1] for r in store.conn.execute(
        "SELECT i.item_id, a.priority FROM active_inclusion a JOIN items i ON i.pk = a.item_pk "
        "WHERE a.golden_set_id = ? AND a.phase = ?", (golden_set_id, _current_phase(store, golden_set_id)))}


def phase_rates(store: Connection, golden_set_id: int) -> dict[int, dict[str, float]]:
    """phase -> item_id -> that phase's inclusion probability (rate)."""
    out: dict[int, dict[str, float]] = {}
    for phase, item_id, p in store.conn.execute(
            "SELECT a.phase, i.item_id, a.probability FROM active_inclusion a JOIN items i ON i.pk = a.item_pk "
            "WHERE a.golden_set_id = ?", (golden_set_id,)):
        out.setdefault(phase, {})[item_id] = p
    return out


def design_rates(store: Connection, golden_set_id: int) -> dict[str, float]:
    """item_id -> the current phase's inclusion probability (rate) of every item."""
    return phase_rates(store, golden_set_id).get(_current_phase(store, golden_set_id), {})


def served_thresholds(store: Connection, golden_set_id: int, rubric_name: str) -> dict[int, float]:
    """phase -> the largest queue priority (of that phase) among the items that phase served."""
    return {r[0]: r[1] for r in store.conn.execute("""
        SELECT s.phase, max(a.priority) FROM active_served s
        JOIN active_inclusion a ON a.item_pk = s.item_pk AND a.phase = s.phase
        WHERE a.golden_set_id = ? AND s.rubric_name = ? GROUP BY s.phase""", (golden_set_id, rubric_name))}


def labeled_share(store: Connection, golden_set_id: int, rubric_name: str) -> float:
    """Share of the set's items with at least one label under the rubric."""
    row = query_one(store.conn, """
        SELECT coalesce((SELECT count(DISTINCT l.item_pk) FROM labels l JOIN items i ON i.pk = l.item_pk
                         WHERE i.golden_set_id = :gs AND l.rubric_name = :r) * 1.0
                        / nullif((SELECT count(*) FROM items WHERE golden_set_id = :gs), 0), 0.0) AS share""",
                    {"gs": golden_set_id, "r": rubric_name})
    return float(row["share"])


def inclusion_probability(store: Connection, golden_set_id: int, item_pk: int) -> tuple[int, float] | None:
    """(current phase, the item's inclusion probability in it), or None."""
    phase = _current_phase(store, golden_set_id)
    row = query_one(store.conn, "SELECT probability FROM active_inclusion WHERE item_pk = ? AND phase = ?",
                    (item_pk, phase))
    return (phase, row["probability"]) if row else None


def design_summary(store: Connection, golden_set_id: int) -> list[dict]:
    """Per stratum of the current phase: items, mean inclusion probability, labeled items."""
    return query(store.conn, """
        SELECT a.stratum, count(*) AS n_items, avg(a.probability) AS probability,
               sum(CASE WHEN EXISTS (SELECT 1 FROM labels l WHERE l.item_pk = a.item_pk) THEN 1 ELSE 0 END) AS n_labeled
        FROM active_inclusion a WHERE a.golden_set_id = ? AND a.phase = ?
        GROUP BY a.stratum ORDER BY a.stratum""", (golden_set_id, _current_phase(store, golden_set_id)))


def record_inclusion(store: Connection, rows: Iterable[dict]) -> None:
    """Set labels' inclusion probabilities (``rows``: item_pk, rater, rubric_name, inclusion_probability).

    Not a change of the label (score and rationale stay), so no label event is written.
    """
    store.conn.executemany(
        "UPDATE labels SET inclusion_probability = :inclusion_probability "
        "WHERE item_pk = :item_pk AND rater = :rater AND rubric_name = :rubric_name", list(rows))


def record_served(store: Connection, item_pk: int, rubric_name: str, phase: int) -> None:
    """The phase that first served the item: its first label's. Later labels, under the overlap, change nothing,
    nor does the second label of an item labeled before the switch (it belongs to the random share ``f0``)."""
    store.conn.execute("""INSERT INTO active_served (item_pk, rubric_name, phase)
                          SELECT :pk, :rubric, :phase
                          WHERE (SELECT count(*) FROM labels WHERE item_pk = :pk AND rubric_name = :rubric) <= 1
                          ON CONFLICT DO NOTHING""",
                       {"pk": item_pk, "rubric": rubric_name, "phase": phase})


def cache_key(store: Connection, golden_set_id: int) -> dict:
    """What a cached report must also match when the set has an active design: its phase, and how many labels
    carry a probability (a re-plan, or labels imported with probabilities, write no label event)."""
    d = design(store, golden_set_id)
    if d is None:
        return {}
    n = store.conn.execute("SELECT count(*) FROM labels l JOIN items i ON i.pk = l.item_pk "
                           "WHERE i.golden_set_id = ? AND l.inclusion_probability IS NOT NULL",
                           (golden_set_id,)).fetchone()[0]
    return {"active_design": [d["phase"], d["created_at"], n]}


def label_inclusion(store: Connection, golden_set_id: int, rubric_name: str) -> dict[tuple[str, str], float]:
    """(item_id, rater) -> inclusion probability, for labels that have one."""
    return {(r[0], r[1]): r[2] for r in store.conn.execute(
        "SELECT i.item_id, l.rater, l.inclusion_probability FROM labels l JOIN items i ON i.pk = l.item_pk "
        "WHERE i.golden_set_id = ? AND l.rubric_name = ? AND l.inclusion_probability IS NOT NULL",
        (golden_set_id, rubric_name))}
