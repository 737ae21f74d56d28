"""The Label page through AppTest: what a reviewer sees and what each control stores."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ENGINE
from tests.ui.conftest import RUBRIC, open_app, rendered_text
from workbench.features.labeling import service as svc
from workbench.calibration.golden_sets import load_items
from workbench.store import Store

IDS = [f"it{k:02d}" for k in range(6)]


def shown_item(at) -> str | None:
    for m in at.markdown:
        if (hit := re.fullmatch(r"Item `([^`]+)`", m.value)):
            return hit.group(1)
    return None


def press(at, item_id: str, score: int, *, mode: str = "new", rationale: str | None = None):
    if rationale is not None:
        at.text_area(key=f"rationale:{mode}:{item_id}").input(rationale)
    return at.button(key=f"score:{mode}:{item_id}:{score}").click().run()


def labels(db) -> list[tuple]:
    with Store(db) as s:
        return [(l["item_id"], l["rater"], l["score"], l["rationale"]) for l in s.labels(1, RUBRIC)]

# These watch every statement the page runs through SQLite's trace callback (which Postgres' driver lacks).
SQLITE_TRACE = pytest.mark.skipif(ENGINE == "postgres", reason="reads SQLite's statement trace")


def test_reviewer_sees_item_rubric_keys_and_progress(fresh_db):
    at = open_app("ana", "label", golden_set="g")
    order = sorted(IDS, key=lambda i: svc.queue_key("ana", i))
    assert shown_item(at) == order[0]
    scores = [b for b in at.button if b.key and b.key.startswith("score:")]
    assert [(b.label, b.proto.shortcut) for b in scores] == [
        ("-1 fail", "1"), ("0 competent pass", "2"), ("+1 exceptional", "3")]
    assert at.button(key=f"skip:{order[0]}").proto.shortcut == "s"
    text = "\n".join(m.value for m in at.markdown)
    assert "The task is not done" in text and "**correctness**" in text  # scale descriptions and criteria
    assert f"Task {int(order[0][2:])}: fix the bug." in text
    assert '`bash` `{"cmd": "pytest -k case0"}`' in text  # a tool call with its arguments
    assert "0 of 6" in at.get("progress")[0].proto.text


def test_queue_follows_the_reviewers_order_and_never_repeats(fresh_db):
    at = open_app("ana", "label", golden_set="g")
    seen = []
    while (item := shown_item(at)) is not None:
        assert item not in seen
        seen.append(item)
        press(at, item, 0)
        assert not at.error, at.error[0].value
    assert seen == sorted(IDS, key=lambda i: svc.queue_key("ana", i))
    assert "Your queue is empty" in at.success[-1].value
    assert "6 of 6" not in at.get("progress")[0].proto.text  # ana alone: items still need a second label


def test_rationale_is_required_for_the_extremes(fresh_db):
    at = open_app("ana", "label", golden_set="g")
    first = shown_item(at)
    press(at, first, -1)
    assert "rationale is required" in at.error[0].value
    assert labels(fresh_db) == [] and shown_item(at) == first
    press(at, first, -1, rationale="The final test run fails at step 3.")
    assert labels(fresh_db) == [(first, "ana", -1, "The final test run fails at step 3.")]
    second = shown_item(at)
    assert second != first
    press(at, second, 0)  # the middle value needs no rationale
    assert (second, "ana", 0, None) in labels(fresh_db)


def test_two_tabs_and_a_refresh_give_one_label(fresh_db):
    tab1 = open_app("ana", "label", golden_set="g")
    tab2 = open_app("ana", "label", golden_set="g")
    item = shown_item(tab1)
    assert shown_item(tab2) == item  # the reservation gives the same item to the same reviewer
    press(tab1, item, 0)
    press(tab2, item, 0)  # the stale tab saves the same label again
    assert labels(fresh_db) == [(item, "ana", 0, None)]
    refreshed = open_app("ana", "label", golden_set="g")
    assert shown_item(refreshed) not in (item, None)
    with Store(fresh_db) as s:
        assert len(s.label_events()) == 1


def test_another_reviewer_does_not_get_a_held_last_slot(fresh_db):
    with Store(fresh_db) as s:
        for i in IDS:
            svc.submit_label(s, "g", RUBRIC, i, "zoe", 0)  # one free slot per item
    ana = open_app("ana", "label", golden_set="g")
    held = shown_item(ana)
    others = {shown_item(open_app(r, "label", golden_set="g")) for r in ("ben", "chloe", "dan", "erin", "finn")}
    assert held not in others and None not in others
    last = open_app("gus", "label", golden_set="g")  # every free slot is now held by someone
    assert shown_item(last) is None and "Your queue is empty" in last.success[0].value


def test_change_a_recent_label_keeps_the_history(fresh_db):
    at = open_app("ana", "label", golden_set="g")
    first = shown_item(at)
    press(at, first, 0)
    at.button(key=f"change:{first}").click().run()
    assert shown_item(at) == first and "Changing your label" in at.info[0].value
    press(at, first, 1, mode="change", rationale="Adds a regression test; better than competent.")
    assert labels(fresh_db) == [(first, "ana", 1, "Adds a regression test; better than competent.")]
    with Store(fresh_db) as s:
        assert [(e["event"], e["old_score"], e["new_score"]) for e in s.label_events()] == [
            ("insert", None, 0), ("update", 0, 1)]
    assert shown_item(at) != first  # back to the queue
    assert any("changed 1×" in m.value for m in at.markdown)


def test_skip_and_flag_with_a_note(fresh_db):
    at = open_app("ana", "label", golden_set="g")
    first = shown_item(at)
    at.button(key=f"skip:{first}").click().run()
    second = shown_item(at)
    assert second != first
    at.radio(key=f"flag-kind:{second}").set_value("unsure")
    at.text_input(key=f"flag-note:{second}").input("Cannot tell whether the tests ran.")
    at.button(key=f"flag:{second}").click().run()
    assert shown_item(at) not in (first, second)
    with Store(fresh_db) as s:
        assert [(f["item_id"], f["kind"], f["note"]) for f in svc.flagged_items(s, "g", RUBRIC)] == [
            (second, "unsure", "Cannot tell whether the tests ran.")]


def test_trajectory_search_narrows_the_steps(fresh_db):
    at = open_app("ana", "label", golden_set="g")
    item = shown_item(at)
    at.text_input(key=f"search:{item}").input("case2").run()
    assert "1 of 4 steps match" in at.caption[0].value
    steps = [m.value for m in at.markdown if re.match(r"\*\*\d+\*\* ", m.value)]
    assert len(steps) == 1 and steps[0].startswith("**4** ")


def unrelated_reads(trace: list[str]) -> list[str]:
    """The statements of a reviewer's run that read judge, run, report, metadata or producer data, except the one
    query of the distinct producer names masking hides (Store.producer_names)."""
    masking = re.compile(r"SELECT producer_model AS name FROM items WHERE golden_set_id = \S+\s+UNION SELECT "
                         r"producer_family FROM items WHERE golden_set_id = \S+$")
    return [sql for sql in trace if re.search(r"judg|runs|producer|metadata|reports", sql, re.I)
            and not masking.match(" ".join(sql.split()))]


@SQLITE_TRACE
def test_blind_review_reads_the_producer_names_to_mask_them(demo_db):
    """The reviewer's page reads the set's producer names (to mask them), through that one query: with the masking
    cache cleared, the query is in the trace, and the page still shows none of the names."""
    from workbench.features.labeling import masking

    at = open_app("dora", "label", golden_set="demo")
    masking._PRODUCERS.clear()
    trace: list[str] = []
    at.session_state["_store"].conn.set_trace_callback(trace.append)
    at.run()
    assert [sql for sql in trace if "producer_family FROM items" in sql]
    assert not unrelated_reads(trace)


@SQLITE_TRACE
def test_reviewer_page_renders_no_judge_data_and_no_producer(demo_db):
    with Store(demo_db) as s:
        rv_judges = s.judges_of(s.rubric_row(RUBRIC)["id"])
        judgment_rationales = {r["rationale"] for j in rv_judges for r in s.judgments(1, j["pk"]) if r["rationale"]}
        producers = {i.producer.model for i in load_items(s, "demo")}
    at = open_app("dora", "label", golden_set="demo")
    trace: list[str] = []
    at.session_state["_store"].conn.set_trace_callback(trace.append)
    item = shown_item(at)
    assert item is not None
    press(at, item, 0)
    at.button(key=f"change:{item}").click().run()
    text = rendered_text(at)
    forbidden = producers | {j["judge_id"] for j in rv_judges} | {j["model"] for j in rv_judges}
    assert not [w for w in forbidden if w in text]
    assert not [r for r in judgment_rationales if r in text]
    assert "metadata" not in text and "producer" not in text
    # and the server never even read judge data, metadata or the items' producers for this reviewer's runs, but for
    # the set's distinct producer names that blind review masks (issue 27 item 5)
    assert trace and not unrelated_reads(trace)


@SQLITE_TRACE
def test_active_queue_sends_reviewers_nothing_of_the_judge(demo_db):
    """The same check with the golden set's queue switched to active: the judge's scores decide the order on the
    server, and still no judge, producer or design data reaches the page or is even read for the reviewer."""
    from workbench.features.planning import active_queue

    with Store(demo_db) as s:
        active_queue.set_queue_order(s, "demo", "active", rubric=RUBRIC, judge="gpt4o-self")
        rv_judges = s.judges_of(s.rubric_row(RUBRIC)["id"])
        producers = {i.producer.model for i in load_items(s, "demo")}
        gs = s.golden_set("demo")
        priority = active_queue.q.priorities(s, gs.id)
        free = {r["item_id"] for r in s.labeling.queue_candidates(gs.id, RUBRIC, "dora", overlap=gs.overlap,
                                                                  at="9999")}
        strata = {r["stratum"] for r in active_queue.q.design_summary(s, gs.id)}
    at = open_app("dora", "label", golden_set="demo")
    trace: list[str] = []
    at.session_state["_store"].conn.set_trace_callback(trace.append)
    item = shown_item(at)
    assert item == min(free, key=priority.get)  # the design's order, not the reviewer's own random one
    press(at, item, 0)
    text = rendered_text(at)
    forbidden = producers | {j["judge_id"] for j in rv_judges} | {j["model"] for j in rv_judges} | strata
    assert not [w for w in forbidden if w in text]
    assert "inclusion" not in text and "priority" not in text
    assert trace and not unrelated_reads(trace)
    with Store(demo_db) as s:
        recorded = active_queue.q.label_inclusion(s, s.golden_set("demo").id, RUBRIC)
    assert 0 < recorded[(item, "dora")] <= 1


def test_reviewer_has_no_control_that_turns_masking_off(fresh_db, tmp_path):
    with Store(fresh_db) as s:
        from tests.conftest import write
        from workbench.features.importing.service import import_items
        import_items(s, write(tmp_path / "m.jsonl", '{"id": "m1", "input": "Fix it.", '
                              '"output": "As an AI developed by OpenAI, I fixed it."}\n'), "masked")
    at = open_app("ana", "label", golden_set="masked")
    assert any("[self-identification masked], I fixed it." in m.value for m in at.markdown)
    assert not at.toggle and not at.checkbox  # today's sidebar toggle let a reviewer read the original
    assert "As an AI developed by OpenAI" not in rendered_text(at)


def test_a_long_trajectory_is_shown_a_page_of_steps_at_a_time(fresh_db, tmp_path):
    from tests.conftest import write
    from tests.ui.conftest import items_jsonl
    from workbench.features.importing.service import import_items

    with Store(fresh_db) as s:
        import_items(s, write(tmp_path / "long.jsonl", items_jsonl(1, prefix="long", steps=120)), "long")
    at = open_app("ana", "label", golden_set="long")

    def steps() -> list[int]:
        return [int(m.group(1)) for v in at.markdown if (m := re.match(r"\*\*(\d+)\*\* ", v.value))]

    assert steps() == list(range(1, 51)) and "page 1 of 3" in at.caption[0].value
    assert at.button(key="steps-next:long00:").proto.shortcut == "n"
    at.button(key="steps-next:long00:").click().run()
    assert steps() == list(range(51, 101))
    at.button(key="steps-next:long00:").click().run()
    assert steps() == list(range(101, 121)) and at.button(key="steps-next:long00:").disabled
    at.text_input(key="search:long00").input("case1").run()  # search runs over every step, not just this page
    assert "15 of 120 steps match" in at.caption[0].value and steps()[0] == 12  # case10, case12, ...
    assert len(steps()) == 15
