"""The Import page: uploads go through the import services; their errors show in the page."""

from __future__ import annotations

import json

from tests.ui.conftest import RUBRIC, items_jsonl, open_app
from workbench.store import Store


def _upload(at, kind: str, name: str, content: bytes):
    at.radio(key="import_kind").set_value(kind).run()
    at.file_uploader(key=f"import_file_{kind.lower()}").upload(name, content)
    return at


def test_lead_imports_items_into_a_new_golden_set(fresh_db):
    at = open_app("lead", "import")
    _upload(at, "Items", "batch-7.jsonl", items_jsonl(3, prefix="new").encode())
    at.selectbox(key="import_golden_set").set_value("g")  # (new names are typed in the browser)
    at.button[0].click().run()
    assert "batch-7.jsonl: 3 items read, 3 added or changed" in at.success[0].value
    with Store(fresh_db) as s:
        assert {r["item_id"] for r in s.item_index(1)} >= {"new00", "new01", "new02"}


def test_labels_import_errors_name_the_uploaded_file_and_line(fresh_db):
    at = open_app("lead", "import")
    bad = "\n".join(json.dumps(r) for r in [{"item_id": "it00", "rater": "ana", "score": 0},
                                            {"item_id": "it01", "rater": "ana", "score": 5}]) + "\n"
    _upload(at, "Labels", "reviewers-march.jsonl", bad.encode())
    at.selectbox(key="import_golden_set").set_value("g")
    at.selectbox(key="import_rubric").set_value(RUBRIC)
    at.button[0].click().run()
    error = at.error[0].value
    assert error.startswith("reviewers-march.jsonl line 2: field 'score': score 5 is not on the scale")
    with Store(fresh_db) as s:
        assert s.labels(1, RUBRIC) == []  # nothing imported


def test_missing_choices_are_explained(fresh_db):
    at = open_app("root", "import")
    at.button[0].click().run()
    assert "Choose a file" in at.error[0].value
    _upload(at, "Labels", "l.jsonl", b'{"item_id": "it00", "rater": "ana", "score": 0}\n')
    at.selectbox(key="import_golden_set").set_value("g")
    at.button[0].click().run()
    assert "Pick the rubric" in at.error[0].value


def test_a_labels_file_naming_a_new_rater_needs_the_box_ticked_and_the_import_is_the_leads(fresh_db):
    from workbench.features.people.audit import audit_entries

    at = open_app("lead", "import")
    _upload(at, "Labels", "march.jsonl", b'{"item_id": "it00", "rater": "ana@example.com", "score": 0}\n')
    at.selectbox(key="import_golden_set").set_value("g")
    at.selectbox(key="import_rubric").set_value(RUBRIC)
    at.button[0].click().run()
    assert at.error[0].value.startswith("march.jsonl line 1: field 'rater': 'ana@example.com' is not a known "
                                        "rater's email or name (raters: ")
    with Store(fresh_db) as s:
        assert s.labels(1, RUBRIC) == []
    at.checkbox(key="import_new_raters").check().run()
    at.button[0].click().run()
    assert "march.jsonl: 1 labels read, 1 added or changed" in at.success[0].value
    with Store(fresh_db) as s:
        assert [(l["rater"], l["item_id"]) for l in s.labels(1, RUBRIC)] == [("ana", "it00")]
        (entry,) = audit_entries(s, action="labels.imported")
        assert (entry.actor, entry.detail["raters"], entry.detail["new_raters"]) == ("lead", {"ana": 1}, ["ana"])
