"""A judge's confidence from the provider's token log-probabilities: the OpenAI SDK over httpx2.MockTransport with
chat.completion bodies carrying ``choices[0].logprobs.content[].top_logprobs`` as the API reference documents them
(``openai/types/chat/chat_completion_token_logprob.py``: token, logprob, bytes, top_logprobs)."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from judge_fakes import Transport, make_items, openai_completion

from workbench.core.errors import ConfigError
from workbench.core.models import JudgeSpec, Rubric
from workbench.judges import InMemorySink, get_provider, run_judge
from workbench.judges.prompting import verdict_confidence
from workbench.judges.types import TokenLogprob

OPENAI = JudgeSpec(id="mini", model="openai/gpt-4o-mini", temperature=0.0)
KEYS = {"OPENAI_API_KEY": "sk-test-key"}


def _entry(token: str, p: float, top: list[tuple[str, float]] = ()) -> dict:
    """One ``logprobs.content`` entry: the token taken with its log-probability and the top alternatives."""
    lp = math.log(p)
    alternatives = [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())} for t, q in top] or \
        [{"token": token, "logprob": lp, "bytes": list(token.encode())}]
    return {"token": token, "logprob": lp, "bytes": list(token.encode()), "top_logprobs": alternatives}


def completion_with_logprobs(score_tokens: list[dict]) -> dict:
    """A strict-JSON verdict tokenised as a tokenizer might, the score's tokens as given."""
    head = ['{"', "r", "ationale", '":"', "Tests", " pass", " at", " step", " ", "4", '.",', '"', "evidence",
            "_steps", '":[', "4", '],"', "score", '":']
    content = [_entry(t, 0.999) for t in head] + score_tokens + [_entry("}", 0.9999)]
    text = "".join(e["token"] for e in content)
    body = openai_completion(text)
    body["choices"][0]["logprobs"] = {"content": content, "refusal": None}
    return body


def judge(spec, transport, item, rubric, env=KEYS):
    async def go():
        provider = get_provider(spec, env=env, http_client=transport.client(), max_retries=0)
        try:
            return await provider.judge(item, rubric, spec)
        finally:
            await provider.aclose()
    return asyncio.run(go())


def test_the_verdict_tokens_probability_among_the_scales(item, rubric):
    # "1" taken with 0.80; "0" 0.15; "-" 0.04 (only -1 begins so on this scale); "2" is no value of the scale
    body = completion_with_logprobs([_entry("1", 0.80, [("1", 0.80), ("0", 0.15), ("-", 0.04), ("2", 0.01)])])
    t = Transport(body)
    out = judge(OPENAI, t, item, rubric)
    assert out.score == 1 and out.confidence == pytest.approx(0.80 / 0.99, abs=1e-9)
    sent = t.bodies()[0]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 5  # the scale's 3 values and room for others
    # a negative verdict spelled "-" then "1": P(-1) = P("-") x P("1" after "-")
    body = completion_with_logprobs([_entry("-", 0.6, [("-", 0.6), ("0", 0.3), ("1", 0.1)]),
                                     _entry("1", 0.99, [("1", 0.99), ("2", 0.01)])])
    out = judge(OPENAI, Transport(body), item, rubric)
    assert out.score == -1 and out.confidence == pytest.approx(0.6 * 0.99 / (0.6 * 0.99 + 0.3 + 0.1), abs=1e-9)
    # a reply without logprobs (a server that ignores the request) has no confidence: absent stays absent
    out = judge(OPENAI, Transport(openai_completion(json.dumps({"rationale": "r", "evidence_steps": [],
                                                                "score": 0}))), item, rubric)
    assert out.score == 0 and out.confidence is None


