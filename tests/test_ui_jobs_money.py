"""Money on the Judges page, from the database: the estimate for a judge's last run against what it recorded, and
the label plan's preview of the items the active queue would serve (nothing saved)."""

from __future__ import annotations

import pytest

from workbench.features.judging import service as judging
from workbench.features.planning.active_queue import next_items, queue_setting
from workbench.calibration.golden_sets import consensus

GS, RUBRIC = "demo", "demo-patch-quality"


def test_estimates_of_the_demo_judges_against_their_recorded_runs(demo_store):
    """Single-mode judges: within 25% of what their recorded 150 judgments cost. The agentic, the unpriced and the
    never-run judge: a reason, never a silent number."""
    for judge in ("lenient-mini", "gpt4o-self"):
        c = judging.cost_check(demo_store, GS, RUBRIC, judge)
        status = judging.run_status(demo_store, GS, RUBRIC, judge)
        assert (c.run, c.n_judgments, c.n_unpriced) == ("run-1", 150, 0)
        assert c.recorded_usd == pytest.approx(status["cost_usd"], rel=1e-12)
        assert abs(c.estimated_usd / c.recorded_usd - 1) <= 0.25 and c.within and c.why is None
        # the estimate covers the recorded run's judgments: a full new run of the same 150 items x 1 repeat
        fresh = judging.estimate(demo_store, GS, RUBRIC, judge, new_run=True)
        assert c.estimated_usd == pytest.approx(fresh.cost_usd, rel=1e-9)

    sonnet = judging.cost_check(demo_store, GS, RUBRIC, "careful-sonnet")
    assert sonnet.comparable and not sonnet.within and sonnet.estimated_usd > 1.25 * sonnet.recorded_usd
    assert "agentic judge calls its tools" in sonnet.why and "input and" in sonnet.why

    llama = judging.cost_check(demo_store, GS, RUBRIC, "noisy-llama")
    assert (llama.run, llama.recorded_usd, llama.estimated_usd) == ("run-2", None, None)
    assert not llama.within and "no price for openai-api/local/llama-3.1-70b" in llama.why

    grader = judging.cost_check(demo_store, GS, RUBRIC, "test-results")
    assert grader.run is None and grader.why == "no run of this judge has judgments yet"
    judging.run(demo_store, GS, RUBRIC, "test-results")
    grader = judging.cost_check(demo_store, GS, RUBRIC, "test-results")
    assert (grader.recorded_usd, grader.estimated_usd, grader.within) == (0.0, 0.0, True)


def test_the_plan_preview_names_unlabeled_items_in_queue_order_and_saves_nothing(demo_store):
    before = queue_setting(demo_store, GS)
    items = next_items(demo_store, GS, RUBRIC, "lenient-mini", 40)
    labeled = set(consensus(demo_store, GS, RUBRIC).resolved)
    assert items and not {x.item_id for x in items} & labeled
    assert len({x.item_id for x in items}) == len(items) <= 40
    assert all(x.why.startswith(("the judge fails it", "the judge passes it")) for x in items)
    assert all(0 < x.probability <= 1 and x.vs_random > 0 for x in items)
    assert queue_setting(demo_store, GS) == before  # a preview: the queue's order is not switched
    assert next_items(demo_store, GS, RUBRIC, "lenient-mini", 0) == []
