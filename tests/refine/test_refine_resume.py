"""A refinement session killed (SIGKILL) mid-way resumes without sending a finished request again.

The child process (refine_kill_child.py) runs one round against scripted OpenAI endpoints (the real SDK over a mocked
transport; see scripted.py) that log every answered request and kill the process when a chosen request arrives,
before answering it. The resumed session must answer each request exactly once overall and finish the round.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from refine_kill_child import GS, RUBRIC, session  # noqa: E402

from workbench.calibration.golden_sets import consensus  # noqa: E402


def kill_at(db: str, log: Path, kill_after: int) -> list[str]:
    child = subprocess.run([sys.executable, str(HERE / "refine_kill_child.py"), db, str(log), str(kill_after)],
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    return [json.loads(line)["key"] for line in log.open()]


def test_killed_session_resumes_without_resending_finished_requests(demo_store, tmp_path):
    n = len(consensus(demo_store, GS, RUBRIC).resolved)  # the parent's copy judges every split item first
    log = tmp_path / "answered.jsonl"
    # killed when the optimizer's request arrives, then, resumed, in the middle of the child's held-out run
    assert len(kill_at(demo_store.path, log, n)) == n
    answered = kill_at(demo_store.path, log, n + 1 + n // 2 + 10)
    assert len(answered) == n + 1 + n // 2 + 10 and answered[n].startswith("optimizer:")

    summary = session(demo_store, log, None)
    keys = [json.loads(line)["key"] for line in log.open()]
    assert len(keys) == len(set(keys)), "a finished request was sent again"
    assert len(keys) == 2 * n + 1  # the parent's copy and the child on every split item, one optimizer call
    (rnd,) = summary.rounds
    assert rnd.status == "proposed"
    costs = [json.loads(line)["cost"] for line in log.open()]
    assert summary.spent_usd == pytest.approx(sum(costs))
