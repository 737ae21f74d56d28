"""The exported promptfoo config: valid against promptfoo's config schema, and graded by promptfoo itself.

The schema check always runs (data/promptfoo-0.123.1-config-schema.json, generated from promptfoo's own zod
schema: see data/README.md). The round trip runs `promptfoo eval` from the npm package that .ci/run installs
(.ci/node, promptfoo 0.121.20, the last release for Node 20) on the exported config, offline: a local Python
provider as the system and a scripted Python grader in place of the exported grader model.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.conftest import ROOT
from tests.interop_export.conftest import export_to, run_check

HERE = Path(__file__).parent
SCHEMA = json.loads((HERE / "data" / "promptfoo-0.123.1-config-schema.json").read_text())




def test_config_is_valid_for_promptfoo(approved):
    config = yaml.safe_load(export_to(approved, "promptfoo").read_text())
    validator = jsonschema.Draft7Validator(SCHEMA)
    assert list(validator.iter_errors(config)) == []
    # the schema does bite: a config without prompts, or with an assertion that is not a mapping, is refused
    assert list(validator.iter_errors({k: v for k, v in config.items() if k != "prompts"}))
    broken = json.loads(json.dumps(config))
    broken["defaultTest"]["assert"] = [42]
    assert list(validator.iter_errors(broken))
    assertion = config["defaultTest"]["assert"][0]
    assert assertion["type"] == "llm-rubric" and assertion["threshold"] == 0.5  # level 0 of -1..1 on 0..1
    assert config["defaultTest"]["options"]["provider"] == {
        "id": "anthropic:messages:claude-sonnet-4-5-20250929", "config": {"max_tokens": 800, "temperature": 0.0}}


PROMPTFOO = Path(os.environ.get("WORKBENCH_PROMPTFOO", ROOT / ".ci" / "node" / "node_modules" / ".bin" / "promptfoo"))


@pytest.mark.slow
def test_promptfoo_grades_with_the_exported_judge(approved, tmp_path):
    if not PROMPTFOO.exists():
        pytest.skip(f"promptfoo is not installed at {PROMPTFOO} (.ci/run installs it); the config was checked "
                    "against promptfoo's schema instead")
    exported = export_to(approved, "promptfoo")
    # The team's side: their system and tests added, and (offline) a scripted grader in place of the exported model
    config = yaml.safe_load(exported.read_text())
    config["providers"] = ["file://system.py"]
    config["tests"] = [{"vars": {"task": f"Fix bug {t}"}} for t in "abc"]
    config["defaultTest"]["options"]["provider"] = "file://grader.py"
    for f in ("system.py", "grader.py"):
        shutil.copy(HERE / "promptfoo" / f, tmp_path / f)
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    replies = {"a": json.dumps({"reason": "the final test run fails", "level": -1, "score": 0.0, "pass": False}),
               "b": json.dumps({"reason": "done, tests pass", "level": 0, "score": 0.5, "pass": True}),
               "c": json.dumps({"reason": "regression test added", "level": 1, "score": 1.0, "pass": True})}
    env = {**os.environ, "HOME": str(tmp_path), "PROMPTFOO_PYTHON": sys.executable, "PROMPTFOO_DISABLE_TELEMETRY": "1",
           "PROMPTFOO_DISABLE_UPDATE": "1", "PROMPTFOO_DISABLE_SHARING": "1", "GRADER_REPLIES": json.dumps(replies),
           "GRADER_SEEN": str(tmp_path / "seen.jsonl")}
    subprocess.run([str(PROMPTFOO), "eval", "-c", "promptfooconfig.yaml", "-o", "results.json", "--no-cache",
                    "--no-progress-bar"], cwd=tmp_path, env=env, timeout=300, capture_output=True)  # exit 100: a fail
    results = json.loads((tmp_path / "results.json").read_text())["results"]["results"]
    rows = {r["vars"]["task"]: r for r in results}
    assert [(rows[f"Fix bug {t}"]["success"], rows[f"Fix bug {t}"]["score"]) for t in "abc"] == \
        [(False, 0), (True, 0.5), (True, 1)]
    assert rows["Fix bug a"]["gradingResult"]["componentResults"][0]["reason"] == "the final test run fails"
    sha = yaml.safe_load(approved.bundle.read_text())["sha256"]
    trace = rows["Fix bug a"]["testCase"]["metadata"]["workbench"]
    assert trace["bundle_sha256"] == f"sha256:{sha}"  # on every result, and not redacted as a secret
    # promptfoo rendered the exported grading prompt: the approved rubric as the system message, the task and
    # the system's output inside the tagged data block
    seen = [json.loads(line) for line in (tmp_path / "seen.jsonl").read_text().splitlines()]
    assert len(seen) == 3
    assert seen[0][0]["role"] == "system" and "Read the trajectory, check the final test run" in seen[0][0]["content"]
    assert re.search(r"<<<ITEM [0-9a-f]{32}>>>\n## Task given to the AI system\nFix bug \w\n\n## Final output\n"
                     r"patched \(Fix bug \w\)\n<<<END ITEM", seen[0][1]["content"])
    r, problems = run_check(approved, "--judge-config", exported)
    assert r.exit_code == 0 and problems == []
    # the results import back with no map: the config declares its 0..1 scale on every result
    from click.testing import CliRunner

    from workbench.cli import main

    r = CliRunner().invoke(main, ["import", "--from", "promptfoo", str(tmp_path / "results.json"), "-g", "back", "-r",
                                  "demo-patch-quality", "--db", str(approved.db), "--project", str(approved.db.parent)])
    assert r.exit_code == 0, r.output
    back = dict(approved.store.conn.execute(
        "SELECT json_extract(i.content, '$.input'), j.score FROM judgments j JOIN items i ON i.pk = j.item_pk "
        "JOIN golden_sets g ON g.id = i.golden_set_id WHERE g.name = 'back'").fetchall())
    assert back == {"Fix bug a": -1, "Fix bug b": 0, "Fix bug c": 1}


def test_an_openai_compatible_judge_names_its_variables_never_their_values(approved, monkeypatch):
    from workbench.features.export.records import Bundle
    from workbench.features.export.tool_files import ApprovedJudge, ExportRefused, render

    monkeypatch.setenv("LOCAL_API_KEY", "sk-do-not-leak-0123456789abcdef")
    monkeypatch.setenv("LOCAL_BASE_URL", "http://10.0.0.7:8000/v1")
    bundle = yaml.safe_load(approved.bundle.read_text())
    bundle["judge"]["config"]["model"] = "openai-api/local/llama-3-8b"
    bundle["calibration"]["run"]["model_versions"] = ["llama-3-8b"]
    aj = ApprovedJudge.from_bundle(Bundle.from_json(bundle), approved.bundle.name)
    text = render(aj, "promptfoo")
    provider = yaml.safe_load(text)["defaultTest"]["options"]["provider"]
    assert provider["id"] == "openai:chat:llama-3-8b"
    assert provider["config"]["apiBaseUrl"] == "{{ env.LOCAL_BASE_URL }}"
    assert provider["config"]["apiKeyEnvar"] == "LOCAL_API_KEY"
    assert "MODEL = 'openai-api/local/llama-3-8b'" in render(aj, "inspect")
    for out in (text, render(aj, "inspect")):
        assert "sk-do-not-leak" not in out and "10.0.0.7" not in out
    # MLflow's openai provider reads OPENAI_BASE_URL and OPENAI_API_KEY: the file names the variables to set them from
    mlflow = json.loads(render(aj, "mlflow"))
    assert mlflow["mlflow_scorer"]["instructions_judge_pydantic_data"]["model"] == "openai:/llama-3-8b"
    assert mlflow["environment"] == {"OPENAI_BASE_URL": "the value of LOCAL_BASE_URL",
                                     "OPENAI_API_KEY": "the value of LOCAL_API_KEY"}
    assert "sk-do-not-leak" not in render(aj, "mlflow") and "10.0.0.7" not in render(aj, "mlflow")
    bundle["judge"]["config"]["model"] = "bedrock/anthropic.claude-3"  # a provider none of the tools names
    with pytest.raises(ExportRefused):
        render(ApprovedJudge.from_bundle(Bundle.from_json(bundle), approved.bundle.name), "mlflow")
