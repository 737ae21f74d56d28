"""The active queue end to end on a real SQLite file: design, serving, recorded inclusion probabilities, blindness,
export and re-import, and a calibration report that says which design produced its labels."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import yaml
import pytest

from workbench.features.demo.generator import DATA_DIR
from workbench.calibration import design_weights
from workbench.features.planning import active_queue
from workbench.features.importing import service as importing
from workbench.features.labeling import service as labeling
from workbench.calibration import snapshots
from workbench.calibration.calibrate import Options, calibrate
from workbench.calibration.rubric_versions import add_rubric
from workbench.store import Store

DEMO = DATA_DIR / "golden_sets" / "demo"
RUBRIC = "demo-patch-quality"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "wb.db")
    add_rubric(s, DATA_DIR / "rubrics" / f"{RUBRIC}.yaml")
    importing.import_items(s, DEMO / "items.jsonl", "pool")
    importing.import_judgments(s, DEMO / RUBRIC / "judgments" / "careful-sonnet.jsonl", "pool", RUBRIC,
                                 "careful-sonnet")
    return s


def _label_some(store: Store, n: int) -> list[str]:
    """Two reviewers work through the active queue (overlap 2); each saves what the judge-blind item shows."""
    served = []
    for _ in range(n):
        for rater in ("ana", "ben"):
            item = labeling.next_item(store, "pool", RUBRIC, rater)
            assert item is not None
            served.append(item.item_id)
            labeling.submit_label(store, "pool", RUBRIC, item.item_id, rater, 0)
    return served


def test_active_queue_serves_by_design_and_records_inclusion(store: Store, tmp_path: Path) -> None:
    q = active_queue.set_queue_order(store, "pool", "active", rubric=RUBRIC, judge="careful-sonnet",
                                     expected_labels=40)
    assert q.order == "active" and q.design["judge_id"] == "careful-sonnet"
    probs = {r["stratum"]: r["probability"] for r in q.strata}
    assert min(probs.values()) > 0 and max(probs.values()) <= 1
    assert len(set(round(p, 6) for p in probs.values())) > 1  # unequal: the design is not uniform
    served = _label_some(store, 6)
    # overlap holds: each item is served to both reviewers, one after the other, in the design's order
    assert served[0::2] == served[1::2]
    gs = store.golden_set("pool")
    priority = active_queue.q.priorities(store, gs.id)
    firsts = served[0::2]
    assert [priority[i] for i in firsts] == sorted(priority.values())[:len(firsts)]
    recorded = active_queue.q.label_inclusion(store, gs.id, RUBRIC)
    assert len(recorded) == 12
    pks = store.item_pks(gs.id)
    for (item_id, _), p in recorded.items():
        assert p == pytest.approx(active_queue.q.inclusion_probability(store, gs.id, pks[item_id])[1])

    # the blind item a reviewer receives carries nothing of the judge or the design
    item = labeling.next_item(store, "pool", RUBRIC, "chloe")
    shown = json.dumps(dataclasses.asdict(item))
    for secret in ("careful-sonnet", "inclusion", "priority", "stratum", "judge", "producer"):
        assert secret not in shown

    # export and re-import into a fresh database: every inclusion probability comes back
    out = tmp_path / "export"
    snapshots.export_golden_set(store, "pool", out)
    rows = [json.loads(line) for line in (out / RUBRIC / "labels.jsonl").read_text().splitlines()]
    assert all(0 < r["inclusion_probability"] <= 1 for r in rows)
    fresh = Store(tmp_path / "fresh.db")
    add_rubric(fresh, DATA_DIR / "rubrics" / f"{RUBRIC}.yaml")
    importing.import_items(fresh, out / "items.jsonl", "pool")
    importing.import_labels(fresh, out / RUBRIC / "labels.jsonl", "pool", RUBRIC)
    again = active_queue.q.label_inclusion(fresh, fresh.golden_set("pool").id, RUBRIC)
    assert again == pytest.approx(recorded)


def test_calibration_report_names_the_design_and_weights(store: Store, tmp_path: Path) -> None:
    active_queue.set_queue_order(store, "pool", "active", rubric=RUBRIC, judge="careful-sonnet", expected_labels=40)
    gs = store.golden_set("pool")
    pks = store.item_pks(gs.id)
    # a sample of the design, labeled by the demo's reviewers: the first 60 items of the queue order
    priority = active_queue.q.priorities(store, gs.id)
    chosen = sorted(priority, key=priority.get)[:60]
    demo_labels = [json.loads(line) for line in (DEMO / RUBRIC / "labels.jsonl").read_text().splitlines()]
    rows = [r for r in demo_labels if r["item_id"] in set(chosen)]
    labels = tmp_path / "sample.jsonl"  # labeled outside the queue: no inclusion probabilities recorded
    labels.write_text("".join(json.dumps({k: r[k] for k in ("item_id", "rater", "score")}) + "\n" for r in rows))
    importing.import_labels(store, labels, "pool", RUBRIC)
    assert calibrate(store, "pool", RUBRIC, "careful-sonnet", Options(resamples=300)).sampling_design is None
    for r in rows:  # as if the queue had served them: no label changes, yet the cached report must not be reused
        labeling.record_served(store, gs, pks[r["item_id"]], RUBRIC, r["rater"])
    report = calibrate(store, "pool", RUBRIC, "careful-sonnet", Options(resamples=300))
    assert report.sampling_design.design == "active"
    assert report.sampling_design.kish_effective_n < report.n_items
    alpha = report.metrics["krippendorff_alpha_ordinal"]
    assert alpha.ci_low < alpha.value < alpha.ci_high


def test_random_order_is_unchanged_and_refuses_bad_orders(store: Store) -> None:
    assert active_queue.queue_setting(store, "pool").order == "random"
    with pytest.raises(Exception, match="--rubric R --judge J"):
        active_queue.set_queue_order(store, "pool", "active")
    with pytest.raises(Exception, match="unknown queue order"):
        active_queue.set_queue_order(store, "pool", "sideways")
    _label_random = labeling.next_item(store, "pool", RUBRIC, "ana")
    labeling.submit_label(store, "pool", RUBRIC, _label_random.item_id, "ana", 0)
    assert active_queue.q.label_inclusion(store, store.golden_set("pool").id, RUBRIC) == {}


def test_labels_from_before_the_switch_and_a_replan_are_phases(store: Store) -> None:
    """Ten items labeled in random order, then the active queue, then a lead's re-plan: every item's probability
    is 1 - (1 - f0) prod_p (1 - min(1, s_p rate_p)), f0 the share labeled before the switch, s_p the largest
    priority each phase served."""
    before = set()
    for _ in range(10):
        item = labeling.next_item(store, "pool", RUBRIC, "ana")
        labeling.submit_label(store, "pool", RUBRIC, item.item_id, "ana", 0)
        before.add(item.item_id)
    active_queue.set_queue_order(store, "pool", "active", rubric=RUBRIC, judge="careful-sonnet", expected_labels=40)
    gs = store.golden_set("pool")
    n_items = len(store.item_pks(gs.id))
    f0 = 10 / n_items
    assert active_queue.q.design(store, gs.id)["labeled_before"] == pytest.approx(f0)
    # a second label on an item labeled before the switch: that item is in the random share f0, so it does not
    # become an item the design served (its high priority would otherwise raise s_1 for every item)
    late = max(before, key=active_queue.q.priorities(store, gs.id).get)
    labeling.submit_label(store, "pool", RUBRIC, late, "ben", 0)
    assert active_queue.q.served_thresholds(store, gs.id, RUBRIC) == {}
    phases = []
    for expected in (40, 60):
        if phases:  # the re-plan: same rubric and judge, a new phase
            active_queue.set_queue_order(store, "pool", "active", rubric=RUBRIC, judge="careful-sonnet",
                                         expected_labels=expected)
        rates = active_queue.q.design_rates(store, gs.id)
        priority = active_queue.q.priorities(store, gs.id)
        served = _label_some(store, 4)
        # s_p: the largest priority among the items this phase labeled first; the second labels ben gives the
        # items ana labeled before the switch (started items come first) leave it alone
        phases.append((rates, max(priority[i] for i in served if i not in before)))
        assert active_queue.q.served_thresholds(store, gs.id, RUBRIC)[len(phases)] == phases[-1][1]
    assert active_queue.q.design(store, gs.id)["phase"] == 2
    labels_per_item = {}
    for row in store.labels(gs.id, RUBRIC):
        labels_per_item[row["item_id"]] = labels_per_item.get(row["item_id"], 0) + 1
    # the design's items get both labels as they come (ben is served what ana started, in the queue's order)
    assert {n for i, n in labels_per_item.items() if i not in before} == {2}
    pi = design_weights.item_inclusion(store, gs, RUBRIC)
    for item_id in {r["item_id"] for r in store.labels(gs.id, RUBRIC)}:
        missed = (1 - f0) * np.prod([1 - min(1.0, s * rates[item_id]) for rates, s in phases])
        assert pi[item_id] == pytest.approx(1 - missed)


def test_calibration_page_says_the_plan_and_offers_a_replan(tmp_path, monkeypatch) -> None:
    """The Calibration page: the plan in words beside the verdict, and a re-plan button when the active queue
    serves checks that are no longer the undecided ones."""
    from tests.ui.conftest import lead_page, choose_judge, rendered_text
    from workbench.features.demo.seed import seed_demo

    path = tmp_path / "demo.db"
    with Store(path) as s:
        seed_demo(s)
        gs = s.golden_set("demo")
        active_queue.set_queue_order(s, "demo", "active", rubric=RUBRIC, judge="careful-sonnet")
        # pretend the design was made when every check was open
        s.conn.execute("UPDATE active_designs SET checks = ? WHERE golden_set_id = ?",
                       (json.dumps(["agreement", "tpr", "tnr", "self_preference"]), gs.id))
        s.conn.commit()
    monkeypatch.setenv("WORKBENCH_DB", str(path))
    # a tighter self-preference bound than the default: careful-sonnet's same-family effect, 0.00 [-0.05, +0.06],
    # then straddles it, so that check is undecided while the others are decided
    (tmp_path / "rubrics").mkdir()
    (tmp_path / "rubrics" / "policy.yaml").write_text("max_self_preference: 0.05\n")
    monkeypatch.setenv("WORKBENCH_PROJECT", str(tmp_path))
    at = choose_judge(lead_page("calibration"), "careful-sonnet")
    text = rendered_text(at)
    assert "Labels to a decision." in text and "same-family" in text and "Not decided yet" in text
    assert "Re-plan it to serve them" in text
    # the open check's labels are a range in the sentence and in the table, never a single number
    assert "80% range" in text and "labels, random order" in text and "the pool decides it" in text
    ranges = [df for df in at.dataframe if "labels, random order" in df.value.columns]
    assert len(ranges) == 1
    row = ranges[0].value.iloc[0]
    assert row["check"] == "no material self-preference" and " to " in row["labels, random order"]
    at.button(key="replan:demo:careful-sonnet").click().run(timeout=60)
    with Store(path) as s:
        d = active_queue.q.design(s, s.golden_set("demo").id)
    assert d["phase"] == 2 and d["checks"] == ["self_preference"]
    # a judge the evidence has already failed: the page says the verdict is decided, whatever labels come
    text = rendered_text(choose_judge(lead_page("calibration"), "gpt4o-self"))
    assert "The judge fails the gate on no material self-preference" in text and "which more labels will not change" \
        in text


def test_a_lead_switches_the_queue_order_on_the_calibration_page(tmp_path, monkeypatch) -> None:
    """The Calibration page's queue switch: random to active plans a design for the chosen judge, and back."""
    from tests.ui.conftest import lead_page, choose_judge
    from workbench.features.demo.seed import seed_demo

    path = tmp_path / "demo.db"
    with Store(path) as s:
        seed_demo(s)
    monkeypatch.setenv("WORKBENCH_DB", str(path))
    at = choose_judge(lead_page("calibration"), "careful-sonnet")
    switch = at.radio(key="queue_order:demo:careful-sonnet")
    assert switch.value == "random"
    switch.set_value("active").run(timeout=60)
    with Store(path) as s:
        q = active_queue.queue_setting(s, "demo")
    assert q.order == "active" and q.design["judge_id"] == "careful-sonnet" and q.design["rubric_name"] == RUBRIC
    at.radio(key="queue_order:demo:careful-sonnet").set_value("random").run(timeout=60)
    with Store(path) as s:
        assert active_queue.queue_setting(s, "demo").order == "random"


