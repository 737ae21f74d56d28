"""A judge's regex over an item's text: refused by the static guard or cut at a wall-clock limit.

The search runs in a child process killed at the deadline (issue 27 item 4): the tool returns within 3 s of
wall-clock time even beside a CPU-bound neighbour on the same core, says it was cut, leaves no process or
thread burning CPU, and never runs on the event loop, so the run's other requests keep going meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import regex
from judge_fakes import ScriptedProvider, turn, verdict

from workbench.judges import agentic
from workbench.judges.agentic import TrajectoryTools, UnsafePattern, compile_search, run_agentic
from workbench.core.models import Item, JudgeSpec

SPEC = JudgeSpec(id="a", model="anthropic/claude-sonnet-4-5", mode="agentic", max_turns=4)
HOSTILE_TEXT = "a" * 200_000
HOSTILE = ["a{0,50}a{0,50}b", "a{0,50}a{0,50}a{0,50}b", "(a+)+b"]
PROMISED_SECONDS = 3.0  # the promise, wall clock; the internal limit (1.5 s) leaves the margin
ON_LINUX = sys.platform.startswith("linux") and hasattr(os, "sched_setaffinity")


def _item(item_id: str, content: str | list[str]) -> Item:
    contents = [content] if isinstance(content, str) else content
    return Item(id=item_id, input="t", output="done", trajectory=[{"role": "tool", "content": c} for c in contents])


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


def _children() -> set[int]:
    """Pids of this process's live children (from /proc, so no test-only dependency)."""
    me, out = str(os.getpid()), set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[1] == me and fields[0] != "Z":
                out.add(int(entry.name))
    return out


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


@pytest.fixture
def neighbour_on_my_core():
    """A CPU-bound process pinned to the core this test is pinned to (both through sched_setaffinity)."""
    if not ON_LINUX:
        pytest.skip("needs Linux's sched_setaffinity and /proc")
    before = os.sched_getaffinity(0)
    core = min(before)
    os.sched_setaffinity(0, {core})
    proc = subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{core}}})\nwhile True: pass"])
    try:
        deadline = time.monotonic() + 30
        while _cpu_ticks(proc.pid) < 5:  # it is really burning CPU (5 ticks: 50 ms)
            assert proc.poll() is None and time.monotonic() < deadline, "the neighbour did not start"
            time.sleep(0.01)
        assert os.sched_getaffinity(proc.pid) == {core} == os.sched_getaffinity(0)
        yield proc
    finally:
        proc.kill()
        proc.wait()
        os.sched_setaffinity(0, before)


def _assert_nothing_left_burning(children_before: set[int]) -> None:
    """No child the search started survives it, and this process burns (almost) no CPU for a second after."""
    assert _children() == children_before
    before = os.times()
    time.sleep(1.0)  # the measurement window itself, not a wait for something
    after = os.times()
    assert (after.user - before.user) + (after.system - before.system) < 0.3
    assert (after.children_user - before.children_user) == 0  # no child ended (and so none ran) meanwhile


# --------------------------------------------------------------------------- the static guard


