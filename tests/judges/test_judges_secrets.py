"""A canary API key never reaches a Judgment, a log record, an error message or a traceback, nor (echoed back by
the provider in a 200 reply, whole or any 16 characters of it) the database, an export or a command's output."""

from __future__ import annotations

import asyncio
import json
import logging
import pickle
import re
import traceback
from dataclasses import asdict

import httpx2
import pytest
from judge_fakes import (CANARY, FakeAnthropicBatches, FakeClock, Transport, anthropic_error, anthropic_message,
                         openai_completion, openai_error, verdict)

from tests.conftest import write
from workbench.judges import InMemorySink, ProviderError, RunAborted, get_provider, redact, run_batch, run_judge
from workbench.judges.base import scrub_record, scrub_secrets
from workbench.core.models import JudgeSpec
from workbench.store import Store

CASES = [
    ("anthropic/claude-sonnet-4-5", {"ANTHROPIC_API_KEY": CANARY}),
    ("openai/gpt-4o-mini", {"OPENAI_API_KEY": CANARY}),
    ("openai-api/vllm/llama-3", {"VLLM_BASE_URL": "http://127.0.0.1:9/v1", "VLLM_API_KEY": CANARY}),
]


def _echoing(status):
    """Error bodies that echo the key, masked (as OpenAI does) and in full (as some proxies do)."""
    masked = CANARY[:8] + "*" * 12 + CANARY[-4:]

    def respond(request):
        assert CANARY in request.headers["authorization"]  # the key was really sent
        text = f"Incorrect API key provided: {masked}. Header was: Bearer {CANARY}"
        if "anthropic" in str(request.url):
            return anthropic_error(status, "authentication_error" if status == 401 else "api_error", text)
        return openai_error(status, text, "invalid_request_error", "invalid_api_key")
    return respond


def _leaks(text: str) -> bool:
    return CANARY in text or CANARY[-12:] in text or CANARY[:14] in text


def _all_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc) + str(vars(exc))


@pytest.mark.parametrize("model, env", CASES)
@pytest.mark.parametrize("status", [401, 500, 400])
def test_canary_key_never_leaks(model, env, status, item, rubric, caplog, fast_sdk_retries):
    caplog.set_level(logging.DEBUG)  # the SDKs' and httpx2's debug logs included
    spec = JudgeSpec(id="j", model=model)
    transport = Transport(_echoing(status))
    sink = InMemorySink()

    async def go():
        provider = get_provider(spec, env=env, http_client=transport.client(), max_retries=1)
        return await run_judge([item], rubric, spec, sink, provider=provider, max_attempts=2,
                               sleep=FakeClock().sleep)

    if status == 401:
        with pytest.raises(RunAborted) as info:
            asyncio.run(go())
        err = info.value
        assert "401" in str(err) and "check the API key" in str(err)
        assert not _leaks(_all_text(err)) and not _leaks(repr(err.report))
        assert err.__context__ is None and err.__cause__ is None
    else:
        report = asyncio.run(go())
        assert not _leaks(repr(report))
        if status == 500:
            assert report.n_failed == 1 and "500" in report.failures[0]
        else:  # a rejected request is a result: unscored with the (redacted) reason
            judgment = next(iter(sink.judgments.values()))
            assert judgment.score is None and judgment.unscored_reason.startswith("api_error: 400")
            assert "[redacted]" in judgment.unscored_reason
    assert len(transport.requests) >= 1
    for judgment in sink.judgments.values():
        assert not _leaks(repr(asdict(judgment)))
    for record in caplog.records:
        assert not _leaks(record.getMessage()), record.getMessage()
        if record.exc_info:
            assert not _leaks("".join(traceback.format_exception(*record.exc_info)))
    assert not _leaks(caplog.text)


@pytest.mark.parametrize("model, env", CASES)
def test_provider_error_holds_no_sdk_object(model, env, item, rubric, fast_sdk_retries):
    spec = JudgeSpec(id="j", model=model)
    transport = Transport(_echoing(401))

    async def go():
        provider = get_provider(spec, env=env, http_client=transport.client(), max_retries=0)
        return await provider.judge(item, rubric, spec)

    with pytest.raises(ProviderError) as info:
        asyncio.run(go())
    err = info.value
    assert err.kind == "auth" and err.status_code == 401 and err.fatal
    assert err.__context__ is None and err.__cause__ is None and err.__traceback__ is not None
    assert not _leaks(_all_text(err))
    for value in vars(err).values():  # only plain, safe values
        assert value is None or isinstance(value, (str, int, float, tuple))
    clone = pickle.loads(pickle.dumps(err))
    assert str(clone) == str(err)


