"""The runner: resume without re-sending, budget, rate limits, retries, progress, estimates."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest
from judge_fakes import FakeClock, ScriptedProvider, Transport, make_items, openai_completion, rate_limited, turn, verdict

from workbench.core.errors import ConfigError
from workbench.judges import InMemorySink, ProviderError, RunAborted, estimate_run, get_provider, plan_work, run_judge
from workbench.judges.base import BudgetExceeded
from workbench.judges.ratelimit import RateLimiter
from workbench.core.models import Item, JudgeSpec

SPEC = JudgeSpec(id="sonnet", model="anthropic/claude-sonnet-4-5")  # priced: $3 / $15 per MTok
OK = turn(verdict_args=verdict(0), tokens=(1000, 100))


def run(items, rubric, sink, provider, spec=SPEC, **kw):
    return asyncio.run(run_judge(items, rubric, spec, sink, provider=provider, **kw))


def test_a_run_records_every_judgment_with_its_measurements(rubric):
    items = make_items(5)
    sink = InMemorySink()
    report = run(items, rubric, sink, ScriptedProvider([OK]), concurrency=2)
    assert (report.n_planned, report.n_recorded, report.n_scored, report.n_skipped) == (5, 5, 5, 0)
    key, judgment = next(iter(sink.judgments.items()))
    assert key == (SPEC.config_hash(rubric.content_hash), items[0].content_hash, 0)
    assert judgment.item_id == "i0" and judgment.score == 0 and judgment.repeat == 0
    assert (judgment.tokens_in, judgment.tokens_out, judgment.tokens_cached) == (1000, 100, 0)
    assert judgment.cost_usd == pytest.approx((1000 * 3 + 100 * 15) / 1e6)
    assert judgment.model_version == "scripted-1" and judgment.latency_ms >= 0
    assert judgment.created_at.endswith("Z")
    assert report.cost_usd == pytest.approx(5 * judgment.cost_usd)


def test_resume_sends_no_request_for_done_keys(rubric):
    items = make_items(6)
    sink = InMemorySink()
    first = ScriptedProvider([OK])
    run(items[:4], rubric, sink, first)
    assert len(first.requests) == 4
    second = ScriptedProvider([OK])
    report = run(items, rubric, sink, second, repeats=2)
    assert report.n_skipped == 4 and report.n_recorded == 8  # 2 new items x 2 repeats + repeat 1 of the old 4
    sent = {r.messages[0]["content"] for r in second.requests}
    assert len(second.requests) == 8
    for old in items[:4]:  # repeat 0 of an old item was never asked again
        assert sum(old.input in s for s in sent) == 1
    third = ScriptedProvider([OK])
    assert run(items, rubric, sink, third, repeats=2).n_recorded == 0 and third.requests == []


def test_nothing_to_do_needs_no_provider_or_key(rubric):
    items = make_items(2)
    sink = InMemorySink()
    run(items, rubric, sink, ScriptedProvider([OK]))
    report = asyncio.run(run_judge(items, rubric, SPEC, sink, provider_options={"env": {}}))
    assert report.n_skipped == 2 and report.n_recorded == 0


def test_repeats_limit_and_duplicates(rubric):
    items = make_items(4)
    twin = Item(id="twin", task_id="i0", input=items[0].input, output=items[0].output)
    work, dups = plan_work(items + [twin], rubric, SPEC, repeats=3)
    assert len(work) == 12 and dups == ["twin"]
    assert [k[2] for k, _ in work[:4]] == [0, 0, 0, 0]  # repeat 0 of every item first
    work, _ = plan_work(items, rubric, SPEC, repeats=2, limit=3)
    assert len(work) == 6 and {it.id for _, it in work} == {"i0", "i1", "i2"}
    with pytest.raises(ConfigError):
        plan_work(items, rubric, SPEC, repeats=0)


def test_budget_stops_before_it_is_exceeded(rubric):
    items = make_items(40)
    sink = InMemorySink()
    provider = ScriptedProvider([OK])
    report = run(items, rubric, sink, provider, budget_usd=0.05, concurrency=4)
    assert report.stopped == "budget"
    assert 0 < report.n_recorded < 40 and len(provider.requests) == report.n_recorded
    assert report.cost_usd <= 0.05
    # resuming with more budget finishes the rest and sends nothing twice
    more = ScriptedProvider([OK])
    rest = run(items, rubric, sink, more, budget_usd=1.0)
    assert rest.n_recorded == 40 - report.n_recorded and len(sink.judgments) == 40


def test_budget_needs_a_price(rubric):
    spec = JudgeSpec(id="x", model="openai-api/local/llama-3.1-70b")
    with pytest.raises(ConfigError, match="needs a price for 'llama-3.1-70b'"):
        run(make_items(1), rubric, InMemorySink(), ScriptedProvider([OK]), spec=spec, budget_usd=1)


def test_unknown_price_is_none_with_a_warning(rubric, caplog):
    spec = JudgeSpec(id="x", model="openai-api/local/some-unpriced-model")
    sink = InMemorySink()
    with caplog.at_level(logging.WARNING):
        report = run(make_items(2), rubric, sink, ScriptedProvider([OK]), spec=spec)
    assert report.cost_unknown and all(j.cost_usd is None for j in sink.judgments.values())
    assert "no price for model 'some-unpriced-model'" in caplog.text


def test_retry_after_pauses_every_worker(rubric):
    clock = FakeClock()
    calls = []

    def reply(request, n):
        calls.append(clock())
        return rate_limited(retry_after=2.5) if n == 1 else OK

    sink = InMemorySink()
    report = run(make_items(1), rubric, sink, ScriptedProvider(reply), clock=clock, sleep=clock.sleep)
    assert report.n_recorded == 1 and report.n_failed == 0
    assert calls[1] - calls[0] == pytest.approx(2.5) and clock.sleeps == [pytest.approx(2.5)]


def test_transient_errors_give_up_without_recording(rubric):
    clock = FakeClock()
    err = ProviderError("scripted", "overloaded", kind="overloaded", status_code=529)
    sink = InMemorySink()
    provider = ScriptedProvider(lambda req, n: err if "i0" in req.messages[0]["content"] else OK)
    report = run(make_items(3), rubric, sink, provider, max_attempts=3, clock=clock, sleep=clock.sleep)
    assert report.n_recorded == 2 and report.n_failed == 1
    assert "529" in report.failures[0] and len(sink.judgments) == 2
    assert clock.sleeps == [1.0, 2.0]  # exponential back-off without Retry-After


def test_a_rejected_request_is_recorded_unscored(rubric):
    err = ProviderError("scripted", "prompt is too long", kind="bad_request", status_code=400, request_id="req_1")
    sink = InMemorySink()
    report = run(make_items(1), rubric, sink, ScriptedProvider([err]))
    judgment = next(iter(sink.judgments.values()))
    assert judgment.score is None and judgment.unscored_reason == "api_error: 400 prompt is too long"
    assert report.n_unscored == 1


def test_auth_error_aborts_and_keeps_what_completed(rubric):
    err = ProviderError("scripted", "invalid x-api-key", kind="auth", status_code=401)
    sink = InMemorySink()
    provider = ScriptedProvider(lambda req, n: OK if n <= 2 else err)
    with pytest.raises(RunAborted, match="401.*check the API key") as info:
        run(make_items(10), rubric, sink, provider, concurrency=1)
    assert len(sink.judgments) == 2 and info.value.report.stopped == "aborted"


def test_progress_and_stop(rubric):
    seen = []
    sink = InMemorySink()
    stop_after = 3
    report = run(make_items(10), rubric, sink, ScriptedProvider([OK]), concurrency=1,
                 progress=lambda done, total, cost: seen.append((done, total, round(cost, 6))),
                 should_stop=lambda: len(seen) >= stop_after)
    assert report.stopped == "stopped" and len(sink.judgments) == 3
    assert seen[0] == (1, 10, 0.0045) and seen[-1][0] == 3


def test_sink_failure_propagates(rubric):
    class Broken(InMemorySink):
        def record(self, key, judgment):
            raise RuntimeError("disk full")
    with pytest.raises(RuntimeError, match="disk full"):
        run(make_items(3), rubric, Broken(), ScriptedProvider([OK]))


def test_concurrency_is_bounded(rubric):
    active = 0
    peak = 0

    class Counting(ScriptedProvider):
        async def complete(self, request):
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.001)
            active -= 1
            return OK

    run(make_items(30), rubric, InMemorySink(), Counting([OK]), concurrency=5)
    assert peak == 5


def test_runner_overhead_is_small(rubric):
    items = make_items(2000)
    start = time.process_time()
    report = run(items, rubric, InMemorySink(), ScriptedProvider([OK]), concurrency=32)
    per = (time.process_time() - start) / report.n_recorded
    assert per < 0.002, f"{per * 1000:.2f} ms of runner CPU per judgment"


# --------------------------------------------------------------------------- rate limiter (no sleeping)


def test_requests_per_minute_bucket():
    clock = FakeClock()
    limiter = RateLimiter(requests_per_minute=60, clock=clock, sleep=clock.sleep)

    async def go():
        for _ in range(62):
            await limiter.acquire()
    asyncio.run(go())
    assert clock.sleeps == [pytest.approx(1.0), pytest.approx(1.0)]  # a full bucket, then one per second


def test_tokens_per_minute_bucket_and_settle():
    clock = FakeClock()
    limiter = RateLimiter(tokens_per_minute=6000, clock=clock, sleep=clock.sleep)

    async def go():
        await limiter.acquire(5000)
        limiter.settle(5000, 2000)  # the reply was smaller than feared: 3000 tokens come back
        await limiter.acquire(4000)  # 4000 left: no wait
        await limiter.acquire(3000)  # 0 left: 3000 / 100 per second = 30 s
        await limiter.acquire(10_000)  # larger than the bucket: waits for a full bucket, not forever
    asyncio.run(go())
    assert clock.sleeps == [pytest.approx(30.0), pytest.approx(60.0)]


def test_pause_holds_everyone():
    clock = FakeClock()
    limiter = RateLimiter(clock=clock, sleep=clock.sleep)
    limiter.pause(7)

    async def go():
        await asyncio.gather(limiter.acquire(), limiter.acquire())
    asyncio.run(go())
    assert clock.sleeps == [pytest.approx(7.0)]
    assert not limiter.active


def test_runner_respects_requests_per_minute(rubric):
    clock = FakeClock()
    report = run(make_items(5), rubric, InMemorySink(), ScriptedProvider([OK]), requests_per_minute=2,
                 clock=clock, sleep=clock.sleep)
    assert report.n_recorded == 5
    assert sum(clock.sleeps) == pytest.approx(90.0)  # 2 at once, then one every 30 s


def test_tokens_per_minute_uses_the_estimate_then_the_actual_usage(rubric):
    clock = FakeClock()
    report = run(make_items(4), rubric, InMemorySink(), ScriptedProvider([turn(verdict_args=verdict(0),
                                                                               tokens=(3000, 1000))]),
                 tokens_per_minute=10_000, clock=clock, sleep=clock.sleep, concurrency=1)
    assert report.n_recorded == 4 and report.rate_limited_s > 0


# --------------------------------------------------------------------------- dry run


def test_dry_run_estimate(rubric):
    items = make_items(10)
    done = {(SPEC.config_hash(rubric.content_hash), items[0].content_hash, 0)}
    est = estimate_run(items, rubric, SPEC, done_keys=done, repeats=2)
    assert (est.n_planned, est.n_done, est.n_to_run) == (20, 1, 19)
    assert est.output_tokens == 19 * 350 and est.input_tokens > 19 * 300
    assert est.cost_usd == pytest.approx((est.input_tokens * 3 + est.output_tokens * 15) / 1e6)
    assert est.max_cost_usd > est.cost_usd
    batch = estimate_run(items, rubric, SPEC, repeats=2, batch=True)
    assert batch.cost_usd == pytest.approx(estimate_run(items, rubric, SPEC, repeats=2).cost_usd / 2)
    json.dumps(est.to_dict())
    agentic = estimate_run(items, rubric, JudgeSpec(id="a", model=SPEC.model, mode="agentic"))
    assert agentic.input_tokens > est.input_tokens
    unpriced = estimate_run(items, rubric, JudgeSpec(id="l", model="openai-api/local/llama-3"))
    assert unpriced.cost_usd is None and unpriced.input_tokens > 0


def test_dry_run_estimate_is_close_to_the_server_count(rubric, loopback):
    """The chars/4 estimate against the loopback server's own count of prompt characters / 4."""
    spec = JudgeSpec(id="l", model="openai-api/loopback/m")
    items = make_items(5, trajectory=True)
    est = estimate_run(items, rubric, spec)
    report = asyncio.run(run_judge(items, rubric, spec, InMemorySink(), provider_options={"env": loopback.env()}))
    assert 0.7 < est.input_tokens / report.tokens_in < 1.5


