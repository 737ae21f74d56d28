"""The SQLite store: pragmas, STRICT tables, triggers, migrations, concurrent writers."""

from __future__ import annotations

import json

import multiprocessing as mp
import sqlite3
import threading

import pytest

from tests.conftest import DEMO_RUBRIC, write
from workbench.features.importing import service as importing
from workbench.features.labeling.service import submit_label
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store
from workbench.store.db import connect
from workbench.store.migrations import all_migrations, migrate


@pytest.fixture
def sqlite_store(db_path):
    """SQLite's own settings are checked on an SQLite file, whichever engine the other tests use."""
    with Store(db_path) as s:
        yield s


def test_pragmas_and_strict_tables(sqlite_store):
    store = sqlite_store
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    for (name, sql) in store.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"):
        assert sql.rstrip().endswith("STRICT"), name
    applied = [r[0] for r in store.conn.execute("SELECT name FROM _migrations ORDER BY id")]
    assert applied == [name for name, _ in all_migrations()]


def test_strict_rejects_wrong_types(sqlite_store):
    store = sqlite_store
    with pytest.raises(sqlite3.IntegrityError):
        store.conn.execute("INSERT INTO golden_sets (name, overlap, created_at) VALUES ('x', 'two', 'now')")


def _one_labeled_item(store, tmp_path) -> None:
    add_rubric(store, DEMO_RUBRIC)
    write(tmp_path / "i.jsonl", '{"id": "a", "input": "t", "output": "o"}\n')
    importing.import_items(store, tmp_path / "i.jsonl", "g")
    submit_label(store, "g", "demo-patch-quality", "a", "ana", 1, "clean fix")


