"""`mock/<name>`: a scripted chat model (Inspect's `mockllm`): no network, no key, no cost.

It is a chat provider like the others, so a judgment goes through the real
prompt, the run's gate, the verdict parsing and, for an agentic judge, the tool
loop; only the model's reply is scripted. Service, CLI and page tests declare
`model: mock/<anything>` in a rubric and drive the whole judge path with it.

Replies come from `verdicts`, given in code:

    get_provider("mock/m", verdicts=[1, 0, {"score": 5, "rationale": "", "evidence_steps": []}])
    get_provider("mock/m", verdicts=lambda item, request: 1 if "tests pass" in (item.output or "") else -1)
    judging.run(store, "g", "r", "j", provider_options={"verdicts": [...]})

Each entry of the list, or each value the callable returns, is one reply:

- an int: a verdict with that score (one off the scale is unscored `off_scale`, as from a real model);
- a dict: the arguments of the `submit_verdict` call, as they are;
- a str: the reply's text, read as a JSON verdict (as from a server without tool calls);
- a `ModelTurn`: the reply as it is (an agentic judge's tool calls, a refusal);
- an exception: raised (a `ProviderError` for a failed API call);
- None: the default rule.

A list is used in order, one entry per request, the last one repeating; with
concurrency above 1 the order in which items take entries is not fixed.

Without `verdicts` (a rubric run from the CLI or a page) the default rule
answers every request with the item's `reference` when it is a value of the
rubric's scale, so a test plants the expected score in the item, and with the
rubric's pass threshold otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from workbench.core.errors import ConfigError
from workbench.core.models import Item, JudgeSpec, Rubric
from workbench.judges.base import ChatProvider
from workbench.judges.prompting import VERDICT_TOOL, estimate_input_tokens, tokens_for_chars
from workbench.judges.types import ChatRequest, JudgeContext, JudgeOutcome, ModelTurn, ToolCall, Usage

Reply = int | dict | str | ModelTurn | BaseException | None
Script = Sequence[Reply] | Callable[[Item, ChatRequest], Reply]

# The item and rubric of the judgment in progress: each of the runner's workers is its own task, with its own copy.
_JUDGING: ContextVar[tuple[Item, Rubric]] = ContextVar("mock_judging")


def default_verdict(item: Item, rubric: Rubric) -> int:
    """The item's reference when it is a value of the scale, else the rubric's pass threshold."""
    try:
        score = int((item.reference or "").strip())
    except ValueError:
        return rubric.pass_threshold
    return score if score in rubric.scale else rubric.pass_threshold


class MockProvider(ChatProvider):
    provider = "mock"

    def __init__(self, model: str, *, verdicts: Script | None = None, **_: Any):
        if not model:
            raise ConfigError("mock/ needs a model name, any name, e.g. mock/scripted")
        if verdicts is not None and not callable(verdicts) and (isinstance(verdicts, (str, bytes)) or not verdicts):
            raise ConfigError("the mock provider's verdicts must be a non-empty list or a callable(item, request)")
        self.model = model
        self.script: Script | None = verdicts if verdicts is None or callable(verdicts) else list(verdicts)
        self.requests: list[ChatRequest] = []

    async def judge(self, item: Item, rubric: Rubric, spec: JudgeSpec, *,
                    ctx: JudgeContext | None = None) -> JudgeOutcome:
        token = _JUDGING.set((item, rubric))
        try:
            return await super().judge(item, rubric, spec, ctx=ctx)
        finally:
            _JUDGING.reset(token)

    def _next(self, item: Item, request: ChatRequest) -> Reply:
        if callable(self.script):
            return self.script(item, request)
        if isinstance(self.script, list):
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return None

    async def complete(self, request: ChatRequest) -> ModelTurn:
        judging = _JUDGING.get(None)
        if judging is None:
            raise ConfigError("the mock provider answers only inside judge(); call provider.judge(item, rubric, spec)")
        item, rubric = judging
        self.requests.append(request)
        reply = self._next(item, request)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, ModelTurn):
            return reply
        if reply is None:
            reply = default_verdict(item, rubric)
        if isinstance(reply, str):
            return self._turn(request, text=reply, tool_calls=[], stop_reason="stop", out_chars=len(reply))
        if isinstance(reply, int) and not isinstance(reply, bool):
            reply = {"rationale": f"Scripted verdict of {self.provider}/{self.model}.", "evidence_steps": [],
                     "score": reply}
        if not isinstance(reply, dict):
            raise ConfigError(f"the mock provider cannot reply with {type(reply).__name__}; give an int, a dict, "
                              "a str, a ModelTurn, an exception or None")
        call = ToolCall("mock_verdict", VERDICT_TOOL, reply)
        return self._turn(request, text=None, tool_calls=[call], stop_reason="tool_use",
                          out_chars=len(json.dumps(reply, default=str)))

    def _turn(self, request: ChatRequest, *, text: str | None, tool_calls: list[ToolCall], stop_reason: str,
              out_chars: int) -> ModelTurn:
        usage = Usage(input_tokens=estimate_input_tokens(request), output_tokens=tokens_for_chars(out_chars))
        return ModelTurn(text=text, tool_calls=tool_calls, stop_reason=stop_reason, usage=usage,
                         model_version=f"{self.provider}/{self.model}")
