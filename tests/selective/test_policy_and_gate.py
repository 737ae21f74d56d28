"""A rubric's policy may ask for a selective guarantee (``selective: {target_agreement, risk, cascade}``): checked
where it is written, carried wherever the policy is, and judged by the gate's "selective guarantee" check, which
``calibrate`` shows and ``export`` decides by (refused with exit 3 and nothing written when it does not hold).
A pair without the section keeps exactly the verdict it had."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
import yaml
from scipy.stats import beta, binom

from tests.conftest import write
from workbench.calibration.gate import FAILED, PASSED, UNDECIDED, selective_check, with_selective_check
from workbench.calibration.verdict import Check, Verdict
from workbench.core.errors import InputError
from workbench.core.policy import Policy, SelectivePolicy, load_policy, policy_from_dict

RUBRIC = "demo-patch-quality"
BUNDLE = "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml"


# -- the policy section ------------------------------------------------------------------------------------------

def test_the_section_is_read_and_round_trips():
    p = policy_from_dict({"min_items": 60, "selective": {"target_agreement": 0.9, "risk": 0.05,
                                                          "cascade": ["cheap", "strong"]}})
    assert p.selective == SelectivePolicy(0.9, 0.05, ("cheap", "strong"))
    data = p.to_dict()
    assert data["selective"] == {"target_agreement": 0.9, "risk": 0.05, "cascade": ["cheap", "strong"]}
    assert Policy(**json.loads(json.dumps(data))) == p  # as a report or a bundle reads it back
    # without the section the policy's JSON is what it was before the section existed (reports, cache keys)
    assert "selective" not in Policy().to_dict() and "selective" not in policy_from_dict({"min_items": 60}).to_dict()
    assert policy_from_dict({"selective": None}).selective is None  # an uncommented empty key: no section
    # a rubric's gate: overrides policy.yaml's section as a whole
    assert policy_from_dict({"selective": {"target_agreement": 0.8, "risk": 0.1}}, base=p).selective == \
        SelectivePolicy(0.8, 0.1)


@pytest.mark.parametrize("section, said", [
    ({"target_agreement": 1.0, "risk": 0.05}, "field 'gate.selective.target_agreement': must be a number strictly "
                                              "between 0 and 1, got 1.0"),
    ({"target_agreement": 0, "risk": 0.05}, "gate.selective.target_agreement': must be a number strictly between 0 "
                                            "and 1, got 0"),
    ({"target_agreement": 0.9, "risk": 0.6}, "field 'gate.selective.risk': must be a number in (0, 0.5], got 0.6"),
    ({"target_agreement": 0.9, "risk": 0}, "gate.selective.risk': must be a number in (0, 0.5], got 0"),
    ({"target_agreement": 0.9}, "gate.selective.risk': must be a number in (0, 0.5], got nothing"),
    ({"target_agreement": "high", "risk": 0.1}, "must be a number strictly between 0 and 1, got 'high'"),
    ({"target_agreement": float("nan"), "risk": 0.1}, "got nan"),
    ({"target_agreement": 0.9, "risk": 0.1, "cascade": ["one"]}, "gate.selective.cascade': must be a list of two or "
                                                                  "three different judge names, got ['one']"),
    ({"target_agreement": 0.9, "risk": 0.1, "cascade": ["a", "a"]}, "two or three different judge names"),
    ({"target_agreement": 0.9, "risk": 0.1, "cascade": "a,b"}, "got 'a,b'"),
    ({"target": 0.9, "risk": 0.1}, "field 'gate.selective.target': unknown selective key 'target'; use one of "
                                   "target_agreement, risk, cascade"),
    ([0.9, 0.1], "field 'gate.selective': must be a mapping, got [0.9, 0.1]"),
])
def test_a_bad_section_is_one_sentence_naming_file_field_and_value(section, said):
    with pytest.raises(InputError) as e:
        policy_from_dict({"selective": section}, source="rubrics/qa.yaml", line_of=lambda key: 7, prefix="gate.")
    assert str(e.value).startswith("rubrics/qa.yaml line 7: ") and said in str(e.value)
    assert str(e.value).replace("e.g. ", "").count(". ") == 0 and "\n" not in str(e.value)  # one sentence


def test_policy_yaml_section_at_its_line(tmp_path):
    f = write(tmp_path / "policy.yaml", "min_items: 50\nselective:\n  target_agreement: 0.9\n  risk: 0.7\n")
    with pytest.raises(InputError, match=r"policy.yaml line 2: field 'selective.risk': must be a number in \(0, "
                                         r"0.5\], got 0.7"):
        load_policy(f)
    f.write_text("selective: {target_agreement: 0.9, risk: 0.05}\n")
    assert load_policy(f).selective == SelectivePolicy(0.9, 0.05)


# -- the gate's check --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Guarantee:
    """What the check reads of ``features.selective``'s result, planted."""

    guaranteed: bool
    sentence: str
    target: float
    risk: float
    more_labels: int | None = None
    more_labels_about: int | None = None
    openings: tuple[tuple[int, int], ...] = ()
    threshold: float | None = None


