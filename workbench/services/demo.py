"""Seeding a database from the committed synthetic demo files."""

from __future__ import annotations

from pathlib import Path

from ..demo.generator import RUBRIC_NAME
from ..store import Store
from . import golden_sets as gs
from .rubrics import add_rubric

DEMO_GOLDEN_SET = "demo"


def project_root() -> Path:
    """The folder holding golden_sets/ and rubrics/: the working directory if it has them, else the source tree."""
    cwd = Path.cwd()
    if (cwd / "golden_sets" / DEMO_GOLDEN_SET).is_dir():
        return cwd
    return Path(__file__).resolve().parents[2]


def seed_demo(store: Store, root: Path | None = None) -> dict:
    """Load rubric, items, labels, adjudications and recorded judgments of the demo; idempotent."""
    root = root or project_root()
    folder = root / "golden_sets" / DEMO_GOLDEN_SET
    rubric_dir = folder / RUBRIC_NAME
    rv = add_rubric(store, root / "rubrics" / f"{RUBRIC_NAME}.yaml")
    summary = {"rubric": f"{rv.name} v{rv.version}"}
    summary["items"] = gs.import_items(store, folder / "items.jsonl", DEMO_GOLDEN_SET, is_demo=True).records
    store.ensure_golden_set(DEMO_GOLDEN_SET, is_demo=True, overlap=2)
    store.set_rater_role("lead", "lead")
    summary["labels"] = gs.import_labels(store, rubric_dir / "labels.jsonl", DEMO_GOLDEN_SET, rv.name).records
    summary["adjudications"] = gs.import_adjudications(store, rubric_dir / "adjudications.jsonl", DEMO_GOLDEN_SET,
                                                       rv.name).records
    summary["judgments"] = {}
    for path in sorted((rubric_dir / "judgments").glob("*.jsonl")):
        summary["judgments"][path.stem] = gs.import_judgments(store, path, DEMO_GOLDEN_SET, rv.name, path.stem).records
    return summary
