"""Inspect AI: a real eval log made offline with the mockllm model and the model-graded scorer, then imported.

Offline, Inspect counts tokens with tiktoken's o200k_base encoding, which tiktoken would download; the
test registers a byte-level stand-in under that name first (token counts are not what is imported).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.interop.conftest import add_qa_rubric, calibrated
from workbench.core.errors import InputError

# the real tool runs here (seconds of set-up): in CI and `-m ""`, not in the quick loop
pytestmark = pytest.mark.slow

pytest.importorskip("inspect_ai", reason="pip install 'judge-workbench[inspect]'")

MAPS = """\
import_maps:
  model_graded_qa:
    categorical: {C: 0, I: -1}
"""
# Grades by sample: the mock grader answers by the sample's number, so the verdicts are known in advance.
GRADES = {f"q{i}": "C" if i % 3 else "I" for i in range(6)}
# Human edits of epoch 1 (author, sample, value): alice agrees with the grader on q0 and q1 and not on q2, q3;
# bob labels q0 and q1 as alice did.
EDITS = [("alice", "q0", GRADES["q0"]), ("alice", "q1", GRADES["q1"]),
         ("alice", "q2", "I" if GRADES["q2"] == "C" else "C"), ("alice", "q3", "I" if GRADES["q3"] == "C" else "C"),
         ("bob", "q0", GRADES["q0"]), ("bob", "q1", GRADES["q1"])]

MAKE_LOG = textwrap.dedent("""
    import sys
    import tiktoken.registry, tiktoken
    # offline stand-in for the encoding tiktoken would download (Inspect counts tokens with it)
    tiktoken.registry.ENCODINGS["o200k_base"] = tiktoken.Encoding(
        "o200k_base", pat_str=r"\\S+|\\s+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={})
    import json
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.log import ProvenanceData, edit_score, write_eval_log
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import ScoreEdit, model_graded_qa
    from inspect_ai.solver import generate

    grades, edits, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]

    def grader_outputs(input, tools, tool_choice, config):
        # the grading prompt quotes the task: answer by the sample's number
        text = input[-1].text
        sample = next(s for s in grades if f"What is {s[1:]}+{s[1:]}?" in text)
        return ModelOutput.from_content("mockllm/grader", f"GRADE: {grades[sample]}")

    dataset = [Sample(id=s, input=f"What is {s[1:]}+{s[1:]}?", target=str(2 * int(s[1:]))) for s in grades]
    task = Task(dataset=dataset, solver=generate(), scorer=model_graded_qa(), name="arith")
    grader = get_model("mockllm/grader", custom_outputs=grader_outputs)
    log = eval(task, model="mockllm/model", model_roles={"grader": grader}, log_dir=out, display="none",
               epochs=2)[0]
    assert log.status == "success", log.error
    for author, sample, value in edits:
        edit_score(log, sample, "model_graded_qa", ScoreEdit(value=value, provenance=ProvenanceData(
            author=author, reason=f"{author} checked the sum")), epoch=1)
    write_eval_log(log, f"{out}/arith.eval")
    write_eval_log(log, f"{out}/arith.json")
""")


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("inspect")
    # in a child process: the stand-in encoding and Inspect's own state stay out of the test process
    subprocess.run([sys.executable, "-c", MAKE_LOG, json.dumps(GRADES), json.dumps(EDITS), str(out)], check=True,
                   timeout=300)
    return out


def test_a_real_eval_log_becomes_items_labels_and_judgments_and_calibrates(logs, cli, store, tmp_path):
    add_qa_rubric(store, tmp_path, MAPS)
    r = cli("import", "--from", "inspect", logs / "arith.eval", "--golden-set", "qa", "--rubric", "qa")
    assert r.exit_code == 0, r.output
    assert "items: 6 read, 6 added" in r.output
    assert "labels: 6 read, 6 added or changed (raters: alice, bob)" in r.output
    judge = "inspect.model_graded_qa@grader"
    assert f"judgments of {judge} (imported/inspect/grader, added to the rubric): 12 read (0 unscored), 12 added" \
        in r.output

    again = cli("import", "--from", "inspect", logs / "arith.eval", "--golden-set", "qa", "--rubric", "qa")
    assert "6 added" not in again.output and "12 read (0 unscored), 0 added" in again.output
    assert "nothing new: golden set 'qa' already holds every item, label and judgment" in again.output

    report = calibrated(store, "qa", judge, tmp_path)
    # the judge's original letters (before the human edits), mapped C -> 0, I -> -1; epoch 1 is repeat 0
    assert report["judge"]["family"] == "mockllm"
    assert report["n_items"] == 4  # q0 to q3 carry labels
    assert report["metrics"]["exact_agreement"]["value"] == pytest.approx(0.5)  # alice disagrees on q2 and q3
    assert report["noise"]["repeats"] == 2 and report["noise"]["n_items"] == 6  # the two epochs of each sample
    assert report["noise"]["flip_rate"] == 0  # both epochs were graded alike


def test_items_carry_the_sample_the_trajectory_and_the_producer(logs, store, tmp_path):
    from workbench.calibration.golden_sets import load_items
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, MAPS)
    res = import_from(store, "inspect", str(logs / "arith.json"), "qa-json", "qa")  # the .json form too
    assert res.items_read == 6 and len(res.judges) == 1 and res.judges[0].read == 12
    item = {i.id: i for i in load_items(store, "qa-json")}["q4"]
    assert item.input == "What is 4+4?" and item.reference == "8" and item.category == "arith"
    assert item.producer.model == "model" and item.producer.family == "mockllm"
    assert [s["role"] for s in item.trajectory] == ["user", "assistant"]
    assert item.output == item.trajectory[-1]["content"]


def test_a_value_the_map_does_not_cover_names_the_record_and_nothing_lands(logs, store, tmp_path):
    from workbench.features.interop.service import import_from

    add_qa_rubric(store, tmp_path, "import_maps:\n  model_graded_qa:\n    categorical: {C: 0}\n")
    with pytest.raises(InputError) as e:
        import_from(store, "inspect", str(logs / "arith.eval"), "qa", "qa")
    message = str(e.value)
    assert message.startswith("inspect arith.eval record ") and "field scores.model_graded_qa" in message
    assert "value \"I\" of 'model_graded_qa' is not covered by its map" in message
    assert message.endswith("; add the value to the map.")
    assert store.golden_sets() == []  # nothing landed


def test_the_grader_is_the_scorers_model_else_the_grader_role_else_the_evals_model():
    from inspect_ai.log._log import EvalScorer  # not re-exported; the type of EvalSpec.scorers
    from inspect_ai.model import ModelConfig

    from workbench.features.interop.inspect_ai import _graders

    class Spec:  # the three fields of EvalSpec the adapter reads
        model = "mockllm/model"
        model_roles = {"grader": ModelConfig(model="anthropic/claude-sonnet-4-5")}
        scorers = [EvalScorer(name="own", options={"model": {"model": "openai/gpt-4o", "config": {}}}),  # as logged
                   EvalScorer(name="panel", options={"model": ["openai/gpt-4o", "google/gemini-2.5-pro"]}),
                   EvalScorer(name="role", options={})]

    assert _graders(Spec) == {None: "anthropic/claude-sonnet-4-5", "own": "openai/gpt-4o",
                              "panel": "openai/gpt-4o+google/gemini-2.5-pro", "role": "anthropic/claude-sonnet-4-5"}
    Spec.model_roles = None
    assert _graders(Spec)["role"] == "mockllm/model"
