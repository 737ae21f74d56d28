"""The Adjudicate page: disagreements side by side, the final label, consensus and progress updating."""

from __future__ import annotations

from tests.ui.conftest import RUBRIC, open_app
from workbench.features.labeling import service as svc
from workbench.calibration.golden_sets import consensus
from workbench.store import Store


def metric(at, label: str) -> int:
    return int(next(m.value for m in at.metric if m.label == label))


def test_lead_sets_a_final_label_and_consensus_updates(demo_db):
    with Store(demo_db) as s:
        before = consensus(s, "demo", RUBRIC)
        status = svc.adjudication_status(s, "demo", RUBRIC)
    assert before.unresolved, "the demo has disagreements to adjudicate"
    at = open_app("lead", "adjudicate", golden_set="demo")
    assert metric(at, "Waiting for a final label") == len(before.unresolved)
    item = at.selectbox(key="adjudicate_item").value
    case = next(d for d in status.unresolved if d.item_id == item)
    side_by_side = [m.value for m in at.markdown if m.value.startswith("**")]
    for lab in case.labels:  # every rater's label is shown
        assert any(v.startswith(f"**{lab['rater']}**:") for v in side_by_side)
    at.radio(key=f"adjudicate-score:{item}").set_value(0)
    at.text_area(key=f"adjudicate-note:{item}").input("The final test run passes; no regression test.")
    at.button(key=f"adjudicate:{item}").click().run()
    assert not at.error and f"Final label of `{item}`: 0 competent pass." in at.success[0].value
    with Store(demo_db) as s:
        after = consensus(s, "demo", RUBRIC)
    assert after.labels[item] == 0 and len(after.unresolved) == len(before.unresolved) - 1
    assert metric(at, "Waiting for a final label") == len(before.unresolved) - 1
    assert metric(at, "Final labels given so far") == len(before.adjudicated) + 1
    assert at.selectbox(key="adjudicate_item").value != item


def test_the_final_label_needs_a_choice_and_a_note(demo_db):
    at = open_app("lead", "adjudicate", golden_set="demo")
    item = at.selectbox(key="adjudicate_item").value
    at.button(key=f"adjudicate:{item}").click().run()
    assert "Choose the final label" in at.error[0].value
    at.radio(key=f"adjudicate-score:{item}").set_value(1)
    at.button(key=f"adjudicate:{item}").click().run()
    assert "Write a note" in at.error[0].value
    with Store(demo_db) as s:
        assert item in consensus(s, "demo", RUBRIC).unresolved


def test_disagreement_from_the_label_page_reaches_adjudication_with_flags(fresh_db):
    with Store(fresh_db) as s:
        svc.submit_label(s, "g", RUBRIC, "it00", "ana", 1, "adds a regression test")
        svc.submit_label(s, "g", RUBRIC, "it00", "ben", -1, "the tests never ran")
        svc.set_aside(s, "g", RUBRIC, "it00", "chloe", "unsure", "cannot see the test output")
    at = open_app("lead", "adjudicate", golden_set="g")
    assert at.selectbox(key="adjudicate_item").options == ["it00"]
    text = "\n".join(m.value for m in at.markdown)
    assert "**ana**: +1 exceptional" in text and "adds a regression test" in text
    assert "**ben**: -1 fail" in text and "the tests never ran" in text
    assert "chloe flagged this item as **unsure**: cannot see the test output" in at.warning[0].value
    at.radio(key="adjudicate-score:it00").set_value(-1)
    at.text_area(key="adjudicate-note:it00").input("Step 3 shows no test run.")
    at.button(key="adjudicate:it00").click().run()
    assert "Every labeled item has a consensus label." in at.success[-1].value
    assert at.get("progress")[0].proto.value == 100
