"""Gold items (issue 45 item 3): adjudicated items mixed into each reviewer's queue at a set rate, unannounced, and
each reviewer's accuracy on them in the raters report.

The mixing rate is checked on many reviewers' turns against the binomial law of the set rate; blindness by the item a
reviewer receives (the same fields, values and reservation whether or not it is gold); the accuracy by reviewers
planted on SummEval's real items (../shared/data/alttest/summeval), whose hits are counted here from the planted
labels and whose intervals hold statsmodels' Wilson interval; the command line's refusals by sentence.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom
from statsmodels.stats.proportion import proportion_confint

from tests.conftest import Cli, write
from tests.team.conftest import GOLDEN_SET, RUBRIC, seed
from tests.team.test_raters_report import SUMMEVAL, summeval_store
from workbench.features.importing.service import import_adjudications, import_labels
from workbench.features.labeling.gold import set_gold, status
from workbench.features.labeling.service import next_item, open_item, submit_label
from workbench.features.people.report import raters_report, render_text
from workbench.store import Store

RATE = 0.25
TURNS = 40  # of each of 8 reviewers: 320 turns, fewer ordinary ones than the 200 items' overlap holds


def _adjudicate(store: Store, folder: Path, golden_set: str, rubric: str, answers: dict[str, int]) -> None:
    path = write(folder / "adjudications.jsonl", "".join(
        json.dumps({"item_id": i, "score": s, "lead": "lee"}) + "\n" for i, s in answers.items()))
    import_adjudications(store, path, golden_set, rubric)


def test_gold_turns_come_at_the_set_rate_and_look_like_any_other_item(target, tmp_path):
    """Eight reviewers take 40 turns each in a golden set of 200 items, 40 of them gold at a rate of 0.25: the gold
    turns of all 320 lie in the binomial law's central 99.9%, each reviewer sees each gold item at most once, gold
    items are served past their overlap, and what a reviewer receives for a gold item is exactly the blind item
    anyone opening it gets, field for field."""
    with Store(target) as s:
        ids = seed(s, tmp_path, n_items=200)
        gold_ids = ids[::5]
        overlap = s.golden_set(GOLDEN_SET).overlap
        # as gold items are: labeled to the overlap already, then adjudicated (so the ordinary queue is done with them)
        import_labels(s, write(tmp_path / "first-labels.jsonl", "".join(
            json.dumps({"item_id": i, "rater": f"first{k}", "score": 0}) + "\n" for i in gold_ids
            for k in range(overlap))), GOLDEN_SET, RUBRIC)
        _adjudicate(s, tmp_path, GOLDEN_SET, RUBRIC, {i: 0 for i in gold_ids})
        st = set_gold(s, GOLDEN_SET, RUBRIC, all_adjudicated=True, rate=RATE, actor="lee")
        assert (st.n_gold, st.added, st.rate) == (40, 40, RATE)
        served: dict[str, list[str]] = {}
        for r in range(8):
            rater = f"rev{r}"
            for _ in range(TURNS):
                item = next_item(s, GOLDEN_SET, RUBRIC, rater)
                assert item is not None
                again = next_item(s, GOLDEN_SET, RUBRIC, rater)  # a rerun shows the same item: the draw holds
                assert again == item
                if item.item_id in gold_ids:
                    assert dataclasses.asdict(item) == dataclasses.asdict(open_item(s, GOLDEN_SET, item.item_id))
                served.setdefault(rater, []).append(item.item_id)
                assert submit_label(s, GOLDEN_SET, RUBRIC, item.item_id, rater, 0)
        gold_turns = sum(i in gold_ids for turns in served.values() for i in turns)
        low, high = binom.ppf([0.0005, 0.9995], 8 * TURNS, RATE)
        assert low <= gold_turns <= high, gold_turns
        for turns in served.values():
            assert len(turns) == len(set(turns))  # never the same item twice, gold or not
        assert gold_turns >= 1  # each one past the item's overlap: gold is served whatever labels it holds


def test_no_gold_is_served_without_a_rate_or_to_a_reviewer_whose_queue_is_done(target, tmp_path):
    with Store(target) as s:
        ids = seed(s, tmp_path, n_items=6)
        _adjudicate(s, tmp_path, GOLDEN_SET, RUBRIC, {ids[0]: 1})
        set_gold(s, GOLDEN_SET, RUBRIC, items=(ids[0],))
        assert status(s, GOLDEN_SET, RUBRIC).rate == 0
        order = []
        while (item := next_item(s, GOLDEN_SET, RUBRIC, "ana")) is not None:
            order.append(item.item_id)
            submit_label(s, GOLDEN_SET, RUBRIC, item.item_id, "ana", 0)
        assert sorted(order) == ids  # each once: the gold item only as the ordinary item it also is
        set_gold(s, GOLDEN_SET, RUBRIC, rate=1.0)
        assert next_item(s, GOLDEN_SET, RUBRIC, "ana") is None  # done: not kept busy with gold


def test_the_command_line_marks_gold_and_refuses_by_sentence(tmp_path):
    cli = Cli(tmp_path / "workbench.db")
    with Store(cli.db) as s:
        ids = seed(s, tmp_path)
        _adjudicate(s, tmp_path, GOLDEN_SET, RUBRIC, {ids[0]: 1, ids[1]: -1})
    r = cli("golden-set", "gold", GOLDEN_SET, "-r", RUBRIC, "--item", ids[2])
    assert r.exit_code == 1 and f"item '{ids[2]}' has no adjudication under {RUBRIC}" in r.output and "adjudicate it" in r.output
    r = cli("golden-set", "gold", GOLDEN_SET, "-r", RUBRIC, "--item", "it-00001")
    assert r.exit_code == 1 and "has no item 'it-00001'" in r.output and "did you mean it-0001?" in r.output
    r = cli("golden-set", "gold", GOLDEN_SET, "-r", RUBRIC, "--rate", "1.5")
    assert r.exit_code == 1 and "--rate is 1.5, not a share from 0 to 1" in r.output
    r = cli("golden-set", "gold", GOLDEN_SET, "-r", RUBRIC, "--all-adjudicated", "--rate", "0.1")
    assert r.exit_code == 0, r.output
    assert "2 marked gold, 2 gold items (of 2 adjudicated), 10% of each reviewer's turns serve one" in r.output
    r = cli("golden-set", "gold", GOLDEN_SET, "-r", RUBRIC, "--remove", "--item", ids[1])
    assert r.exit_code == 0 and "1 no longer gold, 1 gold item (of 2 adjudicated)" in r.output
    assert "gold.set" in cli("audit").output


@pytest.mark.skipif(not SUMMEVAL.exists(), reason=f"SummEval is not at {SUMMEVAL}")
def test_the_report_scores_each_reviewer_on_the_gold_they_labeled_after_the_marking(tmp_path):
    """SummEval consistency: 150 items adjudicated with the experts' majority and marked gold; 'gina' then labels
    100 of them, 90 with the answer and 10 one level off; 'remy' 100 at random. Their accuracies are the planted
    hits over 100 (counted here), their intervals hold statsmodels' Wilson interval, remy is named below the gold
    bound and gina is not; the experts' own labels, given before the marking, are not scored on gold."""
    db, labels = summeval_store(tmp_path, "consistency")
    rng = np.random.default_rng(7)
    with Store(db) as s:
        majority = {i: int(np.median(list(by.values()))) for i, by in labels.items() if len(by) >= 3}
        gold = dict(list(sorted(majority.items()))[:150])
        _adjudicate(s, tmp_path, "se", "se", gold)
        set_gold(s, "se", "se", all_adjudicated=True, rate=0.1)
        later = "2099-01-01T00:00:00+00:00"  # after the marking, whenever the test runs
        picks = sorted(gold)[:100]
        gina = {i: gold[i] if k < 90 else (gold[i] % 5) + 1 for k, i in enumerate(picks)}
        remy = {i: int(rng.integers(1, 6)) for i in sorted(gold)[50:150]}
        path = write(tmp_path / "gold-labels.jsonl", "".join(
            json.dumps({"item_id": i, "rater": who, "score": v, "created_at": later}) + "\n"
            for who, given in (("gina", gina), ("remy", remy)) for i, v in given.items()))
        import_labels(s, path, "se", "se", new_raters=True)
        report = raters_report(s, "se", "se", resamples=200)
    rows = {r.name: r for r in report.reviewers}
    remy_hits = sum(v == gold[i] for i, v in remy.items())
    for name, hits in (("gina", 90), ("remy", remy_hits)):
        g = rows[name].gold
        assert (g.n, g.value) == (100, pytest.approx(hits / 100, abs=1e-12))
        w_low, w_high = proportion_confint(hits, 100, alpha=0.05, method="wilson")
        assert g.ci_low <= w_low + 1e-12 and g.ci_high >= w_high - 1e-12
    assert all(rows[e].gold is None for e in ("e0", "e1", "e2"))  # their labels came before the marking
    assert rows["remy"].below_gold and not rows["gina"].below_gold
    finding = next(f for f in report.findings if f.startswith("Below the gold bound"))
    assert "'remy'" in finding and "'gina'" not in finding and "--exclude-rater remy" in finding
    assert report.to_json()["gold"] == {"n_items": 150, "bound": 0.8, "policy_key": "default"}
    text = render_text(report)
    assert "gold accuracy" in text.splitlines()[1] and "0.90 [" in next(x for x in text.splitlines() if x.startswith("gina"))
