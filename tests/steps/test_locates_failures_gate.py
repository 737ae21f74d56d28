"""The gate's optional `locates_failures` check (docs/steps.md) in its three states, on the shared Who&When runs
with a judge that always blames the last step (step within 3: 0.28 of the 155 runs, by the files: 44 runs)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli, write
from tests.steps.shared import WHO_AND_WHEN, needs_data, runs
from tests.steps.test_calibrate_steps import rubric_with_judge
from workbench.core.errors import InputError
from workbench.core.policy import policy_from_dict

pytestmark = needs_data


@pytest.fixture(scope="module")
def last_step_judge(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("gate")
    cli = Cli(tmp_path / "w.db")
    assert cli("import", "items", "--from", "who-and-when", str(WHO_AND_WHEN), "-g", "ww").exit_code == 0
    rows = [{"item_id": f"ww-{f.split('/')[0].lower()}-{f.split('/')[1][:-5]}", "score": -1,
             "step": len(d["history"]) - 1} for f, d in runs().items()]
    write(tmp_path / "j.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    cli("rubric", "add", str(rubric_with_judge(tmp_path)))
    assert cli("import", "judgments", str(tmp_path / "j.jsonl"), "-g", "ww", "-r", "who-and-when-attribution",
               "-j", "planted").exit_code == 0
    within = {k: sum(abs(len(d["history"]) - 1 - int(d["mistake_step"])) <= k for d in runs().values())
              for k in (2, 3)}
    return cli, tmp_path, within


def check(cli, tmp_path, section) -> dict:
    write(tmp_path / "rubrics" / "policy.yaml", json.dumps({"locates_failures": section}))
    out = cli("calibrate", "-g", "ww", "-r", "who-and-when-attribution", "-j", "planted", "--json",
              "--resamples", "500")
    checks = {c["id"]: c for c in json.loads(out.output)["verdict"]["checks"]}
    return checks.get("locates_failures")


@pytest.mark.parametrize("bound, state", [(0.1, "passed"), (0.3, "undecided"), (0.6, "failed")])
def test_the_check_passes_fails_or_waits_by_the_lower_bound(last_step_judge, bound, state):
    cli, tmp_path, within = last_step_judge
    c = check(cli, tmp_path, {"within": 3, "min_lower_bound": bound})
    assert c["status"] == state, c["message"]
    assert c["value"] == pytest.approx(within[3] / 155, abs=1e-12)
    assert c["threshold"] == {"within": 3, "min_lower_bound": bound}
    if state == "undecided":
        assert c["more_items"] and "more labeled item" in c["message"]


def test_any_window_is_measured_for_the_check(last_step_judge):
    cli, tmp_path, within = last_step_judge
    c = check(cli, tmp_path, {"within": 2, "min_lower_bound": 0.05})
    assert c["status"] == "passed" and c["value"] == pytest.approx(within[2] / 155, abs=1e-12)


def test_without_the_section_there_is_no_check(last_step_judge):
    cli, tmp_path, _ = last_step_judge
    assert check(cli, tmp_path, None) is None


@pytest.mark.parametrize("section, said", [
    ({"within": -1, "min_lower_bound": 0.5}, "field 'locates_failures.within': must be a whole number of steps"),
    ({"within": 3, "min_lower_bound": 1.5}, "field 'locates_failures.min_lower_bound': must be a share"),
    ({"within": 3, "bound": 0.5}, "locates_failures.bound"),
])
def test_a_bad_section_is_refused_by_one_sentence(section, said):
    with pytest.raises(InputError) as e:
        policy_from_dict({"locates_failures": section})
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_without_marked_steps_the_check_is_undecided_and_says_what_to_do(demo_store):
    from workbench.calibration.calibrate import Options, calibrate
    from workbench.calibration.gate import evaluate

    report = calibrate(demo_store, "demo", "demo-patch-quality", "careful-sonnet", Options(resamples=200))
    assert report.steps is None  # the demo's labels mark no steps
    policy = policy_from_dict({"locates_failures": {"within": 1, "min_lower_bound": 0.5}}, base=report.policy)
    c = next(c for c in evaluate(report, policy).checks if c.id == "locates_failures")
    assert c.status == "undecided" and "Label steps on failing trajectories" in c.message
