"""The exported promptfoo config: valid against promptfoo's config schema, and graded by promptfoo itself.

The schema check always runs (data/promptfoo-0.123.1-config-schema.json, generated from promptfoo's own zod
schema: see data/README.md). The round trip runs promptfoo's `evaluate()` (the library: its command line needs
Node >= 22.22) when a promptfoo install is found, offline, with a scripted system and a scripted grader put in
place of the exported grader model; without one it is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
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


def _promptfoo_modules() -> Path | None:
    for candidate in (os.environ.get("WORKBENCH_PROMPTFOO_NODE_MODULES"), ROOT / ".ci" / "node" / "node_modules"):
        if candidate and (Path(candidate) / "promptfoo" / "package.json").exists():
            return Path(candidate)
    return None


@pytest.mark.slow
def test_promptfoo_grades_with_the_exported_judge(approved, tmp_path):
    modules = _promptfoo_modules()
    if modules is None or shutil.which("node") is None:
        pytest.skip("no promptfoo install found (set WORKBENCH_PROMPTFOO_NODE_MODULES to a node_modules holding "
                    "promptfoo); the config was checked against promptfoo's schema instead")
    config = export_to(approved, "promptfoo")
    replies = {"a": json.dumps({"reason": "the final test run fails", "level": -1, "score": 0.0, "pass": False}),
               "b": json.dumps({"reason": "done, tests pass", "level": 0, "score": 0.5, "pass": True}),
               "c": json.dumps({"reason": "regression test added", "level": 1, "score": 1.0, "pass": True})}
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo")}
    out = subprocess.run(["node", str(HERE / "promptfoo_evaluate.mjs"), str(modules), str(config), json.dumps(replies)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    rows = {r["task"]: r for r in result["rows"]}
    assert [(rows[f"Fix bug {t}"]["success"], rows[f"Fix bug {t}"]["score"]) for t in "abc"] == \
        [(False, 0), (True, 0.5), (True, 1)]
    assert rows["Fix bug a"]["components"][0]["reason"] == "the final test run fails"
    sha = yaml.safe_load(approved.bundle.read_text())["sha256"]
    assert rows["Fix bug a"]["metadata"]["workbench"]["bundle_sha256"] == f"sha256:{sha}"  # kept, not redacted
    # promptfoo rendered our grading prompt: the approved rubric as system message, the task and the system's
    # output inside the tagged data block
    assert len(result["seen"]) == 3
    messages = json.loads(result["seen"][0])
    assert messages[0]["role"] == "system" and "Read the trajectory, check the final test run" in messages[0]["content"]
    assert re.search(r"<<<ITEM [0-9a-f]{32}>>>\n## Task given to the AI system\nFix bug \w\n\n## Final output\n"
                     r"patched \(Fix bug \w\)\n<<<END ITEM", messages[1]["content"])
    r, problems = run_check(approved, "--judge-config", config)
    assert r.exit_code == 0 and problems == []
