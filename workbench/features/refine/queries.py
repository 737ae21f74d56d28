"""SQL of the refinement loop: splits, sessions, rounds and the lineage of refined rubric versions.

Rows come back as the records of records.py, JSON columns read into records; every write is one
``BEGIN IMMEDIATE`` transaction (``store.transaction``), joining the caller's
when there is one.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from workbench.core.errors import NotFound
from workbench.calibration.golden_sets import GoldenSetVersion, label_rows, runs_of
from workbench.calibration.rubric_versions import rubric_summaries
from workbench.features.refine.records import (Lineage, RefineRound, RefineSession, RefineSplit, SplitItem, SplitParts,
    from_row)
from workbench.store.db import now, query, query_one
from workbench.store.mapping import to_json
from workbench.store.store import Store


def _dumps(obj: Any) -> str | None:
    return to_json(obj, sort_keys=False, default=str)  # as given: a round's edit and results keep their key order


def _round(row: dict | None) -> RefineRound | None:
    return None if row is None else RefineRound.from_row(row)


def _session(row: dict | None) -> RefineSession | None:
    return None if row is None else from_row(RefineSession, row)


# -- splits -------------------------------------------------------------------

def find_split(store: Store, golden_set_version_id: int, rubric_name: str, seed: int,
               held_out_fraction: float) -> RefineSplit | None:
    row = query_one(store.conn, """SELECT id FROM refine_splits WHERE golden_set_version_id = ? AND rubric_name = ?
                         AND seed = ? AND held_out_fraction = ?""",
                    (golden_set_version_id, rubric_name, seed, held_out_fraction))
    return None if row is None else split(store, row["id"])


def insert_split(store: Store, *, golden_set_id: int, golden_set_version_id: int, rubric_name: str, seed: int,
                 held_out_fraction: float, strata: str, n_unresolved: int,
                 items: Iterable[tuple[int, str, int]]) -> RefineSplit:
    """A new split with its (item_pk, part, consensus) rows; an identical split drawn meanwhile is returned."""
    with store.transaction():
        existing = find_split(store, golden_set_version_id, rubric_name, seed, held_out_fraction)
        if existing:
            return existing
        sid = store.conn.execute(
            """INSERT INTO refine_splits (golden_set_id, golden_set_version_id, rubric_name, seed, held_out_fraction,
                   strata, n_unresolved, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
            (golden_set_id, golden_set_version_id, rubric_name, seed, held_out_fraction, strata, n_unresolved,
             now())).fetchone()[0]
        store.conn.executemany("INSERT INTO refine_split_items (split_id, item_pk, part, consensus) VALUES (?, ?, ?, ?)",
                               [(sid, pk, part, c) for pk, part, c in items])
        return split(store, sid)


def split(store: Store, split_id: int) -> RefineSplit:
    """The split with the golden-set version it was drawn from and its item ids per part."""
    row = query_one(store.conn, """
        SELECT s.*, v.hash AS golden_set_version_hash, v.version AS golden_set_version, g.name AS golden_set
                        FROM refine_splits s JOIN golden_set_versions v ON v.id = s.golden_set_version_id
                        JOIN golden_sets g ON g.id = s.golden_set_id WHERE s.id = ?""", (split_id,))
    if row is None:
        raise NotFound(f"no refinement split {split_id}")
    return RefineSplit(**row, items=SplitParts.of(split_items(store, split_id)))


def split_items(store: Store, split_id: int) -> list[SplitItem]:
    """The split's items in golden-set order."""
    return [from_row(SplitItem, r) for r in query(store.conn, """SELECT i.item_id, i.pk AS item_pk, i.task_id, i.category, s.part, s.consensus
                         FROM refine_split_items s JOIN items i ON i.pk = s.item_pk
                         WHERE s.split_id = ? ORDER BY i.position""", (split_id,))]


def parts(store: Store, split_id: int) -> dict[str, str]:
    """item_id -> part of the split's items."""
    return {i.item_id: i.part for i in split_items(store, split_id)}


# -- sessions -----------------------------------------------------------------