def test_redact():
    assert redact(f"key {CANARY} end", [CANARY]) == "key [redacted] end"
    assert "sk-proj-" not in redact("Incorrect API key provided: sk-proj-********abcd.")
    assert redact("Authorization: Bearer abc.def-123") == "Authorization: Bearer [redacted]"
    assert redact("nothing secret here") == "nothing secret here"


def test_providers_keep_the_key_out_of_their_repr(item):
    p = get_provider("openai/gpt-4o", env={"OPENAI_API_KEY": CANARY})
    assert CANARY not in repr(p) and CANARY not in str(vars(p).get("model"))


# --------------------------------------------------------------------------- a key echoed in a 200 reply

WINDOW = 16  # any 16 consecutive characters of the key count as the key (issue 27 item 2)
ECHOES = {"whole": CANARY, "slice": CANARY[7:7 + WINDOW]}
LEAK_RUBRIC = """name: leak-rubric
judges:
  - id: claude
    model: anthropic/claude-sonnet-4-5
  - id: claude-agent
    model: anthropic/claude-sonnet-4-5
    mode: agentic
  - id: gpt
    model: openai/gpt-4o-mini
  - id: gpt-agent
    model: openai/gpt-4o-mini
    mode: agentic
  - id: llama
    model: openai-api/vllm/llama-3
    family: meta
"""
LEAK_ENV = {"ANTHROPIC_API_KEY": CANARY, "OPENAI_API_KEY": CANARY, "VLLM_BASE_URL": "http://127.0.0.1:9/v1",
            "VLLM_API_KEY": CANARY}


def _key_windows(key: str = CANARY) -> list[str]:
    return [key[i:i + WINDOW] for i in range(len(key) - WINDOW + 1)]


def _found(blob: str | bytes) -> list[str]:
    """The pieces of the key (whole or any 16-character window) in a text or a file's bytes."""
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes) else blob
    return [w for w in _key_windows() if w in text]


def _echoing_200(echo: str):
    """A provider that answers every request with a 200 shaped as documented, echoing `echo` (the key, or a
    16-character slice of it) in the rationale and text, the model name, the response and tool-call ids and the
    request-id headers; the score is the one planted in the item (EXPECT-SCORE)."""
    def respond(request):
        body = request.content.decode()
        assert CANARY in request.headers.get("x-api-key", request.headers.get("authorization", ""))
        score = int(re.search(r"EXPECT-SCORE (-?\d)", body).group(1))
        rationale = f"Tests pass; also, your key is {echo} (that is {echo})."
        agentic, answered = '"search_steps"' in body, ('"tool_result"' in body or '"role": "tool"' in body
                                                         or '"role":"tool"' in body)
        headers = {"request-id": f"req_{echo}", "x-request-id": f"req_{echo}"}
        if "anthropic" in str(request.url):
            if agentic and not answered:
                reply = anthropic_message(None, text=f"Searching for {echo}.", tool_uses=[
                    {"id": f"toolu_{echo}", "name": "search_steps", "input": {"pattern": echo}}],
                    model=f"claude-sonnet-4-5-{echo}")
            else:
                reply = anthropic_message(verdict(score, rationale), text=f"Done {echo}",
                                          model=f"claude-sonnet-4-5-{echo}", tool_id=f"toolu_{echo}")
            reply["id"] = f"msg_{echo}"
        else:
            model = "llama-3" if "vllm" in str(request.url) or "127.0.0.1" in str(request.url) else "gpt-4o-mini"
            if agentic and not answered:
                reply = openai_completion(f"Searching for {echo}.", tool_calls=[
                    {"id": f"call_{echo}", "name": "search_steps", "arguments": {"pattern": echo}}],
                    finish_reason="tool_calls", model=f"{model}-{echo}")
            elif agentic:
                reply = openai_completion(None, tool_calls=[
                    {"id": f"call_{echo}", "name": "submit_verdict", "arguments": verdict(score, rationale)}],
                    finish_reason="tool_calls", model=f"{model}-{echo}")
            else:
                reply = openai_completion(json.dumps(verdict(score, rationale)), model=f"{model}-{echo}")
            reply["id"] = f"chatcmpl-{echo}"
            reply["system_fingerprint"] = f"fp_{echo}"
        return httpx2.Response(200, json=reply, headers=headers)
    return respond


