"""Consensus: adjudicated, else strict majority, else unresolved."""

from hypothesis import given, strategies as st

from workbench.core.consensus import consensus_label


def test_rules():
    assert consensus_label([1, 1]) == 1
    assert consensus_label([1, 0]) is None
    assert consensus_label([1, 0, 1]) == 1
    assert consensus_label([1, 0, -1]) is None
    assert consensus_label([0, 0, 1, 1]) is None  # a tie is not a strict majority
    assert consensus_label([]) is None
    assert consensus_label([1, 0], adjudicated=-1) == -1
    assert consensus_label([1, 1, 1], adjudicated=0) == 0


@given(st.lists(st.sampled_from([-1, 0, 1]), min_size=1, max_size=7))
def test_majority_is_more_than_half(scores):
    c = consensus_label(scores)
    if c is not None:
        assert scores.count(c) * 2 > len(scores)
    else:
        assert all(scores.count(v) * 2 <= len(scores) for v in set(scores))


def test_demo_consensus(demo_store):
    from workbench.calibration.golden_sets import consensus
    c = consensus(demo_store, "demo", "demo-patch-quality")
    assert len(c.labels) == 150
    assert c.unresolved  # the demo leaves some disagreements for the Adjudicate page
    for item_id in c.adjudicated:
        assert c.labels[item_id] == c.adjudicated[item_id]
