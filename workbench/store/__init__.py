"""The working store: one SQLite file. The only package that runs SQL."""

from .db import default_db_path
from .store import Store

__all__ = ["Store", "default_db_path"]
