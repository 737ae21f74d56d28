"""A canary API key never reaches a Judgment, a log record, an error message or a traceback."""

from __future__ import annotations

import asyncio
import logging
import pickle
import traceback
from dataclasses import asdict

import pytest
from judge_fakes import CANARY, FakeClock, Transport, anthropic_error, openai_error

from workbench.judges import InMemorySink, ProviderError, RunAborted, get_provider, redact, run_judge
from workbench.models import JudgeSpec

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
