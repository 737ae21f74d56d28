"""Assignments (issue 45 item 4): a golden set, or a share of it, given to named reviewers; the overlap kept (each
item reaches its overlap in distinct reviewers) whatever order they work in; each reviewer's queue says how much is
left; someone not assigned is served nothing there."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import Cli
from tests.team.conftest import GOLDEN_SET, RUBRIC, seed
from workbench.features.labeling.assignment import assign, assignment_status, deal
from workbench.features.labeling.service import labeling_progress, next_item, submit_label
from workbench.features.people import raters
from workbench.store import Store

REVIEWERS = ("ana@example.com", "ben@example.com", "cy@example.com")


def _drain(store: Store, rater: str) -> list[str]:
    done = []
    while (item := next_item(store, GOLDEN_SET, RUBRIC, rater)) is not None:
        submit_label(store, GOLDEN_SET, RUBRIC, item.item_id, rater, 0)
        done.append(item.item_id)
    return done


@pytest.mark.parametrize("order", ["one after another", "in turns"])
def test_shares_that_add_up_to_the_overlap_give_every_item_its_overlap_in_distinct_reviewers(target, tmp_path,
                                                                                             order):
    """30 items, overlap 2, three reviewers with 2/3 each: whether each works their whole queue before the next
    starts (where the free-slot rule alone leaves the last one short) or they take turns, every item ends with
    exactly 2 labels from 2 different reviewers, and each reviewer labels 20."""
    with Store(target) as s:
        ids = seed(s, tmp_path, n_items=30)
        assert s.golden_set(GOLDEN_SET).overlap == 2
        for who in REVIEWERS:
            raters.add_rater(s, who, "reviewer", actor="lead")
        st_ = assign(s, GOLDEN_SET, RUBRIC, REVIEWERS, share=2 / 3, actor="lead")
        assert [a.items for a in st_.reviewers] == [20, 20, 20] and st_.warning() is None
        names = [a.rater for a in st_.reviewers]
        first = labeling_progress(s, GOLDEN_SET, RUBRIC, names[0])
        assert (first.assigned, first.waiting) == (20, 20)
        if order == "one after another":
            for name in names:
                assert len(_drain(s, name)) == 20
        else:
            active = list(names)
            while active:
                for name in list(active):
                    item = next_item(s, GOLDEN_SET, RUBRIC, name)
                    if item is None:
                        active.remove(name)
                    else:
                        submit_label(s, GOLDEN_SET, RUBRIC, item.item_id, name, 0)
        labels = s.labels(s.golden_set(GOLDEN_SET).id, RUBRIC)
        per_item = Counter(r["item_id"] for r in labels)
        assert set(per_item) == set(ids) and set(per_item.values()) == {2}
        assert len({(r["item_id"], r["rater"]) for r in labels}) == 60  # 2 distinct reviewers on each item
        assert all(a.left == 0 and a.labeled == 20 for a in assignment_status(s, GOLDEN_SET, RUBRIC).reviewers)
        assert labeling_progress(s, GOLDEN_SET, RUBRIC, names[0]).waiting == 0


def test_someone_not_assigned_is_served_nothing_and_clearing_serves_everyone(target, tmp_path):
    with Store(target) as s:
        seed(s, tmp_path, n_items=8)
        raters.add_rater(s, "ana@example.com", "reviewer", actor="lead")
        raters.add_rater(s, "dee@example.com", "reviewer", actor="lead")
        assign(s, GOLDEN_SET, RUBRIC, ("ana@example.com",), share=0.5)
        assert next_item(s, GOLDEN_SET, RUBRIC, "dee") is None
        assert labeling_progress(s, GOLDEN_SET, RUBRIC, "dee").assigned == 0
        assert len(_drain(s, "ana")) == 4  # half of 8
        assert next_item(s, GOLDEN_SET, RUBRIC, "DEE@example.com") is None  # by email, any case: the same person
        assign(s, GOLDEN_SET, RUBRIC, (), clear=True)
        assert labeling_progress(s, GOLDEN_SET, RUBRIC, "dee").assigned is None
        assert len(_drain(s, "dee")) == 8


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 60), overlap=st.integers(1, 4), data=st.data())
def test_the_deal_gives_each_item_its_overlap_in_distinct_reviewers_when_the_shares_suffice(n, overlap, data):
    k = data.draw(st.integers(overlap, 8))
    shares = data.draw(st.lists(st.floats(0.05, 1.0), min_size=k, max_size=k))
    ids = [f"i{j}" for j in range(n)]
    dealt = deal(ids, {f"r{j}": x for j, x in enumerate(shares)}, overlap, golden_set_id=1)
    reach = Counter(i for items in dealt.values() for i in items)  # sets: a reviewer holds an item at most once
    assert sum(reach.values()) <= n * overlap and all(c <= overlap for c in reach.values())
    if sum(shares) >= overlap:
        assert all(reach[i] == overlap for i in ids)


def test_the_command_line_assigns_shows_what_is_left_and_refuses_by_sentence(tmp_path):
    cli = Cli(tmp_path / "workbench.db")
    with Store(cli.db) as s:
        seed(s, tmp_path, n_items=10)
        raters.add_rater(s, "ana@example.com", "reviewer", actor="lead")
    r = cli("golden-set", "assign", GOLDEN_SET, "-r", RUBRIC, "--to", "zed@example.com")
    assert r.exit_code == 1 and "'zed@example.com' is not a rater" in r.output and "ana@example.com" in r.output
    r = cli("golden-set", "assign", GOLDEN_SET, "-r", RUBRIC, "--to", "ana@example.com", "--share", "0")
    assert r.exit_code == 1 and "--share is 0, not a share above 0 and at most 1" in r.output
    r = cli("golden-set", "assign", GOLDEN_SET, "-r", RUBRIC, "--to", "ana@example.com", "--share", "0.5")
    assert r.exit_code == 0, r.output
    assert "ana\tshare 0.5\t5 items\t0 labeled\t5 left" in r.output
    assert "The shares deal 5 of the 20 labels the overlap of 2 asks for, so 15 stay unlabeled" in r.output
    assert "ana\tshare 0.5\t5 items" in cli("golden-set", "assign", GOLDEN_SET, "-r", RUBRIC).output
    assert "assignment.set" in cli("audit").output
    r = cli("golden-set", "assign", GOLDEN_SET, "-r", RUBRIC, "--clear")
    assert r.exit_code == 0 and "has no assignment: every reviewer is served its items" in r.output