def _upper(k, n):  # the upper end of the two-sided 99.9% Clopper-Pearson interval, by hand
    return 1.0 if k == n else beta.ppf(1 - 0.0005, k + 1, n - k)


def test_the_check_passes_fails_or_waits_as_the_numbers_say():
    ok = selective_check(Guarantee(True, "Keeping items ...", 0.9, 0.05, threshold=0.7, openings=((60, 59),)))
    assert (ok.id, ok.name, ok.status, ok.reason) == ("selective", "selective guarantee", PASSED, "Keeping items ...")
    assert ok.threshold == {"target_agreement": 0.9, "risk": 0.05} and ok.value["threshold"] == 0.7
    # 70 of 100 on the items it is surest of: 99.9% upper bound 0.84 < 0.9, beyond doubt: labels will not help.
    # The exact bound by its definition: the agreement at which seeing 70 or fewer of 100 has probability 0.0005
    assert binom.cdf(70, 100, _upper(70, 100)) == pytest.approx(0.0005, rel=1e-6)
    assert _upper(70, 100) == pytest.approx(0.836, abs=1e-3)
    bad = selective_check(Guarantee(False, "No confidence threshold ...", 0.9, 0.05, 5, None, ((100, 70),)))
    assert bad.status == FAILED and bad.blocking and bad.more_items is None
    assert f"99.9% upper bound {_upper(70, 100):.3f}" in bad.reason and "more labels will not" in bad.reason
    # 88 of 100: not above 0.9, but not below it beyond doubt (upper bound 0.95): undecided, labels cannot be told
    assert _upper(88, 100) > 0.9
    wait = selective_check(Guarantee(False, "No confidence threshold ...", 0.9, 0.05, 5, None, ((100, 88),)))
    assert wait.status == UNDECIDED and wait.more_items == 5 and "not decided yet" in wait.reason
    # 95 of 100 with too few labels: undecided with about the labels the sentence names
    more = selective_check(Guarantee(False, "... about 140 if ...", 0.9, 0.05, 20, 140, ((100, 95),)))
    assert more.status == UNDECIDED and more.more_items == 140 and more.reason == "... about 140 if ..."
    # a cascade fails only when every judge's first test is below the target beyond doubt
    assert selective_check(Guarantee(False, "s", 0.9, 0.05, 5, None, ((100, 70), (100, 88)))).status == UNDECIDED
    assert selective_check(Guarantee(False, "s", 0.9, 0.05, 5, None, ((100, 70), (80, 50)))).status == FAILED
    # added to a verdict once (again: replaced), after the checks it had
    first = Verdict((Check("agreement", "agreement", PASSED, 0.8, 0.667, "m", "r"),))
    twice = with_selective_check(with_selective_check(first, Guarantee(True, "s", 0.9, 0.05)),
                                 Guarantee(False, "s", 0.9, 0.05, 5, None, ((100, 70),)))
    assert [c.id for c in twice.checks] == ["agreement", "selective"] and twice.state == FAILED


# -- through the command line ------------------------------------------------------------------------------------

def _checks(out: str) -> dict[str, str]:
    return {c["id"]: c["status"] for c in json.loads(out)["verdict"]["checks"]}


