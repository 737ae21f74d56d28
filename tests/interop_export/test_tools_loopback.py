"""Round trip through the tools themselves, against an OpenAI-compatible endpoint (issue 29, items 7 and 8).

A judge of an `openai-api/loopback/...` model is calibrated and approved here: the workbench runs it against a
loopback server started by the test (`LoopbackServer`), the pair passes the gate, and its bundle is exported
`--to promptfoo|inspect|mlflow`. Each exported file then runs UNCHANGED in its tool (promptfoo 0.121.20 from
.ci/node, `inspect_ai.eval`, `mlflow.genai.evaluate`), graded by the same loopback model, and:

- gives the workbench's own verdict on every item (promptfoo's 0..1 score read with the lowest level at 0 and the
  highest at 1);
- sent prompts holding the rubric's instructions and the item's task and output, and no template placeholder
  left unrendered: asserted on the request bodies the loopback server received;
- writes results that `workbench import --from TOOL FILE -g G -r R` reads back with no --map (the exported file
  carries the scale), to the same verdict per item.

The loopback model follows the reply format each prompt asks for (promptfoo's llm-rubric JSON with its 0..1
mapping, MLflow's {"result", "rationale"}), reading the level from the item's `EXPECT-SCORE n` marker: the
verdict a tool records is the level the server chose only if the tool sent the item and read the reply right.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from workbench.features.demo.loopback_server import LoopbackServer

HERE = Path(__file__).parent
PROMPTFOO = Path(os.environ.get("WORKBENCH_PROMPTFOO", ROOT / ".ci" / "node" / "node_modules" / ".bin" / "promptfoo"))
N_ITEMS = 60  # enough for the gate (50 with a consensus label)
TOOL_ITEMS = [f"i{n}" for n in range(9)]  # the items each tool grades: three of each level
RUBRIC = """name: loop-rubric
scale:
  - {value: -1, label: bad}
  - {value: 0, label: ok}
  - {value: 1, label: good}
pass_threshold: 0
instructions: Check that the patch fixes the bug named in the task and that the tests run.
judges:
  - id: loop
    model: openai-api/loopback/loop-model
    mode: single
    temperature: 0.0
    max_tokens: 800
"""
INSTRUCTIONS = "Check that the patch fixes the bug named in the task and that the tests run."
PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\$\{\w+\}|\{(item|output|input|task|rubric|reference)\}")


def task_of(n: int) -> str:
    return f"Fix bug {n} in the parser. ITEM-MARKER i{n}"


def output_of(n: int) -> str:
    return f"patched the parser for bug {n}; EXPECT-SCORE {n % 3 - 1}"


class ReplyFormatServer(LoopbackServer):
    """The loopback model, answering in the reply format the prompt asks for, and keeping every request."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.bodies = deque()

    def _completion(self, body: dict, key: str) -> dict:
        reply = super()._completion(body, key)
        message = reply["choices"][0]["message"]
        if message.get("content") is None:
            return reply
        level = json.loads(message["content"])["score"]
        system = next((m["content"] for m in body.get("messages", ()) if m.get("role") == "system"), "")
        system = system if isinstance(system, str) else json.dumps(system)
        mapped = re.search(r'the level mapped as (.*?)>, "pass"' , system)
        if '"level"' in system and mapped:  # the exported promptfoo grading prompt
            scale = dict(re.findall(r"([+-]?\d+) -> ([\d.]+)", mapped.group(1)))
            threshold = int(re.search(r"when the level is ([+-]?\d+) or higher", system).group(1))
            message["content"] = json.dumps({"reason": f"loopback verdict for {key}", "level": level,
                                             "score": float(scale[str(level)]), "pass": level >= threshold})
        elif '"result"' in system or '"result"' in json.dumps(body.get("response_format") or {}):  # MLflow
            message["content"] = json.dumps({"result": level, "rationale": f"loopback verdict for {key}"})
        return reply


@dataclass
class Workspace:
    root: Path
    db: Path
    bundle: Path
    verdicts: dict[str, int]  # the workbench's own judge run: item task -> score

    def cli(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(self.db), "--project",
                               str(self.root), *map(str, args)], capture_output=True, text=True, cwd=self.root,
                              env=env, timeout=300)


