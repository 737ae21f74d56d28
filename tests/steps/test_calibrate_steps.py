"""`calibrate` measures a judge's steps against people's on the shared Who&When runs: the report's steps section
(and the gate's locates_failures check when the policy asks) agree with the statistics on the same arrays."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from tests.conftest import write
from tests.steps.shared import WHO_AND_WHEN, needs_data, runs
from workbench.features.steps.who_and_when import step_agent
from workbench.stats.steps import attribution

pytestmark = needs_data


def rubric_with_judge(tmp_path, gate: dict | None = None):
    from workbench.features.steps import who_and_when
    from importlib import resources
    data = yaml.safe_load((resources.files(who_and_when.__package__) / "who_and_when_rubric.yaml").read_text())
    data["judges"] = [{"id": "planted", "model": "python/none:none"}]
    if gate:
        data["gate"] = gate
    return write(tmp_path / "rubric.yaml", yaml.safe_dump(data))


@pytest.fixture
def ww(tmp_path, cli):  # the conftest's cli: SQLite, or Postgres with WORKBENCH_TEST_ENGINE=postgres
    assert cli("import", "items", "--from", "who-and-when", str(WHO_AND_WHEN), "-g", "ww").exit_code == 0
    data = runs()  # in the order the import lands them (folder, then run number): the bootstrap draws follow it
    data = dict(sorted(data.items(), key=lambda kv: (kv[0].split("/")[0], int(kv[0].split("/")[1][:-5]))))
    rng = np.random.default_rng(3)
    rows, h, j, n, clusters, agents, people = [], [], [], [], [], [], []
    for f, d in data.items():
        kind, stem = f.split("/")
        steps = len(d["history"])
        truth = int(d["mistake_step"])
        guess = truth if rng.random() < 0.4 else int(rng.integers(0, steps))
        rows.append({"item_id": f"ww-{kind.lower()}-{stem[:-5]}", "score": -1, "step": guess})
        h.append(truth), j.append(guess), n.append(steps), clusters.append(str(d["question_ID"]))
        agents.append([step_agent(s) for s in d["history"]]), people.append(d["mistake_agent"])
    write(tmp_path / "j.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    expected = attribution(h, j, n, clusters, human_agent=people, step_agents=agents, resamples=500, seed=0)
    return cli, tmp_path, expected


def test_calibrate_reports_the_judges_steps_against_the_people(ww):
    cli, tmp_path, expected = ww
    assert cli("rubric", "add", str(rubric_with_judge(tmp_path))).exit_code == 0
    done = cli("import", "judgments", str(tmp_path / "j.jsonl"), "-g", "ww", "-r", "who-and-when-attribution",
               "-j", "planted")
    assert done.exit_code == 0, done.output
    out = cli("calibrate", "-g", "ww", "-r", "who-and-when-attribution", "-j", "planted", "--json",
              "--resamples", "500")
    steps = json.loads(out.output)["steps"]
    assert (steps["n_items"], steps["n_human_steps"], steps["n_unresolved_steps"]) == (155, 155, 0)
    assert steps["humans"] is None  # one annotation a run: no people to compare with each other
    for group in ("all", "short", "long"):
        got, want = steps["judge"]["groups"][group], expected["groups"][group]
        assert got["n_items"] == want["n_items"] and got["n_clusters"] == want["n_clusters"]
        for m in ("exact", "within_1", "within_3", "agent", "offset"):
            for k in ("value", "ci_low", "ci_high"):
                assert got["judge"][m][k] == pytest.approx(want["judge"][m][k], abs=1e-12), (group, m, k)
    text = cli("calibrate", "-g", "ww", "-r", "who-and-when-attribution", "-j", "planted", "--resamples", "500")
    assert "Failure attribution" in text.output and "last step" in text.output


def test_the_calibration_card_shows_failure_attribution(ww):
    cli, tmp_path, expected = ww
    cli("rubric", "add", str(rubric_with_judge(tmp_path)))
    cli("import", "judgments", str(tmp_path / "j.jsonl"), "-g", "ww", "-r", "who-and-when-attribution", "-j", "planted")
    out = tmp_path / "card.md"
    done = cli("report", "-g", "ww", "-r", "who-and-when-attribution", "-j", "planted", "--format", "md",
               "--out", str(out), "--resamples", "500")
    assert done.exit_code == 0, done.output
    text = out.read_text()
    assert "## Failure attribution (where did it go wrong)" in text
    exact = expected["groups"]["all"]["judge"]["exact"]
    assert (f"| all | 155 | step exact | {exact['value']:.2f} ({exact['ci_low']:.2f} to {exact['ci_high']:.2f}) |"
            in text)