def test_plan_asks_for_the_second_opinions_the_gate_needs(store: Store, tmp_path: Path) -> None:
    """60 items labeled by one reviewer each: enough items, but the gate's evidence check wants 30% of them with 2+
    raters and its comparison with the reviewers has no item to compare on, so the plan keeps both open (a lead
    who stopped at 'every check decided' would otherwise meet a failing gate)."""
    from workbench.features.planning.plan import plan, undecided_checks

    demo = [json.loads(line) for line in (DEMO / RUBRIC / "labels.jsonl").read_text().splitlines()]
    first: dict[str, dict] = {}
    for r in demo:
        first.setdefault(r["item_id"], r)
    rows = list(first.values())[:60]
    path = tmp_path / "single.jsonl"
    path.write_text("".join(json.dumps({"item_id": r["item_id"], "rater": "ana", "score": r["score"]}) + "\n"
                            for r in rows))
    importing.import_labels(store, path, "pool", RUBRIC)
    p = plan(store, "pool", RUBRIC, "careful-sonnet")
    checks = {c.check: c for c in p.checks}
    # the second opinions come first (one label each): 18 of them bring the share to 30%, and the gate is read after
    # every 5 items, so every simulated future decides the evidence check at the look after 20 of them, exactly
    evidence = checks["evidence"]
    assert not evidence.decided
    assert evidence.random.labels.to_json() == {"median": 20.0, "low": 20.0, "high": 20.0}
    assert evidence.random.items.median == 20.0 and evidence.recommended.labels.median == 20.0
    assert evidence.random.pool_decides == 1.0
    assert "from 0% to 30%" in evidence.sentence and "about 20 more labels (80% range 20 to 20)" in evidence.sentence
    assert not checks["as_good_as_human"].decided
    assert "to compare the judge with the reviewers" in checks["as_good_as_human"].sentence
    assert "agreement" in undecided_checks(p)