def test_bounded_repeats_count_in_the_static_guard():
    # three groups of {0,50} backtrack like three .* : refused up front, not scanned for minutes
    with pytest.raises(UnsafePattern, match="too many repeats"):
        compile_search("a{0,50}a{0,50}a{0,50}b")
    _, window, scanned = compile_search("a{0,50}a{0,50}b")
    assert (window + 1) ** 2 * scanned * 2 <= agentic.SEARCH_WORK * 2  # the estimate covers the cost
    assert compile_search(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")[1] == agentic.MAX_WINDOW  # narrow ranges stay


# --------------------------------------------------------------------------- the wall-clock limit


@pytest.mark.parametrize("pattern", HOSTILE)
def test_hostile_searches_finish_within_the_limit(pattern, short_limit):
    tools = TrajectoryTools(_item("h", HOSTILE_TEXT))
    start = time.monotonic()
    out = tools.search_steps(pattern)
    assert time.monotonic() - start < PROMISED_SECONDS, out
    assert out.startswith(("error:", "no matches"))


@pytest.mark.parametrize("pattern", ["(a+)+b", "a{0,50}a{0,50}[bc]"])
def test_a_search_past_the_limit_tells_the_judge_to_simplify(pattern, short_limit, no_static_guard):
    tools = TrajectoryTools(_item("h", HOSTILE_TEXT))
    start = time.monotonic()
    out, is_error = tools.call("search_steps", {"pattern": pattern})
    assert time.monotonic() - start < PROMISED_SECONDS  # wall clock: an unbounded search runs 10 s to minutes
    assert is_error and "timed out at the 1-second limit" in out and "simpler pattern" in out


@pytest.mark.skipif(not ON_LINUX, reason="needs Linux's sched_setaffinity and /proc")
@pytest.mark.parametrize("guard", ["guarded", "unguarded"])
@pytest.mark.parametrize("pattern", ["(a+)+b", "a{0,50}a{0,50}[bc]", "a{0,50}a{0,50}b", "(?:a{0,50}b){e<=3}"])
def test_a_search_returns_within_3_s_beside_a_cpu_bound_neighbour_on_the_same_core(pattern, guard, request,
                                                                                  neighbour_on_my_core):
    """The issue's case: the regex module's own timeout counts CPU time, which a neighbour stretched 3-4 fold."""
    if guard == "unguarded":
        request.getfixturevalue("no_static_guard")
    tools = TrajectoryTools(_item("h", HOSTILE_TEXT))
    children = _children()
    start = time.monotonic()
    out, is_error = tools.call("search_steps", {"pattern": pattern})
    elapsed = time.monotonic() - start
    assert elapsed < PROMISED_SECONDS, f"{elapsed:.2f} s: {out}"
    cut = "error: the search timed out at the 1.5-second limit in step 0 (of steps 0-0), before any match"
    if guard == "unguarded" and pattern in ("(a+)+b", "a{0,50}a{0,50}[bc]"):  # 9 s and more without the limit
        assert is_error and out.startswith(cut), out
    else:  # refused, finished or cut, depending on the load
        assert out.startswith(("no matches", cut, "error: nested repetition")) or "match(es)" in out.split("\n")[0]
    _assert_nothing_left_burning(children)


@pytest.mark.skipif(not ON_LINUX, reason="needs Linux's sched_setaffinity and /proc")
def test_a_cut_search_keeps_what_it_found_and_says_where_it_stopped(no_static_guard, neighbour_on_my_core):
    tools = TrajectoryTools(_item("h", ["12 passed, 0 failed", HOSTILE_TEXT]))
    children = _children()
    start = time.monotonic()
    out, is_error = tools.call("search_steps", {"pattern": "(a+)+b|passed"})
    assert time.monotonic() - start < PROMISED_SECONDS
    assert not is_error and "step 0: …### Step 0 · tool 12 passed" in out
    assert out.startswith("at least 1 match(es); the search was cut at the 1.5-second time limit in step 1 (of steps "
                          "0-1), so later matches are missing: use a simpler pattern")
    _assert_nothing_left_burning(children)


# --------------------------------------------------------------------------- ordinary searches


ORDINARY = [
    ("passed", ["step 1: …### Step 1 · tool 12 passed, 0 failed…"]),  # a plain word
    ("PASSED", ["step 1: …### Step 1 · tool 12 passed, 0 failed…"]),  # case-insensitive
    (r"\d+ (passed|failed)", ["12 passed", "0 failed"]),  # a regular expression
    (r"assert\w*", ["AssertionError"]),
    ("(?:pased){e<=1}", ["12 passed"]),  # a fuzzy match (the regex module's syntax): one typo allowed
    ("(?:AsertionEror){e<=2}", ["AssertionError"]),
]


@pytest.mark.parametrize("pattern, expected", ORDINARY)
def test_ordinary_plain_and_fuzzy_searches_still_match(pattern, expected):
    tools = TrajectoryTools(_item("o", ["running the tests", "12 passed, 0 failed", "E   AssertionError: 3 != 4"]))
    out, is_error = tools.call("search_steps", {"pattern": pattern})
    assert not is_error and out.split("\n", 1)[0].endswith("match(es)") and "cut" not in out, out
    for text in expected:
        assert text in out
    assert tools.search_steps("nothing-like-this") == "no matches"


@pytest.mark.skipif(not ON_LINUX, reason="needs Linux's sched_setaffinity and /proc")
def test_ordinary_searches_match_beside_a_cpu_bound_neighbour(neighbour_on_my_core):
    long_item = _item("o", ["x " * 50_000, "12 passed, 0 failed"] + ["log line\n" * 1000] * 10)
    tools = TrajectoryTools(long_item)
    children = _children()
    for pattern, expected in [("passed", "step 1: …### Step 1 · tool 12 passed"), ("(?:pased){e<=1}", "12 passed"),
                              (r"\d+ passed", "12 passed")]:
        start = time.monotonic()
        out, is_error = tools.call("search_steps", {"pattern": pattern})
        assert time.monotonic() - start < PROMISED_SECONDS
        assert not is_error and expected in out and "cut" not in out, out
    many = tools.search_steps("log line")
    assert many.startswith("10000 match(es)") and "[9980 more matches not shown]" in many
    assert _children() == children


@pytest.mark.parametrize("broken", ["script", "interpreter"])
def test_a_search_that_cannot_start_is_an_error_for_the_judge(broken, monkeypatch):
    if broken == "script":
        monkeypatch.setattr(agentic, "SEARCH_CHILD", Path("/nonexistent/search_child.py"))
    else:
        monkeypatch.setattr(agentic.sys, "executable", "/nonexistent/python")
    out, is_error = TrajectoryTools(_item("o", "12 passed")).call("search_steps", {"pattern": "passed"})
    assert is_error and out == "error: the search could not run; try a plain word"


# --------------------------------------------------------------------------- the run goes on meanwhile


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
    started = time.monotonic()

    async def judge(name, provider, item):
        out = await run_agentic(provider, item, rubric, SPEC)
        finished[name] = time.monotonic()
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
    assert finished["hostile"] - started < PROMISED_SECONDS  # wall clock: the search was cut in time
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(gaps) < 0.5, f"the event loop stalled for {max(gaps):.2f} s"
    result = hostile.requests[1].messages[-1]["content"]
    if "timed out" in result:  # the benign judgments did not wait for it
        assert max(v for k, v in finished.items() if k != "hostile") < finished["hostile"]


def test_the_search_process_sees_no_api_key(monkeypatch):
    """The child runs the judge's pattern; it needs no key, so its environment holds none."""
    seen = {}
    real_popen = agentic.subprocess.Popen

    def spy(args, **kwargs):
        seen.update(kwargs)
        return real_popen(args, **kwargs)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-the-child-0123456789")
    monkeypatch.setattr(agentic.subprocess, "Popen", spy)
    out = TrajectoryTools(_item("o", "12 passed")).search_steps("passed")
    assert out.startswith("1 match(es)") and "ANTHROPIC_API_KEY" not in seen["env"]
    assert set(seen["env"]) <= agentic.CHILD_ENV
