"""`workbench calibrate --selective` on a golden set built from real labels (tests/selective/realdata.py): the
JSON's ``selective`` object as the issue lists it, the same numbers as the statistics on the same arrays, the one
sentence, cascades and their shares, and bad input refused with nothing written; on SQLite and Postgres."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import DEMO_RUBRIC, Cli, write
from tests.selective.realdata import judge_on_real_data
from workbench.stats.selective import choose_threshold

RUBRIC = "demo-patch-quality"
KEYS = ["threshold", "coverage", "agreement", "agreement_lower_bound", "target", "risk", "n_calibration",
        "guaranteed", "sentence"]
N = 400


def jsonl(rows) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def workspace(request, tmp_path_factory):
    """A golden set of 400 real answers (a seeded random sample) with the humans' label, and two judges' real
    verdicts with their derived confidence: 'lenient-mini' plays llama-3.1-8b (agreeing with the humans on about
    half; cost 0.001 an item), 'careful-sonnet' mistral-7b (about 0.9; cost 0.01), 'gpt4o-self' gpt-4o (about 0.85;
    cost 0.002). Built once per engine: the tests only read it (and check that nothing is written)."""
    tmp_path = tmp_path_factory.mktemp(request.param)
    if request.param == "postgres":
        from tests.pg import postgres_url
        cli = Cli(postgres_url(), tmp_path)
    else:
        cli = Cli(tmp_path / "wb.db")
    cheap = judge_on_real_data("meta.llama3-1-8b-instruct-v1:0")
    strong = judge_on_real_data("mistral.mistral-7b-instruct-v0:2")
    both = sorted(set(cheap.keys) & set(strong.keys))
    keys = [both[i] for i in np.random.default_rng(0).permutation(len(both))[:N]]
    assert cli("rubric", "add", DEMO_RUBRIC).exit_code == 0
    items = write(tmp_path / "items.jsonl", jsonl({"id": k, "input": k, "output": "answer"} for k in keys))
    assert cli("import", "items", items, "-g", "pf").exit_code == 0
    pos = {k: i for i, k in enumerate(cheap.keys)}
    labels = write(tmp_path / "labels.jsonl", jsonl({"item_id": k, "rater": "h1", "score": int(cheap.human[pos[k]])}
                                                     for k in keys))
    assert cli("import", "labels", "--new-raters", labels, "-g", "pf", "-r", RUBRIC).exit_code == 0
    for judge, data, usd in (("lenient-mini", cheap, 0.001), ("careful-sonnet", strong, 0.01),
                             ("gpt4o-self", judge_on_real_data("gpt-4o"), 0.002)):
        at = {k: i for i, k in enumerate(data.keys)}
        rows = [{"item_id": k, "score": int(data.verdict[at[k]]), "confidence": float(data.confidence[at[k]]),
                 "cost_usd": usd} for k in keys]
        r = cli("import", "judgments", write(tmp_path / f"{judge}.jsonl", jsonl(rows)), "-g", "pf", "-r", RUBRIC,
                "-j", judge)
        assert r.exit_code == 0, r.output
    return cli, keys, cheap, strong


def _arrays(data, keys):
    at = {k: i for i, k in enumerate(data.keys)}
    idx = [at[k] for k in keys]
    return data.confidence[idx], data.agree[idx]


def test_selective_json_matches_the_statistics(workspace):
    cli, keys, cheap, _ = workspace
    r = cli("calibrate", "-g", "pf", "-r", RUBRIC, "-j", "lenient-mini", "--selective", "--target-agreement", "0.9",
            "--risk", "0.1", "--json", "--resamples", "200")
    assert r.exit_code == 0, r.output
    sel = json.loads(r.output)["selective"]
    assert list(sel)[:len(KEYS)] == KEYS
    conf, agree = _arrays(cheap, keys)
    direct = choose_threshold(conf, agree, target=0.9, risk=0.1)
    assert direct.guaranteed and sel["guaranteed"]
    assert sel["threshold"] == pytest.approx(direct.threshold)
    assert sel["coverage"] == pytest.approx(direct.coverage) and 0 < sel["coverage"] < 1
    assert sel["agreement"] == pytest.approx(direct.agreement)
    assert 0.9 <= sel["agreement_lower_bound"] <= sel["agreement"]
    assert (sel["target"], sel["risk"], sel["n_calibration"]) == (0.9, 0.1, N)
    assert sel["confidence_source"] == "lenient-mini: stored"
    text = cli("calibrate", "-g", "pf", "-r", RUBRIC, "-j", "lenient-mini", "--selective", "--target-agreement",
               "0.9", "--risk", "0.1", "--resamples", "200").output
    assert text.rstrip().splitlines()[-1] == sel["sentence"]
    assert sel["sentence"].startswith(f"Keeping items with confidence >= {direct.threshold:.3g}, judge "
                                      "'lenient-mini' grades")
    from tests.conftest import ROOT
    assert sel["sentence"] in (ROOT / "docs" / "selective.md").read_text()  # the page shows the real output


def test_no_threshold_says_how_many_more_labels(workspace):
    cli, keys, _, strong = workspace
    r = cli("calibrate", "-g", "pf", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement",
            "0.995", "--risk", "0.05", "--json", "--resamples", "200")
    sel = json.loads(r.output)["selective"]
    assert (sel["guaranteed"], sel["threshold"]) == (False, None)
    # 0.995 at 95% needs ln(0.05)/ln(0.995) = 598 kept items that all agree: more than the 400 labeled
    assert sel["more_labels"] >= 598 - N
    assert sel["sentence"].startswith("No confidence threshold of judge 'careful-sonnet' reaches 99.5% agreement")
    # its agreement on its surest items is below 0.995, so the sentence says labels alone will not do it
    assert "more labels alone will not give the guarantee" in sel["sentence"]
    r = cli("calibrate", "-g", "pf", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement",
            "0.97", "--risk", "0.05", "--json", "--resamples", "200")
    sel = json.loads(r.output)["selective"]
    direct = choose_threshold(*_arrays(strong, keys), target=0.97, risk=0.05)
    assert sel["guaranteed"] == direct.guaranteed
    if not direct.guaranteed:
        at_least, about = direct.more_labels()
        assert sel["more_labels"] == at_least
        assert (f"at least {at_least} more labeled items would be needed, about {about}" in sel["sentence"]
                if about else "more labels alone will not" in sel["sentence"])


def test_cascade_shares_add_up_and_costs(workspace):
    """The cascade's JSON is the joint choice's on the same arrays (stats.selective.cascade): each judge's share,
    the abstained share, the guarantee's bound and interval, each judge alone, and what 1,000 items cost."""
    from workbench.features.selective.service import CASCADE_SEED
    from workbench.stats.selective import choose_cascade, choose_threshold, route

    cli, keys, cheap, strong = workspace
    r = cli("calibrate", "-g", "pf", "-r", RUBRIC, "--selective", "--target-agreement", "0.9", "--risk", "0.1",
            "--cascade", "lenient-mini,careful-sonnet", "--json", "--resamples", "200")
    assert r.exit_code == 0, r.output
    sel = json.loads(r.output)["selective"]
    first, second = sel["cascade"]
    assert [first["judge"], second["judge"]] == ["lenient-mini", "careful-sonnet"]
    conf = np.column_stack([_arrays(cheap, keys)[0], _arrays(strong, keys)[0]])
    agree = np.column_stack([_arrays(cheap, keys)[1], _arrays(strong, keys)[1]])
    direct = choose_cascade(conf, agree, target=0.9, risk=0.1, cost=np.array([0.001, 0.01]), seed=CASCADE_SEED)
    assert direct.guaranteed and sel["guaranteed"]
    assert [first["threshold"], second["threshold"]] == pytest.approx(list(direct.thresholds))
    stage = route(conf, direct.thresholds)
    for j, s in enumerate((first, second)):
        assert s["n_graded"] == (stage == j).sum() and s["share_of_items"] == pytest.approx((stage == j).mean())
        assert s["agreement"] == pytest.approx(agree[stage == j, j].mean())
    assert first["share_of_items"] + second["share_of_items"] == pytest.approx(sel["coverage"])
    assert sel["abstained_share"] == pytest.approx(1 - sel["coverage"]) == pytest.approx((stage < 0).mean())
    assert sel["agreement"] == pytest.approx(direct.agreement)
    assert sel["agreement_lower_bound"] == pytest.approx(direct.lower_bound) and sel["agreement_lower_bound"] >= 0.9
    interval = sel["agreement_interval"]
    assert (interval["low"], interval["level"]) == (pytest.approx(direct.lower_bound), pytest.approx(0.8))
    assert interval["low"] <= interval["n_agree"] / interval["n_kept"] <= interval["high"]
    assert sel["method"]["n_order"] + sel["method"]["n_test"] == N == sel["n_calibration"]
    # cost: the cheap judge on every item, the strong one on what the cheap one left (recorded costs)
    spent = 0.001 * N + 0.01 * int((stage != 0).sum())
    assert sel["cost_per_1000_items"] == pytest.approx(1000 * spent / N) and sel["cost_source"] == "recorded"
    assert sel["cost_per_graded_item"] == pytest.approx(spent / (stage >= 0).sum())
    assert sel["cost_last_judge_alone"] == pytest.approx(0.01)
    assert [first["cost_per_item"], second["cost_per_item"]] == pytest.approx([0.001, 0.01])
    # each judge alone, as calibrate -j J --selective tests it
    for one, (c, a) in zip(sel["single_judges"], ((conf[:, 0], agree[:, 0]), (conf[:, 1], agree[:, 1]))):
        alone = choose_threshold(c, a, target=0.9, risk=0.1)
        assert (one["threshold"], one["coverage"]) == (pytest.approx(alone.threshold), pytest.approx(alone.coverage))
    assert sel["sentence"].startswith("The cascade 'lenient-mini' -> 'careful-sonnet' (thresholds ")
    assert f"${sel['cost_per_1000_items']:,.2f} per 1,000 items (recorded)" in sel["sentence"]
    text = cli("calibrate", "-g", "pf", "-r", RUBRIC, "--selective", "--target-agreement", "0.9", "--risk", "0.1",
               "--cascade", "lenient-mini,careful-sonnet", "--resamples", "200").output
    assert text.rstrip().splitlines()[-1] == sel["sentence"]
    from tests.conftest import ROOT
    docs = (ROOT / "docs" / "selective.md").read_text()  # the page shows the real output
    assert sel["sentence"] in docs and f"`careful-sonnet` alone keeps {sel['single_judges'][1]['coverage']:.2%}" in docs


