"""The working store: one SQLite file. The only package that runs SQL."""

from __future__ import annotations

from pathlib import Path

from workbench.store.db import default_db_path
from workbench.store.store import Store

__all__ = ["Store", "default_db_path", "open_store"]


def open_store(path: str | Path) -> Store:
    """The front ends' one way to the store: they hold it and hand it to the features, and never query it."""
    return Store(path)
