"""The raters report (issue 45 item 3): each reviewer against the consensus of the others.

Checked against krippendorff and scikit-learn on SummEval's three expert raters (../shared/data/alttest/summeval,
read as validation/plan_honesty.py's summeval_pool reads it), with the leave-one-out consensus computed here from
the raw file, not by the workbench; a careless reviewer (random labels) and a harsh one (an expert's labels one
level lower) planted on the real items are found and named, the experts are not; the command line on SQLite and
Postgres.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import accuracy_score

from tests.conftest import ROOT, Cli, write
from tests.team.conftest import GOLDEN_SET, RUBRIC, seed
from workbench.calibration.rubric_versions import add_rubric
from workbench.features.importing.service import import_items, import_labels
from workbench.features.labeling.service import set_aside
from workbench.features.people.report import raters_report
from workbench.stats.reviewers import fail_share_difference, reviewer_agreement
from workbench.store import Store

SUMMEVAL = ROOT.parent / "shared" / "data" / "alttest" / "summeval" / "human_annotations.json"
SCALE = (1, 2, 3, 4, 5)
EXPERTS = ("e0", "e1", "e2")

pytestmark = pytest.mark.skipif(not SUMMEVAL.exists(), reason=f"SummEval is not at {SUMMEVAL}")


def summeval_labels(dimension: str, *, seed_: int = 0) -> tuple[list[str], dict[str, dict[str, int]]]:
    """The dimension's items and {item: {rater: score}}: the 3 experts, plus 'carl' (400 items, uniformly random
    labels) and 'hana' (400 items, e1's label one level lower, at least 1)."""
    ids, labels = expert_labels(dimension)
    rng = np.random.default_rng(seed_)
    for i in rng.choice(ids, 400, replace=False):
        labels[i]["carl"] = int(rng.integers(1, 6))
    for i in rng.choice(ids, 400, replace=False):
        labels[i]["hana"] = max(1, labels[i]["e1"] - 1)
    return ids, labels


def expert_labels(dimension: str) -> tuple[list[str], dict[str, dict[str, int]]]:
    human = json.loads(SUMMEVAL.read_text())
    ids = sorted(i for i in human["e0"] if i.endswith(f"__{dimension}"))
    return ids, {i: {r: int(human[r][i]) for r in EXPERTS if i in human[r]} for i in ids}


DRIFT_AT = 300


def drifting_labels(dimension: str, *, seed_: int = 0) -> tuple[list[str], dict[str, dict[str, int]], dict]:
    """The experts, plus 'dora': 450 labels, 20 a day from 1 November, the first 300 as careful as e1 (e1's own
    labels), the rest uniformly random; and {(item, 'dora'): when}."""
    ids, labels = expert_labels(dimension)
    rng = np.random.default_rng(seed_)
    when = {}
    for k, i in enumerate(rng.choice(ids, 450, replace=False)):
        labels[i]["dora"] = labels[i]["e1"] if k < DRIFT_AT else int(rng.integers(1, 6))
        when[(i, "dora")] = f"2026-11-{1 + k // 20:02d}T{k % 20:02d}:00:00+00:00"
    return ids, labels, when


def summeval_store(folder: Path, dimension: str, *, drift: bool = False) -> tuple[Path, dict[str, dict[str, int]]]:
    """An SQLite workspace holding the dimension's items (task: the source document) and labels, rubric 'se'
    (1 to 5, pass from 3)."""
    ids, labels, when = drifting_labels(dimension) if drift else (*summeval_labels(dimension), {})
    rubric = write(folder / "se.yaml", "name: se\ntitle: SummEval\ndescription: expert ratings\nscale:\n" + "".join(
        f"- value: {v}\n  label: level {v}\n  description: level {v}\n" for v in SCALE)
        + "pass_threshold: 3\ninstructions: rate\njudges: []\n")
    items = write(folder / "items.jsonl", "".join(json.dumps({"id": i, "task_id": i.split("__")[0], "input": "doc",
                                                              "output": "summary"}) + "\n" for i in ids))
    rows = write(folder / "labels.jsonl", "".join(
        json.dumps({"item_id": i, "rater": r, "score": s, **({"created_at": when[(i, r)]} if (i, r) in when else {})})
        + "\n" for i in ids for r, s in labels[i].items()))
    db = folder / "workbench.db"
    with Store(db) as s:
        add_rubric(s, rubric, actor="test")
        import_items(s, items, "se")
        import_labels(s, rows, "se", "se")
    return db, labels


@pytest.fixture(scope="module")
def consistency(tmp_path_factory):
    return summeval_store(tmp_path_factory.mktemp("consistency"), "consistency")


@pytest.fixture(scope="module")
def coherence(tmp_path_factory):
    return summeval_store(tmp_path_factory.mktemp("coherence"), "coherence")


@pytest.fixture(scope="module")
def drifting(tmp_path_factory):
    return summeval_store(tmp_path_factory.mktemp("drifting"), "consistency", drift=True)


def leave_one_out(labels: dict[str, dict[str, int]], rater: str) -> tuple[list[int], list[float]]:
    """The rater's labels and, for each, the strict majority of the others' (NaN where there is none)."""
    mine, loo = [], []
    for scores in labels.values():
        if rater not in scores:
            continue
        others = Counter(s for r, s in scores.items() if r != rater)
        top = [v for v, n in others.items() if 2 * n > sum(others.values())]
        mine.append(scores[rater])
        loo.append(float(top[0]) if top else np.nan)
    return mine, loo


@pytest.mark.parametrize("dataset", ["consistency", "coherence"])
def test_agreement_with_the_others_is_krippendorff_and_sklearn_on_summeval(dataset, request):
    db, labels = request.getfixturevalue(dataset)
    with Store(db) as s:
        report = raters_report(s, "se", "se", resamples=400)
    assert [r.name for r in report.reviewers] == ["carl", "e0", "e1", "e2", "hana"]
    for r in report.reviewers:
        mine, loo = leave_one_out(labels, r.name)
        both = ~np.isnan(loo)
        x, y = np.asarray(mine)[both], np.asarray(loo)[both].astype(int)
        assert r.n_labels == len(mine) and r.agreement.n_items == both.sum() > 200
        alpha = krippendorff.alpha(reliability_data=np.vstack([y, x]).astype(float),
                                   level_of_measurement="ordinal", value_domain=list(SCALE))
        a = r.agreement.krippendorff_alpha_ordinal
        assert a.value == pytest.approx(alpha, abs=1e-9)
        e = r.agreement.exact_agreement
        assert e.value == pytest.approx(accuracy_score(y, x), abs=1e-12) and e.n == both.sum()
        assert a.ci_low < a.value < a.ci_high and e.ci_low < e.value < e.ci_high
        # the fail shares on the items others labeled too, as the raw file gives them
        paired = [(s[r.name] < 3, np.mean([v < 3 for k, v in s.items() if k != r.name]))
                  for s in labels.values() if r.name in s and len(s) > 1]
        f = r.fail_share
        assert f.n_items == len(paired) and f.reviewer_share == pytest.approx(np.mean([p[0] for p in paired]))
        assert f.others_share == pytest.approx(np.mean([p[1] for p in paired]))
        assert f.difference.ci_low < f.difference.value < f.difference.ci_high


def test_a_careless_reviewer_is_named_and_the_experts_are_not(consistency):
    db, _ = consistency
    with Store(db) as s:
        report = raters_report(s, "se", "se", resamples=400)
    named = {r.name for r in report.reviewers if r.below_bound}
    assert named == {"carl", "hana"}  # random labels, and labels shifted a level, are far from the experts'
    (low, *_) = report.findings
    assert low.startswith("Below the agreement bound (min_agreement_lower 0.667) with the other reviewers' "
                          "consensus: 'carl' (alpha ")
    assert "'hana' (alpha" in low and "'e0'" not in low and "'e1'" not in low and "'e2'" not in low
    assert "go over the items where they differ from the others with them" in low


def test_a_harsh_reviewer_is_named_harsher(coherence):
    """On coherence (a third of the labels are 3, the lowest pass), one level lower turns many passes into fails."""
    db, _ = coherence
    with Store(db) as s:
        report = raters_report(s, "se", "se", resamples=400)
    by = {r.name: r for r in report.reviewers}
    assert by["hana"].harshness == "harsher" and by["hana"].fail_share.difference.ci_low > 0.1
    assert by["carl"].below_bound and by["carl"].agreement.krippendorff_alpha_ordinal.ci_low < 0 < \
        by["carl"].agreement.krippendorff_alpha_ordinal.ci_high  # random labels: no agreement beyond chance
    assert not any(by[e].harshness == "harsher" for e in EXPERTS)
    skew = next(f for f in report.findings if f.startswith("Fails marked differently"))
    assert "'hana' is harsher (fails 0.48 of their items, the others 0.25 of the same items" in skew


def test_a_reviewer_who_drifts_is_flagged_by_the_validity_test_and_the_experts_are_not(drifting):
    """'dora' labels as carefully as an expert for 300 labels, then at random: the monitoring's validity test
    (anytime-valid, alpha 0.05) goes off within 50 labels of the change, never before it, dated by her label; the
    experts, watched the same way over their 1,400 labels each, raise no alarm."""
    db, _ = drifting
    with Store(db) as s:
        report = raters_report(s, "se", "se", resamples=200)
    by = {r.name: r for r in report.reviewers}
    dora = by["dora"].over_time
    assert dora.alarm and DRIFT_AT - 10 <= dora.alarm_at < DRIFT_AT + 50  # 0-based among her compared labels
    assert by["dora"].alarm_since.startswith("2026-11-1")  # from the 16th day (label 300) on
    assert not any(by[e].over_time.alarm for e in EXPERTS) and all(by[e].over_time.n_labels > 1300 for e in EXPERTS)
    fell = next(f for f in report.findings if f.startswith("Agreement fell"))
    n = dora.alarm_at + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    assert fell == (f"Agreement fell below the bound (0.667) over time, by the monitoring's validity test (a false "
                    f"alarm at most 5% of the time): 'dora' from their {n}{suffix} compared label (given "
                    f"{by['dora'].alarm_since[:10]}); look at their labels since then with them, and have those "
                    f"items labeled again.")


def test_a_policy_bound_replaces_the_gates(consistency, tmp_path):
    db, _ = consistency
    from workbench.core.workspace import Workspace

    write(tmp_path / "rubrics" / "policy.yaml", "min_rater_agreement: -0.9\n")
    with Store(db) as s:
        report = raters_report(s, "se", "se", resamples=200, workspace=Workspace.resolve(tmp_path, str(db)))
    assert (report.bound, report.bound_source) == (-0.9, "min_rater_agreement")
    assert not any(r.below_bound for r in report.reviewers)
    assert not any(f.startswith("Below") for f in report.findings)


def test_the_statistics_refuse_misaligned_input_and_say_what_is_missing():
    with pytest.raises(ValueError, match="same length"):
        fail_share_difference([1, 0], [0.5], scale=(-1, 0, 1), pass_threshold=0)
    r = reviewer_agreement([1, 0], [None, None], scale=(-1, 0, 1), pass_threshold=0, resamples=50)
    assert r.n_items == 0 and "consensus of the others" in r.reasons["krippendorff_alpha_ordinal"]


# -- the command line, on SQLite and Postgres ------------------------------------------------------------------

N = 60


@pytest.fixture
def team_cli(target: str, tmp_path: Path) -> Cli:
    """60 items labeled by ana, ben and chloe (a shared truth, 1 label in 10 off by one level) and by carl
    (uniformly random); carl skipped two items and flagged one."""
    with Store(target) as s:
        ids = seed(s, tmp_path, n_items=N)
        rng = np.random.default_rng(7)
        truth = rng.choice([-1, 0, 1], size=N, p=[0.3, 0.5, 0.2])
        rows = []
        for who in ("ana", "ben", "chloe"):
            noisy = np.clip(truth + np.where(rng.random(N) < 0.1, rng.choice([-1, 1], N), 0), -1, 1)
            rows += [{"item_id": i, "rater": who, "score": int(v)} for i, v in zip(ids, noisy)]
        rows += [{"item_id": i, "rater": "carl", "score": int(v)} for i, v in zip(ids[:50], rng.integers(-1, 2, 50))]
        f = write(tmp_path / "labels.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
        import_labels(s, f, GOLDEN_SET, RUBRIC)
        for item, kind in ((ids[50], "skip"), (ids[51], "skip"), (ids[52], "unsure")):
            set_aside(s, GOLDEN_SET, RUBRIC, item, "carl", kind)
    return Cli(tmp_path / "workbench.db", tmp_path, target=target)


def test_raters_report_on_the_command_line(team_cli):
    r = team_cli("raters", "report", "-g", GOLDEN_SET, "-r", RUBRIC, "--json", "--resamples", "500")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["schema"] == "workbench.raters/1" and out["bound"]["value"] == 0.667
    by = {x["name"]: x for x in out["reviewers"]}
    assert sorted(by) == ["ana", "ben", "carl", "chloe"]
    carl = by["carl"]
    assert carl["n_labels"] == 50 and carl["below_bound"] and carl["n_seen"] == 53
    assert carl["skip_rate"]["value"] == pytest.approx(2 / 53) and carl["flag_rate"]["value"] == pytest.approx(1 / 53)
    assert carl["time_per_label"] is None and "not measured" in out["time_per_label"]
    assert not any(by[x]["below_bound"] for x in ("ana", "ben", "chloe"))
    assert by["ana"]["krippendorff_alpha_ordinal"]["ci_low"] > 0.5

    text = team_cli("rater", "report", "-g", GOLDEN_SET, "-r", RUBRIC, "--resamples", "500")
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[1].split("\t")[:5] == ["rater", "labels", "compared", "exact agreement", "alpha (ordinal)"]
    assert lines[4].startswith("carl\t50\t") and "\t0.04\t0.02\tfell at label " in lines[4]
    assert lines[2].startswith("ana\t60\t") and lines[2].endswith("\t0.00\t0.00\tsteady")
    assert "Not shown: time per label is not measured" in text.output
    assert lines[-2].startswith("Below the agreement bound (min_agreement_lower 0.667) with the other reviewers' "
                                "consensus: 'carl' (alpha ")
    # random from the start: the validity test sees it within the first few dozen of carl's labels
    assert lines[-1].startswith("Agreement fell below the bound (0.667) over time, by the monitoring's validity test "
                                "(a false alarm at most 5% of the time): 'carl' from their ")
    assert out["reviewers"][2]["over_time"]["alarm_at_label"] <= 30
    assert not any(x["over_time"]["alarm"] for x in out["reviewers"] if x["name"] != "carl")


def test_raters_report_refuses_what_it_cannot_measure(team_cli):
    r = team_cli("rater", "report", "-g", "nope", "-r", RUBRIC)
    assert r.exit_code == 1 and "nope" in r.stderr
    r = team_cli("rater", "report", "-g", GOLDEN_SET, "-r", "no-such-rubric")
    assert r.exit_code == 1 and "no-such-rubric" in r.stderr


def test_calibrate_leaves_out_an_excluded_rater_and_says_so(team_cli, tmp_path):
    """The judge scores every item with the raters' shared truth; left out, carl's random labels no longer sway
    the consensus: the report's confusion is the one of the others' strict majority against the judge."""
    with Store(team_cli.target) as s:
        labels = {}
        for item_id, rater, score in s.label_scores(s.golden_set(GOLDEN_SET).id, RUBRIC):
            labels.setdefault(item_id, {})[rater] = score
    judge = {i: Counter(v for r, v in by.items() if r != "carl").most_common(1)[0][0] for i, by in labels.items()}
    f = write(tmp_path / "judgments.jsonl", "".join(json.dumps({"item_id": i, "score": s}) + "\n"
                                                    for i, s in judge.items()))
    r = team_cli("import", "judgments", f, "-g", GOLDEN_SET, "-r", RUBRIC, "-j", "careful-sonnet")
    assert r.exit_code == 0, r.output

    def report(*extra: str) -> dict:
        out = team_cli("calibrate", "-g", GOLDEN_SET, "-r", RUBRIC, "-j", "careful-sonnet", "--json",
                       "--resamples", "200", *extra)
        assert out.exit_code == 0, out.output
        return json.loads(out.output)

    without = report("--exclude-rater", "carl")
    assert without["evidence"]["excluded_raters"] == {"carl": 50}
    assert without["human_ceiling"]["n_raters"] == 3
    expected = np.zeros((3, 3), dtype=int)
    for i, by in labels.items():
        others = Counter(v for r, v in by.items() if r != "carl")
        top = [v for v, n in others.items() if 2 * n > sum(others.values())]
        if top:
            expected[top[0] + 1, judge[i] + 1] += 1
    assert without["confusion"]["matrix"] == expected.tolist()
    (evidence,) = [c for c in without["verdict"]["checks"] if c["id"] == "evidence"]
    assert evidence["reason"].endswith("The labels of 'carl' (50 labels) are left out of the consensus and the "
                                       "human comparisons (--exclude-rater).")
    text = team_cli("calibrate", "-g", GOLDEN_SET, "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200",
                    "--exclude-rater", "carl")
    assert "; without the labels of 'carl' (50) (--exclude-rater)" in text.output.splitlines()[2]

    every = report()  # not cached under the exclusion's key, and saying nothing of it
    assert "excluded_raters" not in every["evidence"] and every["human_ceiling"]["n_raters"] == 4
    assert every["confusion"]["matrix"] != without["confusion"]["matrix"]

    r = team_cli("calibrate", "-g", GOLDEN_SET, "-r", RUBRIC, "-j", "careful-sonnet", "--exclude-rater", "dora")
    assert r.exit_code == 1 and r.stderr.startswith("Error: no rater 'dora' (raters: ")
    assert team_cli("rater", "add", "dora@example.com", "--role", "reviewer").exit_code == 0
    r = team_cli("calibrate", "-g", GOLDEN_SET, "-r", RUBRIC, "-j", "careful-sonnet", "--exclude-rater",
                 "dora@example.com")
    assert r.exit_code == 1 and "rater 'dora' has no labels of golden set 'g' under rubric 'demo-patch-quality', " \
                                "so there is nothing to leave out" in r.stderr
