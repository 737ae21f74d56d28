"""`grade` with a cascade bundle: what the first judge abstains on goes to the next judge with its own threshold
(its judgments from --cascade-judgments), the items no judge keeps are the abstained ones (and --queue's), and the
pass rate is corrected with the sum of the judges' confusion matrices on the items each kept.

The bundle here is the real cascade export with the second judge's threshold planted lower (0.6, so that more of
the 40 graded items reach it) and the export recorded as the workbench records its own: grading is what is tested,
the thresholds' choice is tested in test_policy_and_gate.py and test_cascade_choice.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tests.conftest import DEMO_DIR, write
from tests.selective.test_policy_and_gate import BUNDLE, RUBRIC, _plant_confidence


def _planted_bundle(cli, tmp_path, first: float | None = 0.9) -> dict:
    from workbench.core.hashing import sha256_hex
    from workbench.features.export.records import Bundle
    from workbench.store import Store

    data = yaml.safe_load((tmp_path / BUNDLE).read_text())
    stages = data["selective"]["cascade"]
    assert stages[1]["threshold"] == 1.0  # the real choice (test_policy_and_gate.py)
    stages[1]["threshold"] = 0.6
    if first is None:  # a cascade that skips its first judge
        stages[0]["threshold"] = data["selective"]["threshold"] = None
    stages[1]["confusion"] = {"labels": [-1, 0, 1], "matrix": [[3, 1, 0], [0, 2, 1], [1, 0, 4]]}
    bundle = Bundle.from_json(data)
    bundle = bundle.but(sha256=sha256_hex(bundle.content()))
    path = write(tmp_path / "cascade.yaml", yaml.safe_dump(bundle.to_json()))
    with Store(cli.db) as s:
        [row] = [e for e in s.exports() if e["sha256"] == data["sha256"]]
        s.record_export(str(path), bundle.sha256, row["rubric_id"], row["judge_pk"], row["golden_set_version_id"])
    return bundle.to_json()


def test_a_cascade_bundle_routes_what_one_judge_abstains_on_to_the_next(cli, tmp_path):
    cli("demo", "--no-ui")
    rows = _plant_confidence(cli, tmp_path)
    r = cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement", "0.93",
            "--risk", "0.1", "--cascade", "careful-sonnet,noisy-llama", "--resamples", "200")
    assert r.exit_code == 0, r.output
    bundle = _planted_bundle(cli, tmp_path)
    items = [json.loads(line) for line in (DEMO_DIR / "items.jsonl").read_text().splitlines()[:40]]
    ids = [i["id"] for i in items]
    first = {r["item_id"]: r for r in rows if r["item_id"] in ids}
    noisy = {}
    for line in (DEMO_DIR / RUBRIC / "judgments" / "noisy-llama.jsonl").read_text().splitlines():
        d = json.loads(line)
        if d.get("repeat", 0) == 0 and d["item_id"] in ids:
            d.pop("run", None)
            noisy[d["item_id"]] = {**d, "confidence": 1.0 if ids.index(d["item_id"]) % 3 == 0 else 0.3}
    f_items = write(tmp_path / "new_items.jsonl", "".join(json.dumps(i) + "\n" for i in items))
    f_first = write(tmp_path / "first.jsonl", "".join(json.dumps(first[i]) + "\n" for i in ids))
    f_noisy = write(tmp_path / "noisy.jsonl", "".join(json.dumps(noisy[i]) + "\n" for i in ids))
    # without the second judge's judgments: said plainly, nothing written
    r = cli("grade", "--bundle", tmp_path / "cascade.yaml", "--items", f_items, "--judgments", f_first,
            "--queue", "to-review")
    assert r.exit_code != 0 and "sends what 'careful-sonnet' abstains on to 'noisy-llama', whose judgments are not " \
        "given; add --cascade-judgments noisy-llama=FILE" in r.output
    assert not (tmp_path / "reports").exists() and "to-review" not in cli("golden-set", "list").output
    r = cli("grade", "--bundle", tmp_path / "cascade.yaml", "--items", f_items, "--judgments", f_first,
            "--cascade-judgments", f"noisy-llama={f_noisy}", "--queue", "to-review", "--json", "--resamples", "300")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.split("\nPer-item results")[0])
    by_first = [i for i in ids if first[i]["confidence"] >= 0.9]
    by_noisy = [i for i in ids if i not in by_first and noisy[i]["confidence"] >= 0.6]
    expected = [i for i in ids if i not in by_first and i not in by_noisy]
    assert by_first and by_noisy and expected  # planted so that each path is taken
    assert out["abstained_ids"] == expected and out["n_abstained"] == len(expected)
    assert out["selective"]["cascade"] == [{"judge": "careful-sonnet", "threshold": 0.9, "n_graded": len(by_first)},
                                           {"judge": "noisy-llama", "threshold": 0.6, "n_graded": len(by_noisy)}]
    graded = {g["item_id"]: g for g in (json.loads(line) for line in
                                         (tmp_path / "reports" / "new_items.graded.jsonl").read_text().splitlines())}
    assert set(graded) == set(by_first) | set(by_noisy)
    for i in by_first:
        assert graded[i]["judge"] == "careful-sonnet" and graded[i]["score"] == first[i]["score"]
    for i in by_noisy:
        assert graded[i]["judge"] == "noisy-llama" and graded[i]["score"] == noisy[i]["score"]
    assert out["raw_pass_rate"]["value"] == pytest.approx(np.mean([g["pass"] for g in graded.values()]))
    # corrected with the two matrices summed
    from workbench.stats import golden_pass_arrays

    summed = np.array(bundle["selective"]["confusion"]["matrix"]) + np.array([[3, 1, 0], [0, 2, 1], [1, 0, 4]])
    human, judge = golden_pass_arrays(summed, scale=[-1, 0, 1], pass_threshold=0)
    assert out["selective"]["corrected_with"] == "confusion on the cascade's kept items"
    assert out["tpr"] == pytest.approx(judge[human].mean()) and out["tnr"] == pytest.approx((~judge[~human]).mean())
    assert f"to-review\t{len(expected)} items" in cli("golden-set", "list").output
    # the text output says who graded what
    text = cli("grade", "--bundle", tmp_path / "cascade.yaml", "--items", f_items, "--judgments", f_first,
               "--cascade-judgments", f"noisy-llama={f_noisy}", "--resamples", "300").output
    assert (f"abstained on {len(expected)} of 40 items ({len(expected) / 40:.0%}: no judge of the cascade kept them: "
            f"careful-sonnet graded {len(by_first)} (>= 0.9), noisy-llama graded {len(by_noisy)} (>= 0.6))") in text
    # a file for a judge the cascade does not have, or the option malformed: refused by name
    r = cli("grade", "--bundle", tmp_path / "cascade.yaml", "--items", f_items, "--judgments", f_first,
            "--cascade-judgments", f"lenient-mini={f_noisy}")
    assert r.exit_code != 0 and "names judge 'lenient-mini', which is not a later judge" in r.output
    r = cli("grade", "--bundle", tmp_path / "cascade.yaml", "--items", f_items, "--cascade-judgments", "noisy")
    assert r.exit_code != 0 and "option --cascade-judgments must be JUDGE=FILE, got noisy" in r.output


def test_run_here_each_judge_of_the_cascade_grades_only_what_reaches_it(cli, tmp_path):
    """Without --judgments the judges are run (here a scripted stand-in for the provider): the second judge is
    asked about exactly the items the first abstained on."""
    from workbench.core.models import Judgment
    from workbench.features.grading.service import grade
    from workbench.store import Store

    cli("demo", "--no-ui")
    _plant_confidence(cli, tmp_path)
    assert cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement",
               "0.93", "--risk", "0.1", "--cascade", "careful-sonnet,noisy-llama", "--resamples", "200").exit_code == 0
    _planted_bundle(cli, tmp_path)
    items = [json.loads(line) for line in (DEMO_DIR / "items.jsonl").read_text().splitlines()[:12]]
    f_items = write(tmp_path / "new_items.jsonl", "".join(json.dumps(i) + "\n" for i in items))
    asked: dict[str, list[str]] = {}
    n = {i["id"]: k for k, i in enumerate(items)}

    def scripted(batch, rubric, spec):
        asked[spec.id] = [it.id for it in batch]
        conf = (lambda k: 0.95 if k % 2 else 0.1) if spec.id == "careful-sonnet" else (lambda k: 0.7 if k % 4 == 0
                                                                                         else 0.2)
        return [Judgment(item_id=it.id, score=1, confidence=conf(n[it.id])) for it in batch]

    with Store(cli.db) as s:
        out = grade(s, tmp_path / "cascade.yaml", f_items, judge_items=scripted, resamples=200, out=None)
    ids = [i["id"] for i in items]
    assert asked["careful-sonnet"] == ids
    assert asked["noisy-llama"] == [i for k, i in enumerate(ids) if k % 2 == 0]  # what careful abstained on
    assert out["abstained_ids"] == [i for k, i in enumerate(ids) if k % 2 == 0 and k % 4 != 0]
    assert [s["n_graded"] for s in out["selective"]["cascade"]] == [6, 3]


def test_a_judge_the_cascade_skips_is_not_run(cli, tmp_path):
    """A cascade whose first judge has no threshold (skipped: no cascade beat the second judge alone) sends every
    item to the second judge; the first is never asked, and no judgments of it are needed."""
    from workbench.core.models import Judgment
    from workbench.features.grading.service import grade
    from workbench.store import Store

    cli("demo", "--no-ui")
    _plant_confidence(cli, tmp_path)
    assert cli("export", "-g", "demo", "-r", RUBRIC, "-j", "careful-sonnet", "--selective", "--target-agreement",
               "0.93", "--risk", "0.1", "--cascade", "careful-sonnet,noisy-llama", "--resamples", "200").exit_code == 0
    _planted_bundle(cli, tmp_path, first=None)
    items = [json.loads(line) for line in (DEMO_DIR / "items.jsonl").read_text().splitlines()[:8]]
    f_items = write(tmp_path / "new_items.jsonl", "".join(json.dumps(i) + "\n" for i in items))
    asked: dict[str, list[str]] = {}

    def scripted(batch, rubric, spec):
        asked[spec.id] = [it.id for it in batch]
        return [Judgment(item_id=it.id, score=1, confidence=0.7 if k % 2 else 0.1) for k, it in enumerate(batch)]

    with Store(cli.db) as s:
        out = grade(s, tmp_path / "cascade.yaml", f_items, judge_items=scripted, resamples=200, out=None)
    ids = [i["id"] for i in items]
    assert asked == {"noisy-llama": ids}  # careful-sonnet is skipped: not run
    assert [st["n_graded"] for st in out["selective"]["cascade"]] == [0, 4]
    assert out["abstained_ids"] == ids[0::2]
