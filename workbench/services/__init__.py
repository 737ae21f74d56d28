"""Use cases the CLI and the UI both call: importing, labeling, judging, calibrating, gating, exporting."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import Store


def open_store(path: str | Path) -> Store:
    """The front ends' one way to the store: they hold it and hand it to services, and never query it themselves."""
    from ..store import Store

    return Store(path)
