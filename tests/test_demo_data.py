"""The committed demo files (the package data) are exactly what the seeded generator writes."""

from __future__ import annotations

from tests.conftest import ROOT
from workbench.features.demo.generator import DATA_DIR
from workbench.features.demo.seed import demo_files, generate_demo_data


def test_committed_demo_matches_generator(tmp_path):
    generate_demo_data(tmp_path)
    written = sorted(f.relative_to(tmp_path).as_posix() for f in tmp_path.rglob("*") if f.is_file())
    assert written == [str(rel) for rel, _ in demo_files()], "the package data and the generator's files differ"
    for rel in written:
        committed = DATA_DIR / rel
        assert committed.read_bytes() == (tmp_path / rel).read_bytes(), f"{committed} differs from the generator's output"


def test_the_repository_example_workspace_is_the_package_data():
    """golden_sets/demo and rubrics/demo-patch-quality.yaml at the top are links to the package data, not copies."""
    assert (ROOT / "golden_sets" / "demo").resolve() == (DATA_DIR / "golden_sets" / "demo").resolve()
    assert (ROOT / "rubrics" / "demo-patch-quality.yaml").resolve() == \
        (DATA_DIR / "rubrics" / "demo-patch-quality.yaml").resolve()


def test_demo_has_the_promised_shape(demo_store):
    from workbench.calibration.golden_sets import show_golden_set
    info = show_golden_set(demo_store, "demo")
    assert 140 <= info["items"] <= 160 and len(info["categories"]) == 4 and len(info["producer_families"]) == 3
    r = info["rubrics"]["demo-patch-quality"]
    assert r["raters"] == 3 and r["unresolved"] > 0 and r["with_2_or_more"] > 0.8 * info["items"]
    labels_per_item = {}
    for l in demo_store.labels(demo_store.golden_set("demo").id, "demo-patch-quality"):
        labels_per_item[l["item_id"]] = labels_per_item.get(l["item_id"], 0) + 1
    assert 3 in labels_per_item.values() and 2 in labels_per_item.values()


def test_the_unpriced_judge_has_an_unknown_cost_never_zero(demo_store):
    """noisy-llama runs on a local model with no price: its judgments carry no cost, and its report says unknown
    (None) where it used to say $0.00; the priced judges keep their costs (issue 12, item 7)."""
    from workbench.calibration.calibrate import calibrate
    from workbench.features.demo.seed import DEMO_GOLDEN_SET
    from workbench.features.demo.generator import RUBRIC_NAME

    gs = demo_store.golden_set(DEMO_GOLDEN_SET)
    costs = {}
    for judge in ("careful-sonnet", "noisy-llama"):
        row = demo_store.judge_row(demo_store.rubric_row(RUBRIC_NAME)["id"], judge)
        costs[judge] = demo_store.judgment_columns(gs.id, row["pk"])["cost_usd"]
    assert costs["noisy-llama"] and all(c is None for c in costs["noisy-llama"])
    assert all(c > 0 for c in costs["careful-sonnet"])
    llama = calibrate(demo_store, DEMO_GOLDEN_SET, RUBRIC_NAME, "noisy-llama").cost
    assert llama.per_100_items_usd is None and llama.total_usd is None
    assert calibrate(demo_store, DEMO_GOLDEN_SET, RUBRIC_NAME, "careful-sonnet").cost.per_100_items_usd > 0