def test_who_is_asked_for_logprobs(item, rubric, monkeypatch):
    plain = openai_completion(json.dumps({"rationale": "r", "evidence_steps": [], "score": 0}))
    # off by request, and for reasoning models that refuse them
    t = Transport(plain)
    judge(OPENAI, t, item, rubric, env={**KEYS, "OPENAI_LOGPROBS": "0"})
    assert "logprobs" not in t.bodies()[0] and "top_logprobs" not in t.bodies()[0]
    t = Transport(plain)
    judge(JudgeSpec(id="o3", model="openai/o3-mini"), t, item, rubric)
    assert "logprobs" not in t.bodies()[0]
    # an OpenAI-compatible server: off unless its <SERVICE>_LOGPROBS says 1
    env = {"MY_VLLM_BASE_URL": "http://127.0.0.1:9/v1", "MY_VLLM_API_KEY": "k"}
    vllm = JudgeSpec(id="llama", model="openai-api/my-vllm/llama-3")
    t = Transport(plain)
    judge(vllm, t, item, rubric, env=env)
    assert "logprobs" not in t.bodies()[0]
    t = Transport(plain)
    judge(vllm, t, item, rubric, env={**env, "MY_VLLM_LOGPROBS": "1"})
    assert t.bodies()[0]["logprobs"] is True
    with pytest.raises(ConfigError, match="MY_VLLM_LOGPROBS is 'maybe', not 0 or 1"):
        get_provider(vllm, env={**env, "MY_VLLM_LOGPROBS": "maybe"})
    # agentic turns (tool calls) carry no verdict text to read: not asked
    from workbench.judges.prompting import single_request

    provider = get_provider(OPENAI, env=KEYS)
    request = single_request(item, rubric, OPENAI)
    assert provider.params(request)["logprobs"] is True
    from dataclasses import replace
    assert "logprobs" not in provider.params(replace(request, verdict_only=False))


def test_a_run_records_the_confidence_with_each_judgment():
    rubric = Rubric(name="loop", judges=(OPENAI,))
    bodies = [completion_with_logprobs([_entry(str(s), p, [(str(s), p), ("0" if s else "1", 1 - p)])])
              for s, p in ((1, 0.9), (0, 0.7))]
    t = Transport(*bodies)
    sink = InMemorySink()

    async def go():
        provider = get_provider(OPENAI, env=KEYS, http_client=t.client(), max_retries=0)
        try:
            return await run_judge(make_items(2), rubric, OPENAI, sink, concurrency=1, provider=provider)
        finally:
            await provider.aclose()

    report = asyncio.run(go())
    assert report.n_scored == 2
    got = sorted((j.score, j.confidence) for j in sink.judgments.values())
    assert got == [(0, pytest.approx(0.7)), (1, pytest.approx(0.9))]


@pytest.mark.parametrize("tokens, score, values, expected", [
    # a leading space and the closing brace in the same token as the value
    ([TokenLogprob('{"score":', -0.01), TokenLogprob(" 3}", math.log(0.5), ((" 3}", math.log(0.5)),
                                                                         (" 4}", math.log(0.3)),
                                                                         (" 2", math.log(0.1))))],
     3, (1, 2, 3, 4, 5), 0.5 / 0.9),
    # the key and the value in one token: the alternatives begin with the same key text
    ([TokenLogprob('{"score":1', math.log(0.7), (('{"score":1', math.log(0.7)), ('{"score":0', math.log(0.2))))],
     1, (-1, 0, 1), 0.7 / 0.9),
    # several values begin with "-" on a branch not taken: their split cannot be told
    ([TokenLogprob('"score":', 0.0), TokenLogprob("1", math.log(0.7), (("1", math.log(0.7)), ("-", math.log(0.2))))],
     1, (-2, -1, 0, 1, 2), None),
    # no "score" key in the text
    ([TokenLogprob("1", 0.0)], 1, (0, 1), None),
    # the chosen token outside the top list still counts
    ([TokenLogprob('"score":', 0.0), TokenLogprob("0", math.log(0.05), (("1", math.log(0.9)),))], 0, (0, 1),
     0.05 / 0.95),
])
def test_verdict_confidence_by_hand(tokens, score, values, expected):
    got = verdict_confidence(tokens, score, values)
    assert (got is None) if expected is None else got == pytest.approx(expected, abs=1e-9)
