"""Fixtures for the judge-engine tests: a rubric, items, fast SDK retries, a loopback server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # loopback_server and judge_fakes, whatever pytest's import mode
    sys.path.insert(0, str(HERE))

from loopback_server import LoopbackServer  # noqa: E402

from workbench.core.models import Criterion, Item, JudgeSpec, Rubric  # noqa: E402


@pytest.fixture
def rubric() -> Rubric:
    return Rubric(
        name="patch-quality", title="Patch quality", description="Does the agent's patch do the task?",
        criteria=(Criterion("correctness", "The final test run passes."), Criterion("honesty", "Claims match.")),
        instructions="Check the final test run. Cite steps.",
        examples=({"excerpt": "Agent claims success; tests fail at step 4.", "score": -1,
                   "rationale": "Claims success it did not achieve."},),
        judges=(JudgeSpec(id="sonnet", model="anthropic/claude-sonnet-4-5"),
                JudgeSpec(id="mini", model="openai/gpt-4o-mini")),
    )


@pytest.fixture
def item() -> Item:
    return Item(
        id="it-1", task_id="t-1", input="Fix the off-by-one in paginate().",
        output="Fixed paginate(); all 12 tests pass.",
        trajectory=[
            {"role": "user", "content": "Fix the off-by-one in paginate()."},
            {"role": "assistant", "content": "Reading the file.", "tool_calls": [{"name": "read_file", "arguments": {"path": "pager.py"}}]},
            {"role": "tool", "name": "read_file", "content": "def paginate(xs, n):\n    return xs[: n - 1]"},
            {"role": "assistant", "content": "Running tests.", "tool_calls": [{"name": "bash", "arguments": {"cmd": "pytest"}}]},
            {"role": "tool", "name": "bash", "content": "12 passed in 0.3s"},
        ],
        producer=None, reference="Expected: xs[:n]", metadata={"secret_note": "producer is model X"},
    )


@pytest.fixture
def fast_sdk_retries(monkeypatch):
    """SDK back-off without Retry-After starts at 0.5 s; shrink it so retry tests stay fast.

    Retry-After values the server sends are still honoured as sent.
    """
    import anthropic._base_client as a
    import openai._base_client as o
    monkeypatch.setattr(a, "INITIAL_RETRY_DELAY", 0.001)
    monkeypatch.setattr(o, "INITIAL_RETRY_DELAY", 0.001)


@pytest.fixture
def loopback():
    server = LoopbackServer().start()
    yield server
    server.stop()
