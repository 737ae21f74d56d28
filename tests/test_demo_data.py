"""The committed demo files are exactly what the seeded generator writes."""

from __future__ import annotations


from tests.conftest import ROOT
from workbench.demo.generator import write_demo


def test_committed_demo_matches_generator(tmp_path):
    write_demo(tmp_path)
    for sub in ("golden_sets/demo", "rubrics"):
        for f in sorted((tmp_path / sub).rglob("*")):
            if f.is_file():
                committed = ROOT / f.relative_to(tmp_path)
                assert committed.read_bytes() == f.read_bytes(), f"{committed} differs from the generator's output"


def test_demo_has_the_promised_shape(demo_store):
    from workbench.services.golden_sets import show_golden_set
    info = show_golden_set(demo_store, "demo")
    assert 140 <= info["items"] <= 160 and len(info["categories"]) == 4 and len(info["producer_families"]) == 3
    r = info["rubrics"]["demo-patch-quality"]
    assert r["raters"] == 3 and r["unresolved"] > 0 and r["with_2_or_more"] > 0.8 * info["items"]
    labels_per_item = {}
    for l in demo_store.labels(demo_store.golden_set("demo")["id"], "demo-patch-quality"):
        labels_per_item[l["item_id"]] = labels_per_item.get(l["item_id"], 0) + 1
    assert 3 in labels_per_item.values() and 2 in labels_per_item.values()
