"""Export then import gives the same database state and the same files (lossless round trip)."""

from __future__ import annotations

from pathlib import Path

from workbench.features.importing import service as importing
from workbench.calibration import snapshots
from workbench.calibration import golden_sets as gs
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store
from tests.conftest import DEMO_RUBRIC, ROOT


def _import_folder(store: Store, folder: Path, name: str) -> None:
    add_rubric(store, DEMO_RUBRIC)
    importing.import_items(store, folder / "items.jsonl", name)
    for rubric_dir in [p for p in folder.iterdir() if p.is_dir()]:
        rubric = rubric_dir.name
        importing.import_labels(store, rubric_dir / "labels.jsonl", name, rubric)
        if (rubric_dir / "adjudications.jsonl").exists():
            importing.import_adjudications(store, rubric_dir / "adjudications.jsonl", name, rubric)
        for f in sorted((rubric_dir / "judgments").glob("*.jsonl")):
            importing.import_judgments(store, f, name, rubric, f.stem)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.jsonl"))}


def test_demo_round_trip_is_lossless(demo_store, tmp_path):
    first = tmp_path / "first"
    snapshots.export_golden_set(demo_store, "demo", first)
    with Store(tmp_path / "second.db") as other:
        _import_folder(other, first, "demo")
        second = tmp_path / "second"
        snapshots.export_golden_set(other, "demo", second)
        # the same consensus, items and hashes: the frozen version hash is equal
        assert snapshots.freeze(other, "demo")["hash"] == snapshots.freeze(demo_store, "demo")["hash"]
    assert _files(first) == _files(second)
    assert len(_files(first)) == 7  # items, labels, adjudications, 4 judges


def test_export_keeps_every_field(demo_store, tmp_path):
    snapshots.export_golden_set(demo_store, "demo", tmp_path / "out")
    src = (ROOT / "golden_sets/demo/items.jsonl").read_text().splitlines()
    import json
    exported = {json.loads(l)["id"]: json.loads(l) for l in (tmp_path / "out/items.jsonl").read_text().splitlines()}
    for line in src:
        rec = json.loads(line)
        assert exported[rec["id"]] == rec
    runs = {json.loads(l)["run"] for l in
            (tmp_path / "out/demo-patch-quality/judgments/noisy-llama.jsonl").read_text().splitlines()}
    assert runs == {"run-1", "run-2"}


def test_freeze_is_stable_and_changes_with_consensus(demo_store):
    a = snapshots.freeze(demo_store, "demo")
    assert snapshots.freeze(demo_store, "demo") == a  # same state, same version
    c = gs.consensus(demo_store, "demo", "demo-patch-quality")
    item_id = c.unresolved[0]
    gs.adjudicate(demo_store, "demo", "demo-patch-quality", item_id, 1, lead="lead", note="looked at tests")
    b = snapshots.freeze(demo_store, "demo")
    assert b["hash"] != a["hash"] and b["version"] == a["version"] + 1