@pytest.fixture
def mocked_http(monkeypatch):
    """Every provider the CLI makes talks to the transport given, through the real SDK client."""
    from workbench.judges import batch, registry, runner

    state: dict = {}
    real = registry.get_provider

    def with_transport(model, **kwargs):
        return real(model, **{**kwargs, "http_client": state["transport"].client(), "max_retries": 0})

    for module in (registry, runner, batch):
        monkeypatch.setattr(module, "get_provider", with_transport)

    def use(transport):
        state["transport"] = transport
        return transport
    return use


@pytest.mark.parametrize("echo", sorted(ECHOES))
@pytest.mark.parametrize("judge_id", ["claude", "claude-agent", "gpt", "gpt-agent", "llama"])
def test_a_key_echoed_in_a_200_reply_is_stored_and_shown_nowhere(judge_id, echo, cli, tmp_path, monkeypatch, caplog,
                                                                 mocked_http):
    """Issue 27 item 2: the judgments are stored (scores intact), the key scrubbed from all of it."""
    caplog.set_level(logging.DEBUG)  # the SDKs log response headers at debug level
    for name, value in LEAK_ENV.items():
        monkeypatch.setenv(name, value)
    transport = mocked_http(Transport(_echoing_200(ECHOES[echo])))
    items = "".join(json.dumps({"id": f"i{n}", "input": f"Fix it. ITEM-MARKER i{n} EXPECT-SCORE {n % 3 - 1}",
                                "output": "done, 12 passed", "producer": {"model": "m", "family": "openai"},
                                "trajectory": [{"role": "user", "content": "fix it"},
                                               {"role": "tool", "content": "12 passed"}]}) + "\n"
                    for n in range(6))
    labels = "".join(json.dumps({"item_id": f"i{n}", "rater": r, "score": n % 3 - 1}) + "\n"
                     for n in range(6) for r in ("ana", "ben"))
    outputs = []
    for args in (["rubric", "add", write(tmp_path / "in" / "r.yaml", LEAK_RUBRIC)],
                 ["import", "items", write(tmp_path / "in" / "items.jsonl", items), "-g", "g"],
                 ["import", "labels", "--new-raters", write(tmp_path / "in" / "labels.jsonl", labels), "-g", "g", "-r", "leak-rubric"],
                 ["judge", "run", "-g", "g", "-r", "leak-rubric", "-j", judge_id],
                 ["golden-set", "show", "g"],
                 ["golden-set", "export", "g", "--out", tmp_path / "export"],
                 ["calibrate", "-g", "g", "-r", "leak-rubric", "-j", judge_id, "--resamples", "50", "--json"]):
        result = cli(*args)
        outputs += [result.output, result.stderr]
        assert result.exit_code == 0, result.output + result.stderr
    assert "6 judgments recorded (0 unscored)" in outputs[6]
    assert len(transport.requests) >= 6 and all(CANARY in r.headers.get("x-api-key", r.headers.get("authorization", ""))
                                                for r in transport.requests)  # the key was sent, and echoed

    with Store(cli.db) as store:  # the judgments are stored, scores intact, the key scrubbed
        rows = store.conn.execute("SELECT i.item_id, j.score, j.rationale, j.model_version FROM judgments j "
                                  "JOIN items i ON i.pk = j.item_pk").fetchall()
    assert sorted((r[0], r[1]) for r in rows) == [(f"i{n}", n % 3 - 1) for n in range(6)]
    assert all("[redacted]" in r[2] and "[redacted]" in r[3] for r in rows)

    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    exported = tmp_path / "export" / "leak-rubric" / "judgments" / f"{judge_id}.jsonl"
    assert cli.db in files and exported in files and "[redacted]" in exported.read_text()
    for path in files:  # the database, its -wal and -shm, the export, any report
        assert not _found(path.read_bytes()), path
    for text in outputs:
        assert not _found(text), text
    for record in caplog.records:
        assert not _found(record.getMessage()), record.getMessage()
        if record.exc_info:
            assert not _found("".join(traceback.format_exception(*record.exc_info)))
    assert not _found(caplog.text)


