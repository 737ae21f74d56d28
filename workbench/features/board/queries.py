"""SQL of the results board: boards, their items (several models' runs), their bundles, and the grades.

Grades are not a board's own: they are keyed by (judge config hash, item
content hash, repeat) like the runner's work, so an item graded once with a
bundle is never sent again, on this board or another.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from workbench.core.errors import NotFound
from workbench.core.hashing import canonical_json
from workbench.core.models import Judgment
from workbench.store.db import now, query
from workbench.store.mapping import decode_verdict, from_json, to_json, verdict_columns
from workbench.store.store import Store
from workbench.features.board.records import ApprovedBundle, Board, BoardGrade, BoardItem, BoardSummary, StoredBundle

CHUNK = 500  # ids per IN (...) list: under SQLite's bound-parameter limit


def _chunks(seq: Sequence) -> Iterable[Sequence]:
    return (seq[i:i + CHUNK] for i in range(0, len(seq), CHUNK))


def ensure_board(store: Store, name: str) -> int:
    """The board's id, created if new (inside the caller's transaction)."""
    row = store.conn.execute("SELECT id FROM boards WHERE name = ?", (name,)).fetchone()
    if row:
        return row[0]
    return store.conn.execute("INSERT INTO boards (name, created_at) VALUES (?, ?) RETURNING id",
                              (name, now())).fetchone()[0]


def board(store: Store, name: str) -> Board:
    row = store.conn.execute("SELECT id, name, created_at FROM boards WHERE name = ?", (name,)).fetchone()
    if row is None:
        known = ", ".join(b.name for b in boards(store)) or "none yet"
        raise NotFound(f"no board '{name}' (known: {known}); grade runs onto it with "
                       f"'workbench board grade RUN_FILES... --bundle FILE --name {name}'")
    return Board(*row)


def boards(store: Store) -> list[BoardSummary]:
    return [BoardSummary(**r) for r in query(store.conn, """
        SELECT b.id, b.name, b.created_at,
               (SELECT count(*) FROM board_items i WHERE i.board_id = b.id) AS n_items,
               (SELECT count(DISTINCT model) FROM board_items i WHERE i.board_id = b.id) AS n_models,
               (SELECT count(DISTINCT task_id) FROM board_items i WHERE i.board_id = b.id) AS n_tasks,
               (SELECT count(*) FROM board_bundles u WHERE u.board_id = b.id) AS n_bundles
        FROM boards b ORDER BY b.name""")]


def item_keys(store: Store, board_id: int) -> dict[tuple[str, str, int], tuple[str, str]]:
    """(task, model, repeat) -> (item id, content hash) of the items already on the board."""
    return {(r[0], r[1], r[2]): (r[3], r[4]) for r in store.conn.execute(
        "SELECT task_id, model, repeat, item_id, content_hash FROM board_items WHERE board_id = ?", (board_id,))}


def insert_items(store: Store, board_id: int, rows: Iterable[BoardItem]) -> int:
    """Add items (the caller has checked them against the board); returns how many were new."""
    start = store.conn.execute("SELECT coalesce(max(position), -1) + 1 FROM board_items WHERE board_id = ?",
                               (board_id,)).fetchone()[0]
    before = store.conn.total_changes
    store.conn.executemany(
        """INSERT INTO board_items (board_id, item_id, task_id, category, model, family, repeat, content,
                                    content_hash, source, position)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
        [(board_id, r.item_id, r.task_id, r.category, r.model, r.family, r.repeat, canonical_json(r.content),
          r.content_hash, r.source, start + i) for i, r in enumerate(rows)])
    return store.conn.total_changes - before


def items(store: Store, board_id: int, item_ids: Sequence[str] | None = None) -> list[BoardItem]:
    sql = ("SELECT item_id, task_id, category, model, family, repeat, content, content_hash, source FROM board_items "
           "WHERE board_id = ?")
    if item_ids is None:
        rows = store.conn.execute(sql + " ORDER BY position", (board_id,)).fetchall()
    else:
        rows = []
        for chunk in _chunks(list(item_ids)):
            rows += store.conn.execute(sql + f" AND item_id IN ({','.join('?' * len(chunk))}) ORDER BY position",
                                       (board_id, *chunk)).fetchall()
    return [BoardItem(*head, from_json(content), content_hash, source) for *head, content, content_hash, source in rows]


