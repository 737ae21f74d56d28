"""Round trip: the exported judge runs in the tool itself, and `workbench check` vouches for exactly that file.

Inspect AI: the exported scorer module grades a few samples in a real `inspect_ai.eval` with the `mockllm`
model scripted as the grader (in a child process, as the import tests do: offline, Inspect counts tokens with
tiktoken's o200k_base encoding, which tiktoken would download, so a byte-level stand-in is registered first).
MLflow: the written judge is loaded by the real mlflow (`Scorer.model_validate`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
import yaml

from tests.interop_export.conftest import export_to, run_check

RUN_SCORER = textwrap.dedent("""
    import importlib.util, json, sys
    import tiktoken, tiktoken.registry
    tiktoken.registry.ENCODINGS["o200k_base"] = tiktoken.Encoding(
        "o200k_base", pat_str=r"\\S+|\\s+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={})
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model

    module_file, replies, log_dir = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
    spec = importlib.util.spec_from_file_location("exported_scorer", module_file)
    scorer_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer_module)
    seen = []

    def grader(input, tools, tool_choice, config):  # answers by the sample's task, and keeps what it was sent
        seen.append({"system": input[0].text, "user": input[-1].text, "temperature": config.temperature,
                     "max_tokens": config.max_tokens})
        task = next(t for t in replies if f"Fix bug {t}" in input[-1].text)
        return ModelOutput.from_content("mockllm/grader", replies[task])

    dataset = [Sample(id=t, input=f"Fix bug {t}", target="") for t in replies]
    model = get_model("mockllm/grader", custom_outputs=grader,
                      config=scorer_module.GenerateConfig(temperature=scorer_module.TEMPERATURE,
                                                          max_tokens=scorer_module.MAX_TOKENS))
    log, = inspect_eval(Task(dataset=dataset, scorer=scorer_module.workbench_judge(model=model)),
                        model="mockllm/model", log_dir=log_dir, display="none")
    scores = {s.id: {"value": s.scores["workbench_judge"].value,
                     "explanation": s.scores["workbench_judge"].explanation,
                     "metadata": s.scores["workbench_judge"].metadata} for s in log.samples}
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    print(json.dumps({"status": log.status, "scores": scores, "metrics": metrics, "seen": seen,
                      "system_prompt": scorer_module.SYSTEM_PROMPT}, default=str))
