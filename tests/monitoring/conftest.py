"""An approved bundle on real data: the approval golden set is 400 Play Favorites answers with the humans' label and
gpt-4o's verdict (imported for a judge declared as `openai/gpt-4o`; traces without a verdict are graded in the tests
through the real judge path with the scripted `mock/` provider in its place), exported through the gate with a policy fitted to this judge (its ordinal alpha is low on
this lopsided data: ~0.35), including `revalidate_after`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tests.monitoring import realdata
from workbench.calibration.calibrate import Options
from workbench.calibration.rubric_versions import add_rubric
from workbench.core.workspace import Workspace
from workbench.features.export.bundle import export_bundle, load_bundle
from workbench.features.importing.service import import_items, import_judgments, import_labels
from workbench.store import Store

RUBRIC = "logic"
JUDGE = "gpt4o"
N_APPROVAL = 400
GATE = {"alt_test_min_raters": 99, "min_agreement_lower": 0.1, "human_margin": 1.0,
        "min_tpr_lower": 0.0, "min_tnr_lower": 0.0, "min_class_items": 5}
RUBRIC_YAML = f"""name: {RUBRIC}
pass_threshold: 1
judges:
  - id: {JUDGE}
    model: openai/gpt-4o
    family: openai
gate:
""" + "".join(f"  {k}: {v}\n" for k, v in GATE.items())


def _jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def approval_indices() -> np.ndarray:
    rows = realdata.load()
    return np.random.default_rng(2026).permutation(len(rows.key))[:N_APPROVAL]


@dataclass
class Approved:
    root: Path
    db: Path
    bundle: Path
    store: Store

    @property
    def workspace(self) -> Workspace:
        return Workspace.resolve(str(self.root), str(self.db))

    def bundle_json(self) -> dict:
        return load_bundle(self.store, self.bundle, self.workspace)


@pytest.fixture(scope="session")
def approved_template(tmp_path_factory) -> tuple[Path, Path]:
    return build_approved(tmp_path_factory.mktemp("monitor-approved"))


def build_approved(root: Path, db: Path | str | None = None) -> tuple[Path | str, Path]:
    """(database, bundle) of the approved workspace in ``root``, its database ``db`` (a file or a Postgres URL;
    default root/workbench.db); benchmarks/monitor_ingest.py uses it too."""
    rows = realdata.load()
    db = root / "workbench.db" if db is None else db
    idx = approval_indices()
    items = [{"id": rows.key[i], "category": rows.category[i], "input": "x" * int(rows.length[i]),
              "output": "answer"} for i in idx]
    labels = [{"item_id": rows.key[i], "rater": f"r{n}", "score": r} for i in idx for n, r in enumerate(rows.ratings(i))]
    judgments = [{"item_id": rows.key[i], "score": int(rows.judge[i])} for i in idx]
    (root / "logic.yaml").write_text(RUBRIC_YAML)
    with Store(db) as s:
        add_rubric(s, root / "logic.yaml")
        import_items(s, _jsonl(root / "items.jsonl", items), "approval")
        import_labels(s, _jsonl(root / "labels.jsonl", labels), "approval", RUBRIC)
        import_judgments(s, _jsonl(root / "judgments.jsonl", judgments), "approval", RUBRIC, JUDGE)
        res = export_bundle(s, "approval", RUBRIC, JUDGE, out_dir=root / "rubrics" / "approved",
                            options=Options(resamples=200), workspace=Workspace.resolve(str(root), str(db)),
                            signing_key=None)
        if s.dialect == "sqlite":
            s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db, res.path


@pytest.fixture
def approved(approved_template, tmp_path: Path):
    db = tmp_path / "workbench.db"
    shutil.copy(approved_template[0], db)
    bundle = tmp_path / "rubrics" / "approved" / approved_template[1].name
    bundle.parent.mkdir(parents=True)
    shutil.copy(approved_template[1], bundle)
    s = Store(db)
    yield Approved(tmp_path, db, bundle, s)
    s.close()
