"""The `mock/` provider, the one model-name parser and the registry the rubric loader asks."""

from __future__ import annotations

import asyncio
import logging

import pytest
from judge_fakes import turn

from workbench.core.errors import ConfigError, InputError, ModelNameError
from workbench.judges import InMemorySink, ProviderError, estimate_run, get_provider, run_judge
from workbench.judges import registry
from workbench.judges.providers.mock import MockProvider, default_verdict
from workbench.core.models import Item, JudgeSpec, ModelName, parse_model
from workbench.judges.rubrics import parse_rubric

MOCK = JudgeSpec(id="m", model="mock/scripted")


def items(*references: str | None) -> list[Item]:
    return [Item(id=f"i{n}", input=f"Task {n}", output="done", reference=ref) for n, ref in enumerate(references)]


def run(items_, rubric, spec=MOCK, **options):
    sink = InMemorySink()
    report = asyncio.run(run_judge(items_, rubric, spec, sink, concurrency=1, provider_options=options or None))
    return report, sorted(sink.judgments.values(), key=lambda j: j.item_id)


# --------------------------------------------------------------------------- parse_model


@pytest.mark.parametrize("model, parsed", [
    ("openai/gpt-4o", ModelName("openai", "gpt-4o")),
    ("anthropic/claude-sonnet-4-5", ModelName("anthropic", "claude-sonnet-4-5")),
    ("openai-api/vllm/Qwen2.5-72B", ModelName("openai-api", "Qwen2.5-72B", "vllm")),
    ("openai-api/ollama/meta-llama/Llama-3-8B", ModelName("openai-api", "meta-llama/Llama-3-8B", "ollama")),
    ("python/workbench.features.demo.graders:test_results", ModelName("python", "workbench.features.demo.graders:test_results")),
    ("mock/any/thing", ModelName("mock", "any/thing")),
])
def test_parse_model(model, parsed):
    assert parse_model(model) == parsed
    assert str(parsed) == model
    spec = JudgeSpec(id="j", model=model)
    assert (spec.provider, spec.model_name) == (parsed.provider, parsed.model)


@pytest.mark.parametrize("model, missing", [("gpt-4o", "provider"), ("/gpt-4o", "provider"), (None, "provider"),
                                            ("openai-api/llama", "service"), ("openai-api//llama", "service")])
def test_parse_model_refuses_what_is_not_a_model_name(model, missing):
    with pytest.raises(ModelNameError) as e:
        parse_model(model)
    assert e.value.missing == missing and isinstance(e.value, ValueError) and isinstance(e.value, ConfigError)


# --------------------------------------------------------------------------- the mock provider


def test_default_rule_echoes_a_reference_on_the_scale_else_the_pass_threshold(rubric):
    report, judgments = run(items("1", "-1", "exact answer: 42", None, "7"), rubric)
    assert [j.score for j in judgments] == [1, -1, 0, 0, 0]
    assert report.cost_usd == 0 and not report.cost_unknown and report.n_requests == 5
    assert all(j.cost_usd == 0.0 and j.model_version == "mock/scripted" for j in judgments)
    assert all(j.tokens_in > 100 and j.tokens_out > 0 for j in judgments)  # the one chars/4 estimate
    assert default_verdict(items("0")[0], rubric) == 0


def test_scripted_replies_go_through_verdict_parsing_and_the_runner(rubric):
    bad = ProviderError("mock", "scripted rejection", kind="bad_request", status_code=400)
    script = [1, {"score": 5, "rationale": "", "evidence_steps": []}, "not json", '{"score": -1, "rationale": "x",'
              ' "evidence_steps": []}', bad, None]
    report, judgments = run(items(*["0"] * 6), rubric, verdicts=script)
    assert [(j.score, j.unscored_reason) for j in judgments] == [
        (1, None), (None, "off_scale: 5"), (None, "unparseable: reply is not JSON"), (-1, None),
        (None, "api_error: 400 scripted rejection"), (0, None)]
    assert report.n_scored == 3 and report.n_unscored == 3