def verdicts_in(db: Path, golden_set: str) -> dict[str, int | None]:
    """Each judged item's task, and the score of its latest judgment in the golden set."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT json_extract(i.content, '$.input'), j.score FROM judgments j "
                         "JOIN items i ON i.pk = j.item_pk JOIN golden_sets g ON g.id = i.golden_set_id "
                         "WHERE g.name = ? ORDER BY j.id", (golden_set,)).fetchall()
    return {task: score for task, score in rows}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("loop")
    (root / "r.yaml").write_text(RUBRIC)
    (root / "items.jsonl").write_text("".join(json.dumps(
        {"id": f"i{n}", "input": task_of(n), "output": output_of(n), "producer": {"model": "m", "family": "openai"}})
        + "\n" for n in range(N_ITEMS)))
    (root / "labels.jsonl").write_text("".join(json.dumps({"item_id": f"i{n}", "rater": r, "score": n % 3 - 1})
                                               + "\n" for n in range(N_ITEMS) for r in ("ana", "ben", "cy")))
    ws = Workspace(root, root / "w.db", root / "rubrics" / "approved" / "loop-rubric@v1--loop.yaml", {})
    for args in (["rubric", "add", "r.yaml"], ["import", "items", "items.jsonl", "-g", "g"],
                 ["import", "labels", "--new-raters", "labels.jsonl", "-g", "g", "-r", "loop-rubric"]):
        assert ws.cli(*args).returncode == 0
    with LoopbackServer() as server:
        out = ws.cli("judge", "run", "-g", "g", "-r", "loop-rubric", "-j", "loop", env={**os.environ, **server.env()})
        assert out.returncode == 0, out.stderr
    out = ws.cli("export", "-g", "g", "-r", "loop-rubric", "-j", "loop", "--resamples", "300")
    assert out.returncode == 0, out.stderr
    ws.verdicts = verdicts_in(ws.db, "g")
    assert len(ws.verdicts) == N_ITEMS and set(ws.verdicts.values()) == {-1, 0, 1}
    return ws


def export_file(ws: Workspace, target: str, out: Path) -> Path:
    r = ws.cli("export", "--bundle", ws.bundle, "--to", target, "--out", out)
    assert r.returncode == 0, r.stderr
    path = ws.root / re.search(r"Wrote (\S+) \(", r.stdout).group(1)
    check = ws.cli("check", ws.bundle, "--judge-config", path)  # the file run is the one check vouches for
    assert check.returncode == 0, check.stdout + check.stderr
    return path


def assert_prompts_sent(bodies, n: int, allowed: set[str] = frozenset()) -> None:
    """Every request holds the rubric's instructions and one item's task and output, and no placeholder (but the
    tool's own ``allowed`` ones in its system message, when the values are sent too)."""
    assert len(bodies) == n, [(re.findall(r"ITEM-MARKER i\d+", json.dumps(b)), b["messages"][0]["content"][:60]) for b in bodies]
    for body in bodies:
        text = "\n".join(m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
                         for m in body["messages"])
        assert INSTRUCTIONS in text
        k = int(re.search(r"ITEM-MARKER i(\d+)", text).group(1))
        assert task_of(k) in text and output_of(k) in text
        left = [m.group(0) for m in PLACEHOLDER.finditer(text)]
        assert set(left) <= allowed, left
        for kept in set(left):  # only in the system message
            assert kept not in "\n".join(m["content"] for m in body["messages"] if m["role"] != "system")


def import_back(ws: Workspace, source: str, path: Path, golden_set: str) -> dict[str, int | None]:
    r = ws.cli("import", "--from", source, path, "-g", golden_set, "-r", "loop-rubric")
    assert r.returncode == 0, r.stderr
    again = ws.cli("import", "--from", source, path, "-g", golden_set, "-r", "loop-rubric")
    assert again.returncode == 0 and "nothing new" in again.stdout, again.stdout + again.stderr
    return verdicts_in(ws.db, golden_set)


@pytest.mark.slow
def test_promptfoo_runs_the_exported_config_and_its_results_come_back(workspace, tmp_path):
    if not PROMPTFOO.exists():
        pytest.skip(f"promptfoo is not installed at {PROMPTFOO} (.ci/run installs it)")
    exported = export_file(workspace, "promptfoo", tmp_path)
    shutil.copy(HERE / "promptfoo" / "output_of_vars.py", tmp_path / "output_of_vars.py")
    # The exported config unchanged; the team's system (-r) and tests (-t) given beside it
    tests = [{"vars": {"task": task_of(int(i[1:])), "output": output_of(int(i[1:]))}} for i in TOOL_ITEMS]
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests))
    with ReplyFormatServer() as server:
        env = {**os.environ, **server.env(), "HOME": str(tmp_path), "PROMPTFOO_PYTHON": sys.executable,
               "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1"}
        out = subprocess.run([str(PROMPTFOO), "eval", "-c", str(exported), "-t", "tests.yaml", "-r", "file://output_of_vars.py", "-o", "results.json",
                              "--no-cache", "--no-progress-bar", "-j", "1"], cwd=tmp_path, env=env, timeout=300,
                             capture_output=True, text=True)
        bodies = list(server.bodies)
    assert out.returncode in (0, 100), out.stdout[-2000:] + out.stderr[-2000:]  # 100: some test failed its grade
    assert_prompts_sent(bodies, len(TOOL_ITEMS))
    results = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    lo, hi = -1, 1
    graded = {r["vars"]["task"]: round(lo + r["gradingResult"]["componentResults"][0]["score"] * (hi - lo))
              for r in results}
    expected = {task_of(int(i[1:])): workspace.verdicts[task_of(int(i[1:]))] for i in TOOL_ITEMS}
    assert graded == expected
    assert import_back(workspace, "promptfoo", tmp_path / "results.json", "back-promptfoo") == expected


