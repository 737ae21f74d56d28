"""The labeling service behind the Label page: queue order, reservations, the rationale rule, flags, blindness."""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import asdict
from datetime import datetime, timedelta, timezone

import pytest

from tests.ui.conftest import RUBRIC
from tests.ui.race_worker import claim
from workbench.core.errors import InputError
from workbench.features.labeling import service as svc
from workbench.features.labeling.masking import mask_self_identification
from workbench.store import Store

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def _queue_order(store, rater, golden_set="g"):
    """Label every item the queue gives, in order, and return the ids."""
    seen = []
    while (item := svc.next_item(store, golden_set, RUBRIC, rater, at=T0)) is not None:
        assert item.item_id not in seen, "the queue showed an item twice"
        seen.append(item.item_id)
        svc.submit_label(store, golden_set, RUBRIC, item.item_id, rater, 0)
    return seen


def test_queue_order_is_random_per_rater_and_stable(fresh_db):
    with Store(fresh_db) as s:
        ids = [f"it{k:02d}" for k in range(6)]
        expected = {r: sorted(ids, key=lambda i: svc.queue_key(r, i)) for r in ("ana", "ben")}
        assert expected["ana"] != expected["ben"]
        assert _queue_order(s, "ana") == expected["ana"]
        assert _queue_order(s, "ben") == expected["ben"]
        # overlap 2 is reached everywhere: a third reviewer has nothing left
        assert svc.next_item(s, "g", RUBRIC, "chloe", at=T0) is None


def test_items_another_reviewer_started_come_first(fresh_db):
    """Taking turns, ben is served the item ana just labeled, and ana the next of her own order: every item gets
    its two labels as labeling goes, not only once each reviewer has been through most of the set."""
    with Store(fresh_db) as s:
        ana_order = sorted((f"it{k:02d}" for k in range(6)), key=lambda i: svc.queue_key("ana", i))
        for k in range(3):
            mine = svc.next_item(s, "g", RUBRIC, "ana", at=T0)
            assert mine.item_id == ana_order[k]
            svc.submit_label(s, "g", RUBRIC, mine.item_id, "ana", 0)
            theirs = svc.next_item(s, "g", RUBRIC, "ben", at=T0)
            assert theirs.item_id == mine.item_id
            svc.submit_label(s, "g", RUBRIC, theirs.item_id, "ben", 0)
        counts = {}
        for row in s.labels(1, RUBRIC):
            counts[row["item_id"]] = counts.get(row["item_id"], 0) + 1
        assert counts == {i: 2 for i in ana_order[:3]}


def test_the_item_shown_is_held_across_reruns_and_refreshes(fresh_db):
    with Store(fresh_db) as s:
        first = svc.next_item(s, "g", RUBRIC, "ana", at=T0)
    with Store(fresh_db) as s2:  # a new session (refresh, second tab) gets the same item
        assert svc.next_item(s2, "g", RUBRIC, "ana", at=T0 + timedelta(minutes=3)).item_id == first.item_id


def test_two_reviewers_never_take_the_same_last_slot(fresh_db):
    with Store(fresh_db) as s:
        target = min((f"it{k:02d}" for k in range(6)), key=lambda i: svc.queue_key("ana", i))
        svc.submit_label(s, "g", RUBRIC, target, "zoe", 0)  # one slot of two left on the target
        assert svc.next_item(s, "g", RUBRIC, "ana", at=T0).item_id == target
        for rater in ("ben", "chloe", "dan"):  # ana holds the last slot
            got = svc.next_item(s, "g", RUBRIC, rater, at=T0 + timedelta(minutes=1))
            assert got.item_id != target
        # the reservation lapses after its time: the slot is free again
        assert target not in {r["item_id"] for r in s.labeling.queue_candidates(
            1, RUBRIC, "erin", overlap=2, at=T0.isoformat(timespec="milliseconds"))}
        late = T0 + svc.RESERVATION_TTL + timedelta(seconds=1)
        assert target in {r["item_id"] for r in s.labeling.queue_candidates(
            1, RUBRIC, "erin", overlap=2, at=late.isoformat(timespec="milliseconds"))}