""")






@pytest.mark.slow  # a real Inspect eval in a child process (about 15 s of CPU)
def test_exported_inspect_scorer_grades_with_the_approved_prompt(approved, tmp_path):
    pytest.importorskip("inspect_ai", reason="pip install 'judge-workbench[inspect]'")
    module = export_to(approved, "inspect")
    replies = {
        "a": json.dumps({"rationale": "the final test run fails at step 3", "evidence_steps": [3], "score": -1}),
        "b": json.dumps({"rationale": "done, tests pass", "evidence_steps": [], "score": 0}),
        "c": "```json\n" + json.dumps({"rationale": "regression test added", "evidence_steps": [], "score": 1})
             + "\n```",
        "d": "Looks fine to me.",  # not a verdict: unscored, never a score
        "e": json.dumps({"rationale": "too good", "evidence_steps": [], "score": 2}),  # off the scale: unscored
    }
    out = subprocess.run([sys.executable, "-c", RUN_SCORER, str(module), json.dumps(replies), str(tmp_path / "logs")],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == "success"
    scores = result["scores"]
    assert [scores[k]["value"] for k in "abc"] == [-1, 0, 1]
    assert scores["a"]["explanation"] == "the final test run fails at step 3"
    assert scores["a"]["metadata"]["passed"] is False and scores["b"]["metadata"]["passed"] is True
    assert scores["a"]["metadata"]["bundle_sha256"] == "sha256:" + yaml.safe_load(approved.bundle.read_text())["sha256"]
    assert scores["d"]["explanation"].startswith("unparseable: reply is not a JSON verdict")
    assert scores["e"]["explanation"].startswith("off_scale: 2")
    # metrics over the three scored samples only: mean of -1, 0, 1 and two of three passing
    assert result["metrics"]["mean"] == pytest.approx(0.0)
    assert result["metrics"]["pass_rate"] == pytest.approx(2 / 3)
    # the grader got the approved rubric as its system prompt, each item inside the tagged data block,
    # at the approved temperature and token limit
    assert len(result["seen"]) == 5
    for sent in result["seen"]:
        assert sent["system"] == result["system_prompt"]
        assert "Read the trajectory, check the final test run" in sent["system"]
        assert re.search(r"<<<ITEM [0-9a-f]{32}>>>\n## Task given to the AI system\nFix bug \w", sent["user"])
        assert sent["temperature"] == 0.0 and sent["max_tokens"] == 800
    # the log imports back with no map (the scores declare their scale), the unscored samples unscored
    from click.testing import CliRunner

    from workbench.cli import main

    log, = (tmp_path / "logs").glob("*.eval")
    r = CliRunner().invoke(main, ["import", "--from", "inspect", str(log), "-g", "back", "-r", "demo-patch-quality",
                                  "--db", str(approved.db), "--project", str(approved.db.parent)])
    assert r.exit_code == 0, r.output
    back = dict(approved.store.conn.execute(
        "SELECT i.item_id, coalesce(j.score, j.unscored_reason) FROM judgments j JOIN items i ON i.pk = j.item_pk "
        "JOIN golden_sets g ON g.id = i.golden_set_id WHERE g.name = 'back'").fetchall())
    assert [back[k] for k in "abc"] == [-1, 0, 1]
    assert back["d"].startswith("unparseable") and back["e"].startswith("off_scale")
    # and check vouches for this very file, and for no edit of it
    assert run_check(approved, "--judge-config", module)[0].exit_code == 0
    edited = module.with_name("edited_scorer.py")
    edited.write_text(module.read_text().replace("TEMPERATURE = 0.0", "TEMPERATURE = 0.9"))
    assert run_check(approved, "--judge-config", edited)[0].exit_code == 3


def test_exported_mlflow_judge_loads_in_mlflow(approved):
    pytest.importorskip("mlflow.genai", reason="pip install 'judge-workbench[mlflow]'")
    from typing import Literal, get_args

    from mlflow.genai.scorers import Scorer

    path = export_to(approved, "mlflow")
    data = json.loads(path.read_text())
    judge = Scorer.model_validate(data["mlflow_scorer"])
    assert judge.model == "anthropic:/claude-sonnet-4-5-20250929"
    assert judge.instructions.startswith("You are a careful, impartial grader.")
    assert "{{ inputs }}" in judge.instructions and "{{ outputs }}" in judge.instructions
    assert get_args(judge.feedback_value_type) == get_args(Literal[-1, 0, 1])
    assert judge._inference_params == {"temperature": 0.0, "max_tokens": 800}
    bundle_sha = yaml.safe_load(approved.bundle.read_text())["sha256"]
    assert bundle_sha in judge.description and data["workbench"]["bundle_sha256"] == "sha256:" + bundle_sha
    # what mlflow would serialize again is what was written (nothing dropped on the way in)
    again = judge.model_dump()["instructions_judge_pydantic_data"]
    assert again["instructions"] == data["mlflow_scorer"]["instructions_judge_pydantic_data"]["instructions"]
    assert again["model"] == data["mlflow_scorer"]["instructions_judge_pydantic_data"]["model"]
    assert run_check(approved, "--judge-config", path)[0].exit_code == 0


def test_agentic_and_python_judges_are_refused_by_name(approved):
    from click.testing import CliRunner

    from workbench.cli import main
    from workbench.features.export.records import Bundle
    from workbench.features.export.tool_files import ApprovedJudge, ExportRefused, render

    r = CliRunner().invoke(main, ["export", "-g", "demo", "-r", "demo-patch-quality", "-j", "careful-sonnet", "--to",
                                  "promptfoo", "--resamples", "300", "--db", str(approved.db), "--project",
                                  str(approved.db.parent)], catch_exceptions=False)
    assert r.exit_code == 1
    assert "Exported" in r.stdout  # the bundle itself is approved and written
    assert "judge 'careful-sonnet' is agentic" in r.stderr and "calibrate a single-mode judge" in r.stderr
    bundle = yaml.safe_load(approved.bundle.read_text())
    bundle["judge"]["config"]["model"] = "python/workbench.features.demo.graders:test_results"
    with pytest.raises(ExportRefused, match="is a Python grader .* not a model: inspect cannot run it"):
        render(ApprovedJudge.from_bundle(Bundle.from_json(bundle), approved.bundle.name), "inspect")


def test_export_is_deterministic(approved):
    for target in ("promptfoo", "inspect", "mlflow"):
        first = export_to(approved, target).read_bytes()
        assert export_to(approved, target).read_bytes() == first
