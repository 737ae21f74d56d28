"""Batch mode: Anthropic Message Batches and the OpenAI Batch API, persisted ids, idempotent import."""

from __future__ import annotations

import asyncio
import json

import pytest
from judge_fakes import (FakeAnthropicBatches, FakeClock, FakeOpenAIBatches, JsonlSink, anthropic_message, make_items,
                         openai_completion, verdict)

from workbench.core.errors import ConfigError
from workbench.judges import InMemorySink, collect_batches, custom_id_for, get_provider, run_batch, submit_batches
from workbench.core.models import JudgeSpec

CLAUDE = JudgeSpec(id="sonnet", model="anthropic/claude-sonnet-4-5")
GPT = JudgeSpec(id="mini", model="openai/gpt-4o-mini")
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-k", "OPENAI_API_KEY": "sk-k"}


def provider_for(spec, fake):
    return get_provider(spec, env=KEYS, http_client=fake.client(), max_retries=0)


def anthropic_answer(cid, params):
    text = params["messages"][0]["content"][0]["text"]
    if "ITEM-MARKER i3 " in text:  # rejected request: recorded unscored
        return {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error",
                                                                         "message": "prompt is too long"}}}
    if "ITEM-MARKER i4 " in text:  # never attempted: submitted again later
        return {"type": "expired"}
    score = int(text.split("EXPECT-SCORE ")[1].split()[0])
    return {"type": "succeeded", "message": anthropic_message(verdict(score), input_tokens=1000, output_tokens=100)}


def test_custom_ids_are_short_stable_and_distinct():
    a, b = ("c" * 64, "i" * 64, 0), ("c" * 64, "i" * 64, 1)
    assert custom_id_for(a) == custom_id_for(a) != custom_id_for(b)
    assert len(custom_id_for(a)) <= 64 and custom_id_for(a).replace("-", "").isalnum()


def test_anthropic_batch_submit_poll_import(rubric):
    items = make_items(5)
    fake = FakeAnthropicBatches(anthropic_answer, polls=2)
    sink = InMemorySink()
    clock = FakeClock()
    report = asyncio.run(run_batch(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake),
                                   poll_interval=30, sleep=clock.sleep))
    assert report.submitted == ["msgbatch_00abc"] and report.n_submitted == 5
    params = fake.batches["msgbatch_00abc"][0]["params"]
    assert params["tool_choice"] == {"type": "tool", "name": "submit_verdict"} and params["model"] == "claude-sonnet-4-5"
    assert clock.sleeps == [30, 30]  # polled until ended
    assert report.n_imported == 4 and report.n_unscored == 1 and report.n_failed == 1 and report.pending == []
    by_item = {j.item_id: j for j in sink.judgments.values()}
    assert set(by_item) == {"i0", "i1", "i2", "i3"}
    assert by_item["i0"].score == -1 and by_item["i2"].score == 1
    assert by_item["i3"].unscored_reason == "api_error: bad_request invalid_request_error: prompt is too long"
    assert by_item["i0"].cost_usd == pytest.approx((1000 * 3 + 100 * 15) / 1e6 / 2)  # half price
    assert by_item["i0"].latency_ms is None and by_item["i0"].model_version == "claude-sonnet-4-5-20250929"
    assert sink.pending_batches() == []
    # the expired one is submitted again by the next run, and only it
    fake2 = FakeAnthropicBatches(lambda cid, p: {"type": "succeeded", "message": anthropic_message(verdict(0))},
                                 polls=0, id_prefix="def")
    again = asyncio.run(run_batch(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake2), sleep=clock.sleep))
    assert again.n_submitted == 1 and again.n_skipped == 4 and len(sink.judgments) == 5


def test_polling_resumes_after_a_restart_and_imports_once(rubric, tmp_path):
    items = make_items(3)
    fake = FakeAnthropicBatches(anthropic_answer, polls=5)
    path = tmp_path / "sink.jsonl"
    submitted = asyncio.run(submit_batches(items, rubric, CLAUDE, JsonlSink(path), provider=provider_for(CLAUDE, fake)))
    assert submitted.submitted == ["msgbatch_00abc"]
    # "restart": a new sink object over the same file and a new provider; one pass, still processing
    sink = JsonlSink(path)
    first = asyncio.run(collect_batches(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake), wait=False))
    assert first.pending == ["msgbatch_00abc"] and first.n_imported == 0
    # a re-run does not submit what is already in a pending batch
    resubmit = asyncio.run(submit_batches(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake)))
    assert resubmit.n_submitted == 0 and resubmit.n_skipped == 3 and len(fake.batches) == 1
    clock = FakeClock()
    done = asyncio.run(collect_batches(items, rubric, CLAUDE, JsonlSink(path), provider=provider_for(CLAUDE, fake),
                                       poll_interval=60, sleep=clock.sleep))
    assert done.n_imported == 3 and done.pending == []
    assert len(JsonlSink(path).judgments()) == 3


