"""Labels and judgments carry the decisive error step and the agent: imported, checked against the item's steps,
kept with the label's history, exported back; on SQLite and on a real Postgres."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DEMO_RUBRIC, write
from workbench.calibration import golden_sets as gs
from workbench.calibration.rubric_versions import add_rubric
from workbench.calibration.snapshots import export_golden_set
from workbench.core.errors import InputError
from workbench.features.importing import service as importing
from workbench.store import Store


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def trajectory_item(n: int, steps: int) -> dict:
    return {"id": f"t{n}", "input": f"task {n}", "trajectory": [
        {"role": "assistant", "name": f"agent{k % 2}", "content": f"step {k}"} for k in range(steps)]}


@pytest.fixture(params=["sqlite", "postgres"])
def engine_store(request, tmp_path):
    if request.param == "postgres":
        from pg import postgres_url
        target = postgres_url()
    else:
        target = str(tmp_path / "w.db")
    s = Store(target)
    add_rubric(s, DEMO_RUBRIC)
    importing.import_items(s, write(tmp_path / "items.jsonl", jsonl(
        [trajectory_item(0, 4), trajectory_item(1, 10), {"id": "plain", "input": "q", "output": "a"}])), "g")
    yield s
    s.close()


def table(store: Store, sql: str) -> list[tuple]:
    return [tuple(r) for r in store.conn.execute(sql)]


def test_labels_carry_step_and_agent_and_export_them_back(engine_store, tmp_path):
    f = write(tmp_path / "labels.jsonl", jsonl([
        {"item_id": "t0", "rater": "ana", "score": -1, "step": 2, "agent": "agent0", "rationale": "wrong file"},
        {"item_id": "t1", "rater": "ana", "score": 0}]))
    res = importing.import_labels(engine_store, f, "g", "demo-patch-quality", new_raters=True)
    assert res.added == 2
    rows = {r.item_id: r for r in gs.label_rows(engine_store, engine_store.golden_set("g").id, "demo-patch-quality")}
    assert (rows["t0"].step, rows["t0"].agent) == (2, "agent0")
    assert (rows["t1"].step, rows["t1"].agent) == (None, None)
    # the same file again changes nothing; a moved step is a change, recorded in the label's history
    assert importing.import_labels(engine_store, f, "g", "demo-patch-quality").added == 0
    moved = write(tmp_path / "moved.jsonl", jsonl([
        {"item_id": "t0", "rater": "ana", "score": -1, "step": 3, "agent": "agent1", "rationale": "wrong file"}]))
    assert importing.import_labels(engine_store, moved, "g", "demo-patch-quality").added == 1
    events = table(engine_store, "SELECT event, step, agent FROM label_events ORDER BY id")
    assert events[-1] == ("update", 3, "agent1") and ("insert", 2, "agent0") in events
    out = tmp_path / "out"
    export_golden_set(engine_store, "g", out)
    exported = [json.loads(line) for line in (out / "demo-patch-quality" / "labels.jsonl").read_text().splitlines()]
    t0 = next(r for r in exported if r["item_id"] == "t0")
    assert (t0["step"], t0["agent"]) == (3, "agent1")
    assert "step" not in next(r for r in exported if r["item_id"] == "t1")


@pytest.mark.parametrize("record, said", [
    ({"item_id": "t0", "rater": "ana", "score": -1, "step": 4},
     "labels.jsonl line 2: field 'step': step 4 is not a step of item 't0', which has steps 0 to 3"),
    ({"item_id": "plain", "rater": "ana", "score": -1, "step": 0},
     "labels.jsonl line 2: field 'step': step 0 is not a step of item 'plain', which has no trajectory steps"),
    ({"item_id": "t0", "rater": "ana", "score": -1, "step": -1},
     "labels.jsonl line 2: field 'step': step -1 is not a step"),
    ({"item_id": "t0", "rater": "ana", "score": -1, "step": "two"},
     "labels.jsonl line 2: field 'step': must be an integer"),
    ({"item_id": "t0", "rater": "ana", "score": -1, "step": 1, "agent": "  "},
     "labels.jsonl line 2: field 'agent': is blank"),
])
def test_a_step_outside_the_item_is_refused_by_one_located_sentence_and_nothing_lands(engine_store, tmp_path,
                                                                                        record, said):
    f = write(tmp_path / "labels.jsonl", jsonl([{"item_id": "t1", "rater": "ana", "score": -1, "step": 9}, record]))
    with pytest.raises(InputError) as e:
        importing.import_labels(engine_store, f, "g", "demo-patch-quality", new_raters=True)
    assert str(e.value).startswith(said), str(e.value)
    assert str(e.value).count(".") >= 1 and "\n" not in str(e.value)
    assert table(engine_store, "SELECT count(*) FROM labels") == [(0,)]


def test_judgments_carry_step_and_agent_checked_against_the_item(engine_store, tmp_path):
    f = write(tmp_path / "j.jsonl", jsonl([{"item_id": "t1", "score": -1, "step": 7, "agent": "agent1"},
                                           {"item_id": "t0", "score": 0}]))
    assert importing.import_judgments(engine_store, f, "g", "demo-patch-quality", "careful-sonnet").added == 2
    got = table(engine_store, "SELECT i.item_id, j.step, j.agent FROM judgments j JOIN items i ON i.pk = j.item_pk "
                              "ORDER BY i.item_id")
    assert got == [("t0", None, None), ("t1", 7, "agent1")]
    out = tmp_path / "out"
    export_golden_set(engine_store, "g", out)
    back = [json.loads(line) for line in
            (out / "demo-patch-quality" / "judgments" / "careful-sonnet.jsonl").read_text().splitlines()]
    assert {r["item_id"]: r.get("step") for r in back} == {"t0": None, "t1": 7}
    bad = write(tmp_path / "bad.jsonl", jsonl([{"item_id": "t0", "score": -1, "step": 10}]))
    with pytest.raises(InputError, match=r"bad.jsonl line 1: field 'step': step 10 is not a step of item 't0'"):
        importing.import_judgments(engine_store, bad, "g", "demo-patch-quality", "careful-sonnet")