def test_a_policy_section_drives_calibrate_and_export(cli, tmp_path):
    cli("demo", "--no-ui")
    calibrate = ("calibrate", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200", "--json")
    before = json.loads(cli(*calibrate).output)
    other_before = json.loads(cli("calibrate", "-g", "demo", "-r", RUBRIC, "-j", "gpt4o-self", "--resamples", "200",
                                  "--json").output)
    write(tmp_path / "rubrics" / "policy.yaml", "selective: {target_agreement: 0.85, risk: 0.1}\n")
    after = json.loads(cli(*calibrate).output)
    assert after["policy"]["selective"] == {"target_agreement": 0.85, "risk": 0.1}
    check = after["verdict"]["checks"][-1]
    assert check["id"] == "selective" and check["status"] == PASSED and check["reason"] == after["selective"]["sentence"]
    # every other check is the one it was; a judge held to the guarantee too keeps its own failures
    assert after["verdict"]["checks"][:-1] == before["verdict"]["checks"]
    other = json.loads(cli("calibrate", "-g", "demo", "-r", RUBRIC, "-j", "gpt4o-self", "--resamples", "200",
                           "--json").output)
    assert other["verdict"]["checks"][:-1] == other_before["verdict"]["checks"]
    assert other["verdict"]["state"] == other_before["verdict"]["state"] == FAILED
    # export without flags: the policy's guarantee is judged and carried, under the sha256
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200")
    assert r.exit_code == 0, r.output
    bundle = yaml.safe_load((tmp_path / BUNDLE).read_text())
    assert bundle["policy"]["selective"] == {"target_agreement": 0.85, "risk": 0.1}
    assert bundle["selective"]["threshold"] == after["selective"]["threshold"]
    assert bundle["verdict"]["checks"][-1]["id"] == "selective" and "cascade" not in bundle["selective"]
    assert cli("check", tmp_path / BUNDLE).exit_code == 0
    # a target it cannot show: refused like the gate (exit 3), nothing written
    write(tmp_path / "rubrics" / "policy.yaml", "selective: {target_agreement: 0.99, risk: 0.1}\n")
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200", "--out", tmp_path / "elsewhere")
    assert r.exit_code == 3 and "[UNDECIDED] selective guarantee: No confidence threshold" in r.output
    assert not (tmp_path / "elsewhere").exists()
    # the flags override the policy's section
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200", "--out", tmp_path / "elsewhere",
            "--selective", "--target-agreement", "0.85", "--risk", "0.1")
    assert r.exit_code == 0, r.output
    # a bad section: one sentence naming the file, line and field; nothing exported
    write(tmp_path / "rubrics" / "policy.yaml", "min_items: 50\nselective: {target_agreement: 0.9, risk: 0.9}\n")
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--out", tmp_path / "third")
    assert r.exit_code != 0 and "policy.yaml line 2: field 'selective.risk': must be a number in (0, 0.5], got 0.9" \
        in r.output and "Traceback" not in r.output
    assert not (tmp_path / "third").exists()


def _plant_confidence(cli, tmp_path):
    """careful-sonnet's recorded verdicts, imported again with a confidence: low (0.2) on the six items where it
    disagrees with the human consensus and on every tenth other one, high (0.9) elsewhere."""
    from workbench.calibration.golden_sets import consensus
    from workbench.features.selective.service import judge_items
    from workbench.store import Store

    with Store(cli.db) as s:
        resolved = consensus(s, "demo", RUBRIC).resolved
        verdict = judge_items(s, "demo", RUBRIC, "careful-sonnet").verdict
    wrong = {i for i, v in verdict.items() if i in resolved and resolved[i] != v}
    assert len(wrong) == 6
    rows = [json.loads(line) for line in (tmp_path / "golden_sets" / "demo" / RUBRIC / "judgments" /
                                          "careful-sonnet.jsonl").read_text().splitlines()]
    rows = [{k: v for k, v in r.items() if k != "run"} for r in rows if r.get("repeat", 0) == 0]
    for n, r in enumerate(rows):
        r["confidence"] = 0.2 if r["item_id"] in wrong or n % 10 == 0 else 0.9
    f = write(tmp_path / "planted.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert cli("import", "judgments", f, "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet").exit_code == 0
    return rows


def test_a_cascade_export_carries_each_judges_threshold(cli, tmp_path):
    cli("demo", "--no-ui")
    rows = _plant_confidence(cli, tmp_path)
    flags = ("--selective", "--target-agreement", "0.93", "--risk", "0.1", "--cascade", "careful-sonnet,noisy-llama",
             "--resamples", "200")
    sel = json.loads(cli("calibrate", "-g", "demo", "-r", RUBRIC, *flags, "--json").output)["selective"]
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", *flags)
    assert r.exit_code == 0, r.output
    bundle = yaml.safe_load((tmp_path / BUNDLE).read_text())
    section = bundle["selective"]
    assert [{k: v for k, v in s.items() if k != "confusion"} for s in section["cascade"]] == sel["cascade"]
    assert [s["judge"] for s in section["cascade"]] == ["careful-sonnet", "noisy-llama"]
    assert section["cascade"][0]["confusion"] == section["confusion"]  # the first judge's, on the items it keeps
    # the thresholds are chosen jointly: the combined verdicts can afford a few of noisy-llama's (docs/selective.md)
    second = section["cascade"][1]
    assert sum(map(sum, second["confusion"]["matrix"])) == second["n_graded"] > 0
    first = section["cascade"][0]
    # planted: 0.9 keeps only agreeing items and passes; 0.2 (every item) brings the six misses in and fails
    assert first["threshold"] == section["threshold"] == 0.9
    n_high = sum(1 for r in rows if r["confidence"] == 0.9 and r["item_id"] in _resolved_ids(cli))
    assert first["share_of_items"] == pytest.approx(n_high / section["n_calibration"])
    assert sum(s["share_of_items"] for s in section["cascade"]) == pytest.approx(section["coverage"])
    assert section["coverage"] == pytest.approx(sel["coverage"]) and sel["guaranteed"]
    # the confusion grade corrects with is the first judge's, on the items it keeps: all agreeing
    matrix = section["confusion"]["matrix"]
    assert sum(map(sum, matrix)) == n_high == sum(matrix[i][i] for i in range(len(matrix)))
    assert cli("check", tmp_path / BUNDLE).exit_code == 0
    # the section is under the sha256: a changed threshold of the second judge is caught
    text = (tmp_path / BUNDLE).read_text()
    edited = yaml.safe_load(text)
    edited["selective"]["cascade"][1]["threshold"] = 0.01
    write(tmp_path / "edited.yaml", yaml.safe_dump(edited))
    r = cli("check", tmp_path / "edited.yaml")
    assert r.exit_code == 3 and "sha256" in r.output
    # a cascade that does not start with the exported judge is refused by name, before anything is computed
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "noisy-llama", "--selective", "--target-agreement", "0.9",
            "--risk", "0.1", "--cascade", "careful-sonnet,noisy-llama", "--out", tmp_path / "nowhere")
    assert r.exit_code != 0 and "--judge is 'noisy-llama' but the cascade starts with 'careful-sonnet'" in r.output
    assert not (tmp_path / "nowhere").exists()
    assert "--cascade works with --selective" in cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet",
                                                     "--cascade", "careful-sonnet,noisy-llama").output


