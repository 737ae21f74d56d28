"""End to end through real HTTP: the openai-api provider against a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from judge_fakes import FakeClock, JsonlSink, make_items
from loopback_server import LoopbackServer

from workbench.core.formats import parse_item, read_records
from workbench.judges import InMemorySink, get_provider, run_judge
from workbench.core.models import JudgeSpec, Rubric
from workbench.judges.rubrics import load_rubric

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SPEC = JudgeSpec(id="loop", model="openai-api/loopback/loopback-model")
RUBRIC = Rubric(name="loop", judges=(SPEC,))


def poll(condition, timeout=30.0, interval=0.01):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(interval)


def test_concurrent_run(loopback):
    loopback.latency = 0.05
    items = make_items(64)
    sink = InMemorySink()

    async def go():
        provider = get_provider(SPEC, env=loopback.env())  # SDK import and client set-up outside the timing
        start = time.perf_counter()
        report = await run_judge(items, RUBRIC, SPEC, sink, concurrency=16, provider=provider)
        wall = time.perf_counter() - start
        await provider.aclose()
        return report, wall

    report, wall = asyncio.run(go())
    assert report.n_scored == 64 and report.n_failed == 0
    assert set(loopback.received) == {it.id for it in items} and set(loopback.received.values()) == {1}
    assert wall < 64 * 0.05 / 2  # far from sequential (3.2 s), with room for a loaded machine
    for judgment in sink.judgments.values():
        i = int(judgment.item_id[1:])
        assert judgment.score == i % 3 - 1 and judgment.model_version == "loopback-model-v1"
        assert judgment.latency_ms >= 50 and judgment.tokens_in > 0 and judgment.cost_usd is None


def test_server_failures_are_retried(loopback, fast_sdk_retries):
    loopback.fail_next(3, 429, retry_after=0.01)
    loopback.fail_next(2, 500)
    loopback.fail_next(1, 529)
    items = make_items(12)
    report = asyncio.run(run_judge(items, RUBRIC, SPEC, InMemorySink(), concurrency=4,
                                   provider_options={"env": loopback.env(), "max_retries": 3}))
    assert report.n_scored == 12 and loopback.failures_sent == 6
    assert sum(loopback.received.values()) == 18 and set(loopback.answered.values()) == {1}


def test_runner_level_retry_when_the_sdk_gives_up(loopback):
    loopback.fail_next(2, 429, retry_after=3)
    clock = FakeClock()
    report = asyncio.run(run_judge(make_items(1), RUBRIC, SPEC, InMemorySink(), max_attempts=3,
                                   provider_options={"env": loopback.env(), "max_retries": 0},
                                   clock=clock, sleep=clock.sleep))
    assert report.n_scored == 1 and clock.sleeps == [pytest.approx(3.0), pytest.approx(3.0)]


def test_sigkill_halfway_then_resume(tmp_path):
    """Kill -9 a run with requests in flight; the resumed run re-sends only what was never answered."""
    n, half, concurrency = 24, 12, 4
    items = make_items(n)
    sink_path = tmp_path / "judgments.jsonl"
    with LoopbackServer(latency=0.02) as server:
        server.hold(after=half)  # answer `half` requests, then hold the rest unanswered
        child = subprocess.Popen([sys.executable, str(HERE / "kill_child.py"), server.base_url, str(sink_path),
                                  str(n), str(concurrency)], cwd=ROOT)
        try:
            poll(lambda: len(JsonlSink(sink_path).judgments()) == half and server.held == concurrency)
            os.kill(child.pid, signal.SIGKILL)
            child.wait(10)
        finally:
            if child.poll() is None:
                child.kill()
        poll(lambda: sum(server.abandoned.values()) == concurrency)  # the in-flight requests died with it
        in_flight = set(server.abandoned)
        recorded = {j.item_id for _, j in JsonlSink(sink_path).judgments()}
        assert len(recorded) == half and not (in_flight & recorded)
        server.release()

        import kill_child  # the same judge config as the killed run
        sink = JsonlSink(sink_path)
        report = asyncio.run(run_judge(items, kill_child.RUBRIC, kill_child.SPEC, sink, concurrency=concurrency,
                                       provider_options={"env": server.env()}))
        assert report.n_skipped == half and report.n_recorded == n - half
        judged = [j.item_id for _, j in sink.judgments()]
        assert sorted(judged) == sorted(it.id for it in items)  # every item once
        assert all(server.answered[it.id] == 1 for it in items)  # no item was answered twice
        for it in items:  # recorded items were never sent again; only the killed in-flight ones were
            assert server.received[it.id] == (2 if it.id in in_flight else 1)


def test_the_demo_rubric_judges_run_against_the_loopback_server(loopback):
    rubric = load_rubric(ROOT / "rubrics" / "demo-patch-quality.yaml")
    items = [parse_item(r) for r in read_records(ROOT / "golden_sets" / "demo" / "items.jsonl")][:6]
    spec = rubric.judge("noisy-llama")  # openai-api/local/llama-3.1-70b
    sink = InMemorySink()
    report = asyncio.run(run_judge(items, rubric, spec, sink, repeats=2,
                                   provider_options={"env": loopback.env("local")}))
    assert report.n_recorded == 12 and report.n_unscored == 0
    assert loopback.bodies[-1]["model"] == "llama-3.1-70b"
    agentic = JudgeSpec(id="agentic-llama", model="openai-api/local/llama-3.1-70b", mode="agentic")
    out = asyncio.run(run_judge(items[:2], rubric, agentic, InMemorySink(), provider_options={"env": loopback.env("local")}))
    assert out.n_scored == 2 and "tools" in loopback.bodies[-1]