def open_session(store: Store, golden_set_id: int, rubric_name: str, judge_id: str) -> RefineSession | None:
    """The newest open session refining this rubric's judge on this golden set."""
    return _session(query_one(store.conn, """SELECT se.* FROM refine_sessions se JOIN refine_splits sp ON sp.id = se.split_id
                         WHERE sp.golden_set_id = ? AND sp.rubric_name = ? AND se.judge_id = ? AND se.status = 'open'
                         ORDER BY se.id DESC LIMIT 1""", (golden_set_id, rubric_name, judge_id)))


def insert_session(store: Store, *, split_id: int, base_rubric_id: int, judge_id: str, strategy: str,
                   optimizer: str | None, max_examples: int, budget_usd: float | None) -> RefineSession:
    with store.transaction():
        sid = store.conn.execute(
            """INSERT INTO refine_sessions (split_id, base_rubric_id, judge_id, strategy, optimizer, max_examples,
                   budget_usd, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
            (split_id, base_rubric_id, judge_id, strategy, optimizer, max_examples, budget_usd, now())).fetchone()[0]
        return session(store, sid)


def session(store: Store, session_id: int) -> RefineSession:
    row = _session(query_one(store.conn, "SELECT * FROM refine_sessions WHERE id = ?", (session_id,)))
    if row is None:
        raise NotFound(f"no refinement session {session_id}; 'workbench refine ...' starts one")
    return row


def sessions(store: Store, golden_set_id: int, rubric_name: str) -> list[RefineSession]:
    return [from_row(RefineSession, r) for r in query(store.conn, """SELECT se.* FROM refine_sessions se JOIN refine_splits sp ON sp.id = se.split_id
                         WHERE sp.golden_set_id = ? AND sp.rubric_name = ? ORDER BY se.id""",
                 (golden_set_id, rubric_name))]


def set_session_budget(store: Store, session_id: int, budget_usd: float | None) -> None:
    with store.transaction():
        store.conn.execute("UPDATE refine_sessions SET budget_usd = ? WHERE id = ?", (budget_usd, session_id))


def set_session_status(store: Store, session_id: int, status: str) -> None:
    with store.transaction():
        store.conn.execute("UPDATE refine_sessions SET status = ? WHERE id = ?", (status, session_id))


def session_spend(store: Store, session_id: int, judge_pks: Sequence[int], golden_set_id: int) -> float:
    """Every dollar the session has spent: its optimizer calls and its judges' recorded judgments."""
    opt = store.conn.execute("SELECT coalesce(sum(optimizer_cost_usd), 0.0) FROM refine_rounds WHERE session_id = ?",
                             (session_id,)).fetchone()[0]
    if not judge_pks:
        return float(opt)
    marks = ",".join("?" * len(judge_pks))
    judged = store.conn.execute(
        f"""SELECT coalesce(sum(j.cost_usd), 0.0) FROM judgments j JOIN runs r ON r.id = j.run_id
            WHERE r.golden_set_id = ? AND r.judge_pk IN ({marks})""", (golden_set_id, *judge_pks)).fetchone()[0]
    return float(opt) + float(judged)


# -- rounds -------------------------------------------------------------------

def rounds(store: Store, session_id: int) -> list[RefineRound]:
    return [_round(r) for r in query(store.conn, "SELECT * FROM refine_rounds WHERE session_id = ? ORDER BY number",
                                           (session_id,))]


def round_(store: Store, round_id: int) -> RefineRound:
    row = _round(query_one(store.conn, "SELECT * FROM refine_rounds WHERE id = ?", (round_id,)))
    if row is None:
        raise NotFound(f"no refinement round {round_id}; the Refine page and 'workbench refine' list the rounds")
    return row


def insert_round(store: Store, session_id: int, number: int, parent_rubric_id: int) -> RefineRound:
    with store.transaction():
        store.conn.execute(
            """INSERT INTO refine_rounds (session_id, number, parent_rubric_id, created_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (session_id, number) DO NOTHING""", (session_id, number, parent_rubric_id, now()))
        row = query_one(store.conn, "SELECT id FROM refine_rounds WHERE session_id = ? AND number = ?",
                        (session_id, number))
    return round_(store, row["id"])


def save_edit(store: Store, round_id: int, edit: dict, *, cost_usd: float | None, tokens_in: int | None,
              tokens_out: int | None) -> None:
    """The optimizer's reply, kept the moment it arrives: a resumed round builds its child from it."""
    with store.transaction():
        store.conn.execute("""UPDATE refine_rounds SET edit = ?, optimizer_cost_usd = ?, optimizer_tokens_in = ?,
                              optimizer_tokens_out = ? WHERE id = ?""",
                           (_dumps(edit), cost_usd, tokens_in, tokens_out, round_id))


def set_child(store: Store, round_id: int, child_rubric_id: int, parent_rubric_id: int, diff: str) -> None:
    """The round's child version, with its parent and diff in the lineage, in one transaction."""
    with store.transaction():
        store.conn.execute("UPDATE refine_rounds SET child_rubric_id = ?, status = 'evaluating' WHERE id = ?",
                           (child_rubric_id, round_id))
        record_lineage(store, child_rubric_id, parent_rubric_id, diff, round_id=round_id)


def record_lineage(store: Store, rubric_id: int, parent_rubric_id: int, diff: str, *,
                   round_id: int | None = None) -> None:
    with store.transaction():
        store.conn.execute("""INSERT INTO rubric_lineage (rubric_id, parent_rubric_id, diff, round_id, created_at)
                              VALUES (?, ?, ?, ?, ?) ON CONFLICT (rubric_id) DO NOTHING""",
                           (rubric_id, parent_rubric_id, diff, round_id, now()))


def lineage(store: Store, rubric_id: int) -> Lineage | None:
    """The parent, diff and refinement round of a rubric version made by the loop (None for any other)."""
    row = query_one(store.conn, """SELECT l.*, r.session_id, r.number AS round_number, se.split_id
                         FROM rubric_lineage l LEFT JOIN refine_rounds r ON r.id = l.round_id
                         LEFT JOIN refine_sessions se ON se.id = r.session_id WHERE l.rubric_id = ?""", (rubric_id,))
    return None if row is None else from_row(Lineage, row)


def finish_round(store: Store, round_id: int, status: str, results: dict[str, Any] | None, reason: str) -> None:
    with store.transaction():
        store.conn.execute("UPDATE refine_rounds SET status = ?, results = ?, reason = ? WHERE id = ?",
                           (status, _dumps(results), reason, round_id))


def decide_round(store: Store, round_id: int, status: str, lead: str, *,
                 accepted_rubric_id: int | None = None) -> None:
    with store.transaction():
        store.conn.execute("""UPDATE refine_rounds SET status = ?, decided_by = ?, decided_at = ?,
                              accepted_rubric_id = ? WHERE id = ?""",
                           (status, lead, now(), accepted_rubric_id, round_id))


# -- rows of other tables, as far as the loop reads them -----------------------------------------------------------

def label_rationales(store: Store, golden_set_id: int, rubric_name: str) -> dict[tuple[str, str], str | None]:
    """(item_id, rater) -> the rater's rationale."""
    return {(lb.item_id, lb.rater): lb.rationale for lb in label_rows(store, golden_set_id, rubric_name)}


def judge_pk(store: Store, rubric_id: int, judge_id: str) -> int:
    return store.judge_row(rubric_id, judge_id)["pk"]


def run_names(store: Store, golden_set_id: int, judge_pk: int) -> list[str]:
    return [r.name for r in runs_of(store, golden_set_id, judge_pk)]


def rubric_names(store: Store) -> list[str]:
    return [r.name for r in rubric_summaries(store)]


def rater_role(store: Store, name: str) -> str | None:
    """The role of an active rater; None for an unknown or removed one (who may decide nothing)."""
    row = store.rater(name)
    return None if row is None or row.get("removed_at") else row["role"]


def golden_set_version_id(store: Store, golden_set_id: int, version_hash: str) -> int | None:
    row = store.golden_set_version_by_hash(golden_set_id, version_hash)
    return None if row is None else GoldenSetVersion.from_row(row).id
