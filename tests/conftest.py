"""Shared fixtures: a fresh SQLite file per test, the seeded demo, and a CLI runner.

With ``WORKBENCH_TEST_ENGINE=postgres`` the ``store`` and ``demo_store`` fixtures are databases on a real Postgres
server (tests/pg.py) instead: the store-backed tests then check that every query speaks both engines.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

from workbench.cli import main
from workbench.features.demo.seed import seed_demo
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A loopback port nobody listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
DEMO_DIR = ROOT / "golden_sets" / "demo"
DEMO_RUBRIC = ROOT / "rubrics" / "demo-patch-quality.yaml"

# Property tests judge the code, not the machine: on a loaded 2-core CI runner a case may take longer than
# Hypothesis's defaults allow (deadline, the too-slow health check) without anything being wrong.
settings.register_profile("workbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("workbench")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "workbench.db"


ENGINE = os.environ.get("WORKBENCH_TEST_ENGINE", "sqlite")


def _on_engine(sqlite_path: Path) -> str:
    """Where a test's store lives: the SQLite file, or (WORKBENCH_TEST_ENGINE=postgres) a fresh Postgres database
    holding a copy of whatever the file holds."""
    if ENGINE != "postgres":
        return str(sqlite_path)
    from pg import postgres_url

    from workbench.store.transfer import copy_workspace

    url = postgres_url()
    if sqlite_path.exists():
        with Store(sqlite_path) as lite, Store(url) as pg:
            copy_workspace(lite, pg)
    return url


@pytest.fixture
def db_target(db_path: Path) -> str:
    """The test's database as --db names it: the SQLite file, or its Postgres database (one per test)."""
    return _on_engine(db_path)


@pytest.fixture
def store(db_target: str):
    s = Store(db_target)
    yield s
    s.close()


@pytest.fixture(scope="session")
def demo_db_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    with Store(path) as s:
        seed_demo(s)
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def demo_store(demo_db_template: Path, tmp_path: Path):
    """A private copy of the seeded demo database."""
    path = tmp_path / "demo.db"
    shutil.copy(demo_db_template, path)
    s = Store(_on_engine(path))
    yield s
    s.close()


class Cli:
    """The CLI on a private database, with the database's folder as the workspace (never the source tree)."""

    def __init__(self, db: Path | str, project: Path | None = None, *, target: str | None = None):
        self.db = db
        self.target = target or str(db)  # what --db names: the file, or a database on a server
        self.project = project or Path(db).parent  # a database server's URL needs a folder named
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None):
        return self.runner.invoke(main, ["--db", self.target, "--project", str(self.project), *map(str, args)],
                                  input=input, catch_exceptions=False)


@pytest.fixture
def cli(db_path: Path, db_target: str) -> Cli:
    return Cli(db_path, target=db_target)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def every_row(store: Store) -> dict[str, list[tuple]]:
    """Every row of every table, sorted: what a command changed, on either engine."""
    out = {}
    for table in store.table_names():
        cur = store.conn.cursor()
        cur.row_factory = None
        out[table] = sorted((tuple(r) for r in cur.execute(f'SELECT * FROM "{table}"').fetchall()), key=repr)
    return out
