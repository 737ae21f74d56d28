"""`workbench judge run` end to end: the real openai SDK over real HTTP to a loopback server, into SQLite.

The run is killed with SIGKILL halfway and resumed: afterwards every item has
its judgment and the server answered no item twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import write
from tests.judges.loopback_server import LoopbackServer
from workbench.calibration.calibrate import calibrate
from workbench.store import Store

N = 40
RUBRIC = """name: loop-rubric
judges:
  - id: loop
    model: openai-api/loopback/loop-model
    family: meta
"""


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    db = tmp_path / "w.db"
    items = "".join(json.dumps({"id": f"i{n}", "input": f"Fix it. ITEM-MARKER i{n} EXPECT-SCORE {n % 3 - 1}",
                                "output": "done", "producer": {"model": "m", "family": "openai"}}) + "\n"
                    for n in range(N))
    labels = "".join(json.dumps({"item_id": f"i{n}", "rater": r, "score": n % 3 - 1}) + "\n"
                     for n in range(N) for r in ("ana", "ben"))
    for args in (["rubric", "add", write(tmp_path / "r.yaml", RUBRIC)],
                 ["import", "items", write(tmp_path / "items.jsonl", items), "-g", "g"],
                 ["import", "labels", "--new-raters", write(tmp_path / "labels.jsonl", labels), "-g", "g", "-r", "loop-rubric"]):
        subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(db), *map(str, args)], check=True,
                       capture_output=True)
    return db


def _judge_cmd(db: Path) -> list[str]:
    return [sys.executable, "-m", "workbench.cli", "--db", str(db), "judge", "run", "-g", "g", "-r", "loop-rubric",
            "-j", "loop", "--concurrency", "4"]


def _count(db: Path) -> int:
    with Store(db) as s:
        return s.conn.execute("SELECT count(*) FROM judgments").fetchone()[0]


def test_concurrent_run_records_every_item(golden):
    with LoopbackServer(latency=0.02) as server:
        env = {**os.environ, **server.env()}
        out = subprocess.run(_judge_cmd(golden), env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert f"{N} judgments recorded" in out.stdout
        assert all(server.answered[f"i{n}"] == 1 for n in range(N))
        # a second invocation resumes the finished run: nothing to send
        again = subprocess.run(_judge_cmd(golden), env=env, capture_output=True, text=True, timeout=120)
        assert f"0 judgments recorded (0 unscored), {N} already done" in again.stdout
        assert sum(server.answered.values()) == N
    with Store(golden) as s:
        rep = calibrate(s, "g", "loop-rubric", "loop")
        assert rep.metrics["exact_agreement"].value == 1.0  # the server scored as the humans did
        assert rep.run.model_versions == ["loopback-model-v1"]  # the version the API returned


def test_sigkill_halfway_then_resume_pays_for_no_item_twice(golden):
    with LoopbackServer(latency=0.01) as server:
        env = {**os.environ, **server.env()}
        server.hold(after=N // 2)  # answer half, then hold requests until the process dies
        proc = subprocess.Popen(_judge_cmd(golden), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while _count(golden) < N // 2 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        saved = _count(golden)
        assert N // 2 <= saved < N  # the server holds the rest: killed halfway
        server.release()
        out = subprocess.run(_judge_cmd(golden), env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert f"{N - saved} judgments recorded (0 unscored), {saved} already done" in out.stdout
        assert _count(golden) == N
        assert {k: v for k, v in server.answered.items() if v != 1} == {}
        assert len(server.answered) == N
    with Store(golden) as s:
        [run] = s.runs(s.golden_set("g").id)
        assert run["status"] == "done" and run["n_judgments"] == N


def test_canary_key_never_reaches_the_database(golden, tmp_path):
    canary = "sk-canary-0123456789abcdef"
    with LoopbackServer(latency=0.0, api_key="the-right-key") as server:
        env = {**os.environ, **server.env(key=canary)}  # the server refuses it: 401
        out = subprocess.run(_judge_cmd(golden) + ["--limit", "3"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert out.returncode != 0
    assert canary not in out.stdout + out.stderr and "Traceback" not in out.stderr
    raw = golden.read_bytes() + b"".join(p.read_bytes() for p in golden.parent.glob("w.db*"))
    assert canary.encode() not in raw
