"""A judge's regex over an item's text: refused by the static guard or stopped by a hard time limit,
and never run on the event loop, so the run's other requests keep going meanwhile."""

from __future__ import annotations

import asyncio
import time

import pytest
import regex
from judge_fakes import ScriptedProvider, turn, verdict

from workbench.judges import agentic
from workbench.judges.agentic import TrajectoryTools, UnsafePattern, compile_search, run_agentic
from workbench.models import Item, JudgeSpec

SPEC = JudgeSpec(id="a", model="anthropic/claude-sonnet-4-5", mode="agentic", max_turns=4)
HOSTILE_TEXT = "a" * 200_000
HOSTILE = ["a{0,50}a{0,50}b", "a{0,50}a{0,50}a{0,50}b", "(a+)+b"]


def _item(item_id: str, content: str) -> Item:
    return Item(id=item_id, input="t", output="done", trajectory=[{"role": "tool", "content": content}])


@pytest.fixture
def short_limit(monkeypatch):
    monkeypatch.setattr(agentic, "SEARCH_SECONDS", 1.0, raising=False)
    return 1.0


@pytest.fixture
def no_static_guard(monkeypatch):
    """The static estimate is only a first filter; without it the time limit alone must hold."""
    def unguarded(pattern):
        return regex.compile(pattern, regex.IGNORECASE), agentic.MAX_WINDOW, agentic.SEARCH_TEXT_CHARS
    monkeypatch.setattr(agentic, "compile_search", unguarded)


def test_bounded_repeats_count_in_the_static_guard():
    # three groups of {0,50} backtrack like three .* : refused up front, not scanned for minutes
    with pytest.raises(UnsafePattern, match="too many repeats"):
        compile_search("a{0,50}a{0,50}a{0,50}b")
    _, window, scanned = compile_search("a{0,50}a{0,50}b")
    assert (window + 1) ** 2 * scanned * 2 <= agentic.SEARCH_WORK * 2  # the estimate covers the cost
    assert compile_search(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")[1] == agentic.MAX_WINDOW  # narrow ranges stay


@pytest.mark.parametrize("pattern", HOSTILE)
def test_hostile_searches_finish_within_the_limit(pattern, short_limit):
    tools = TrajectoryTools(_item("h", HOSTILE_TEXT))
    start = time.process_time()
    out = tools.search_steps(pattern)
    assert time.process_time() - start < short_limit + 3.0, out
    assert out.startswith(("error:", "no matches"))


@pytest.mark.parametrize("pattern", ["(a+)+b", "a{0,50}a{0,50}[bc]"])
def test_a_search_past_the_limit_tells_the_judge_to_simplify(pattern, short_limit, no_static_guard):
    tools = TrajectoryTools(_item("h", HOSTILE_TEXT))
    start = time.process_time()
    out, is_error = tools.call("search_steps", {"pattern": pattern})
    # CPU time, not wall time, so a loaded CI machine cannot fail it; an unbounded search burns 10 s to minutes
    assert time.process_time() - start < short_limit + 3.0
    assert is_error and "timed out" in out and "simpler pattern" in out


@pytest.mark.parametrize("guard", ["guarded", "unguarded"])
@pytest.mark.parametrize("pattern", HOSTILE + ["a{0,50}a{0,50}[bc]"])
def test_other_requests_of_the_run_proceed_during_a_hostile_search(pattern, guard, rubric, short_limit, request):
    if guard == "unguarded":
        request.getfixturevalue("no_static_guard")
    hostile = ScriptedProvider([turn(calls=[("search_steps", {"pattern": pattern})]), turn(verdict_args=verdict(-1))])
    benign = ScriptedProvider([turn(calls=[("read_steps", {"start": 0, "end": 0})]), turn(verdict_args=verdict(1))],
                              delay=0.02)
    ticks: list[float] = []
    finished: dict[str, float] = {}
    cpu_used: dict[str, float] = {}  # the process's CPU time (all threads) when each judgment finished
    cpu_start = time.process_time()

    async def judge(name, provider, item):
        out = await run_agentic(provider, item, rubric, SPEC)
        finished[name] = time.monotonic()
        cpu_used[name] = time.process_time() - cpu_start
        return out

    async def ticker(stop: asyncio.Event):
        while not stop.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    async def go():
        stop = asyncio.Event()
        tick_task = asyncio.create_task(ticker(stop))
        outs = await asyncio.gather(judge("hostile", hostile, _item("h", HOSTILE_TEXT)),
                                    *(judge(f"benign-{i}", benign, _item(f"b{i}", "12 passed")) for i in range(3)))
        stop.set()
        await tick_task
        return outs

    outs = asyncio.run(go())
    assert [o.score for o in outs] == [-1, 1, 1, 1]
    assert cpu_used["hostile"] < short_limit + 3.0  # CPU, not wall time: the search stopped, whatever the load
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(gaps) < 0.5, f"the event loop stalled for {max(gaps):.2f} s"
    result = hostile.requests[1].messages[-1]["content"]
    if "timed out" in result:  # the benign judgments did not wait for it
        assert max(v for k, v in finished.items() if k != "hostile") < finished["hostile"]
