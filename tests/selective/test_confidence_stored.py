"""A judgment's confidence is stored and read back on SQLite and Postgres; absent stays absent; bad values are
refused by one sentence and nothing is written."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DEMO_RUBRIC, write
from workbench.calibration.golden_sets import ItemIndexRow
from workbench.calibration.rubric_versions import add_rubric, get_rubric, judge_row
from workbench.core.errors import InputError
from workbench.features.importing import service as importing
from workbench.store import Store

RUBRIC, JUDGE = "demo-patch-quality", "lenient-mini"


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _seed(store, tmp_path):
    add_rubric(store, DEMO_RUBRIC)
    items = [{"id": f"i{n}", "input": f"task {n}", "output": f"answer {n}"} for n in range(4)]
    importing.import_items(store, write(tmp_path / "items.jsonl", jsonl(items)), "g")


def _stored(store) -> dict[str, float | None]:
    rv = get_rubric(store, RUBRIC)
    cols = store.judgment_columns(store.golden_set("g").id, judge_row(store, rv.id, JUDGE).pk)
    read = {j.item_id: j.confidence for _, j in store.run_judgments(store.golden_set("g").id,
                                                                     judge_row(store, rv.id, JUDGE).pk)}
    assert dict(zip(cols["item_id"], cols["confidence"])) == read  # both ways of reading agree
    return read


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request, tmp_path):
    if request.param == "postgres":
        from tests.pg import postgres_url
        s = Store(postgres_url())
    else:
        s = Store(tmp_path / "wb.db")
    yield s
    s.close()


def test_confidence_round_trips_and_absent_stays_null(any_store, tmp_path):
    _seed(any_store, tmp_path)
    rows = [{"item_id": "i0", "score": 1, "confidence": 0.93}, {"item_id": "i1", "score": 0},
            {"item_id": "i2", "score": -1, "confidence": 0}, {"item_id": "i3", "score": 1, "confidence": 1}]
    importing.import_judgments(any_store, write(tmp_path / "j.jsonl", jsonl(rows)), "g", RUBRIC, JUDGE)
    assert _stored(any_store) == {"i0": 0.93, "i1": None, "i2": 0.0, "i3": 1.0}
    raw = any_store.conn.execute("SELECT count(*) FROM judgments WHERE confidence IS NULL").fetchone()[0]
    assert raw == 1


@pytest.mark.parametrize("value, said", [(1.2, "is 1.2, not a number from 0 to 1"),
                                         (-0.01, "is -0.01, not a number from 0 to 1"),
                                         ("high", 'must be a number from 0 to 1, got "high"'),
                                         (True, "must be a number from 0 to 1, got true")])
def test_bad_confidence_refused_by_sentence_nothing_written(any_store, tmp_path, value, said):
    _seed(any_store, tmp_path)
    rows = [{"item_id": "i0", "score": 1, "confidence": 0.5}, {"item_id": "i1", "score": 0, "confidence": value}]
    with pytest.raises(InputError) as err:
        importing.import_judgments(any_store, write(tmp_path / "bad.jsonl", jsonl(rows)), "g", RUBRIC, JUDGE)
    assert f"bad.jsonl line 2: field 'confidence': {said}" in str(err.value)
    assert any_store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0


def test_the_database_refuses_a_confidence_outside_0_1(any_store, tmp_path):
    """The CHECK constraint holds even for a writer that skips the import's validation."""
    from workbench.core.models import Judgment
    _seed(any_store, tmp_path)
    rv = get_rubric(any_store, RUBRIC)
    gs = any_store.golden_set("g")
    row = judge_row(any_store, rv.id, JUDGE)
    run_id, _ = any_store.ensure_run(row.pk, gs.id, source="import", name="r", status="done")
    items = {ItemIndexRow(**r).item_id: r for r in any_store.item_index(gs.id)}
    with pytest.raises(Exception, match="(?i)check"):
        with any_store.transaction():
            any_store.insert_judgments(run_id, row.config_hash, [Judgment("i0", 1, confidence=1.5)], items)
    assert any_store.conn.execute("SELECT count(*) FROM judgments").fetchone()[0] == 0


def test_csv_empty_confidence_cell_is_absent(any_store, tmp_path):
    _seed(any_store, tmp_path)
    f = write(tmp_path / "j.csv", "item_id,score,confidence\ni0,1,0.8\ni1,0,\n")
    importing.import_judgments(any_store, f, "g", RUBRIC, JUDGE)
    assert _stored(any_store) == {"i0": 0.8, "i1": None}


def test_golden_set_export_round_trips_the_confidence(any_store, tmp_path):
    """golden-set export writes the stored confidence (and nothing where there is none); importing the exported
    file into a fresh golden set gives the same confidences back."""
    from workbench.calibration.snapshots import export_golden_set
    _seed(any_store, tmp_path)
    rows = [{"item_id": "i0", "score": 1, "confidence": 0.25}, {"item_id": "i1", "score": 0}]
    importing.import_judgments(any_store, write(tmp_path / "j.jsonl", jsonl(rows)), "g", RUBRIC, JUDGE)
    export_golden_set(any_store, "g", tmp_path / "out")
    written = [json.loads(l) for l in (tmp_path / "out" / RUBRIC / "judgments" / f"{JUDGE}.jsonl").read_text()
               .splitlines()]
    assert [(w["item_id"], w.get("confidence", "absent")) for w in written] == [("i0", 0.25), ("i1", "absent")]
    importing.import_items(any_store, tmp_path / "out" / "items.jsonl", "g2")
    importing.import_judgments(any_store, tmp_path / "out" / RUBRIC / "judgments" / f"{JUDGE}.jsonl", "g2", RUBRIC,
                               JUDGE)
    rv = get_rubric(any_store, RUBRIC)
    back = {j.item_id: j.confidence for _, j in any_store.run_judgments(any_store.golden_set("g2").id,
                                                                         judge_row(any_store, rv.id, JUDGE).pk)}
    assert back == {"i0": 0.25, "i1": None}
