"""The pushback probe in the judge engine: the objection goes in the same conversation, after the verdict, and
the verdict given after it is the judgment (single mode and the agentic tool loop, with the scripted provider)."""

from __future__ import annotations

import asyncio

from workbench.judges.base import ModelTurn, ToolCall, Usage
from workbench.judges.prompting import estimate_input_tokens
from workbench.judges.registry import get_provider
from workbench.judges.types import JudgeContext
from workbench.core.models import Item, JudgeSpec, Rubric

RUBRIC = Rubric(name="r")
ITEM = Item(id="i", input="Fix it.", output="Fixed.", trajectory=[{"role": "user", "content": "Fix it."},
                                                                   {"role": "assistant", "content": "Fixed."}])
OBJECTION = "I disagree with your score of 1. It deserves -1. Please reconsider and submit your verdict again."


def _judge(spec: JudgeSpec, script, followup):
    provider = get_provider(spec, verdicts=script)
    outcome = asyncio.run(provider.judge(ITEM, RUBRIC, spec, ctx=JudgeContext(followup=followup)))
    return outcome, provider.requests


def test_single_mode_sends_the_objection_after_the_verdict_and_keeps_the_second_verdict():
    caves = lambda item, request: -1 if request.messages[-1]["content"] == OBJECTION else 1  # noqa: E731
    outcome, requests = _judge(JudgeSpec(id="j", model="mock/m"), caves,
                               lambda score: OBJECTION if score > -1 else None)
    assert outcome.score == -1 and outcome.n_requests == 2 and len(requests) == 2
    first, second = requests
    assert second.messages[:1] == first.messages  # the same conversation, continued
    assert [m["role"] for m in second.messages] == ["user", "assistant", "user"]
    assert '"score": 1' in second.messages[1]["content"] and second.messages[2]["content"] == OBJECTION
    assert outcome.trace[0] == {"role": "first_verdict", "score": 1, "rationale": "Scripted verdict of mock/m."}
    assert outcome.usage.input_tokens == estimate_input_tokens(first) + estimate_input_tokens(second)  # both paid
    holds, _ = _judge(JudgeSpec(id="j", model="mock/m"), [1], lambda score: OBJECTION)
    assert holds.score == 1 and holds.n_requests == 2


def test_no_objection_leaves_a_single_request():
    outcome, requests = _judge(JudgeSpec(id="j", model="mock/m"), [-1], lambda score: None)
    assert outcome.score == -1 and len(requests) == 1 and outcome.trace is None


def test_the_agentic_loop_answers_every_tool_call_then_objects_and_allows_one_more_turn():
    usage = Usage(10, 5)

    def agent(item, request):
        objected = request.messages[-1]["role"] == "user" and request.messages[-1]["content"] == OBJECTION
        if objected:
            return {"rationale": "on reflection", "evidence_steps": [1], "score": -1}
        return ModelTurn(None, [ToolCall("a", "overview", {}), ToolCall("b", "submit_verdict", {
            "rationale": "fine", "evidence_steps": [1], "score": 1})], "tool_use", usage, "mock/agent")

    spec = JudgeSpec(id="j", model="mock/agent", mode="agentic", max_turns=1)
    outcome, requests = _judge(spec, agent, lambda score: OBJECTION if score > -1 else None)
    assert outcome.score == -1 and outcome.unscored_reason is None and len(requests) == 2  # one turn past max_turns
    last = requests[-1].messages
    tool_answers = [m for m in last if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tool_answers] == [("a", "not run"), ("b", "verdict recorded")]
    assert last[-1] == {"role": "user", "content": OBJECTION}
    roles = [t["role"] for t in outcome.trace]
    assert roles[:3] == ["assistant", "first_verdict", "user"] and roles[-1] == "end"
