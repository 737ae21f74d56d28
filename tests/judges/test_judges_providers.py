"""Providers through the real SDK clients over httpx2.MockTransport, with documented response shapes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import httpx2
import pytest
from judge_fakes import Transport, anthropic_error, anthropic_message, openai_completion, openai_error, verdict

from workbench.core.errors import ConfigError
from workbench.judges import ProviderError, get_provider, provider_names, register_provider
from workbench.judges.base import JudgeContext
from workbench.core.models import JudgeSpec

ANTHROPIC = JudgeSpec(id="sonnet", model="anthropic/claude-sonnet-4-5", temperature=0.0)
OPENAI = JudgeSpec(id="mini", model="openai/gpt-4o-mini", temperature=0.0)
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test-key", "OPENAI_API_KEY": "sk-test-key"}


def judge(spec, transport, item, rubric, *, max_retries=2, ctx=None):
    async def go():
        provider = get_provider(spec, env=KEYS, http_client=transport.client(), max_retries=max_retries)
        try:
            return await provider.judge(item, rubric, spec, ctx=ctx)
        finally:
            await provider.aclose()
    return asyncio.run(go())


# --------------------------------------------------------------------------- registry


def test_importing_the_engine_imports_no_sdk():
    code = ("import sys, workbench.judges, workbench.judges.runner, workbench.judges.batch, workbench.judges.agentic;"
            "print(sorted(m for m in ('anthropic','openai','httpx2','streamlit','sqlite3','sqlite_utils') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_registry_knows_the_four_prefixes_and_says_what_is_missing(monkeypatch):
    assert {"anthropic", "openai", "openai-api", "python"} <= set(provider_names())
    with pytest.raises(ConfigError, match="needs a provider prefix"):
        get_provider("gpt-4o", env={})
    with pytest.raises(ConfigError, match="unknown judge provider 'gemini/'"):
        get_provider("gemini/pro", env={})
    with pytest.raises(ConfigError, match="set the environment variable ANTHROPIC_API_KEY"):
        get_provider("anthropic/claude-sonnet-4-5", env={})
    with pytest.raises(ConfigError, match="set the environment variable OPENAI_API_KEY"):
        get_provider("openai/gpt-4o", env={})
    with pytest.raises(ConfigError, match="set the environment variable MY_VLLM_BASE_URL"):
        get_provider("openai-api/my-vllm/llama-3", env={})
    with pytest.raises(ConfigError, match="set the environment variable MY_VLLM_API_KEY"):
        get_provider("openai-api/my-vllm/llama-3", env={"MY_VLLM_BASE_URL": "http://127.0.0.1:9/v1"})
    with pytest.raises(ConfigError, match="openai-api/<service>/<model>"):
        get_provider("openai-api/llama", env={})
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the SDK were not installed
    with pytest.raises(ConfigError, match="pip install anthropic"):
        get_provider("anthropic/claude-sonnet-4-5", env=KEYS)
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError, match="pip install openai"):
        get_provider("openai-api/vllm/llama", env={"VLLM_BASE_URL": "http://x/v1", "VLLM_API_KEY": "k"})


def test_openai_api_service_reads_its_env_and_model(loopback, item, rubric):
    spec = JudgeSpec(id="l", model="openai-api/loop-back/meta/llama-3.1-8b")
    provider = get_provider(spec, env=loopback.env("loop-back"))
    assert provider.model == "meta/llama-3.1-8b" and provider.provider == "openai-api"
    assert str(provider.client.base_url).startswith(loopback.base_url)
    outcome = asyncio.run(provider.judge(item, rubric, spec))
    assert outcome.score == 0 and outcome.model_version == "loopback-model-v1"
    body = loopback.bodies[-1]
    assert body["model"] == "meta/llama-3.1-8b" and body["max_tokens"] == 1024


def test_register_provider(monkeypatch):
    from judge_fakes import ScriptedProvider

    from workbench.judges import registry
    monkeypatch.setattr(registry, "_PROVIDERS", dict(registry._PROVIDERS))
    made = []

    def factory(model, **options):
        made.append((model, options))
        return ScriptedProvider([], model=model)

    register_provider("scripted", factory)
    assert get_provider("scripted/m-1", env={}, max_retries=0).model == "m-1"
    assert made == [("m-1", {"env": {}, "max_retries": 0})]
    register_provider("graders", "workbench.judges.providers.python:PythonProvider")  # loaded on first use
    assert "graders" in provider_names()


def test_python_grader(tmp_path, monkeypatch, rubric, item):
    (tmp_path / "my_graders.py").write_text(
        "def tests_pass(item, rubric):\n    return (0, 'tests pass') if 'passed' in str(item.trajectory) else -1\n"
        "def off(item, rubric):\n    return 5\n"
        "def boom(item, rubric):\n    raise RuntimeError('no results file')\n"
        "async def coro(item, rubric):\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for target, expected in [("tests_pass", (0, None)), ("off", (None, "off_scale: 5")),
                             ("boom", (None, "grader_error: RuntimeError: no results file")), ("coro", (1, None))]:
        spec = JudgeSpec(id="g", model=f"python/my_graders:{target}")
        out = asyncio.run(get_provider(spec).judge(item, rubric, spec))
        assert (out.score, out.unscored_reason) == expected
    with pytest.raises(ConfigError, match="cannot import module 'nope_graders'"):
        get_provider("python/nope_graders:f")
    with pytest.raises(ConfigError, match="must be python/<module>:<function>"):
        get_provider("python/my_graders")


def test_a_grader_named_by_its_module_before_the_move_still_grades(rubric, item):
    """Rubrics, stored judges and signed bundles written before the new layout name the demo's grader
    `python/workbench.demo.graders:test_results`: it keeps that name and grades as the moved module does."""
    import importlib

    from workbench.judges.providers.python import MOVED_MODULES

    for old, new in MOVED_MODULES.items():
        with pytest.raises(ImportError):
            importlib.import_module(old)  # gone: only the mapping finds it
        old_spec, new_spec = (JudgeSpec(id="t", model=f"python/{m}:test_results") for m in (old, new))
        before, after = (get_provider(s) for s in (old_spec, new_spec))
        assert before.model == f"{old}:test_results" and before.func is after.func
        was, now = asyncio.run(before.judge(item, rubric, old_spec)), asyncio.run(after.judge(item, rubric, new_spec))
        assert (was.score, was.unscored_reason, was.rationale) == (now.score, now.unscored_reason, now.rationale)
        assert was.model_version == f"python/{old}:test_results"  # the judge's own name, as it was recorded


# --------------------------------------------------------------------------- Anthropic


def test_anthropic_forced_tool_verdict_and_usage(item, rubric):
    t = Transport(anthropic_message(verdict(1, steps=[4]), cache_read=900, cache_write=100, input_tokens=200))
    out = judge(ANTHROPIC, t, item, rubric)
    assert (out.score, out.rationale, out.evidence_steps, out.unscored_reason) == (1, "Tests pass at step 3.", (4,), None)
    assert out.model_version == "claude-sonnet-4-5-20250929"
    assert (out.usage.input_tokens, out.usage.cached_tokens, out.usage.cache_write_tokens) == (1200, 900, 100)
    body = t.bodies()[0]
    assert body["model"] == "claude-sonnet-4-5" and body["max_tokens"] == 1024
    assert "temperature" not in body  # API 2026-10-21 refuses sampling parameters
    assert body["tool_choice"] == {"type": "tool", "name": "submit_verdict"}
    assert body["tools"][0]["input_schema"]["properties"]["score"]["enum"] == [-1, 0, 1]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"][0]["role"] == "user"
    assert t.requests[0].url.path == "/v1/messages"


@pytest.mark.parametrize("message, reason", [
    (anthropic_message(verdict(2)), "off_scale: 2"),
    (anthropic_message(None, text="I think it deserves a 1.", stop_reason="end_turn"),
     "unparseable: reply is not JSON"),
    (anthropic_message(None, text="", stop_reason="refusal",
                       stop_details={"type": "refusal", "category": None, "explanation": "Declined."}), "refusal"),
    (anthropic_message({"rationale": "cut"}, stop_reason="max_tokens"), "unparseable: cut at max_tokens"),
])
def test_anthropic_unscored_paths(item, rubric, message, reason):
    out = judge(ANTHROPIC, Transport(message), item, rubric)
    assert out.score is None and out.unscored_reason == reason


@pytest.mark.parametrize("failure", [
    anthropic_error(429, "rate_limit_error", "Number of requests has exceeded your rate limit."),
    anthropic_error(529, "overloaded_error", "Overloaded"),
    anthropic_error(500, "api_error", "Internal server error"),
])
def test_anthropic_retries_then_succeeds(item, rubric, failure, fast_sdk_retries):
    if failure.status_code == 429:
        failure.headers["retry-after"] = "0.05"
    t = Transport(failure, anthropic_message(verdict(0)))
    out = judge(ANTHROPIC, t, item, rubric)
    assert out.score == 0 and len(t.requests) == 2
    if failure.status_code == 429:  # the SDK waited as told before trying again
        assert t.times[1] - t.times[0] >= 0.05


def test_anthropic_error_after_retries_is_sanitized(item, rubric, fast_sdk_retries):
    t = Transport(anthropic_error(529, "overloaded_error", "Overloaded"))
    with pytest.raises(ProviderError) as info:
        judge(ANTHROPIC, t, item, rubric, max_retries=1)
    err = info.value
    assert (err.kind, err.status_code, err.request_id, err.message) == (
        "overloaded", 529, "req_011CSHoEeqs5C35K2UUqR7Fy", "Overloaded")
    assert err.retryable and err.__context__ is None and err.__cause__ is None
    assert len(t.requests) == 2


# --------------------------------------------------------------------------- OpenAI


def test_openai_strict_schema_verdict_and_usage(item, rubric):
    t = Transport(openai_completion(json.dumps(verdict(-1, steps=[2])), cached_tokens=1024, prompt_tokens=1500))
    out = judge(OPENAI, t, item, rubric)
    assert (out.score, out.evidence_steps) == (-1, (2,))
    assert (out.usage.input_tokens, out.usage.cached_tokens, out.usage.output_tokens) == (1500, 1024, 70)
    assert out.model_version == "gpt-4o-2024-08-06"
    body = t.bodies()[0]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["required"]) == {"score", "rationale", "evidence_steps"}
    assert body["messages"][0]["role"] == "system" and body["max_completion_tokens"] == 1024
    assert t.requests[0].url.path == "/v1/chat/completions"
    assert t.requests[0].headers["authorization"] == "Bearer sk-test-key"


@pytest.mark.parametrize("completion, reason", [
    (openai_completion(json.dumps(verdict(3))), "off_scale: 3"),
    (openai_completion("Score: +1, because the tests pass."), "unparseable: reply is not JSON"),
    (openai_completion(None, refusal="I'm sorry, I can't help with that."), "refusal"),
    (openai_completion('{"rationale": "The patch', finish_reason="length"), "unparseable: cut at max_tokens"),
    (openai_completion(None, finish_reason="content_filter"), "refusal"),
])
def test_openai_unscored_paths(item, rubric, completion, reason):
    out = judge(OPENAI, Transport(completion), item, rubric)
    assert out.score is None and out.unscored_reason == reason


@pytest.mark.parametrize("status", [429, 500, 503])
def test_openai_retries_then_succeeds(item, rubric, status, fast_sdk_retries):
    headers = {"retry-after": "0.05"} if status == 429 else {}
    t = Transport(openai_error(status, "Rate limit reached" if status == 429 else "The server had an error",
                               "requests" if status == 429 else "server_error", headers=headers),
                  openai_completion(json.dumps(verdict(1))))
    out = judge(OPENAI, t, item, rubric)
    assert out.score == 1 and len(t.requests) == 2
    if status == 429:
        assert t.times[1] - t.times[0] >= 0.05


def test_openai_400_is_a_bad_request(item, rubric):
    t = Transport(openai_error(400, "This model's maximum context length is 128000 tokens.",
                               code="context_length_exceeded"))
    with pytest.raises(ProviderError) as info:
        judge(OPENAI, t, item, rubric)
    assert info.value.kind == "bad_request" and not info.value.retryable and not info.value.fatal
    assert info.value.unscored_reason().startswith("api_error: 400 This model's maximum context length")


def test_the_gate_sees_every_request(item, rubric):
    seen = []

    class Gate:
        async def before(self, request):
            seen.append(("before", request.max_tokens))
            return "ticket"

        def after(self, ticket, usage):
            seen.append(("after", ticket, usage.total if usage else None))

    judge(OPENAI, Transport(openai_completion(json.dumps(verdict(0)))), item, rubric, ctx=JudgeContext(gate=Gate()))
    assert seen == [("before", 1024), ("after", "ticket", 1170)]


def test_connection_error_is_retryable_and_sanitized(item, rubric, fast_sdk_retries):
    def refuse(request):
        raise httpx2.ConnectError("connection refused")
    with pytest.raises(ProviderError) as info:
        judge(OPENAI, Transport(refuse), item, rubric, max_retries=1)
    assert info.value.kind == "connection" and info.value.retryable
