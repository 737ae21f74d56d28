"""The store maps items, judgments and labels to rows in one place: objects go in and come back equal, and no
module reaches into the Store's private helpers."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import DEMO_RUBRIC, ROOT, write
from workbench.core.models import Item, Judgment, Label, Producer
from workbench.features.importing import service as importing
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store
from workbench.store.mapping import from_json, item_from_row, item_row, to_json

ITEM = Item(id="a", input="fix the bug", task_id="t1", category="bugfix", output="patched",
            trajectory=[{"role": "assistant", "content": "ls", "tool_calls": [{"name": "bash", "arguments": {"c": 1}}]}],
            producer=Producer("gpt-4o", "openai"), reference="tests pass", metadata={"note": "é"})


def test_an_item_comes_back_from_its_row_unchanged():
    row = item_row(ITEM)
    assert row["content_hash"] == ITEM.content_hash  # hashed once, as text, to the same value
    assert item_from_row(row) == ITEM
    assert from_json(to_json({"b": [1, None], "a": "é"})) == {"a": "é", "b": [1, None]}
    assert from_json(None, []) == [] and from_json("") is None


def test_items_judgments_and_labels_round_trip_through_the_store(store: Store, tmp_path: Path):
    rv = add_rubric(store, DEMO_RUBRIC)
    write(tmp_path / "items.jsonl", to_json(ITEM.to_dict()) + "\n" + '{"id": "b", "input": "x", "output": "y"}\n')
    importing.import_items(store, tmp_path / "items.jsonl", "g")
    gs = store.golden_set("g")
    assert store.items(gs.id)[0] == ITEM and [i.id for i in store.items(gs.id, ["b", "a"])] == ["b", "a"]
    assert store.item(gs.id, "a") == ITEM

    judge = store.judge_row(rv.id, rv.rubric.judges[0].id)
    run_id, _ = store.ensure_run(judge["pk"], gs.id, source="run", name="run-1")
    scored = Judgment("a", 1, repeat=0, rationale="good", evidence_steps=(0,), trace=[{"tool": "read", "args": {}}],
                      tokens_in=10, tokens_out=5, tokens_cached=0, cost_usd=0.01, latency_ms=12.5,
                      model_version="m-1", created_at="2026-01-01T00:00:00.000+00:00")
    unscored = Judgment("b", None, repeat=0, unscored_reason="no verdict", created_at="2026-01-01T00:00:01.000+00:00")
    keys = {r["item_id"]: r for r in store.item_index(gs.id)}
    with store.transaction():
        assert store.insert_judgments(run_id, judge["config_hash"], [scored, unscored], keys) == 2
        assert store.insert_judgments(run_id, judge["config_hash"], [scored], keys) == 0  # already recorded
    assert store.run_judgments(gs.id, judge["pk"]) == [("run-1", scored), ("run-1", unscored)]

    pks = store.item_pks(gs.id)
    labels = [Label("a", "ana", 1, "clean"), Label("b", "ben", 0, inclusion_probability=0.25)]
    assert store.upsert_labels(rv.name, rv.id, labels, pks) == 2
    assert store.upsert_labels(rv.name, rv.id, labels, pks) == 0  # the same labels again change nothing
    assert store.upsert_labels(rv.name, rv.id, [Label("a", "ana", 0, "second look")], pks) == 1
    assert [(r["item_id"], r["rater"], r["score"]) for r in store.labels(gs.id, rv.name)] == \
        [("a", "ana", 0), ("b", "ben", 0)]
    assert {r["name"] for r in store.raters()} == {"ana", "ben"}
    assert store.conn.execute("SELECT inclusion_probability FROM labels WHERE rater = 'ben'").fetchone()[0] == 0.25


def _private_store_members() -> set[str]:
    tree = ast.parse((ROOT / "workbench" / "store" / "store.py").read_text())
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Store"]
    return {f.name for f in cls.body if isinstance(f, ast.FunctionDef) and f.name.startswith("_")
            and not f.name.startswith("__")}


def test_no_module_reaches_into_the_stores_private_helpers():
    private = _private_store_members()
    assert {"_all", "_one"} <= private  # what the check looks for exists
    offenders = []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        if path == ROOT / "workbench" / "store" / "store.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert offenders == []
