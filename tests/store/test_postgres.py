"""A workspace on a real Postgres server (tests/pg.py): the same schema and numbers as SQLite, URLs refused by
sentence, moving a workspace both ways losslessly, consistent backups while others write, restore that protects
work. The whole documented command tour also runs on Postgres (tests/test_readme_walkthrough.py)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pg import postgres_url, server

from workbench.store import Store
from workbench.store.transfer import copy_workspace, table_order

WORKBENCH = [sys.executable, "-m", "workbench"]
JUDGES = ("careful-sonnet", "lenient-mini", "gpt4o-self", "noisy-llama")


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")} | env
    return subprocess.run([*WORKBENCH, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=600)


def rows(store: Store) -> dict[str, list[tuple]]:
    """Every table's rows, sorted: the content two workspaces must share."""
    out = {}
    for t in table_order():
        cur = store.conn.cursor()
        cur.row_factory = None
        cur.execute(f'SELECT * FROM "{t}"')
        out[t] = sorted((tuple(r) for r in cur.fetchall()), key=repr)
    return out


@pytest.fixture(scope="module")
def demo_sqlite(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo-sqlite")
    done = run(["demo", "--no-ui"], folder)
    assert done.returncode == 0, done.stderr
    return folder / "workbench.db"


@pytest.mark.parametrize("given, said", [
    ("mysql://ana@db:3306/evals", "is a mysql: URL, which the workbench cannot use"),
    ("postgresql:", "names no Postgres server"),
    ("http://example.org/db", "is a http: URL"),
    ("postgresql://ana:s3cret@127.0.0.1:1/evals", "carries a password"),
    ("postgresql://127.0.0.1:5432", "names no database"),
])
def test_a_url_the_workbench_cannot_use_is_refused_by_sentence_and_never_a_file(tmp_path, given, said):
    done = run(["--db", given, "demo", "--no-ui"], tmp_path)
    assert done.returncode == 1
    assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert "s3cret" not in done.stderr + done.stdout
    assert list(tmp_path.iterdir()) == [], "nothing is written, no file named after the URL"


def test_a_server_that_is_down_is_one_sentence_and_nothing_written(tmp_path):
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run(["--db", f"postgresql://ana@127.0.0.1:{port}/evals", "golden-set", "list"], tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert f"cannot open the Postgres database postgresql://ana@127.0.0.1:{port}/evals" in done.stderr
    assert "PGPASSWORD" in done.stderr and list(tmp_path.iterdir()) == []


def test_a_database_of_another_application_is_refused_untouched(tmp_path):
    import psycopg

    url = postgres_url()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE customers (id int)")
    done = run(["--db", url, "demo", "--no-ui"], tmp_path)
    assert done.returncode == 1 and "is a Postgres database of another application (tables: customers)" in done.stderr
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'public'")]
    assert tables == ["customers"]


def test_same_tables_columns_and_migration_history_as_sqlite(tmp_path):
    with Store(tmp_path / "w.db") as lite, Store(postgres_url()) as pg:
        assert lite.table_names() and sorted(lite.table_names()) == pg.table_names()
        for t in lite.table_names():
            lite_cols = [d[0] for d in lite.conn.execute(f'SELECT * FROM "{t}" LIMIT 0').description]
            pg_cols = [d[0] for d in pg.conn.execute(f'SELECT * FROM "{t}" LIMIT 0').description]
            assert lite_cols == pg_cols, t
        history = "SELECT name FROM _migrations ORDER BY id"
        assert [r[0] for r in lite.conn.execute(history)] == [r[0] for r in pg.conn.execute(history)]


def test_demo_and_calibrate_on_postgres_give_sqlite_numbers(tmp_path, demo_sqlite):
    url = postgres_url()
    done = run(["--db", url, "demo", "--no-ui"], tmp_path)
    assert done.returncode == 0, done.stderr
    for judge in JUDGES:  # computed afresh (500 resamples is not the cached reports' 2000) on both engines
        args = ["calibrate", "-g", "demo", "-r", "demo-patch-quality", "-j", judge, "--json", "--resamples", "500"]
        lite = run(["--db", str(demo_sqlite), *args], tmp_path)
        pg = run(["--db", url, *args], tmp_path)
        assert lite.returncode == pg.returncode, (lite.stderr, pg.stderr)
        a, b = json.loads(lite.stdout), json.loads(pg.stdout)
        a.pop("computed_at"), b.pop("computed_at")
        assert a == b, judge  # exactly: the same rows in the same order give the same bootstrap


def test_the_database_refuses_what_sqlite_refuses(tmp_path):
    """The triggers of the first migration hold on Postgres: scores off the scale, an append-only history,
    immutable rubric versions."""
    url = postgres_url()
    assert run(["--db", url, "demo", "--no-ui"], tmp_path).returncode == 0
    with Store(url) as s:
        label = s.conn.execute("SELECT id, rubric_id FROM labels ORDER BY id LIMIT 1").fetchone()
        for sql, params, said in [
            ("UPDATE labels SET score = 7 WHERE id = ?", (label["id"],), "not on the rubric scale"),
            ("DELETE FROM label_events WHERE id = (SELECT min(id) FROM label_events)", (), "append-only"),
            ("UPDATE rubrics SET hash = 'x' WHERE id = ?", (label["rubric_id"],), "immutable"),
        ]:
            with pytest.raises(sqlite3.IntegrityError, match=said):
                with s.transaction():
                    s.conn.execute(sql, params)
        n = s.conn.execute("SELECT count(*) FROM label_events").fetchone()[0]
        with s.transaction():
            s.conn.execute("UPDATE labels SET score = CASE WHEN score = 1 THEN 0 ELSE 1 END, updated_at = 'later' "
                           "WHERE id = ?", (label["id"],))
        assert s.conn.execute("SELECT count(*) FROM label_events").fetchone()[0] == n + 1  # the change is recorded


def test_copy_sqlite_to_postgres_to_sqlite_is_lossless(tmp_path, demo_sqlite):
    url = postgres_url()
    with Store(demo_sqlite) as src, Store(url) as pg:
        there = copy_workspace(src, pg)
        assert there.total > 2000 and rows(src) == rows(pg)
        with Store(tmp_path / "back.db") as back:
            copy_workspace(pg, back)
            assert rows(back) == rows(src)
    # the copy is a working workspace: new rows get new ids after the copied ones, triggers are back on
    with Store(url) as pg:
        top = pg.conn.execute("SELECT max(id) FROM label_events").fetchone()[0]
        label = pg.conn.execute("SELECT id, score FROM labels ORDER BY id LIMIT 1").fetchone()
        with pg.transaction():
            pg.conn.execute("UPDATE labels SET score = ?, updated_at = 'now' WHERE id = ?", (-label[1] or 1, label[0]))
        assert pg.conn.execute("SELECT max(id) FROM label_events").fetchone()[0] == top + 1
        gs = pg.ensure_golden_set("after-the-copy")
        assert gs > pg.conn.execute("SELECT max(id) FROM golden_sets WHERE id <> ?", (gs,)).fetchone()[0]


def test_copy_and_restore_refuse_to_overwrite_work_without_yes(tmp_path, demo_sqlite):
    url = postgres_url()
    assert run(["db", "copy", str(demo_sqlite), url], tmp_path).returncode == 0
    again = run(["db", "copy", str(demo_sqlite), url], tmp_path)
    assert again.returncode == 1 and "already holds a workspace" in again.stderr and "--yes" in again.stderr
    backup = tmp_path / "b.db"
    assert run(["--db", url, "db", "backup", str(backup)], tmp_path).returncode == 0
    with Store(url) as pg:
        with pg.transaction():
            pg.conn.execute("UPDATE golden_sets SET overlap = 5")
    refused = run(["--db", url, "db", "restore", str(backup)], tmp_path)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    with Store(url) as pg:
        assert {r[0] for r in pg.conn.execute("SELECT overlap FROM golden_sets")} == {5}  # untouched
    done = run(["--db", url, "db", "restore", str(backup), "--yes"], tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("Restored "), done.stderr
    with Store(url) as pg, Store(backup) as b:
        got, want = rows(pg), rows(b)
        replaced = [e for e in got["audit_log"] if e[3] == "workspace.replaced"]
        assert len(replaced) == 1  # the restore says who replaced what, and is the only row the backup lacks
        got["audit_log"].remove(replaced[0])
        assert got == want
    missing = run(["--db", url, "db", "restore", str(tmp_path / "nope.db"), "--yes"], tmp_path)
    assert missing.returncode == 1 and "there is no workbench database at" in missing.stderr
    assert not (tmp_path / "nope.db").exists()


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_a_backup_taken_while_reviewers_write_is_consistent(tmp_path, demo_sqlite, engine):
    """Labels change all through the backup; in the snapshot every label's latest event is its current score,
    and every event belongs to a label: one moment, never half of a save."""
    if engine == "postgres":
        target = postgres_url()
        with Store(demo_sqlite) as src, Store(target) as pg:
            copy_workspace(src, pg)
    else:
        target = str(tmp_path / "live.db")
        with Store(demo_sqlite) as src, Store(target) as dst:
            copy_workspace(src, dst)
    stop = threading.Event()
    saves = []

    def reviewer() -> None:
        with Store(target) as s:
            ids = [r[0] for r in s.conn.execute("SELECT id FROM labels ORDER BY id LIMIT 40")]
            k = 0
            while not stop.is_set():
                with s.transaction():
                    s.conn.execute("UPDATE labels SET score = CASE WHEN score = 1 THEN 0 ELSE 1 END, updated_at = ? "
                                   "WHERE id = ?", (f"t{k}", ids[k % len(ids)]))
                saves.append(k)
                k += 1

    writer = threading.Thread(target=reviewer)
    writer.start()
    try:
        while len(saves) < 20:
            stop.wait(0.01)
        for n in range(3):
            with Store(target) as live:
                from workbench.store.transfer import backup

                backup(live, tmp_path / f"snap{n}.db")
    finally:
        stop.set()
        writer.join()
    assert len(saves) > 20
    for n in range(3):
        snap = sqlite3.connect(tmp_path / f"snap{n}.db")
        off = snap.execute("""SELECT count(*) FROM labels l WHERE l.score IS NOT (
            SELECT new_score FROM label_events e WHERE e.label_id = l.id ORDER BY e.id DESC LIMIT 1)""").fetchone()[0]
        orphans = snap.execute("SELECT count(*) FROM label_events WHERE label_id NOT IN (SELECT id FROM labels)")
        assert off == 0 and orphans.fetchone()[0] == 0
        snap.close()


def test_the_server_fixture_is_real():
    """The tests above talk to a real server process of this machine, not a stand-in."""
    import psycopg

    with psycopg.connect(server().url()) as conn:
        assert conn.execute("SHOW server_version").fetchone()[0].split(".")[0].isdigit()
        assert conn.execute("SELECT inet_server_addr()::text").fetchone()[0].startswith("127.0.0.1")
