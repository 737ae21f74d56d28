"""Coverage on real data (issue 26, item 6): per-category intervals cover the category's own value in >= 90% of
golden sets with categories of uneven size; self-preference and TNR intervals (nominal 95%) in >= 92%.

The pools of ../shared/data stand for the population (validation/category_coverage.py says how golden sets are
drawn); skips where that folder is absent. Each test draws a fixed, seeded set of golden sets, so its figures
are the same on every run; the floors are the issue's. A cell of 100 to 150 golden sets measures a coverage of
0.95 to about +/-0.02 (one binomial standard error), so a method truly at 0.95 passes with room, and one at 0.87
(the expanded percentile interval's self-preference coverage here) fails. The full tables, with more judges and
golden sets: benchmarks/coverage_categories.py, benchmarks/README.md.
"""

from __future__ import annotations

import pytest

from validation import category_coverage as cc

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not cc.available(), reason="needs ../shared/data")]

CATEGORY_FLOOR = 0.90
BIAS_FLOOR = 0.92


def _assert_floor(tally: cc.Tally, keys, floor: float, min_given: int) -> None:
    short = {k: round(tally.coverage(k), 3) for k in keys if tally.coverage(k) < floor}
    assert not short, f"coverage below {floor}: {short}"
    for k in keys:
        assert tally.given[k] >= min_given, (k, tally.given[k])
        assert tally.zero_width[k] == 0, (k, tally.zero_width[k])


def test_summeval_categories_of_12_to_200_items_drawn_by_article():
    """The worst SummEval judge for the old intervals (mistral-v03: alpha covered 0.53 at 12 items and 0.67 at
    30): 4 dimensions of 12, 30, 80 and 200 items, 4 summaries per article; 120 golden sets."""
    tally = cc.category_coverage(cc.pool("summeval", "mistral-v03"), design="tasks", samples=120, resamples=1000,
                                 before=False)
    keys = [(m, "after", n) for m in cc.CATEGORY_METRICS for n in cc.SIZES["summeval"]]
    _assert_floor(tally, keys, CATEGORY_FLOOR, min_given=110)


def test_play_favorites_categories_of_8_to_200_items_drawn_by_prompt():
    """Play Favorites with gpt-4o judging (1% consensus fails: alpha is decided by a few items, the old intervals
    covered it in 21% to 82% of golden sets): 6 datasets of 8 to 200 items, 3 answers per prompt; 100 golden
    sets. The 8-item category is below min_category_items and gets no interval, never a short one."""
    tally = cc.category_coverage(cc.pool("play_favorites", "gpt-4o"), design="tasks", samples=100, resamples=1000,
                                 before=False)
    sizes = [n for n in cc.SIZES["play_favorites"] if n >= 10]
    keys = [(m, "after", n) for m in cc.CATEGORY_METRICS for n in sizes]
    _assert_floor(tally, keys, CATEGORY_FLOOR, min_given=75)  # alpha is undefined where every label is the same
    for m in cc.CATEGORY_METRICS:
        assert tally.given[(m, "after", 8)] == 0 and tally.withheld[(m, "after", 8)] == 100


@pytest.mark.parametrize("design", ["whole tasks", "items"])
def test_self_preference_and_tnr_on_play_favorites(design):
    """Three judges of three families, golden sets of 50 and 100 items (whole prompts: all 9 answers of each, where
    the expanded percentile interval covered 0.75 to 0.90), 50 golden sets per judge and size."""
    tally = cc.Tally()
    for judge in ("gpt-4o", "anthropic.claude-3-5-sonnet-20241022-v2:0", "meta.llama3-1-70b-instruct-v1:0"):
        tally.merge(cc.bias_coverage(cc.pool("play_favorites", judge), design=design, sizes=(50, 100), samples=50,
                                     resamples=1000, before=False))
    keys = [(k, "after", n) for k in ("same_model", "same_family") for n in (50, 100)]
    _assert_floor(tally, keys, BIAS_FLOOR, min_given=150)
    # TNR is undefined in a golden set without a consensus fail (1% to 3% of these judges' items): both sizes pooled
    given = sum(tally.given[("tnr", "wilson", n)] for n in (50, 100))
    covered = sum(tally.covered[("tnr", "wilson", n)] for n in (50, 100))
    assert given >= 80 and covered / given >= BIAS_FLOOR, (covered, given)
