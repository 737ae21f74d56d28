"""Judges name the decisive error step of a failing verdict when the rubric asks for failure attribution (a
criterion `attribution`): the single-call reply format and the agentic judge's verdict tool, over real HTTP to the
loopback server, into the store; calibrate then measures them."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli, write
from tests.judges.loopback_server import LoopbackServer
from workbench.core.models import Criterion, Rubric
from workbench.judges.prompting import asks_for_step, parse_verdict, verdict_schema

RUBRIC = """name: attribution
criteria:
  - id: outcome
    description: The run reaches the right answer.
  - id: attribution
    description: For a failing run, the decisive error step and its agent.
judges:
  - id: loop-single
    model: openai-api/loopback/loop-model
  - id: loop-agentic
    model: openai-api/loopback/loop-model
    mode: agentic
"""


def run_item(n: int, marker: str) -> dict:
    return {"id": f"r{n}", "task_id": f"task{n % 3}", "input": f"Find it. ITEM-MARKER r{n} {marker}",
            "trajectory": [{"role": "assistant", "name": ("WebSurfer", "Orchestrator")[k % 2],
                            "content": f"step {k}"} for k in range(6)]}


ITEMS = [run_item(0, "EXPECT-SCORE -1 EXPECT-STEP 3 EXPECT-AGENT Orchestrator"),
         run_item(1, "EXPECT-SCORE -1 EXPECT-STEP 2"),
         run_item(2, "EXPECT-SCORE 0 EXPECT-STEP 1"),   # a pass blames nothing
         run_item(3, "EXPECT-SCORE -1 EXPECT-STEP 9")]  # not a step of the run: dropped, the score stands


@pytest.mark.parametrize("judge", ["loop-single", "loop-agentic"])
def test_a_loopback_judge_returns_steps_that_land_and_are_measured(tmp_path, monkeypatch, judge):
    cli = Cli(tmp_path / "w.db")
    assert cli("rubric", "add", str(write(tmp_path / "r.yaml", RUBRIC))).exit_code == 0
    assert cli("import", "items", str(write(tmp_path / "i.jsonl", "".join(json.dumps(i) + "\n" for i in ITEMS))),
               "-g", "g").exit_code == 0
    labels = [{"item_id": "r0", "rater": "ana", "score": -1, "step": 3}, {"item_id": "r1", "rater": "ana",
                                                                          "score": -1, "step": 4}]
    assert cli("import", "labels", str(write(tmp_path / "l.jsonl", "".join(json.dumps(x) + "\n" for x in labels))),
               "-g", "g", "-r", "attribution", "--new-raters").exit_code == 0
    with LoopbackServer() as server:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        done = cli("judge", "run", "-g", "g", "-r", "attribution", "-j", judge)
        assert done.exit_code == 0, done.output
    from workbench.store import Store
    with Store(tmp_path / "w.db") as s:
        got = {r[0]: r[1:] for r in s.conn.execute(
            "SELECT i.item_id, j.score, j.step, j.agent FROM judgments j JOIN items i ON i.pk = j.item_pk")}
    assert got == {"r0": (-1, 3, "Orchestrator"), "r1": (-1, 2, None), "r2": (0, None, None), "r3": (-1, None, None)}
    out = json.loads(cli("calibrate", "-g", "g", "-r", "attribution", "-j", judge, "--json",
                         "--resamples", "200").output)
    steps = out["steps"]
    assert (steps["n_items"], steps["n_judge_steps"]) == (2, 2)
    judged = steps["judge"]["groups"]["all"]["judge"]
    assert judged["exact"]["value"] == 0.5 and judged["within_3"]["value"] == 1.0
    assert judged["offset"]["value"] == pytest.approx((0 + (2 - 4)) / 2)
    # r1's judge named no agent: its step's agent (step 2: WebSurfer) stands for it, as the people's does
    assert judged["agent"]["value"] == pytest.approx(1.0)


def test_only_a_rubric_that_asks_gets_the_step_in_its_reply_format():
    plain = Rubric(name="plain")
    asking = Rubric(name="asking", criteria=(Criterion("attribution", "where it went wrong"),))
    assert not asks_for_step(plain) and "step" not in verdict_schema(plain)["properties"]
    schema = verdict_schema(asking)
    assert asks_for_step(asking) and schema["required"][-2:] == ["step", "agent"]
    v = parse_verdict({"rationale": "", "evidence_steps": [], "score": -1, "step": "4", "agent": " Coder "},
                      asking, n_steps=5)
    assert (v.score, v.step, v.agent) == (-1, 4, "Coder")
    assert parse_verdict({"rationale": "", "evidence_steps": [], "score": -1, "step": True}, asking).step is None