def test_the_issues_cascade_now_covers_at_least_the_better_judge(workspace):
    """Issue 48's example on real labels: gpt-4o's verdicts (here 'gpt4o-self', cost 0.002 an item) then
    mistral-7b's ('careful-sonnet', 0.01), at 90% agreement and 5% risk. Each judge calibrated on its own at risk
    D / 2, the second on what the first left (the former cascade), covered less than the first judge alone; chosen
    jointly, the cascade covers at least what the better judge covers alone (calibrate -j J --selective)."""
    from workbench.stats.selective import choose_threshold

    cli, keys, _, strong = workspace
    flags = ("--selective", "--target-agreement", "0.9", "--risk", "0.05", "--json", "--resamples", "200")
    alone = {j: json.loads(cli("calibrate", "-g", "pf", "-r", RUBRIC, "-j", j, *flags).output)["selective"]["coverage"]
             for j in ("gpt4o-self", "careful-sonnet")}
    conf, agree = _arrays(judge_on_real_data("gpt-4o"), keys)
    conf2, agree2 = _arrays(strong, keys)
    first = choose_threshold(conf, agree, target=0.9, risk=0.025)
    left = conf < first.threshold
    second = choose_threshold(conf2[left], agree2[left], target=0.9, risk=0.025)
    former = (first.n_kept + second.n_kept) / N
    assert former < alone["gpt4o-self"] < alone["careful-sonnet"]
    sel = json.loads(cli("calibrate", "-g", "pf", "-r", RUBRIC, "--cascade", "gpt4o-self,careful-sonnet",
                         *flags).output)["selective"]
    assert sel["guaranteed"] and sel["coverage"] >= max(alone.values())
    assert sel["cascade"][1]["share_of_items"] > 0  # the second judge grades what the first abstains on
    from tests.conftest import ROOT
    docs = " ".join((ROOT / "docs" / "selective.md").read_text().split())  # the page's numbers are these
    assert (f"kept {former:.2%}, fewer than gpt-4o alone ({alone['gpt4o-self']:.2%}); chosen jointly, the cascade "
            f"keeps {sel['coverage']:.0%}, more than mistral-7b alone ({alone['careful-sonnet']:.2%})") in docs


@pytest.mark.parametrize("args, said", [
    (["--target-agreement", "1.2", "--risk", "0.1"], "--target-agreement is 1.2, not a share strictly between 0 and 1"),
    (["--target-agreement", "0", "--risk", "0.1"], "--target-agreement is 0.0, not a share strictly between 0 and 1"),
    (["--target-agreement", "0.9", "--risk", "0.6"], "--risk is 0.6, not a probability in (0, 0.5]"),
    (["--target-agreement", "0.9"], "--risk is None, not a probability in (0, 0.5]"),
    (["--target-agreement", "0.9", "--risk", "0.1", "--cascade", "lenient-mini"],
     "--cascade is 'lenient-mini', not two or three different judges")])
def test_bad_input_refused_nothing_written(workspace, args, said):
    cli, *_ = workspace
    from workbench.store import Store
    with Store(cli.db) as s:
        before = s.table_counts()
    r = cli("calibrate", "-g", "pf", "-r", RUBRIC, "-j", "lenient-mini", "--selective", *args)
    assert r.exit_code != 0 and said in r.output
    with Store(cli.db) as s:
        assert s.table_counts() == before