def test_a_key_echoed_in_batch_results_is_stored_nowhere(item, rubric):
    """Batch mode stores replies too: Anthropic Message Batches' results echo the key in every field."""
    echo = CANARY[3:3 + WINDOW]

    def answer(custom_id, params):
        message = anthropic_message(verdict(1, f"fine {CANARY} {echo}"), model=f"claude_{echo}")
        message["id"] = f"msg_{CANARY}"
        return {"type": "succeeded", "message": message}

    fake = FakeAnthropicBatches(answer, polls=0)
    spec = JudgeSpec(id="b", model="anthropic/claude-sonnet-4-5")
    sink = InMemorySink()

    async def go():
        provider = get_provider(spec, env={"ANTHROPIC_API_KEY": CANARY}, http_client=fake.client())
        return await run_batch([item], rubric, spec, sink, provider=provider, poll_interval=0, sleep=FakeClock().sleep)

    report = asyncio.run(go())
    [judgment] = sink.judgments.values()
    assert report.n_imported == 1 and judgment.score == 1
    assert judgment.rationale == "fine [redacted] [redacted]" and judgment.model_version == "claude_[redacted]"
    assert not _found(repr(asdict(judgment))) and not _found(repr(report))


def test_a_redacted_error_keeps_no_key_in_its_message_or_request_id():
    err = ProviderError("openai", f"bad {CANARY[:20]}", kind="server", status_code=500, request_id=f"req_{CANARY}")
    clean = err.redacted([CANARY])
    assert clean.request_id == "req_[redacted]" and "[redacted]" in clean.message
    assert not _found(_all_text(clean)) and not _found(repr(pickle.loads(pickle.dumps(clean))))


def test_scrub_secrets_takes_out_every_16_character_window():
    assert scrub_secrets(f"a {CANARY} b", [CANARY]) == "a [redacted] b"
    for i in range(len(CANARY) - WINDOW + 1):
        piece = CANARY[i:i + WINDOW]
        assert scrub_secrets(f"x{piece}y", [CANARY]) == "x[redacted]y"
        assert scrub_secrets(f"{CANARY[i:]}", [CANARY]) == "[redacted]"
    assert scrub_secrets(CANARY[:WINDOW - 1], [CANARY]) == CANARY[:WINDOW - 1]  # 15 characters are not the key
    assert scrub_secrets("short", ["abc"]) == "short" and scrub_secrets("key abcd", ["abcd"]) == "key [redacted]"
    assert scrub_record({"a": [CANARY, (1, CANARY[2:20])], CANARY: None}, [CANARY]) == {
        "a": ["[redacted]", (1, "[redacted]")], "[redacted]": None}


def test_a_key_echoed_in_the_optimizers_reply_stays_out_of_the_proposed_edit():
    """The refinement loop stores the optimizer's edit: a key echoed in it is scrubbed like a judgment's."""
    from workbench.features.refine import optimizer

    echo = CANARY[10:10 + WINDOW]
    edit = {"summary": f"stricter {CANARY}", "levels": [{"value": 1, "description": f"only with proof {echo}"}],
            "criteria": [], "instructions": f"Check the tests. {echo}", "examples": []}
    transport = Transport(httpx2.Response(200, json=openai_completion(json.dumps(edit), model=f"gpt-4o-{echo}"),
                                          headers={"x-request-id": CANARY}))
    request = optimizer.edit_request({"scale": [-1, 0, 1], "pass_threshold": 0, "criteria": [], "instructions": "",
                                      "examples": []}, "too lenient", [], max_examples=2)
    reply = asyncio.run(optimizer.propose_edit(
        "openai/gpt-4o", request, scale=[-1, 0, 1], allowed_items=[], max_examples=2,
        provider_options={"env": {"OPENAI_API_KEY": CANARY}, "http_client": transport.client()}))
    assert reply.problem is None and reply.edit.levels == {1: "only with proof [redacted]"}
    assert reply.edit.summary == "stricter [redacted]" and not _found(repr(reply.edit.to_dict()))