def test_processes_racing_for_last_slots_get_distinct_items(fresh_db):
    with Store(fresh_db) as s:  # four items have one label: four last slots for six reviewers at once
        for k in range(4):
            svc.submit_label(s, "g", RUBRIC, f"it{k:02d}", "zoe", 0)
        for k in range(4, 6):
            svc.submit_label(s, "g", RUBRIC, f"it{k:02d}", "zoe", 0)
            svc.submit_label(s, "g", RUBRIC, f"it{k:02d}", "yan", 0)
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(6)
    procs = [ctx.Process(target=claim, args=(str(fresh_db), "g", RUBRIC, f"r{n}", barrier)) for n in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    with Store(fresh_db) as s:
        claims = [r[0] for r in s.conn.execute("SELECT item FROM claims")]
    assert len(claims) == 6
    assert sorted(c for c in claims if c is not None) == [f"it{k:02d}" for k in range(4)]


def test_rationale_required_for_the_lowest_and_highest_values(fresh_db):
    with Store(fresh_db) as s:
        for score in (-1, 1):
            with pytest.raises(InputError, match="rationale is required"):
                svc.submit_label(s, "g", RUBRIC, "it00", "ana", score, "   ")
        assert s.labels(1, RUBRIC) == []
        assert svc.submit_label(s, "g", RUBRIC, "it00", "ana", 0) is True
        assert svc.submit_label(s, "g", RUBRIC, "it01", "ana", -1, "tests fail at step 3") is True


def test_double_submit_gives_one_label_and_changes_are_kept(fresh_db):
    with Store(fresh_db) as s:
        assert svc.submit_label(s, "g", RUBRIC, "it00", "ana", 0) is True
        assert svc.submit_label(s, "g", RUBRIC, "it00", "ana", 0) is False  # double click / second tab
        assert svc.submit_label(s, "g", RUBRIC, "it00", "ana", 1, "regression test added") is True
        assert [(l["rater"], l["score"]) for l in s.labels(1, RUBRIC)] == [("ana", 1)]
        assert [(e["event"], e["old_score"], e["new_score"]) for e in s.label_events()] == [
            ("insert", None, 0), ("update", 0, 1)]
        recent = svc.recent_labels(s, "g", RUBRIC, "ana")
        assert [(r["item_id"], r["score"], r["n_changes"]) for r in recent] == [("it00", 1, 1)]


def test_skip_and_flag_leave_the_queue_and_are_recorded(fresh_db):
    with Store(fresh_db) as s:
        a = svc.next_item(s, "g", RUBRIC, "ana", at=T0)
        svc.set_aside(s, "g", RUBRIC, a.item_id, "ana", "skip")
        b = svc.next_item(s, "g", RUBRIC, "ana", at=T0)
        assert b.item_id != a.item_id
        svc.set_aside(s, "g", RUBRIC, b.item_id, "ana", "broken item", "the trajectory is cut off")
        c = svc.next_item(s, "g", RUBRIC, "ana", at=T0)
        assert c.item_id not in (a.item_id, b.item_id)
        assert [(f["item_id"], f["kind"], f["note"]) for f in svc.flagged_items(s, "g", RUBRIC)] == [
            (b.item_id, "broken item", "the trajectory is cut off")]
        p = svc.labeling_progress(s, "g", RUBRIC, "ana", at=T0)
        assert (p.n_items, p.mine, p.set_aside, p.waiting) == (6, 0, 2, 4)
        with pytest.raises(InputError, match="unknown flag"):
            svc.set_aside(s, "g", RUBRIC, c.item_id, "ana", "boring")


def test_what_a_reviewer_receives_is_blind(fresh_db):
    with Store(fresh_db) as s:
        item = svc.next_item(s, "g", RUBRIC, "ana", at=T0)
    text = repr(asdict(item))
    assert "secret-model-x" not in text and "meta-value" not in text and "openai" not in text


def test_masking_self_identification():
    item = svc.BlindItem("x", "As an AI language model developed by OpenAI, I will fix it.", "I am Claude. Done.",
                         [{"role": "assistant", "content": "I'm GPT-4o, made by OpenAI.",
                           "tool_calls": [{"name": "bash", "arguments": {"cmd": "echo 'As an AI built by Meta'"}}]}])
    m = item.masked()
    assert "OpenAI" not in m.input and "Claude" not in m.output
    assert "GPT-4o" not in m.trajectory[0]["content"]
    assert "Meta" not in m.trajectory[0]["tool_calls"][0]["arguments"]["cmd"]
    assert item.trajectory[0]["content"] == "I'm GPT-4o, made by OpenAI."  # the original is untouched
    # every mention, not only self-descriptions (issue 27): a vendor's SDK in a patch names the producer as well
    assert mask_self_identification("import openai\nclient = openai.OpenAI()") == \
        "import [name masked]\nclient = [name masked].[name masked]()"


def test_a_repeated_skip_or_flag_is_recorded_once(fresh_db):
    with Store(fresh_db) as s:
        for _ in range(2):
            svc.set_aside(s, "g", RUBRIC, "it00", "ana", "skip")
            svc.set_aside(s, "g", RUBRIC, "it01", "ana", "broken item", "cut off")
        assert len(s.conn.execute("SELECT * FROM flags").fetchall()) == 2
