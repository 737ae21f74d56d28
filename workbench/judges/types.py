"""The neutral types every judge backend speaks: requests, replies, usage, outcomes, the run's context.

This module imports nothing else from the judge engine, so `prompting`,
`agentic` and the providers (`base` and the SDK modules) all build on it
without importing one another in a circle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from workbench.core.errors import WorkbenchError

WorkKey = tuple[str, str, int]
"""(judge config hash, item content hash, repeat): the identity of one judgment."""


@dataclass
class Usage:
    """Tokens billed for one or more calls.

    `input_tokens` counts every input token, cached ones included (OpenAI's
    `prompt_tokens`; Anthropic's `input_tokens + cache_read + cache_creation`).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                     self.cached_tokens + other.cached_tokens, self.cache_write_tokens + other.cache_write_tokens)

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class ToolDef:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | str  # a str when the model sent arguments that are not a JSON object


@dataclass(frozen=True)
class TokenLogprob:
    """One token of a reply with its log-probability and the most likely tokens at its place (OpenAI's
    ``choices[].logprobs.content[]``: ``token``, ``logprob``, ``top_logprobs``)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass
class ModelTurn:
    """One reply of a chat model, in provider-neutral form."""

    text: str | None
    tool_calls: list[ToolCall]
    stop_reason: str | None
    usage: Usage
    model_version: str | None
    refusal: str | None = None  # set when the model or the API declined to answer
    logprobs: tuple[TokenLogprob, ...] | None = None  # the text's tokens, where the provider gave them


@dataclass(frozen=True)
class ChatRequest:
    """A provider-neutral request.

    `messages` are dicts: {"role": "user", "content": str},
    {"role": "assistant", "content": str | None, "tool_calls": [ToolCall]},
    {"role": "tool", "tool_call_id": str, "name": str, "content": str, "is_error": bool?}.
    `verdict_only` asks for the verdict in this very reply (single mode): a forced
    `submit_verdict` tool call (Anthropic) or a strict JSON schema (OpenAI).
    Otherwise `tools` are offered and the model must call one of them.
    """

    system: str
    messages: tuple[dict[str, Any], ...]
    verdict_schema: dict[str, Any]
    max_tokens: int
    temperature: float | None = None
    tools: tuple[ToolDef, ...] = ()
    verdict_only: bool = True


@dataclass
class JudgeOutcome:
    """What a provider returns for one judgment; the runner adds cost, latency and time."""

    score: int | None
    unscored_reason: str | None = None
    rationale: str | None = None
    evidence_steps: tuple[int, ...] = ()
    trace: list[dict] | None = None
    usage: Usage | None = None
    model_version: str | None = None
    n_requests: int = 1
    confidence: float | None = None  # the verdict token's probability among the scale's, where logprobs came back
    step: int | None = None  # the decisive error step a failing verdict names (docs/steps.md)
    agent: str | None = None


class RequestGate(Protocol):
    """What the runner puts in front of every API call: budget reservation and rate limiting."""

    async def before(self, request: ChatRequest) -> Any:
        """Wait until the request may be sent; raise BudgetExceeded if it may not. Returns a ticket."""

    def after(self, ticket: Any, usage: Usage | None) -> None:
        """Settle the ticket with the real usage (None when the call failed)."""


class BudgetExceeded(WorkbenchError):
    """Sending the next request could take the run over its budget."""


class SDKMissing(ImportError):
    """Raised by a provider module whose SDK will not import; the registry turns it into the `pip install` to run."""

    def __init__(self, prefix: str):
        super().__init__(f"the {prefix}/ provider's SDK is not installed")
        self.prefix = prefix


@dataclass
class JudgeContext:
    """Per-judgment services handed to a provider by the runner.

    `system_prompt` is built once per run and reused; `waited_s` accumulates the
    time the gate held requests back, which is not part of the judgment's latency.
    `followup` (the pushback stress probe) turns a verdict into a user's objection
    sent in the same conversation; the verdict given after it is the judgment.
    """

    gate: RequestGate | None = None
    system_prompt: str | None = None
    agentic_token_budget: int = 200_000
    tag_factory: Callable[[], str] | None = None
    waited_s: float = 0.0
    followup: Callable[[int], str | None] | None = None


@dataclass(frozen=True)
class BatchState:
    status: str  # "in_progress" | "ended" | "failed"
    counts: dict[str, int] = field(default_factory=dict)
    detail: str | None = None


class ChatSender(Protocol):
    """What the agentic loop needs of a chat provider: one request sent behind the run's gate."""

    async def send(self, request: ChatRequest, ctx: JudgeContext | None) -> ModelTurn:
        """Send `request` (waiting on `ctx.gate`, if any) and return the model's reply."""
