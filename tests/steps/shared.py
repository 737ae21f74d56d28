"""Who&When's runs in ../shared/data (tests skip without them), read straight from the files, not by the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

WHO_AND_WHEN = Path(__file__).resolve().parents[3] / "shared" / "data" / "who_and_when"
needs_data = pytest.mark.skipif(not WHO_AND_WHEN.is_dir(), reason="needs ../shared/data/who_and_when")


def runs() -> dict[str, dict]:
    """File (relative) -> its JSON, every run of the shared folder."""
    return {p.relative_to(WHO_AND_WHEN).as_posix(): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(WHO_AND_WHEN.rglob("*.json"))}