def _resolved_ids(cli) -> set[str]:
    from workbench.calibration.golden_sets import consensus
    from workbench.store import Store

    with Store(cli.db) as s:
        return set(consensus(s, "demo", RUBRIC).resolved)


def test_the_card_says_the_guarantee_in_calibrates_sentence(cli, tmp_path):
    """`workbench report` with --selective (or a policy section) puts the guarantee's one sentence on the card, the
    same sentence `calibrate` prints, and its check in the card's verdict table; without either, no such section."""
    cli("demo", "--no-ui")
    flags = ("--selective", "--target-agreement", "0.85", "--risk", "0.1")
    said = json.loads(cli("calibrate", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--resamples", "200",
                          "--json", *flags).output)["selective"]["sentence"]
    card = tmp_path / "card.md"
    r = cli("report", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--format", "md", "--out", card,
            "--resamples", "200", *flags)
    assert r.exit_code == 0, r.output
    text = card.read_text()
    assert f"## Selective judging\n\n{said}\n" in text
    assert "| selective guarantee | passed |" in text
    # the policy's section asks for the same, without flags
    write(tmp_path / "rubrics" / "policy.yaml", "selective: {target_agreement: 0.85, risk: 0.1}\n")
    assert cli("report", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--format", "md", "--out",
               tmp_path / "policy.md", "--resamples", "200").exit_code == 0
    assert f"## Selective judging\n\n{said}\n" in (tmp_path / "policy.md").read_text()
    # neither: the card as before
    (tmp_path / "rubrics" / "policy.yaml").unlink()
    assert cli("report", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--format", "md", "--out",
               tmp_path / "plain.md", "--resamples", "200").exit_code == 0
    plain = (tmp_path / "plain.md").read_text()
    assert "Selective judging" not in plain and "selective guarantee" not in plain
    # a bad risk is refused by name, and no card is written
    r = cli("report", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--format", "md", "--out",
            tmp_path / "never.md", "--selective", "--target-agreement", "0.85", "--risk", "0.9")
    assert r.exit_code != 0 and "0.9" in r.output and not (tmp_path / "never.md").exists()


def test_compare_holds_each_judge_to_the_policys_guarantee(cli, tmp_path):
    """`workbench compare` of a rubric whose policy asks for a selective guarantee gives each judge the verdict
    `calibrate` gives it, the selective check included; without the section, the verdicts it gave before."""
    cli("demo", "--no-ui")
    compare = ("compare", "-g", "demo", "-r", RUBRIC, "--resamples", "200", "--json")
    before = {r["judge"]["id"]: r["verdict"] for r in json.loads(cli(*compare).output)["judges"]}
    assert all(c["id"] != "selective" for v in before.values() for c in v["checks"])
    write(tmp_path / "rubrics" / "policy.yaml", "selective: {target_agreement: 0.99, risk: 0.1}\n")
    after = {r["judge"]["id"]: r["verdict"] for r in json.loads(cli(*compare).output)["judges"]}
    for judge, verdict in after.items():
        alone = json.loads(cli("calibrate", "-g", "demo", "-r", RUBRIC, "-j", judge, "--resamples", "200",
                               "--json").output)["verdict"]
        assert verdict["checks"][-1]["id"] == "selective" and verdict == alone, judge
    # careful-sonnet passed every whole-set check; a target its labels cannot show now holds it back
    assert before["careful-sonnet"]["state"] == PASSED and after["careful-sonnet"]["state"] == UNDECIDED
