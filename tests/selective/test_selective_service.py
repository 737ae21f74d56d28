"""The selective service on the demo: confidence from repeats where none is stored, refusals by sentence."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.calibration.golden_sets import consensus
from workbench.core.errors import InputError
from workbench.features.selective.service import (
    calibrate_selective,
    judge_items,
    judges_of_cascade,
)
from workbench.stats.selective import choose_threshold

RUBRIC = "demo-patch-quality"


def test_confidence_from_repeats_where_none_is_stored(demo_store):
    """careful-sonnet's demo run has two repeats an item and no stated confidence: each item's confidence is the
    share of its two repeats giving repeat 0's score (1 or 0.5), and the threshold is chosen on those."""
    ji = judge_items(demo_store, "demo", RUBRIC, "careful-sonnet")
    assert ji.source == "repeats"
    values = set(ji.confidence.values())
    assert values <= {0.5, 1.0} and 1.0 in values
    resolved = consensus(demo_store, "demo", RUBRIC).resolved
    ids = [i for i in ji.verdict if i in resolved]
    direct = choose_threshold(np.array([ji.confidence[i] for i in ids]),
                              np.array([ji.verdict[i] == resolved[i] for i in ids]), target=0.85, risk=0.1)
    r = calibrate_selective(demo_store, "demo", RUBRIC, ["careful-sonnet"], target=0.85, risk=0.1)
    assert (r.threshold, r.coverage, r.n_calibration) == (direct.threshold, direct.coverage, len(ids))
    assert r.guaranteed and r.agreement_lower_bound >= 0.85


def test_a_judge_without_any_confidence_is_refused_by_sentence(demo_store):
    ji = judge_items(demo_store, "demo", RUBRIC, "lenient-mini")  # one repeat, nothing stated
    assert ji.source == "none" and all(np.isnan(c) for c in ji.confidence.values())
    with pytest.raises(InputError, match="judge 'lenient-mini' has no confidence on any item.*'confidence' field"):
        calibrate_selective(demo_store, "demo", RUBRIC, ["lenient-mini"], target=0.9, risk=0.05)


@pytest.mark.parametrize("judge, cascade, selective, said", [
    (None, None, False, "no judge given"),
    ("a", "a,b", False, "--cascade works with --selective"),
    ("b", "a,b", True, "--judge is 'b' but the cascade starts with 'a'"),
    (None, "a,a", True, "--cascade names judge 'a' twice"),
    (None, "a,b,c,d", True, "not two or three different judges")])
def test_which_judges(judge, cascade, selective, said):
    with pytest.raises(InputError, match=said.replace("(", r"\(")):
        judges_of_cascade(judge, cascade, selective, 0.9, 0.05)


def test_which_judges_accepts():
    assert judges_of_cascade("a", None, False) == ["a"]
    assert judges_of_cascade(None, "a, b", True, 0.9, 0.05) == ["a", "b"]
    assert judges_of_cascade("a", "a,b,c", True, 0.9, 0.05) == ["a", "b", "c"]


def test_a_cascade_costs_what_is_recorded_else_what_the_price_table_estimates(cli, tmp_path):
    """lenient-mini's verdicts imported again with a confidence and no cost: its cost per item is the price table's
    estimate for its model on these items (what `judge run --dry-run` estimates, per item); careful-sonnet's is its
    recorded cost, both repeats of each item (its confidence is the share of its two repeats that agree); and the
    cost of 1,000 items follows from the judges each item reaches."""
    import json

    from tests.conftest import write
    from workbench.features.judging.service import estimate
    from workbench.stats.selective import route
    from workbench.store import Store

    cli("demo", "--no-ui")
    rows = [json.loads(line) for line in (tmp_path / "golden_sets" / "demo" / RUBRIC / "judgments" /
                                          "lenient-mini.jsonl").read_text().splitlines()]
    rows = [{"item_id": r["item_id"], "score": r["score"], "confidence": 0.9 if n % 3 else 0.4}
            for n, r in enumerate(rows) if r.get("repeat", 0) == 0 and r.get("score") is not None]
    f = write(tmp_path / "mini.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert cli("import", "judgments", f, "-g", "demo", "-r", RUBRIC, "-j", "lenient-mini").exit_code == 0
    with Store(cli.db) as s:
        r = calibrate_selective(s, "demo", RUBRIC, ["lenient-mini", "careful-sonnet"], target=0.8, risk=0.1)
        resolved = consensus(s, "demo", RUBRIC).resolved
        mini = judge_items(s, "demo", RUBRIC, "lenient-mini")
        careful = judge_items(s, "demo", RUBRIC, "careful-sonnet")
        ids = [i for i in mini.verdict if i in resolved]
        priced = estimate(s, "demo", RUBRIC, "lenient-mini", repeats=1, new_run=True,
                          transform=lambda items: [i for i in items if i.id in set(ids)])
    assert r.guaranteed and r.cost_source == "lenient-mini: estimated, careful-sonnet: recorded"
    assert all(c is None for c in mini.cost.values())  # nothing recorded: the estimate stands in
    assert priced.cost_usd and r.cascade[0].cost_per_item == pytest.approx(priced.cost_usd / len(ids), rel=1e-9)
    both_repeats = [careful.grading_cost[i] for i in ids]
    assert careful.repeats == 2 and all(c is not None and c > careful.cost[i] for c, i in zip(both_repeats, ids))
    assert r.cascade[1].cost_per_item == pytest.approx(sum(both_repeats) / len(ids), rel=1e-9)
    conf = np.array([[mini.confidence[i], careful.confidence[i]] for i in ids])
    stage = route(conf, tuple(s.threshold for s in r.cascade))
    reach = [len(ids) if r.cascade[0].threshold is not None else 0,
             int((stage != 0).sum()) if r.cascade[1].threshold is not None else 0]
    spent = (r.cascade[0].cost_per_item * reach[0] + r.cascade[1].cost_per_item * reach[1]) / len(ids)
    assert r.cost_per_1000_items == pytest.approx(1000 * spent, rel=1e-9)
