"""One snapshot per command (issue 47): everything a command reports is read in one read transaction of the
database (SQLite's WAL snapshot, Postgres' REPEATABLE READ), so a label another connection writes meanwhile
cannot make two parts of one report disagree. The label is written from a second connection by a hook on the
store's label read, between two reads of the same command."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.conftest import Cli, _on_engine
from workbench.core.errors import WorkbenchError
from workbench.core.models import Label
from workbench.store import Store

RUBRIC = "demo-patch-quality"
ITEM = "demo-0073"  # two demo raters disagree on it: unresolved until a third label breaks the tie


def _third_label(target: str) -> None:
    """Zoe's label on ITEM, from a connection of its own: the item then has a majority (a consensus)."""
    with Store(target) as other:
        gs = other.golden_set("demo")
        rubric_id = other.rubric_versions(RUBRIC)[-1]["id"]
        scores = [score for item, _, score in other.label_scores(gs.id, RUBRIC) if item == ITEM]
        assert len(scores) == 2 and scores[0] != scores[1]
        assert other.upsert_labels(RUBRIC, rubric_id, [Label(ITEM, "zoe", scores[0])],
                                   other.item_pks(gs.id)) == 1


def _zoe(target: str) -> list:
    with Store(target) as s:
        return [row for row in s.label_scores(s.golden_set("demo").id, RUBRIC) if row[1] == "zoe"]


@pytest.fixture(params=["sqlite", "postgres"])
def target(request, demo_db_template, tmp_path, monkeypatch):
    """A copy of the seeded demo: the SQLite file, or a Postgres database holding the same rows."""
    path = tmp_path / "demo.db"
    shutil.copy(demo_db_template, path)
    if request.param == "sqlite":
        return str(path)
    from tests.pg import postgres_url
    from workbench.store.transfer import copy_workspace

    url = postgres_url()
    with Store(path) as lite, Store(url) as pg:
        copy_workspace(lite, pg)
    return url


def test_reads_inside_a_snapshot_see_one_state(target):
    with Store(target) as s:
        gs = s.golden_set("demo")
        with s.read_snapshot():
            before = s.label_scores(gs.id, RUBRIC)
            _third_label(target)  # committed by the other connection
            assert s.label_scores(gs.id, RUBRIC) == before  # the snapshot still sees the state of its first read
            with pytest.raises(WorkbenchError, match="inside a read snapshot"):  # a write would leave it
                s.ensure_golden_set("another")
            s.save_report("k", gs.id, 1, None, "calibration", {"x": 1})  # a cache write waits for the end
            assert s.report("k") is None
        assert s.report("k") == {"x": 1}
        after = s.label_scores(gs.id, RUBRIC)  # the control: outside the snapshot, the new label is read
        assert len(after) == len(before) + 1 and (ITEM, "zoe") in {(i, r) for i, r, _ in after}


def _hooked(monkeypatch, target: str) -> list[int]:
    """Write Zoe's label right after the command's first label read; the list counts the label reads."""
    reads = []
    original = Store.label_scores

    def label_scores(self, golden_set_id, rubric_name):
        rows = original(self, golden_set_id, rubric_name)
        reads.append(1)
        if len(reads) == 1:
            _third_label(target)
        return rows
    monkeypatch.setattr(Store, "label_scores", label_scores)
    return reads


def test_compare_reports_every_judge_on_one_state(target, tmp_path, monkeypatch):
    """compare computes a report a judge, each reading the labels: a label landing after the first must not give
    the judges reports of two states (two golden-set versions, two sets of unresolved items)."""
    cli = Cli(tmp_path / "demo.db", target=target)
    reads = _hooked(monkeypatch, target)
    out = cli("compare", "-g", "demo", "-r", RUBRIC, "--json", "--resamples", "200")
    assert out.exit_code == 0, out.output
    judges = json.loads(out.output)["judges"]
    assert len(judges) == 4 and len(reads) >= 2  # the labels were read again after Zoe's label landed
    assert len({j["golden_set"]["version_hash"] for j in judges}) == 1
    assert all(ITEM in j["evidence"]["unresolved_items"] for j in judges)  # all as before the label
    assert _zoe(target)  # and the label did land


def test_an_export_is_of_the_state_it_began_with(target, tmp_path, monkeypatch):
    """The bundle's report, its selective section and the golden-set version it freezes are one state: the one
    before the label that landed during the export."""
    from workbench.calibration.snapshots import current_snapshot

    with Store(target) as s:
        before, _ = current_snapshot(s, "demo")
    cli = Cli(tmp_path / "demo.db", target=target)
    _hooked(monkeypatch, target)
    out = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement",
              "0.85", "--risk", "0.1", "--resamples", "200")
    assert out.exit_code == 0, out.output
    bundle = yaml.safe_load((tmp_path / "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml").read_text())
    assert bundle["golden_set"]["version_hash"] == before
    with Store(target) as s:
        frozen = s.golden_set_version_by_hash(s.golden_set("demo").id, before)
        now, _ = current_snapshot(s, "demo")
    snapshot = json.loads(frozen["snapshot"]) if isinstance(frozen["snapshot"], str) else frozen["snapshot"]
    assert snapshot["consensus"][RUBRIC][ITEM] is None  # unresolved, as it was then
    assert now != before and _zoe(target)  # the label landed meanwhile, and the next export will see it
    # the selective section counts the labeled items of the same state as the report's evidence
    assert bundle["selective"]["n_calibration"] == bundle["calibration"]["n_items"]
