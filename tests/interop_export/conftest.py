"""An approved single-mode judge to send back: the demo's careful judgments, recorded for a single-call judge.

The demo's approved judges are agentic (careful-sonnet) or a Python grader, and
neither can leave for promptfoo, Inspect or MLflow; so the demo rubric gets a
second version declaring `careful-single` (anthropic, single mode, temperature
0, 800 output tokens), careful-sonnet's recorded judgments are imported for it,
and the pair is exported through the gate like any other.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.conftest import DEMO_DIR, DEMO_RUBRIC
from workbench.cli import main
from workbench.calibration.calibrate import Options
from workbench.features.export.bundle import export_bundle
from workbench.features.importing.service import import_judgments
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store
from workbench.core.workspace import Workspace

JUDGE = "careful-single"
JUDGMENTS = DEMO_DIR / "demo-patch-quality" / "judgments" / "careful-sonnet.jsonl"


@dataclass
class Approved:
    db: Path
    bundle: Path
    store: Store


@pytest.fixture(scope="session")
def approved_template(demo_db_template: Path, tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("approved")
    db = root / "workbench.db"
    shutil.copy(demo_db_template, db)
    rubric = yaml.safe_load(DEMO_RUBRIC.read_text())
    rubric["judges"].append({"id": JUDGE, "model": "anthropic/claude-sonnet-4-5", "mode": "single",
                             "temperature": 0.0, "max_tokens": 800})
    path = root / "demo-patch-quality.yaml"
    path.write_text(yaml.safe_dump(rubric, sort_keys=False))
    with Store(db) as s:
        add_rubric(s, path)
        import_judgments(s, JUDGMENTS, "demo", "demo-patch-quality", JUDGE)
        res = export_bundle(s, "demo", "demo-patch-quality", JUDGE, out_dir=root / "approved",
                            options=Options(resamples=400), workspace=Workspace.resolve(str(root), str(db)))
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db, res.path


@pytest.fixture
def approved(approved_template, tmp_path: Path):
    """A private copy of the database and of its approved bundle."""
    db, bundle = tmp_path / "workbench.db", tmp_path / "rubrics" / "approved" / approved_template[1].name
    shutil.copy(approved_template[0], db)
    bundle.parent.mkdir(parents=True)
    shutil.copy(approved_template[1], bundle)
    s = Store(db)
    yield Approved(db, bundle, s)
    s.close()


def export_to(approved: Approved, target: str) -> Path:
    """`workbench export --bundle ... --to TARGET`; the file it wrote."""
    r = CliRunner().invoke(main, ["export", "--bundle", str(approved.bundle), "--to", target, "--db",
                                  str(approved.db), "--project", str(approved.db.parent)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return approved.db.parent / re.search(r"Wrote (\S+) \(", r.stdout).group(1)


def run_check(approved: Approved, *args: str, db: Path | None = None):
    """`workbench check BUNDLE ...`: the result and its FAIL sentences."""
    r = CliRunner().invoke(main, ["check", str(approved.bundle), "--db", str(db or approved.db), "--project",
                                  str(approved.db.parent), *map(str, args)], catch_exceptions=False)
    return r, [line.removeprefix("FAIL: ") for line in r.stderr.splitlines() if line.startswith("FAIL: ")]