def test_self_preference_the_set_cannot_measure_does_not_hold_the_plan_open(tmp_path: Path) -> None:
    """No item of the golden set comes from the judge's family: the gate warns 'not measurable', and no label
    will change that, so the plan counts the check as decided (and not failed) instead of waiting forever."""
    from workbench.features.planning.plan import plan

    s = Store(tmp_path / "wb.db")
    rubric = yaml.safe_load((DATA_DIR / "rubrics" / f"{RUBRIC}.yaml").read_text())
    rubric["judges"] = [{"id": "meta-judge", "model": "openai-api/together/llama-3-70b", "family": "meta"}]
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(rubric))
    add_rubric(s, tmp_path / "r.yaml")
    importing.import_items(s, DEMO / "items.jsonl", "pool")
    rows = [json.loads(line) for line in
            (DEMO / RUBRIC / "judgments" / "careful-sonnet.jsonl").read_text().splitlines()]
    (tmp_path / "j.jsonl").write_text("".join(json.dumps({"item_id": r["item_id"], "score": r["score"]}) + "\n"
                                              for r in rows if r.get("repeat", 0) == 0))
    importing.import_judgments(s, tmp_path / "j.jsonl", "pool", RUBRIC, "meta-judge")
    importing.import_labels(s, DEMO / RUBRIC / "labels.jsonl", "pool", RUBRIC)
    p = plan(s, "pool", RUBRIC, "meta-judge")
    same_family = next(c for c in p.parts if c.check == "same_family")
    assert next(c for c in p.checks if c.check == "self_preference").state == "warning"
    assert same_family.decided and not same_family.failed and "no label will settle it" in same_family.sentence