def add_bundle(store: Store, board_id: int, *, tier: str, config_hash: str, path: str,
               bundle: ApprovedBundle) -> bool:
    """Attach a bundle to the board (once); returns True when it is new."""
    position = store.conn.execute("SELECT count(*) FROM board_bundles WHERE board_id = ?", (board_id,)).fetchone()[0]
    cur = store.conn.execute(
        """INSERT INTO board_bundles (board_id, sha256, tier, config_hash, path, bundle, position)
           VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING""",
        (board_id, bundle.sha256, tier, config_hash, path, to_json(bundle.document), position))
    return cur.rowcount > 0


def bundles(store: Store, board_id: int) -> list[StoredBundle]:
    """The board's bundles, each read back from the JSON document stored when it was attached."""
    rows = store.conn.execute("SELECT sha256, tier, config_hash, path, bundle FROM board_bundles WHERE board_id = ? "
                              "ORDER BY position", (board_id,))
    return [StoredBundle(sha256, tier, config_hash, path, ApprovedBundle.from_json(from_json(doc)))
            for sha256, tier, config_hash, path, doc in rows]


def done_keys(store: Store, config_hash: str) -> set[tuple[str, int]]:
    """(item content hash, repeat) already graded under this judge config, on any board."""
    return {(r[0], r[1]) for r in store.conn.execute(
        "SELECT item_content_hash, repeat FROM board_grades WHERE config_hash = ?", (config_hash,))}


def insert_grade(store: Store, config_hash: str, item_content_hash: str, judgment: Judgment) -> None:
    """Record a grade (once per config hash, item content hash and repeat)."""
    store.conn.execute(
        """INSERT INTO board_grades (config_hash, item_content_hash, repeat, score, unscored_reason, rationale,
               evidence_steps, trace, tokens_in, tokens_out, tokens_cached, cost_usd, latency_ms, model_version,
               created_at)
           VALUES (:config_hash, :item_content_hash, :repeat, :score, :unscored_reason, :rationale, :evidence_steps,
               :trace, :tokens_in, :tokens_out, :tokens_cached, :cost_usd, :latency_ms, :model_version,
               coalesce(:created_at, :at))
           ON CONFLICT DO NOTHING""",
        {**verdict_columns(judgment), "config_hash": config_hash, "item_content_hash": item_content_hash,
         "at": now()})


def grades(store: Store, board_id: int, *, with_trace: bool = False,
           item_ids: Sequence[str] | None = None) -> list[BoardGrade]:
    """Every grade of the board's items under the board's bundles: item id, bundle sha256 and the verdict."""
    trace = ", g.trace" if with_trace else ""
    sql = f"""SELECT i.item_id, u.sha256, g.repeat AS judge_repeat, g.score, g.unscored_reason, g.rationale,
                     g.evidence_steps, g.cost_usd, g.model_version{trace}
              FROM board_items i JOIN board_bundles u ON u.board_id = i.board_id
              JOIN board_grades g ON g.config_hash = u.config_hash AND g.item_content_hash = i.content_hash
              WHERE i.board_id = ?"""
    if item_ids is None:
        rows = query(store.conn, sql + " ORDER BY i.position, u.position, g.repeat", (board_id,))
    else:
        rows = []
        for chunk in _chunks(list(item_ids)):
            rows += query(store.conn, sql + f" AND i.item_id IN ({','.join('?' * len(chunk))})"
                                       " ORDER BY i.position, u.position, g.repeat", (board_id, *chunk))
    return [BoardGrade(**decode_verdict(r)) for r in rows]


def fingerprint(store: Store, board_id: int) -> tuple:
    """Changes whenever the board's items, bundles or their grades change: what a cached report depends on."""
    return tuple(store.conn.execute(
        """SELECT (SELECT count(*) FROM board_items WHERE board_id = :b),
                  (SELECT count(*) FROM board_bundles WHERE board_id = :b),
                  (SELECT count(*) FROM board_grades g JOIN board_bundles u ON u.config_hash = g.config_hash
                    WHERE u.board_id = :b)""", {"b": board_id}).fetchone())