def test_import_is_idempotent(rubric):
    items = make_items(3)
    fake = FakeAnthropicBatches(anthropic_answer, polls=0)
    sink = InMemorySink()
    asyncio.run(submit_batches(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake)))
    batch = sink.pending_batches()[0]
    asyncio.run(collect_batches(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake)))
    assert sink.record_calls == 3
    sink.finished_batches.discard(batch.batch_id)  # as if the process died before mark_batch_done
    report = asyncio.run(collect_batches(items, rubric, CLAUDE, sink, provider=provider_for(CLAUDE, fake)))
    assert report.n_imported == 0 and sink.record_calls == 3 and sink.pending_batches() == []


def test_openai_batch(rubric):
    items = make_items(4)

    def answer(cid, body):
        text = body["messages"][1]["content"]
        if "ITEM-MARKER i1 " in text:
            return {"response": {"status_code": 400, "request_id": "req_b1", "body": {"error": {
                "message": "Invalid schema", "type": "invalid_request_error", "code": None}}}, "error": None}
        if "ITEM-MARKER i2 " in text:
            return {"response": None, "error": {"code": "batch_expired", "message": "This request could not be "
                                                "executed before the completion window expired."}}
        return {"response": {"status_code": 200, "request_id": "req_b0", "body": openai_completion(
            json.dumps(verdict(1)), model="gpt-4o-mini-2024-07-18", prompt_tokens=1000, completion_tokens=100)},
            "error": None}

    fake = FakeOpenAIBatches(answer, polls=1)
    sink = InMemorySink()
    report = asyncio.run(run_batch(items, rubric, GPT, sink, provider=provider_for(GPT, fake), sleep=FakeClock().sleep))
    upload = fake.files["file-in0"]
    assert [line["url"] for line in upload] == ["/v1/chat/completions"] * 4
    assert upload[0]["method"] == "POST" and upload[0]["body"]["response_format"]["json_schema"]["strict"] is True
    assert json.loads(fake.requests[1].content)["completion_window"] == "24h"
    assert report.n_imported == 3 and report.n_failed == 1 and report.n_unscored == 1
    by_item = {j.item_id: j for j in sink.judgments.values()}
    assert by_item["i0"].score == 1 and by_item["i0"].model_version == "gpt-4o-mini-2024-07-18"
    assert by_item["i0"].cost_usd == pytest.approx((1000 * 0.15 + 100 * 0.6) / 1e6 / 2)
    assert by_item["i1"].unscored_reason.startswith("api_error: 400 invalid_request_error: Invalid schema")
    assert "i2" not in by_item  # expired: submitted again next time


def test_agentic_judges_cannot_be_batched(rubric):
    spec = JudgeSpec(id="a", model="anthropic/claude-sonnet-4-5", mode="agentic")
    with pytest.raises(ConfigError, match="agentic"):
        asyncio.run(run_batch(make_items(1), rubric, spec, InMemorySink(), provider_options={"env": KEYS}))


def test_python_graders_have_no_batch_mode(rubric, tmp_path, monkeypatch):
    (tmp_path / "g_mod.py").write_text("def f(item, rubric):\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = JudgeSpec(id="g", model="python/g_mod:f")
    with pytest.raises(ConfigError, match="no batch mode"):
        asyncio.run(run_batch(make_items(1), rubric, spec, InMemorySink()))


def test_batch_budget_submits_only_what_fits(rubric):
    fake = FakeAnthropicBatches(anthropic_answer, polls=0)
    report = asyncio.run(submit_batches(make_items(10), rubric, CLAUDE, InMemorySink(),
                                        provider=provider_for(CLAUDE, fake), budget_usd=0.03))
    assert report.stopped == "budget" and 0 < report.n_submitted < 10