RUN_INSPECT = """
import importlib.util, json, sys
import tiktoken, tiktoken.registry  # offline: a byte-level stand-in for the encoding tiktoken would download
tiktoken.registry.ENCODINGS["o200k_base"] = tiktoken.Encoding(
    "o200k_base", pat_str=r"\\\\S+|\\\\s+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={})
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.solver import solver

module_file, samples, log_dir = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
spec = importlib.util.spec_from_file_location("exported_scorer", module_file)
exported = importlib.util.module_from_spec(spec)
spec.loader.exec_module(exported)


@solver
def team_system():  # the team's system under test: its recorded output for each task
    async def solve(state, generate):
        state.output = ModelOutput.from_content("team/system", state.metadata["output"])
        return state
    return solve


dataset = [Sample(id=s["id"], input=s["task"], target="", metadata={"output": s["output"]}) for s in samples]
log, = inspect_eval(Task(dataset=dataset, solver=team_system(), scorer=exported.workbench_judge()),
                    model="mockllm/model", log_dir=log_dir, display="none")
print(json.dumps({"status": log.status, "log": log.location,
                  "scores": {s.input: s.scores["workbench_judge"].value for s in log.samples}}))
"""


@pytest.mark.slow
def test_inspect_runs_the_exported_scorer_and_its_log_comes_back(workspace, tmp_path):
    pytest.importorskip("inspect_ai", reason="pip install 'judge-workbench[inspect]'")
    module = export_file(workspace, "inspect", tmp_path)
    samples = [{"id": i, "task": task_of(int(i[1:])), "output": output_of(int(i[1:]))} for i in TOOL_ITEMS]
    with ReplyFormatServer() as server:  # the exported MODEL, openai-api/loopback/..., reads LOOPBACK_* variables
        out = subprocess.run([sys.executable, "-c", RUN_INSPECT, str(module), json.dumps(samples),
                              str(tmp_path / "logs")], env={**os.environ, **server.env()}, capture_output=True,
                             text=True, timeout=300, cwd=tmp_path)
        bodies = list(server.bodies)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["status"] == "success"
    assert_prompts_sent(bodies, len(TOOL_ITEMS))
    expected = {task_of(int(i[1:])): workspace.verdicts[task_of(int(i[1:]))] for i in TOOL_ITEMS}
    assert result["scores"] == expected
    log = Path(result["log"].removeprefix("file://"))
    assert import_back(workspace, "inspect", log, "back-inspect") == expected


RUN_MLFLOW = """
import json, sys
import mlflow
from mlflow.genai.scorers import Scorer

judge_file, samples, tracking_uri = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
judge = Scorer.model_validate(json.load(open(judge_file))["mlflow_scorer"])
mlflow.set_tracking_uri(tracking_uri)
mlflow.set_experiment("team")
result = mlflow.genai.evaluate(data=[{"inputs": {"task": s["task"]}, "outputs": s["output"]} for s in samples],
                               scorers=[judge])
traces = mlflow.search_traces(run_id=result.run_id, return_type="list")
scores = {}
for t in traces:
    feedback = [a for a in t.info.assessments if a.name == judge.name]
    scores[json.loads(t.data.request)["task"]] = [f.value for f in feedback]
print(json.dumps({"scores": scores, "judge": judge.name}))
"""


@pytest.mark.slow
def test_mlflow_evaluates_with_the_exported_judge_and_its_traces_come_back(workspace, tmp_path):
    pytest.importorskip("mlflow.genai", reason="pip install 'judge-workbench[mlflow]'")
    path = export_file(workspace, "mlflow", tmp_path)
    exported = json.loads(path.read_text())
    assert exported["mlflow_scorer"]["instructions_judge_pydantic_data"]["model"] == "openai:/loopback-model-v1"
    assert exported["environment"] == {"OPENAI_BASE_URL": "the value of LOOPBACK_BASE_URL",
                                       "OPENAI_API_KEY": "the value of LOOPBACK_API_KEY"}
    samples = [{"task": task_of(int(i[1:])), "output": output_of(int(i[1:]))} for i in TOOL_ITEMS]
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with ReplyFormatServer() as server:  # the environment the exported file names, set as it says
        loop = server.env()
        env = {**os.environ, **loop, "OPENAI_BASE_URL": loop["LOOPBACK_BASE_URL"],
               "OPENAI_API_KEY": loop["LOOPBACK_API_KEY"], "MLFLOW_TRACKING_URI": uri}
        out = subprocess.run([sys.executable, "-c", RUN_MLFLOW, str(path), json.dumps(samples), uri], env=env,
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        bodies = list(server.bodies)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert_prompts_sent(bodies, len(TOOL_ITEMS), allowed={"{{ inputs }}", "{{ outputs }}"})
    expected = {task_of(int(i[1:])): workspace.verdicts[task_of(int(i[1:]))] for i in TOOL_ITEMS}
    assert result["scores"] == {task: [score] for task, score in expected.items()}
    assert import_back(workspace, "mlflow", f"{uri}#experiment=team", "back-mlflow") == expected
