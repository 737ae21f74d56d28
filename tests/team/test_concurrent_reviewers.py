"""The load benchmark's core at a small size (benchmarks/bench_concurrent_reviewers.py, issue 30 item 7): reviewers in
their own processes saving at once, on SQLite and on a real Postgres, lose no label and write none twice; the
label events and the audit log count exactly the changes made. Timing is the benchmark's business, not asserted."""

from __future__ import annotations

import sys

import pytest

from tests.team.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_concurrent_reviewers as bench  # noqa: E402


def test_the_plan_saves_overlapping_items_and_changes_some():
    saves = [bench.plan(k, 20, 10) for k in range(4)]
    assert all(len(s) == 10 + 2 for s in saves)
    assert len({item for s in saves for item, _ in s[:10]}) < 40  # reviewers meet on the same items
    first, again = dict(saves[0][:10]), saves[0][10:]
    assert all(first[item] != score for item, score in again)  # each second save is a change


def test_the_check_finds_a_lost_and_a_doubled_label():
    """The verdict itself: made-up counts with one label missing, or one insert too many, are not ok."""
    good = {"failed": [], "lost": 0, "wrong": 0, "doubled": 0, "labels": 40, "expected_labels": 40, "inserts": 40,
            "expected_inserts": 40, "updates": 8, "expected_updates": 8, "changed": 48, "audited": 48}
    assert bench.ok(good)
    assert not bench.ok({**good, "lost": 1, "labels": 39})
    assert not bench.ok({**good, "doubled": 1, "inserts": 41})
    assert not bench.ok({**good, "audited": 47})


def test_four_reviewers_at_once_lose_and_double_nothing(target, tmp_path):
    m = bench.measure(target, reviewers=4, labels=10, tmp=tmp_path)
    assert m["failed"] == []
    assert (m["saves"], m["expected_labels"], m["expected_updates"]) == (48, 40, 8)
    assert (m["labels"], m["lost"], m["wrong"], m["doubled"]) == (40, 0, 0, 0)
    assert (m["inserts"], m["updates"], m["changed"], m["audited"]) == (40, 8, 48, 48)
    assert bench.ok(m)
