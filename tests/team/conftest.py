"""People and audit: a small workspace (the demo rubric and a few items) on a real SQLite file or, where Postgres
is installed and the store speaks it, on a fresh database of a real Postgres server (tests/pg.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
DEMO_RUBRIC = ROOT / "rubrics" / "demo-patch-quality.yaml"
RUBRIC = "demo-patch-quality"
GOLDEN_SET = "g"
N_ITEMS = 12


def postgres_target() -> str:
    """A fresh database URL, or a skip saying what is missing (no Postgres binaries, or a store without Postgres)."""
    try:
        from workbench.store.engines.urls import parse_target  # noqa: F401 - the store's Postgres support
    except ImportError:
        pytest.skip("this store does not open Postgres yet (no workbench.store.engines)")
    from pg import postgres_url  # tests/pg.py: skips with a sentence when no Postgres is installed

    return postgres_url()


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, tmp_path: Path) -> str:
    """Where the workspace's database lives: an SQLite file, or a Postgres URL."""
    return str(tmp_path / "workbench.db") if request.param == "sqlite" else postgres_target()


def seed(store: Store, folder: Path, n_items: int = N_ITEMS) -> list[str]:
    """The demo rubric and ``n_items`` items in golden set 'g'; returns the item ids."""
    from workbench.calibration.rubric_versions import add_rubric
    from workbench.features.importing.service import import_items

    add_rubric(store, DEMO_RUBRIC, actor="setup")
    ids = [f"it-{i:04d}" for i in range(n_items)]
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps({"id": i, "input": f"task {i}", "output": f"answer {i}"}) + "\n"
                            for i in ids), encoding="utf-8")
    import_items(store, path, GOLDEN_SET)
    return ids


@pytest.fixture
def team(target: str, tmp_path: Path):
    """(store, item ids) of a seeded workspace on each engine."""
    s = Store(target)
    try:
        yield s, seed(s, tmp_path)
    finally:
        s.close()
