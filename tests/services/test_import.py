"""Importing items, labels and judgments: bad input gets one clear sentence and changes nothing."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DEMO_RUBRIC, write
from workbench.core.errors import InputError
from workbench.features.importing import service as importing
from workbench.calibration import golden_sets as gs
from workbench.calibration.rubric_versions import add_rubric


def item(n: int, **extra) -> dict:
    return {"id": f"i{n}", "input": f"task {n}", "output": f"answer {n}",
            "producer": {"model": "gpt-4o", "family": "openai"}, **extra}


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def snapshot(store) -> dict:
    """Every row of every table: 'nothing imported' means this is unchanged."""
    return {t: sorted((tuple(r) for r in store.conn.execute(f"SELECT * FROM {t}")), key=repr)
            for t in store.table_counts()}


@pytest.fixture
def seeded(store, tmp_path):
    add_rubric(store, DEMO_RUBRIC)
    importing.import_items(store, write(tmp_path / "items.jsonl", jsonl([item(n) for n in range(5)])), "g")
    return store


def test_items_land_with_defaults(store, tmp_path):
    res = importing.import_items(store, write(tmp_path / "a.jsonl", jsonl([item(1), {"input": "x", "output": "y"}])),
                                 "g")
    assert (res.records, res.added) == (2, 2)
    items = {i.id: i for i in gs.load_items(store, "g")}
    assert items["i1"].task_id == "i1" and items["i1"].category == "default"
    derived = [i for i in items if i != "i1"][0]
    assert len(derived) == 16 and all(c in "0123456789abcdef" for c in derived)


def test_reimport_changes_nothing(store, tmp_path):
    f = write(tmp_path / "a.jsonl", jsonl([item(n) for n in range(3)]))
    importing.import_items(store, f, "g")
    before = snapshot(store)
    res = importing.import_items(store, f, "g")
    assert (res.added, res.unchanged) == (0, 3)
    assert snapshot(store) == before


def test_csv_with_nested_json_and_bom(store, tmp_path):
    text = ('id,input,output,producer,trajectory\n'
            'c1,do it,"done, really","{""model"": ""gpt-4o"", ""family"": ""openai""}",'
            '"[{""role"": ""user"", ""content"": ""hi""}]"\n')
    f = write(tmp_path / "items.csv", b"\xef\xbb\xbf" + text.encode())
    importing.import_items(store, f, "g")
    [it] = gs.load_items(store, "g")
    assert it.id == "c1" and it.output == "done, really" and it.producer.family == "openai"
    assert it.trajectory == [{"role": "user", "content": "hi"}]


BAD_ITEMS = [
    ("malformed", 'good\n{"id": "x", "input": ', "line 3: malformed JSON"),
    ("type", '{"id": "x", "input": "t", "output": "o", "producer": "gpt-4o"}', "field 'producer': must be an object"),
    ("unknown_field", '{"id": "x", "input": "t", "ouput": "o"}', "unknown field 'ouput'"),
    ("no_output", '{"id": "x", "input": "t"}', "needs an 'output' or a 'trajectory'"),
    ("bad_step", '{"id": "x", "input": "t", "trajectory": [{"role": "robot", "content": ""}]}', "trajectory[0]"),
    ("dup_id", '{"id": "i1", "input": "t", "output": "A"}\n{"id": "i1", "input": "t", "output": "B"}',
     "appears twice with different content"),
]


@pytest.mark.parametrize("name,body,needle", BAD_ITEMS, ids=[b[0] for b in BAD_ITEMS])
def test_bad_items_refused_whole(seeded, tmp_path, name, body, needle):
    lines = [json.dumps(item(100))] + [l for l in body.replace("good\n", json.dumps(item(101)) + "\n").split("\n")]
    f = write(tmp_path / f"{name}.jsonl", "\n".join(lines) + "\n")
    before = snapshot(seeded)
    with pytest.raises(InputError) as e:
        importing.import_items(seeded, f, "g")
    msg = str(e.value)
    assert msg.startswith(f"{name}.jsonl line ") and needle in msg and ";" in msg  # file, line, what, fix
    assert msg.count("\n") == 0
    assert snapshot(seeded) == before


def test_bad_line_900_of_1000_leaves_database_unchanged(seeded, tmp_path):
    rows = [json.dumps(item(n)) for n in range(1000, 2000)]
    rows[899] = '{"id": "broken", "input": 5, "output": "x"}'
    f = write(tmp_path / "big.jsonl", "\n".join(rows) + "\n")
    before = snapshot(seeded)
    with pytest.raises(InputError, match=r"big.jsonl line 900: field 'input': must be a string"):
        importing.import_items(seeded, f, "g")
    assert snapshot(seeded) == before


def test_changed_content_under_existing_id_refused(seeded, tmp_path):
    f = write(tmp_path / "x.jsonl", jsonl([item(1, output="changed")]))
    with pytest.raises(InputError, match="already in golden set 'g' with different content"):
        importing.import_items(seeded, f, "g")


def test_empty_file(seeded, tmp_path):
    with pytest.raises(InputError, match="empty.jsonl: the file is empty"):
        importing.import_items(seeded, write(tmp_path / "empty.jsonl", ""), "g")


def test_csv_wrong_delimiter(seeded, tmp_path):
    f = write(tmp_path / "semi.csv", "id;input;output\na;b;c\n")
    with pytest.raises(InputError, match="semi.csv line 1: the header is separated by semicolons.*comma-separated"):
        importing.import_items(seeded, f, "g")


def test_huge_line_refused_without_reading_it_whole(seeded, tmp_path):
    f = tmp_path / "huge.jsonl"
    with f.open("w") as fh:
        fh.write(json.dumps(item(7)) + "\n")
        fh.write('{"id": "big", "input": "' + "x" * (50 * 2**20) + '", "output": "y"}\n')
    before = snapshot(seeded)
    with pytest.raises(InputError, match="huge.jsonl line 2: the line is longer than the 16 MiB limit"):
        importing.import_items(seeded, f, "g")
    assert snapshot(seeded) == before


def test_label_off_scale_and_unknown_item(seeded, tmp_path):
    before = snapshot(seeded)
    f = write(tmp_path / "labels.jsonl", jsonl([{"item_id": "i1", "rater": "ana", "score": 1},
                                                {"item_id": "i2", "rater": "ana", "score": 2}]))
    with pytest.raises(InputError, match=r"labels.jsonl line 2: field 'score': score 2 is not on the scale of rubric "
                                         r"'demo-patch-quality' \(-1, 0, 1\)"):
        importing.import_labels(seeded, f, "g", "demo-patch-quality")
    f = write(tmp_path / "labels2.jsonl", jsonl([{"item_id": "nope", "rater": "ana", "score": 1}]))
    with pytest.raises(InputError, match="labels2.jsonl line 1: field 'item_id': unknown item 'nope'"):
        importing.import_labels(seeded, f, "g", "demo-patch-quality")
    assert snapshot(seeded) == before


def test_labels_upsert_and_events(seeded, tmp_path):
    f = write(tmp_path / "l.jsonl", jsonl([{"item_id": "i1", "rater": "ana", "score": 1},
                                           {"item_id": "i2", "rater": "ana", "score": 0}]))
    assert importing.import_labels(seeded, f, "g", "demo-patch-quality").added == 2
    assert importing.import_labels(seeded, f, "g", "demo-patch-quality").added == 0  # same file: no change
    f2 = write(tmp_path / "l2.jsonl", jsonl([{"item_id": "i1", "rater": "ana", "score": -1, "rationale": "oops"}]))
    assert importing.import_labels(seeded, f2, "g", "demo-patch-quality").added == 1
    events = seeded.label_events()
    assert [(e["event"], e["old_score"], e["new_score"]) for e in events] == [
        ("insert", None, 1), ("insert", None, 0), ("update", 1, -1)]
    assert len(seeded.labels(seeded.golden_set("g").id, "demo-patch-quality")) == 2


def test_judgments_import_idempotent_and_validated(seeded, tmp_path):
    rows = [{"item_id": "i1", "score": 1}, {"item_id": "i2", "score": None, "unscored_reason": "refusal"},
            {"item_id": "i1", "score": 0, "repeat": 1}]
    f = write(tmp_path / "j.jsonl", jsonl(rows))
    args = (seeded, f, "g", "demo-patch-quality", "lenient-mini")
    assert importing.import_judgments(*args).added == 3
    assert importing.import_judgments(*args).added == 0
    bad = write(tmp_path / "jbad.jsonl", jsonl([{"item_id": "i1", "score": None}]))
    with pytest.raises(InputError, match="jbad.jsonl line 1: field 'score': is null without an 'unscored_reason'"):
        importing.import_judgments(seeded, bad, "g", "demo-patch-quality", "lenient-mini")


def test_judgments_for_undeclared_judge(seeded, tmp_path):
    from workbench.core.errors import NotFound
    f = write(tmp_path / "j.jsonl", jsonl([{"item_id": "i1", "score": 1}]))
    with pytest.raises(NotFound, match="declares no judge 'ghost'.*declared: careful-sonnet"):
        importing.import_judgments(seeded, f, "g", "demo-patch-quality", "ghost")