def test_a_callable_script_sees_the_item_and_the_request(rubric):
    seen = []

    def reply(item, request):
        seen.append((item.id, request.verdict_only))
        return 1 if item.id == "i0" else -1

    _, judgments = run(items(None, None), rubric, verdicts=reply)
    assert [j.score for j in judgments] == [1, -1] and seen == [("i0", True), ("i1", True)]


def test_agentic_judge_runs_the_tool_loop_on_scripted_turns(rubric, item):
    spec = JudgeSpec(id="a", model="mock/agent", mode="agentic")
    script = [turn(calls=[("read_steps", {"start": 3, "end": 4})]),
              turn(verdict_args={"rationale": "12 passed at step 4.", "evidence_steps": [4], "score": 0})]
    provider = get_provider(spec, verdicts=script)
    out = asyncio.run(provider.judge(item, rubric, spec))
    assert (out.score, out.evidence_steps, out.n_requests) == (0, (4,), 2)
    tool = next(t for t in out.trace if t["role"] == "tool")
    assert "12 passed" in tool["result"]
    assert len(provider.requests) == 2 and provider.requests[1].messages[-1]["role"] == "tool"


def test_mock_costs_nothing_in_the_estimate_and_under_a_budget(rubric, caplog):
    caplog.set_level(logging.WARNING)
    est = estimate_run(items(None, None), rubric, MOCK)
    assert est.cost_usd == 0.0 and est.max_cost_usd == 0.0 and est.input_tokens > 0
    sink = InMemorySink()
    report = asyncio.run(run_judge(items(None), rubric, MOCK, sink, budget_usd=0.01))
    assert report.n_scored == 1 and report.stopped is None and report.spent_usd == 0
    assert "no price" not in caplog.text


def test_the_mock_refuses_an_empty_script():
    with pytest.raises(ConfigError, match="non-empty list"):
        get_provider("mock/m", verdicts=[])
    with pytest.raises(ConfigError, match="needs a model name"):
        get_provider("mock/")


# --------------------------------------------------------------------------- the registry is the list


RUBRIC = """name: r
judges:
  - id: j
    model: {model}
"""


def test_the_rubric_loader_asks_the_registry(monkeypatch):
    monkeypatch.setattr(registry, "_PROVIDERS", dict(registry._PROVIDERS))
    with pytest.raises(InputError, match="model 'acme/m-1' has no known provider prefix"):
        parse_rubric(RUBRIC.format(model="acme/m-1"))

    @registry.model_provider("acme", pip="acme-sdk", sdk_title="the Acme SDK", family="acme")
    def _acme():
        return MockProvider

    spec = parse_rubric(RUBRIC.format(model="acme/m-1")).judges[0]
    assert (spec.provider, spec.model_name, spec.family) == ("acme", "m-1", "acme")
    assert "acme" in registry.provider_names()
    assert isinstance(get_provider(spec), MockProvider)


def test_families_and_services_come_from_the_registry_and_the_parser():
    family = {m: parse_rubric(RUBRIC.format(model=m)).judges[0].family
              for m in ("anthropic/claude-sonnet-4-5", "openai/gpt-4o", "openai-api/vllm/llama", "mock/m")}
    assert family == {"anthropic/claude-sonnet-4-5": "anthropic", "openai/gpt-4o": "openai",
                      "openai-api/vllm/llama": None, "mock/m": None}
    with pytest.raises(InputError, match="does not name a service.*openai-api/<service>/<model>"):
        parse_rubric(RUBRIC.format(model="openai-api/llama"))


def test_a_missing_sdk_names_the_pip_install_recorded_with_the_provider(monkeypatch):
    monkeypatch.setattr(registry, "_PROVIDERS", dict(registry._PROVIDERS))

    @registry.model_provider("needs-sdk", pip="acme-sdk[judges]", sdk_title="the Acme SDK")
    def _needs():
        from workbench.judges.types import SDKMissing

        def factory(model, **options):
            raise SDKMissing("needs-sdk")
        return factory

    with pytest.raises(ConfigError, match=r"needs-sdk/ provider needs the Acme SDK; run: pip install acme-sdk\[judges\]"):
        get_provider("needs-sdk/m")