def test_label_events_append_only(store, tmp_path):
    _one_labeled_item(store, tmp_path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("UPDATE label_events SET new_score = 0")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("DELETE FROM label_events")


def test_database_refuses_off_scale_label_even_without_the_service(store, tmp_path):
    _one_labeled_item(store, tmp_path)
    with pytest.raises(sqlite3.IntegrityError, match="not on the rubric scale"):
        store.conn.execute("UPDATE labels SET score = 5")


def test_rubric_versions_immutable(store):
    add_rubric(store, DEMO_RUBRIC)
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        store.conn.execute("UPDATE rubrics SET content = '{}'")


def test_submit_label_is_idempotent_and_logs_changes(store, tmp_path):
    _one_labeled_item(store, tmp_path)
    assert submit_label(store, "g", "demo-patch-quality", "a", "ana", 1, "clean fix") is False  # double click
    assert submit_label(store, "g", "demo-patch-quality", "a", "ana", 0, "changed my mind") is True
    assert [e["event"] for e in store.label_events()] == ["insert", "update"]
    assert [l["score"] for l in store.labels(store.golden_set("g").id, "demo-patch-quality")] == [0]


def test_old_schema_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.db"
    conn = connect(path)
    migrate(conn, upto=1)  # a database made before the reservations migration
    conn.execute("INSERT INTO golden_sets (name, overlap, is_demo, created_at) VALUES ('old', 2, 0, 'then')")
    conn.execute("INSERT INTO items (golden_set_id, item_id, task_id, category, content, content_hash, position, "
                 "created_at) VALUES (1, 'x', 'x', 'default', '{}', 'h', 0, 'then')")
    conn.close()
    with Store(path) as s:
        assert "reservations" in s.table_counts()
        assert s.table_counts()["items"] == 1 and s.golden_set("old").name == "old"
        assert len(s.conn.execute("SELECT * FROM _migrations").fetchall()) == len(all_migrations())


def test_promptfoo_item_ids_naming_the_provider_are_migrated(tmp_path):
    """Items that `import --from promptfoo` made before issue 27 (ids ending in the provider) get the ids the adapter
    makes now (under the same pk), so a re-import of the same results file maps to them."""
    from workbench.features.interop.promptfoo import item_id

    path = tmp_path / "old.db"
    conn = connect(path)
    migrate(conn, upto=[n for n, _ in all_migrations()].index("m009_promptfoo_item_ids"))  # made before m009
    conn.execute("INSERT INTO golden_sets (name, overlap, is_demo, created_at) VALUES ('pf', 2, 0, 'then')")
    old = [("test0-prompt0-openai:gpt-4o-mini", "openai:gpt-4o-mini"), ("test3-prompt1-provider", None),
           ("test1-prompt0-mine", "openai:gpt-4o"), ("plain", "openai:gpt-4o")]  # the last two: not the old form
    for n, (iid, provider) in enumerate(old):
        content = json.dumps({"input": "q", "metadata": {"promptfoo": {"provider": provider}}})
        conn.execute("INSERT INTO items (golden_set_id, item_id, task_id, category, content, content_hash, position, "
                     "created_at) VALUES (1, ?, 't', 'default', ?, 'h', ?, 'then')", (iid, content, n))
    conn.close()
    with Store(path) as s:
        ids = [r["item_id"] for r in s.item_index(s.golden_set("pf").id)]
    assert ids == [item_id(0, 0, "openai:gpt-4o-mini"), item_id(3, 1, None), "test1-prompt0-mine", "plain"]
    assert not [i for i in ids[:2] if "gpt" in i or "provider" in i]


def test_another_applications_database_is_refused_untouched(tmp_path):
    """An SQLite file with tables but no workbench migrations (another tool's database) is refused by name before it
    is changed, journal mode included; an SQLite file without tables becomes a workbench database."""
    import hashlib
    import sqlite3

    from workbench.core.errors import InputError

    other = tmp_path / "mlflow.db"
    conn = sqlite3.connect(other)
    conn.executescript("CREATE TABLE experiments (id INTEGER); CREATE TABLE runs (id INTEGER);")
    conn.close()
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    with pytest.raises(InputError, match=r"mlflow.db is an SQLite database of another application \(tables: "
                                         r"experiments, runs\).*point --db"):
        Store(other)
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mlflow.db"]  # no -wal or -shm beside it
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    with Store(empty) as s:
        assert "items" in s.table_counts()
    with Store(empty) as s:  # and once it is the workbench's, it opens again
        assert s.table_counts()["items"] == 0


N_PROCS, N_ITEMS = 8, 100  # 250 saves per process


def _writer(db: str, proc: int) -> None:
    with Store(db) as s:
        for n in range(N_ITEMS):  # each process labels every item as its own rater, then changes half
            submit_label(s, "g", "demo-patch-quality", f"i{n}", f"rater{proc}", (n + proc) % 3 - 1, "first look")
        for n in range(0, N_ITEMS, 2):
            submit_label(s, "g", "demo-patch-quality", f"i{n}", f"rater{proc}", (n + proc + 1) % 3 - 1, "second look")
        for n in range(N_ITEMS):  # and every process writes the shared rater 'team' on every item
            submit_label(s, "g", "demo-patch-quality", f"i{n}", "team", 0)


def test_eight_processes_write_labels_at_once(tmp_path):
    db = tmp_path / "c.db"
    with Store(db) as s:
        add_rubric(s, DEMO_RUBRIC)
        write(tmp_path / "i.jsonl", "".join(f'{{"id": "i{n}", "input": "t", "output": "o{n}"}}\n'
                                            for n in range(N_ITEMS)))
        importing.import_items(s, tmp_path / "i.jsonl", "g")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db), p)) for p in range(N_PROCS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    with Store(db) as s:
        labels = s.labels(s.golden_set("g").id, "demo-patch-quality")
        keys = [(l["item_id"], l["rater"]) for l in labels]
        assert len(keys) == len(set(keys)) == N_ITEMS * (N_PROCS + 1)
        for l in labels:
            if l["rater"] == "team":
                assert l["score"] == 0
                continue
            proc, n = int(l["rater"][5:]), int(l["item_id"][1:])
            expected = (n + proc + 1) % 3 - 1 if n % 2 == 0 else (n + proc) % 3 - 1
            assert l["score"] == expected
        events = s.label_events()
        inserts = [e for e in events if e["event"] == "insert"]
        updates = [e for e in events if e["event"] == "update"]
        assert len(inserts) == N_ITEMS * (N_PROCS + 1)
        assert len(updates) == N_PROCS * N_ITEMS // 2  # every change logged, no-op saves not


def test_connections_opening_a_brand_new_file_at_once_all_get_in(tmp_path):
    """Jobs of one UI process (threads) opening a workspace's new database together: SQLite answered the second
    one's switch to write-ahead logging with "database is locked" at once (about 1 start in 9 before the fix)."""
    for trial in range(25):
        db = tmp_path / f"new-{trial}.db"
        failures: list[BaseException] = []

        def open_it():
            try:
                with Store(db) as s:
                    s.golden_sets()
            except BaseException as e:  # noqa: BLE001 - collected for the assertion below
                failures.append(e)

        threads = [threading.Thread(target=open_it) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert failures == [], (trial, failures)
        assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_schema_checks_the_same_roles_as_the_code(sqlite_store):
    store = sqlite_store
    """models.Role is the one list of roles; the raters table's CHECK (written in a migration) must agree with it."""
    import re

    from workbench.core.models import Role

    sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'raters'").fetchone()[0]
    checked = re.search(r"role IN \(([^)]*)\)", sql).group(1)
    assert {v.strip(" '") for v in checked.split(",")} == {r.value for r in Role}


def test_migrations_run_in_the_order_of_their_numbers_whatever_imported_one_first(tmp_path):
    """Found through the suite: a test that imported every module (test_architecture) registered m014 before
    m001, and the next fresh database of that worker failed with "no such table: raters". A fresh interpreter
    importing one late migration first, then migrating: every table is there."""
    import subprocess
    import sys

    code = ("import importlib, sys; importlib.import_module('workbench.store.migrations.m014_one_identity');"
            "from workbench.store import Store; s = Store(sys.argv[1]);"
            "print(s.conn.execute('SELECT count(*) FROM raters').fetchone()[0])")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "w.db")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "0", r.stderr[-2000:]