def test_budget_exceeded_is_a_workbench_error():
    from workbench.core.errors import WorkbenchError
    assert issubclass(BudgetExceeded, WorkbenchError)


def test_runner_over_real_sdk_with_429_then_200(rubric, fast_sdk_retries):
    t = Transport(lambda r: __import__("httpx2").Response(429, headers={"retry-after": "0.01"},
                                                           json={"error": {"message": "slow down", "type": "requests"}}),
                  openai_completion(json.dumps(verdict(1))))
    spec = JudgeSpec(id="m", model="openai/gpt-4o-mini")
    sink = InMemorySink()
    provider = get_provider(spec, env={"OPENAI_API_KEY": "sk-x"}, http_client=t.client(), max_retries=3)
    report = asyncio.run(run_judge(make_items(1), rubric, spec, sink, provider=provider))
    assert report.n_scored == 1 and len(t.requests) == 2
    j = next(iter(sink.judgments.values()))
    assert j.cost_usd == pytest.approx((1100 * 0.15 + 70 * 0.60) / 1e6)


def test_budget_can_cut_an_agentic_judgment_short(rubric):
    spec = JudgeSpec(id="a", model="anthropic/claude-sonnet-4-5", mode="agentic", max_turns=20)
    looping = ScriptedProvider([turn(calls=[("overview", {})], tokens=(5000, 100))])
    sink = InMemorySink()
    report = run(make_items(1, trajectory=True), rubric, sink, looping, spec=spec, budget_usd=0.05)
    assert report.stopped == "budget" and sink.judgments == {}  # nothing half-done is recorded
    assert 0 < report.spent_usd <= 0.05 and report.cost_usd == 0


def test_an_item_that_cannot_be_delimited_is_refused_without_a_request(rubric):
    items = [Item(id="evil", input="look: " + "f" * 32)]
    provider = ScriptedProvider([OK])
    sink = InMemorySink()
    run(items, rubric, sink, provider, tag_factory=lambda: "f" * 32)
    judgment = next(iter(sink.judgments.values()))
    assert judgment.score is None and judgment.unscored_reason.startswith("refused: ")
    assert provider.requests == []


def test_sinks_satisfy_the_protocol(tmp_path):
    from judge_fakes import JsonlSink

    from workbench.judges import RunSink
    assert isinstance(InMemorySink(), RunSink) and isinstance(JsonlSink(tmp_path / "s.jsonl"), RunSink)
