"""A `mock/` judge declared in a rubric drives the whole judge path: no server, no key, no network.

`workbench judge run` in its own process (rubric, items and labels added through
the CLI too), then `calibrate --json`; and the service with a script given in code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write
from workbench.features.judging import service as judging
from workbench.store import Store

N = 12
RUBRIC = """name: mock-rubric
judges:
  - id: echo
    model: mock/echo
    family: test
  - id: agent
    model: mock/agent
    mode: agentic
    max_turns: 3
"""


def _cli(db: Path, *args: object, check: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}  # the mock needs none
    return subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(db), *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=120, check=check)


@pytest.fixture(scope="module")
def golden_template(tmp_path_factory) -> Path:
    """Items whose reference is the humans' consensus, which the mock's default rule echoes."""
    tmp_path = tmp_path_factory.mktemp("mock-golden")
    db = tmp_path / "w.db"
    items = "".join(json.dumps({"id": f"i{n}", "input": f"Fix bug {n}.", "output": "done", "reference": str(n % 3 - 1),
                                "producer": {"model": "m", "family": "openai"}}) + "\n" for n in range(N))
    labels = "".join(json.dumps({"item_id": f"i{n}", "rater": r, "score": n % 3 - 1}) + "\n"
                     for n in range(N) for r in ("ana", "ben"))
    _cli(db, "rubric", "add", write(tmp_path / "r.yaml", RUBRIC))
    _cli(db, "import", "items", write(tmp_path / "items.jsonl", items), "-g", "g")
    _cli(db, "import", "labels", "--new-raters", write(tmp_path / "labels.jsonl", labels), "-g", "g", "-r", "mock-rubric")
    with Store(db) as s:
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


@pytest.fixture
def golden(golden_template: Path, tmp_path: Path) -> Path:
    db = tmp_path / "w.db"
    shutil.copy(golden_template, db)
    return db


def test_judge_run_with_a_mock_judge_end_to_end(golden):
    dry = _cli(golden, "judge", "run", "-g", "g", "-r", "mock-rubric", "-j", "echo", "--dry-run")
    assert f"mock/echo: {N} of {N} judgments to run" in dry.stdout and "estimated cost $0.00" in dry.stdout

    out = _cli(golden, "judge", "run", "-g", "g", "-r", "mock-rubric", "-j", "echo", "--concurrency", "3",
               check=False)
    assert out.returncode == 0, out.stderr
    assert f"{N} judgments recorded (0 unscored), 0 already done, 0 failed; cost $0.0000" in out.stdout

    again = _cli(golden, "judge", "run", "-g", "g", "-r", "mock-rubric", "-j", "echo")
    assert f"0 judgments recorded (0 unscored), {N} already done" in again.stdout

    report = json.loads(_cli(golden, "calibrate", "-g", "g", "-r", "mock-rubric", "-j", "echo", "--json",
                             "--resamples", "50").stdout)
    assert report["metrics"]["exact_agreement"]["value"] == 1.0  # the mock echoed the consensus
    assert report["run"]["model_versions"] == ["mock/echo"]


def test_the_agentic_mock_goes_through_the_tool_loop(golden):
    out = _cli(golden, "judge", "run", "-g", "g", "-r", "mock-rubric", "-j", "agent", "--limit", "3", check=False)
    assert out.returncode == 0, out.stderr
    assert "3 judgments recorded (0 unscored)" in out.stdout
    with Store(golden) as s:
        traces = [json.loads(t) for (t,) in s.conn.execute("SELECT trace FROM judgments")]
    assert all(t[-1] == {"role": "end", "turns": 1, "tokens": t[-1]["tokens"], "reason": "verdict"} for t in traces)


def test_the_service_takes_a_script_in_code(golden):
    with Store(golden) as s:
        summary = judging.run(s, "g", "mock-rubric", "echo", concurrency=1, limit=4,
                              provider_options={"verdicts": [1, 1, "no verdict here", 5]})
        assert (summary["n_scored"], summary["n_unscored"], summary["cost_usd"]) == (2, 2, 0.0)
        status = judging.run_status(s, "g", "mock-rubric", "echo")
        assert status["done"] == 4 and status["unscored"] == 2
