"""Store: every query the services need, over one migrated SQLite connection.

Items and judgments go in and come out as the domain's data classes where the
callers want them (``Item``, ``Judgment``; mapped once, in ``mapping.py``);
other rows come back as plain dicts with their JSON columns decoded, so nothing
above the store sees SQL or serialised text. The store's other query modules
(``labeling.py``, ``active_queue.py``, ...) read through ``db.query`` /
``db.query_one`` on ``Store.conn`` and join its transactions.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence, TypeVar

from workbench.core.errors import InputError, NotFound
from workbench.core.hashing import sha256_hex
from workbench.core.inputs import did_you_mean
from workbench.core.models import GoldenSetRecord, Item, Judgment, Label, Rubric
from workbench.core.names import is_email, name_problem
from workbench.store import active_queue, audit
from workbench.store.labeling import LabelingQueries
from workbench.store.abandoned import discard_abandoned_imports
from workbench.store.db import (Connection, Params, as_sqlite_utils, default_db_path, foreign_tables,
    now, query, query_one)
from workbench.store.engines.urls import parse_target
from workbench.store.mapping import (decode_verdict, from_json, item_from_row, judgment_from_row, to_json,
    verdict_columns)
from workbench.store.migrations import migrate


T = TypeVar("T")


def _chunks(seq: Sequence, n: int = 500) -> Iterator[Sequence]:
    for i in range(0, len(seq), n):
        yield seq[i:i + n]


class Store(Connection):
    """One migrated connection; use as a context manager or call ``close()``."""

    def __init__(self, path: str | Path | None = None, *, migrate_schema: bool = True):
        target = parse_target(str(path or default_db_path()))
        # another application's SQLite file is refused before connecting (which would turn on WAL in it)
        tables = None if target.is_postgres else foreign_tables(target.location)
        if tables is None:
            super().__init__(target.location)
            tables = self._foreign_postgres_tables() if target.is_postgres else None
            if tables is not None:
                self.close()
        if tables is not None:
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            kind = "a Postgres database" if target.is_postgres else "an SQLite database"
            raise InputError(f"{target.location} is {kind} of another application (tables: {shown}), not a "
                             "workbench database", fix="point --db (or WORKBENCH_DB) at the workbench's database, or "
                             + ("at an empty one" if target.is_postgres else "give the name of a new file"))
        self.migrated: list[str] = []  # the migrations this opening applied (what the command line reports)
        if migrate_schema:
            self.migrated = migrate(self.conn)
            if self._one("SELECT 1 AS x FROM golden_sets WHERE importing IS NOT NULL LIMIT 1"):
                discard_abandoned_imports(self)  # a killed import left a hidden set behind

    def _foreign_postgres_tables(self) -> list[str] | None:
        """The tables of a Postgres database that holds some but no ``_migrations``: another application's."""
        names = [r[0] for r in self.conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "ORDER BY table_name")]
        return names if names and "_migrations" not in names else None

    # -- plumbing ---------------------------------------------------------
    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _all(self, sql: str, params: Params = ()) -> list[dict]:
        return query(self.conn, sql, params)

    def _one(self, sql: str, params: Params = ()) -> dict | None:
        return query_one(self.conn, sql, params)

    def _tuples(self, sql: str, params: Params = ()) -> list[tuple]:
        """A read's rows as plain tuples: sqlite3 builds them without a ``Row`` each (30,000 labels or judgments in
        a third of the time), for the columns statistics read."""
        cur = self.conn.cursor()
        cur.row_factory = None
        return cur.execute(sql, params).fetchall()

    @cached_property
    def labeling(self) -> LabelingQueries:
        """The reviewer workflow's queries (queue, reservations, flags, blind reads) on this connection."""
        return LabelingQueries(self)

    def data_version(self) -> tuple:
        """A cheap fingerprint that changes whenever labels, adjudications, items, rubrics or judgments change."""
        return tuple(self.conn.execute("""SELECT
            (SELECT coalesce(max(id), 0) FROM label_events), (SELECT count(*) FROM adjudications),
            (SELECT coalesce(max(created_at), '') FROM adjudications),
            (SELECT coalesce(sum(score * item_pk), 0) + coalesce(sum(length(note)), 0) FROM adjudications),
            (SELECT coalesce(max(pk), 0) FROM items),
            (SELECT coalesce(max(id), 0) FROM rubrics), (SELECT coalesce(max(id), 0) FROM judgments),
            (SELECT count(*) FROM judgments)""").fetchone())

    def table_names(self) -> list[str]:
        """The workspace's tables (``_migrations`` included), in the order they were made on SQLite, by name on
        Postgres."""
        if self.dialect == "sqlite":
            return as_sqlite_utils(self.conn).table_names()
        return [r[0] for r in self.conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_type = 'BASE TABLE' ORDER BY table_name")]

    def table_counts(self) -> dict[str, int]:
        return {t: self.conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in self.table_names()}

    # -- golden sets ------------------------------------------------------
    # A set whose ``importing`` is set is a large import still landing (see staging.py): never listed.
    def ensure_golden_set(self, name: str, *, is_demo: bool = False, overlap: int | None = None) -> int:
        with self.transaction():
            row = self._one("SELECT id FROM golden_sets WHERE name = ? AND importing IS NULL", (name,))
            if row:
                if overlap is not None:
                    self.conn.execute("UPDATE golden_sets SET overlap = ? WHERE id = ?", (overlap, row["id"]))
                if is_demo:
                    self.conn.execute("UPDATE golden_sets SET is_demo = 1 WHERE id = ?", (row["id"],))
                return row["id"]
            return self.conn.execute(
                "INSERT INTO golden_sets (name, overlap, is_demo, created_at) VALUES (?, ?, ?, ?) RETURNING id",
                (name, overlap or 2, int(is_demo), now())).fetchone()[0]

    def golden_set(self, name: str) -> GoldenSetRecord:
        row = self._one("SELECT id, name, overlap, is_demo, created_at FROM golden_sets "
                        "WHERE name = ? AND importing IS NULL", (name,))
        if not row:
            known = ", ".join(r["name"] for r in self._all(
                "SELECT name FROM golden_sets WHERE importing IS NULL ORDER BY name")) or "none yet"
            raise NotFound(f"no golden set '{name}' (known: {known}); import items with "
                           f"'workbench import items FILE --golden-set {name}'")
        return GoldenSetRecord(**row)

    def golden_set_masking(self, golden_set_id: int) -> dict:
        """The set's blind-review setting: {"enabled": bool, "patterns": [regex, ...]} (the lead's own patterns)."""
        row = self._one("SELECT mask_self_identification, mask_patterns FROM golden_sets WHERE id = ?",
                        (golden_set_id,))
        return {"enabled": bool(row["mask_self_identification"]), "patterns": from_json(row["mask_patterns"], [])}

    def set_golden_set_masking(self, golden_set_id: int, *, enabled: bool, patterns: Sequence[str]) -> None:
        with self.transaction():
            self.conn.execute("UPDATE golden_sets SET mask_self_identification = ?, mask_patterns = ? WHERE id = ?",
                              (int(enabled), to_json(list(patterns), sort_keys=False), golden_set_id))

    def golden_sets(self) -> list[dict]:
        return self._all("""
            SELECT g.id, g.name, g.overlap, g.is_demo, g.created_at,
                   (SELECT count(*) FROM items i WHERE i.golden_set_id = g.id) AS n_items,
                   (SELECT count(*) FROM labels l JOIN items i ON i.pk = l.item_pk
                     WHERE i.golden_set_id = g.id) AS n_labels,
                   (SELECT count(DISTINCT l.rater) FROM labels l JOIN items i ON i.pk = l.item_pk
                     WHERE i.golden_set_id = g.id) AS n_raters,
                   (SELECT count(*) FROM judgments j JOIN items i ON i.pk = j.item_pk
                     WHERE i.golden_set_id = g.id) AS n_judgments,
                   (SELECT max(version) FROM golden_set_versions v WHERE v.golden_set_id = g.id) AS latest_version
            FROM golden_sets g WHERE g.importing IS NULL ORDER BY g.name""")

    # -- items ------------------------------------------------------------
    def item_hashes(self, golden_set_id: int, item_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in _chunks(list(item_ids)):
            marks = ",".join("?" * len(chunk))
            for r in self.conn.execute(
                    f"SELECT item_id, content_hash FROM items WHERE golden_set_id = ? AND item_id IN ({marks})",
                    (golden_set_id, *chunk)):
                out[r[0]] = r[1]
        return out

    def next_item_position(self, golden_set_id: int) -> int:
        return self.conn.execute("SELECT coalesce(max(position), -1) + 1 FROM items WHERE golden_set_id = ?",
                                 (golden_set_id,)).fetchone()[0]

    def items(self, golden_set_id: int, item_ids: Sequence[str] | None = None) -> list[Item]:
        """The golden set's items (or those of ``item_ids``), in import order."""
        sql = "SELECT item_id, content FROM items WHERE golden_set_id = ?"
        if item_ids is None:
            return [item_from_row(r) for r in self.conn.execute(sql + " ORDER BY position", (golden_set_id,))]
        rows: list = []
        for chunk in _chunks(list(item_ids)):
            rows += self.conn.execute(sql + f" AND item_id IN ({','.join('?' * len(chunk))})",
                                      (golden_set_id, *chunk)).fetchall()
        order = {i: k for k, i in enumerate(item_ids)}
        return [item_from_row(r) for r in sorted(rows, key=lambda r: order[r["item_id"]])]

    def item(self, golden_set_id: int, item_id: str) -> Item:
        rows = self.items(golden_set_id, [item_id])
        if not rows:
            raise NotFound(f"golden set has no item '{item_id}'")
        return rows[0]

    def item_pk(self, golden_set_id: int, item_id: str) -> int | None:
        """The item's row id (what labels, adjudications and judgments point to), or None for an unknown id."""
        row = self.conn.execute("SELECT pk FROM items WHERE golden_set_id = ? AND item_id = ?",
                                (golden_set_id, item_id)).fetchone()
        return row[0] if row else None

    def item_pks(self, golden_set_id: int) -> dict[str, int]:
        return {r[0]: r[1] for r in self.conn.execute(
            "SELECT item_id, pk FROM items WHERE golden_set_id = ?", (golden_set_id,))}

    def item_index(self, golden_set_id: int) -> list[dict]:
        """Light rows (no content) for statistics: id, cluster, category, producer."""
        return self._all("""SELECT pk, item_id, task_id, category, producer_model, producer_family, content_hash
                            FROM items WHERE golden_set_id = ? ORDER BY position""", (golden_set_id,))

    def producer_names(self, golden_set_id: int) -> list[str]:
        """The distinct producer models and families of a golden set's items: what blind review masks (read to be
        masked on the reviewer's path, never handed to a page)."""
        rows = self._all("""SELECT producer_model AS name FROM items WHERE golden_set_id = ?
                            UNION SELECT producer_family FROM items WHERE golden_set_id = ?""",
                         (golden_set_id, golden_set_id))
        return sorted(r["name"] for r in rows if r["name"])

    # -- golden-set versions ---------------------------------------------
    def golden_set_version_by_hash(self, golden_set_id: int, version_hash: str) -> dict | None:
        return self._one("SELECT * FROM golden_set_versions WHERE golden_set_id = ? AND hash = ?",
                         (golden_set_id, version_hash))

    def insert_golden_set_version(self, golden_set_id: int, version_hash: str, snapshot: dict) -> dict:
        with self.transaction():
            existing = self.golden_set_version_by_hash(golden_set_id, version_hash)
            if existing:
                return existing
            version = self.conn.execute(
                "SELECT coalesce(max(version), 0) + 1 FROM golden_set_versions WHERE golden_set_id = ?",
                (golden_set_id,)).fetchone()[0]
            self.conn.execute(
                "INSERT INTO golden_set_versions (golden_set_id, version, hash, snapshot, created_at) VALUES (?, ?, ?, ?, ?)",
                (golden_set_id, version, version_hash, to_json(snapshot), now()))
            return self.golden_set_version_by_hash(golden_set_id, version_hash)

    def golden_set_versions(self, golden_set_id: int) -> list[dict]:
        return self._all("SELECT id, version, hash, created_at FROM golden_set_versions WHERE golden_set_id = ? ORDER BY version",
                         (golden_set_id,))

    # -- rubrics ----------------------------------------------------------
    def rubric_versions(self, name: str) -> list[dict]:
        rows = self._all("SELECT * FROM rubrics WHERE name = ? ORDER BY version", (name,))
        for r in rows:
            r["content"] = from_json(r["content"])
        return rows

    def rubric_names(self) -> list[dict]:
        return self._all("""SELECT name, max(version) AS latest_version, count(*) AS n_versions
                            FROM rubrics GROUP BY name ORDER BY name""")

    def rubric_row(self, name: str, version: int | None = None) -> dict:
        if version is None:
            row = self._one("SELECT * FROM rubrics WHERE name = ? ORDER BY version DESC LIMIT 1", (name,))
        else:
            row = self._one("SELECT * FROM rubrics WHERE name = ? AND version = ?", (name, version))
        if not row:
            versions = [r["version"] for r in self._all("SELECT version FROM rubrics WHERE name = ? ORDER BY version",
                                                        (name,))]
            if versions:
                raise NotFound(f"rubric '{name}' has no version {version} (versions: "
                               f"{', '.join(f'v{v}' for v in versions)}); name one of them")
            if name_problem(name) is not None or "@v" in name:  # no file could be named so: suggest none
                raise NotFound(f"no rubric '{name}'; 'workbench rubric list' shows the rubrics (name a version as "
                               "NAME@vN)")
            names = [r["name"] for r in self._all("SELECT DISTINCT name FROM rubrics ORDER BY name")]
            raise NotFound(f"no rubric '{name}' (rubrics: {', '.join(names) or 'none yet'}); "
                           + did_you_mean(name, names, f"add it with 'workbench rubric add rubrics/{name}.yaml'"))
        row["content"] = from_json(row["content"])
        return row

    def rubric_row_by_id(self, rubric_id: int) -> dict:
        row = self._one("SELECT * FROM rubrics WHERE id = ?", (rubric_id,))
        if not row:
            raise NotFound(f"no rubric with id {rubric_id}")
        row["content"] = from_json(row["content"])
        return row

    def add_rubric_version(self, rubric: Rubric) -> tuple[dict, bool]:
        """Store the rubric as a version of its name unless the same content exists; returns (row, created).

        The version is identified by the hash of the rubric's content; its scale values and judges (with their
        config hashes) are stored beside it.
        """
        content_hash = rubric.content_hash
        with self.transaction():
            existing = self._one("SELECT id FROM rubrics WHERE name = ? AND hash = ?", (rubric.name, content_hash))
            if existing:
                return self.rubric_row_by_id(existing["id"]), False
            version = self.conn.execute("SELECT coalesce(max(version), 0) + 1 FROM rubrics WHERE name = ?",
                                        (rubric.name,)).fetchone()[0]
            rid = self.conn.execute(
                "INSERT INTO rubrics (name, version, hash, content, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
                (rubric.name, version, content_hash, to_json(rubric.content()), now())).fetchone()[0]
            self.conn.executemany("INSERT INTO rubric_scale (rubric_id, value) VALUES (?, ?)",
                                  [(rid, v) for v in rubric.scale.values])
            self.conn.executemany(
                "INSERT INTO judges (rubric_id, judge_id, model, family, config, config_hash) VALUES (?, ?, ?, ?, ?, ?)",
                [(rid, j.id, j.model, j.family, to_json(j.config()), j.config_hash(content_hash))
                 for j in rubric.judges])
            return self.rubric_row_by_id(rid), True

    def judge_row(self, rubric_id: int, judge_id: str) -> dict:
        row = self._one("SELECT * FROM judges WHERE rubric_id = ? AND judge_id = ?", (rubric_id, judge_id))
        if not row:
            ids = [r["judge_id"] for r in self._all(
                "SELECT judge_id FROM judges WHERE rubric_id = ? ORDER BY judge_id", (rubric_id,))]
            raise NotFound(f"the rubric declares no judge '{judge_id}' (declared: {', '.join(ids) or 'none'}); "
                           + did_you_mean(judge_id, ids, "add it under judges: in the rubric YAML"))
        row["config"] = from_json(row["config"])
        return row

    def judges_of(self, rubric_id: int) -> list[dict]:
        rows = self._all("SELECT * FROM judges WHERE rubric_id = ? ORDER BY pk", (rubric_id,))
        for r in rows:
            r["config"] = from_json(r["config"])
        return rows

    # -- raters -----------------------------------------------------------
    def ensure_raters(self, names: Iterable[str], role: str = "reviewer") -> None:
        """Add the names not yet raters (a name written as an email gets it as their email, so sign-in finds them);
        callers resolve emails and names to known raters first (``features.people.raters``)."""
        at = now()
        self.conn.executemany("INSERT INTO raters (name, role, email, created_at) VALUES (?, ?, ?, ?) "
                              "ON CONFLICT DO NOTHING",
                              [(n, role, n.strip().lower() if is_email(n) else None, at) for n in set(names)])

    def set_rater_role(self, name: str, role: str, email: str | None = None) -> None:
        with self.transaction():
            self.conn.execute(
                """INSERT INTO raters (name, role, email, created_at) VALUES (?, ?, ?, ?)
                   ON CONFLICT (name) DO UPDATE SET role = excluded.role, email = coalesce(excluded.email, raters.email)""",
                (name, role, email.strip().lower() if email else None, now()))

    def raters(self) -> list[dict]:
        return self._all("SELECT * FROM raters ORDER BY name")

    def rater(self, name: str) -> dict | None:
        return self._one("SELECT * FROM raters WHERE name = ?", (name,))

    # -- labels -----------------------------------------------------------
    def upsert_labels(self, rubric_name: str, rubric_id: int, labels: Iterable[Label],
                      item_pks: Mapping[str, int]) -> int:
        """Write labels under the rubric (``item_pks``: item id -> its row id); returns how many were inserted or
        changed.

        One label per (item, rater, rubric): a changed score or rationale updates it, the same label changes
        nothing (a double click, a re-import). A new rater is added as a reviewer. A label's inclusion
        probability, when given, is recorded beside it (not a change of the label). The triggers log an event
        for every insert and real change, never for a no-op save: the count of those events is what a write did.
        """
        labels = list(labels)
        known = {v: r["name"] for v in {lab.rater for lab in labels} if (r := audit.resolve(self, v))}
        if any(known.get(lab.rater, lab.rater) != lab.rater for lab in labels):
            # a writer that did not resolve its raters (an adapter's import): an email or merged name is its rater
            labels = [replace(lab, rater=known.get(lab.rater, lab.rater)) for lab in labels]
        at = now()
        rows = [{"item_pk": item_pks[lab.item_id], "rater": lab.rater, "rubric_name": rubric_name,
                 "rubric_id": rubric_id, "score": lab.score, "rationale": lab.rationale,
                 "created_at": lab.created_at, "at": at, "step": lab.step, "agent": lab.agent} for lab in labels]
        with self.transaction():
            self.ensure_raters({lab.rater for lab in labels})
            before = self.count_label_events()
            self.conn.executemany(
                """INSERT INTO labels (item_pk, rater, rubric_name, rubric_id, score, rationale, created_at,
                                       updated_at, step, agent)
                   VALUES (:item_pk, :rater, :rubric_name, :rubric_id, :score, :rationale, coalesce(:created_at, :at),
                           :at, :step, :agent)
                   ON CONFLICT (item_pk, rater, rubric_name) DO UPDATE
                   SET score = excluded.score, rationale = excluded.rationale, rubric_id = excluded.rubric_id,
                       updated_at = excluded.updated_at, step = excluded.step, agent = excluded.agent
                   WHERE labels.score IS DISTINCT FROM excluded.score OR labels.rationale IS DISTINCT FROM excluded.rationale
                      OR labels.step IS DISTINCT FROM excluded.step OR labels.agent IS DISTINCT FROM excluded.agent""", rows)
            active_queue.record_inclusion(self, [
                {"item_pk": item_pks[lab.item_id], "rater": lab.rater, "rubric_name": rubric_name,
                 "inclusion_probability": lab.inclusion_probability}
                for lab in labels if lab.inclusion_probability is not None])
            return self.count_label_events() - before

    def label_events_by_rater(self, *, since: int) -> dict[str, int]:
        """Rater -> how many labels of theirs were inserted or changed after event ``since`` (a
        ``count_label_events`` read in the same transaction): whose labels a write wrote."""
        return {r[0]: r[1] for r in self.conn.execute(
            "SELECT rater, count(*) FROM label_events WHERE id > ? GROUP BY rater ORDER BY rater", (since,))}

    def count_label_events(self) -> int:
        """Events are written only for inserts and real changes: the count of what a write did."""
        return self.conn.execute("SELECT coalesce(max(id), 0) FROM label_events").fetchone()[0]

    def labels(self, golden_set_id: int, rubric_name: str) -> list[dict]:
        return self._all("""
            SELECT i.item_id, i.pk AS item_pk, l.rater, l.score, l.rationale, l.created_at, l.updated_at, l.step,
                   l.agent
            FROM labels l JOIN items i ON i.pk = l.item_pk
            WHERE i.golden_set_id = ? AND l.rubric_name = ? ORDER BY i.position, l.rater""",
                         (golden_set_id, rubric_name))

    def step_marks(self, golden_set_id: int, rubric_name: str, run_id: int) -> "StepMarks":
        """People's marked steps under the rubric and the run's judged steps (``StepMarks``): failure attribution."""
        return StepMarks(self, golden_set_id, rubric_name, run_id)

    def label_scores(self, golden_set_id: int, rubric_name: str) -> list[tuple[str, str, int]]:
        """(item_id, rater, score) of every label, in the order of :meth:`labels`: what consensus and statistics
        read, without the text columns (a tuple a label: 10,000 items x 3 raters read in a tenth of the time)."""
        return self._tuples("""
            SELECT i.item_id, l.rater, l.score FROM labels l JOIN items i ON i.pk = l.item_pk
            WHERE i.golden_set_id = ? AND l.rubric_name = ? ORDER BY i.position, l.rater""",
            (golden_set_id, rubric_name))

    def labels_to_write_back(self, golden_set_id: int, rubric_name: str | None = None) -> list[tuple]:
        """(item_id, rater, rubric_name, rubric_id, score, rationale, created_at, updated_at) of every label of the
        golden set (of one rubric when named), in item order then rubric and rater: what export-labels writes."""
        one_rubric = "AND l.rubric_name = ?" if rubric_name is not None else ""
        return self._tuples(f"""
            SELECT i.item_id, l.rater, l.rubric_name, l.rubric_id, l.score, l.rationale, l.created_at, l.updated_at
            FROM labels l JOIN items i ON i.pk = l.item_pk
            WHERE i.golden_set_id = ? {one_rubric}
            ORDER BY i.position, l.rubric_name, l.rater""", (golden_set_id, *([rubric_name] if one_rubric else [])))

    def item_labels(self, item_pk: int, rubric_name: str) -> list[dict]:
        return self._all("""SELECT rater, score, rationale, created_at, updated_at FROM labels
                            WHERE item_pk = ? AND rubric_name = ? ORDER BY rater""", (item_pk, rubric_name))

    def item_adjudication(self, item_pk: int, rubric_name: str) -> dict | None:
        return self._one("SELECT score, note, lead, created_at FROM adjudications WHERE item_pk = ? AND rubric_name = ?",
                         (item_pk, rubric_name))

    def label_rubrics(self, golden_set_id: int) -> list[str]:
        return [r[0] for r in self.conn.execute(
            """SELECT DISTINCT l.rubric_name FROM labels l JOIN items i ON i.pk = l.item_pk
               WHERE i.golden_set_id = ? UNION SELECT DISTINCT a.rubric_name FROM adjudications a
               JOIN items i ON i.pk = a.item_pk WHERE i.golden_set_id = ? ORDER BY 1""",
            (golden_set_id, golden_set_id))]

    def label_events(self, golden_set_id: int | None = None) -> list[dict]:
        if golden_set_id is None:
            return self._all("SELECT * FROM label_events ORDER BY id")
        return self._all("""SELECT e.* FROM label_events e JOIN items i ON i.pk = e.item_pk
                            WHERE i.golden_set_id = ? ORDER BY e.id""", (golden_set_id,))

    # -- adjudications ----------------------------------------------------
    def upsert_adjudications(self, rows: Iterable[dict]) -> int:
        before = self.conn.total_changes
        self.conn.executemany(
            """INSERT INTO adjudications (item_pk, rubric_name, rubric_id, score, note, lead, created_at)
               VALUES (:item_pk, :rubric_name, :rubric_id, :score, :note, :lead, coalesce(:created_at, :at))
               ON CONFLICT (item_pk, rubric_name) DO UPDATE
               SET score = excluded.score, note = excluded.note, lead = excluded.lead, rubric_id = excluded.rubric_id,
                   created_at = excluded.created_at
               WHERE adjudications.score IS DISTINCT FROM excluded.score OR adjudications.note IS DISTINCT FROM excluded.note""",
            [{"note": None, "created_at": None, **r, "at": now()} for r in rows])
        return self.conn.total_changes - before

    def adjudications(self, golden_set_id: int, rubric_name: str) -> list[dict]:
        return self._all("""
            SELECT i.item_id, a.item_pk, a.score, a.note, a.lead, a.created_at
            FROM adjudications a JOIN items i ON i.pk = a.item_pk
            WHERE i.golden_set_id = ? AND a.rubric_name = ? ORDER BY i.position""", (golden_set_id, rubric_name))

    # -- runs and judgments -----------------------------------------------
    def ensure_run(self, judge_pk: int, golden_set_id: int, *, source: str, name: str,
                   params: dict | None = None, status: str = "running") -> tuple[int, bool]:
        with self.transaction():
            row = self._one("SELECT id FROM runs WHERE judge_pk = ? AND golden_set_id = ? AND name = ?",
                            (judge_pk, golden_set_id, name))
            if row:
                return row["id"], False
            rid = self.conn.execute(
                "INSERT INTO runs (judge_pk, golden_set_id, source, name, status, params, started_at, finished_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (judge_pk, golden_set_id, source, name, status, to_json(params or {}), now(),
                 None if status == "running" else now())).fetchone()[0]
            return rid, True

    def set_run_status(self, run_id: int, status: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE runs SET status = ?, finished_at = CASE WHEN ? = 'running' THEN NULL ELSE ? END WHERE id = ?",
                              (status, status, now(), run_id))

    def runs(self, golden_set_id: int, judge_pk: int | None = None) -> list[dict]:
        """The judge's calibration runs; stress-probe runs (store/probes.py) never count among them."""
        sql = """SELECT r.*, g.judge_id, g.config_hash, ru.name AS rubric_name, ru.version AS rubric_version,
                        (SELECT count(*) FROM judgments j WHERE j.run_id = r.id) AS n_judgments
                 FROM runs r JOIN judges g ON g.pk = r.judge_pk JOIN rubrics ru ON ru.id = g.rubric_id
                 WHERE r.golden_set_id = ? AND r.probe IS NULL"""
        params: list = [golden_set_id]
        if judge_pk is not None:
            sql += " AND r.judge_pk = ?"
            params.append(judge_pk)
        rows = self._all(sql + " ORDER BY r.id", params)
        for r in rows:
            r["params"] = from_json(r["params"])
        return rows

    def run_config_hashes(self, run_id: int) -> list[str]:
        """The judge config hashes the run's judgments were recorded under (one, the judge's, unless mixed)."""
        return [r["config_hash"] for r in self._all(
            "SELECT DISTINCT config_hash FROM judgments WHERE run_id = ? ORDER BY config_hash", (run_id,))]

    def insert_judgments(self, run_id: int, config_hash: str, judgments: Iterable[Judgment],
                         items: Mapping[str, Mapping]) -> int:
        """Record judgments of the run made under ``config_hash``; returns how many were added.

        ``items`` maps each judged item id to its row id (``pk``) and the ``content_hash`` of the content the judge
        saw. A (item, repeat) the run holds already is left as it was: re-running or re-importing adds nothing.
        """
        at = now()
        rows = [{**verdict_columns(j), "run_id": run_id, "item_pk": items[j.item_id]["pk"],
                 "item_content_hash": items[j.item_id]["content_hash"], "config_hash": config_hash, "at": at,
                 "confidence": j.confidence, "step": j.step, "agent": j.agent}
                for j in judgments]
        before = self.conn.total_changes
        self.conn.executemany(
            """INSERT INTO judgments (run_id, item_pk, item_content_hash, config_hash, repeat, score, unscored_reason,
                   rationale, evidence_steps, trace, tokens_in, tokens_out, tokens_cached, cost_usd, latency_ms,
                   model_version, created_at, confidence, step, agent)
               VALUES (:run_id, :item_pk, :item_content_hash, :config_hash, :repeat, :score, :unscored_reason,
                   :rationale, :evidence_steps, :trace, :tokens_in, :tokens_out, :tokens_cached, :cost_usd,
                   :latency_ms, :model_version, coalesce(:created_at, :at), :confidence, :step, :agent)
               ON CONFLICT (run_id, item_pk, repeat) DO NOTHING""", rows)
        return self.conn.total_changes - before

    def imported_verdict_runs(self, judge_pk: int, source: str, source_ids: Iterable[str]) -> dict[str, str]:
        """Of ``source_ids`` (a tool's own ids of verdicts), those the judge already holds from ``source``: tool id
        -> the name of the run holding it."""
        out: dict[str, str] = {}
        for chunk in _chunks(sorted(set(source_ids))):
            out.update({str(sid): str(name) for sid, name in self._tuples(
                f"""SELECT v.source_id, r.name FROM imported_verdicts v JOIN runs r ON r.id = v.run_id
                    WHERE v.judge_pk = ? AND v.source = ? AND v.source_id IN ({", ".join("?" * len(chunk))})""",
                [judge_pk, source, *chunk])})
        return out

    def record_imported_verdicts(self, judge_pk: int, source: str, run_id: int,
                                 verdicts: Iterable[tuple[str, int, int]]) -> None:
        """Remember the tool's own id of each verdict landed in ``run_id``: (tool id, item pk, repeat). An id
        already recorded is left as it was."""
        self.conn.executemany(
            """INSERT INTO imported_verdicts (judge_pk, source, source_id, run_id, item_pk, repeat)
               VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (judge_pk, source, source_id) DO NOTHING""",
            [(judge_pk, source, sid, run_id, pk, repeat) for sid, pk, repeat in verdicts])

    def judgments(self, golden_set_id: int, judge_pk: int, run_id: int | None = None) -> list[dict]:
        sql = """SELECT j.*, i.item_id, r.name AS run_name FROM judgments j
                 JOIN runs r ON r.id = j.run_id JOIN items i ON i.pk = j.item_pk
                 WHERE r.golden_set_id = ? AND r.judge_pk = ? AND r.probe IS NULL"""
        params: list = [golden_set_id, judge_pk]
        if run_id is not None:
            sql += " AND j.run_id = ?"
            params.append(run_id)
        return [decode_verdict(r) for r in self._all(sql + " ORDER BY j.run_id, i.position, j.repeat", params)]

    def run_judgments(self, golden_set_id: int, judge_pk: int) -> list[tuple[str, Judgment]]:
        """(run name, ``Judgment``) of each of the judge's calibration judgments, in the order of :meth:`judgments`."""
        return [(r["run_name"], judgment_from_row(r)) for r in self.judgments(golden_set_id, judge_pk)]

    def judgment_columns(self, golden_set_id: int, judge_pk: int) -> dict[str, list]:
        """The judge's calibration judgments as columns, in the order of :meth:`judgments`, without rationale,
        evidence and trace: what statistics read (column name -> values)."""
        names = ("item_id", "run_id", "repeat", "score", "unscored_reason", "model_version", "cost_usd",
                 "latency_ms", "tokens_in", "tokens_out", "confidence")
        rows = self._tuples(
            """SELECT i.item_id, j.run_id, j.repeat, j.score, j.unscored_reason, j.model_version, j.cost_usd,
                      j.latency_ms, j.tokens_in, j.tokens_out, j.confidence
               FROM judgments j JOIN runs r ON r.id = j.run_id JOIN items i ON i.pk = j.item_pk
               WHERE r.golden_set_id = ? AND r.judge_pk = ? AND r.probe IS NULL
               ORDER BY j.run_id, i.position, j.repeat""", (golden_set_id, judge_pk))
        columns = list(zip(*rows)) or [()] * len(names)
        return {name: list(values) for name, values in zip(names, columns)}

    def item_judgments(self, item_pk: int, run_id: int) -> list[dict]:
        return [decode_verdict(r) for r in self._all(
            "SELECT * FROM judgments WHERE item_pk = ? AND run_id = ? ORDER BY repeat", (item_pk, run_id))]

    def done_keys(self, config_hash: str, run_id: int | None = None) -> set[tuple[str, int]]:
        """(item content hash, repeat) already judged under this config: never paid for twice."""
        sql = "SELECT item_content_hash, repeat FROM judgments WHERE config_hash = ?"
        params: list = [config_hash]
        if run_id is not None:
            sql += " AND run_id = ?"
            params.append(run_id)
        return {(r[0], r[1]) for r in self.conn.execute(sql, params)}

    # -- reports ----------------------------------------------------------
    def report(self, key_hash: str) -> dict | None:
        row = self._one("SELECT report FROM reports WHERE key_hash = ?", (key_hash,))
        return from_json(row["report"]) if row else None

    def save_report(self, key_hash: str, golden_set_id: int, rubric_id: int, judge_pk: int | None, kind: str,
                    report: dict) -> None:
        """Cache a report under its key; inside a read snapshot, once it ends (a cache write may wait)."""
        def write() -> None:
            with self.transaction():
                self.conn.execute(
                    """INSERT INTO reports (key_hash, golden_set_id, rubric_id, judge_pk, kind, report, created_at)
                       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key_hash) DO NOTHING""",
                    (key_hash, golden_set_id, rubric_id, judge_pk, kind, to_json(report), now()))
        self.defer(write)

    # -- exports ----------------------------------------------------------
    def record_export(self, path: str, sha256: str, rubric_id: int, judge_pk: int, golden_set_version_id: int) -> None:
        with self.transaction():
            if self._one("SELECT 1 AS x FROM exports WHERE sha256 = ? AND path = ?", (sha256, path)):
                return
            self.conn.execute(
                """INSERT INTO exports (path, sha256, rubric_id, judge_pk, golden_set_version_id, created_at)
                   VALUES (?, ?, ?, ?, ?, ?)""", (path, sha256, rubric_id, judge_pk, golden_set_version_id, now()))

    def export_recorded(self, sha256: str) -> bool:
        return self._one("SELECT 1 AS x FROM exports WHERE sha256 = ?", (sha256,)) is not None

    def exports(self) -> list[dict]:
        return self._all("""SELECT e.*, r.name AS rubric_name, r.version AS rubric_version, j.judge_id,
                                   g.name AS golden_set
                            FROM exports e JOIN rubrics r ON r.id = e.rubric_id JOIN judges j ON j.pk = e.judge_pk
                            JOIN golden_set_versions v ON v.id = e.golden_set_version_id
                            JOIN golden_sets g ON g.id = v.golden_set_id
                            ORDER BY e.id""")

    # -- batches ----------------------------------------------------------
    def save_batch(self, run_id: int, provider: str, batch_id: str, keys: list) -> None:
        with self.transaction():
            self.conn.execute(
                """INSERT INTO batches (run_id, provider, batch_id, keys, created_at) VALUES (?, ?, ?, ?, ?)
                   ON CONFLICT (batch_id) DO NOTHING""", (run_id, provider, batch_id, to_json(keys), now()))

    def pending_batches(self, run_id: int) -> list[dict]:
        rows = self._all("SELECT * FROM batches WHERE run_id = ? AND status = 'submitted' ORDER BY id", (run_id,))
        for r in rows:
            r["keys"] = from_json(r["keys"])
        return rows

    def mark_batch_done(self, batch_id: str) -> None:
        with self.transaction():
            self.conn.execute("UPDATE batches SET status = 'done' WHERE batch_id = ?", (batch_id,))


class StepMarks:
    """People's marked steps of a golden set under a rubric (migration m017), a run's judged steps (repeat 0), and
    who took each step of the items people marked: what calibrate's failure attribution reads
    (``stats.steps.step_section``). The judged steps and the items are read only where some label marks a step."""

    def __init__(self, store: Store, golden_set_id: int, rubric_name: str, run_id: int):
        from workbench.stats.steps import JudgedStep, StepMark

        self.labels = [StepMark(*r) for r in store._tuples("""
            SELECT i.item_id, l.rater, l.step, l.agent FROM labels l JOIN items i ON i.pk = l.item_pk
            WHERE i.golden_set_id = ? AND l.rubric_name = ? AND l.step IS NOT NULL ORDER BY i.position, l.rater""",
                                                         (golden_set_id, rubric_name))]
        self.judged: dict[str, JudgedStep] = {}
        self.step_agents: dict[str, list[Any]] = {}
        if not self.labels:
            return
        self.judged = {r.item_id: r for r in (JudgedStep(*t) for t in store._tuples("""
            SELECT i.item_id, j.step, j.agent FROM judgments j JOIN items i ON i.pk = j.item_pk
            WHERE j.run_id = ? AND j.repeat = 0 AND j.step IS NOT NULL AND j.score IS NOT NULL ORDER BY i.position""",
                                                                                        (run_id,)))}
        marked = sorted({r.item_id for r in self.labels})
        self.step_agents = {it.id: [s.get("name") or s.get("role") for s in (it.trajectory or ())]
                            for it in store.items(golden_set_id, marked)}

    @property
    def key(self) -> dict[str, Any]:
        """What a report's cache key adds: nothing when no label marks a step (reports stay what they were)."""
        if not self.labels:
            return {}
        return {"steps": sha256_hex({"labels": [[r.item_id, r.rater, r.step, r.agent] for r in self.labels],
                                     "judged": [[i, r.step, r.agent] for i, r in sorted(self.judged.items())]})}
