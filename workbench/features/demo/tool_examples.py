"""Synthetic files for the README's examples: another eval tool's export (a promptfoo results file) and model runs
for the results board.

``examples/promptfoo/results.json`` is shaped as ``promptfoo eval -o results.json`` writes it (an ``OutputFile``
whose ``results.results[]`` are ``EvaluateResult`` rows), for 60 short arithmetic questions answered by one model:
each row carries an ``llm-rubric`` grade by a grader model (a 0-1 score, or promptfoo's grader error on a few
rows) and a reviewer's thumbs up or down given in promptfoo's viewer (a ``human`` component, as the viewer adds
it). ``rubrics/examples/qa-correctness.yaml`` maps both onto its scale. The grader is planted as a little lenient:
it passes a share of the wrong answers.

``examples/board/week-48.jsonl`` and ``week-49.jsonl`` are two weeks of runs for the results board: three models'
coding-agent trajectories (the demo's kind) on 8 tasks in 4 categories, two repeats each. In week 49 ``model-b``
is replaced by ``model-b2``, which fails most of the refactor tasks; the demo's Python grader (``test-results``)
reads each run's last test run. Seeded stdlib ``random``: the same bytes on every machine.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

PROMPTFOO_FILE = ("examples", "promptfoo", "results.json")
RUBRIC_FILE = ("rubrics", "examples", "qa-correctness.yaml")
N_QUESTIONS = 60
ANSWERER = "openai:gpt-4o-mini"
GRADER = "openai:gpt-4o"
REVIEWER = "dana@example.com"
SEED = 20261204

RUBRIC_YAML = """\
# A synthetic example for `workbench import --from promptfoo` (see workbench/features/demo/tool_examples.py): the grader's
# llm-rubric score and the reviewer's thumbs in promptfoo's viewer, both mapped onto this rubric's scale.
name: qa-correctness
title: The answer is correct
description: Grades a model's answer to a short question against the reference answer.
scale:
- {value: -1, label: wrong, description: The answer is wrong or missing.}
- {value: 0, label: correct, description: The answer is correct.}
pass_threshold: 0
instructions: Compare the answer with the reference; only the final number counts.
import_maps:
  llm-rubric: {cut_points: [0.5], levels: [-1, 0]}   # the grader's 0-1 score: below 0.5 is wrong
  human: {categorical: {1: 0, 0: -1}}                # the viewer's thumbs up (1) and down (0)
"""


def _row(n: int, rng: random.Random) -> dict[str, Any]:
    a, b = rng.randint(12, 99), rng.randint(12, 99)
    op, category = (("+", "addition"), ("*", "multiplication"))[n % 2]
    truth = a + b if op == "+" else a * b
    correct = rng.random() < 0.6
    answer = truth if correct else truth + rng.choice((-10, -1, 1, 10))
    question = f"What is {a} {op} {b}? Answer with the number only."
    if rng.random() < 0.05:  # the grader's reply could not be parsed: promptfoo's grader error
        grade = {"pass": False, "score": 0, "reason": "Could not extract JSON from llm-rubric response",
                 "metadata": {"graderError": True}}
    else:
        passes = correct or rng.random() < 0.3  # lenient on wrong answers
        score = round(rng.uniform(0.8, 1.0) if passes else rng.uniform(0.0, 0.3), 2)
        grade = {"pass": passes, "score": score,
                 "reason": "The answer matches the reference." if passes else "The answer differs from the reference."}
    grade |= {"assertion": {"type": "llm-rubric", "value": "The answer equals the reference number.",
                            "provider": GRADER},
              "tokensUsed": {"total": 190, "prompt": 160, "completion": 30}}
    human = {"pass": correct, "score": 1 if correct else 0,
             "reason": "Manual result (overrides all other grading results)",
             "comment": "" if correct else f"should be {truth}", "assertion": {"type": "human"}}
    return {
        "testIdx": n, "promptIdx": 0, "success": correct, "score": 1 if correct else 0, "latencyMs": rng.randint(300, 900),
        "provider": {"id": ANSWERER, "label": ""},
        "prompt": {"raw": question, "label": "{{question}}"},
        "vars": {"question": question},
        "testCase": {"description": category, "vars": {"question": question},
                     "assert": [{"type": "equals", "value": str(truth)},
                                {"type": "llm-rubric", "value": "The answer equals the reference number.",
                                 "provider": GRADER}]},
        "response": {"output": str(answer), "tokenUsage": {"total": 40, "prompt": 35, "completion": 5}},
        "gradingResult": {"pass": correct, "score": 1 if correct else 0, "reason": human["reason"],
                          "componentResults": [grade, human]},
    }


def promptfoo_results() -> dict[str, Any]:
    rng = random.Random(SEED)
    rows = [_row(n, rng) for n in range(N_QUESTIONS)]
    return {"evalId": "eval-synthetic-qa", "results": {"version": 3, "timestamp": "2026-11-20T10:00:00.000Z",
                                                       "results": rows},
            "config": {"description": "Synthetic arithmetic QA (workbench demo)", "prompts": ["{{question}}"],
                       "providers": [ANSWERER]},
            "metadata": {"author": REVIEWER, "promptfooVersion": "0.121.20"}}


BOARD_DIR = ("examples", "board")
BOARD_MODELS = (("model-a", "anthropic"), ("model-b", "openai"), ("model-c", "google"))
BOARD_TASKS = 8
BOARD_REPEATS = 2


def board_runs(week: int) -> list[dict[str, Any]]:
    """One week's runs: every model on every task, ``BOARD_REPEATS`` times; week 49 has model-b2 for model-b."""
    from workbench.features.demo.generator import CATEGORIES, SimItem, _trajectory

    rng = random.Random(SEED + week)
    rows = []
    for task in range(BOARD_TASKS):
        category = CATEGORIES[task % len(CATEGORIES)]
        for model, family in BOARD_MODELS:
            if week == 49 and model == "model-b":
                model = "model-b2"
            for repeat in range(BOARD_REPEATS):
                p_fail = 0.8 if model == "model-b2" and category == "refactor" else 0.2
                truth = -1 if rng.random() < p_fail else (1 if rng.random() < 0.3 else 0)
                task_id = f"task-{task:03d}"
                sim = SimItem(f"w{week}-{task_id}-{model}-r{repeat}", task_id, category, model, family, truth)
                text, steps, output = _trajectory(sim, rng)
                rows.append({"id": sim.id, "task_id": task_id, "category": category, "input": text,
                             "output": output, "trajectory": steps, "producer": {"model": model, "family": family},
                             "repeat": repeat, "metadata": {"synthetic": True, "week": week}})
    return rows


def write_tool_examples(root: Path) -> None:
    """examples/promptfoo/results.json, rubrics/examples/qa-correctness.yaml and examples/board/week-4*.jsonl under
    ``root``."""
    board = root.joinpath(*BOARD_DIR)
    board.mkdir(parents=True, exist_ok=True)
    for week in (48, 49):
        (board / f"week-{week}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in board_runs(week)),
            encoding="utf-8")
    out = root.joinpath(*PROMPTFOO_FILE)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(promptfoo_results(), indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    rubric = root.joinpath(*RUBRIC_FILE)
    rubric.parent.mkdir(parents=True, exist_ok=True)
    rubric.write_text(RUBRIC_YAML, encoding="utf-8")
