"""The judge provider interface and the neutral types every backend speaks.

A provider turns (item, rubric, judge spec) into a `JudgeOutcome`. Chat
providers (Anthropic, OpenAI, OpenAI-compatible servers) share the prompting,
verdict parsing and agentic loop through `ChatProvider`; each only translates a
neutral `ChatRequest` to its wire format and the reply back to a `ModelTurn`.

Errors from an SDK are turned into `ProviderError`, which keeps only the
message, status code and request id: the SDK's exception object holds the
request, whose headers carry the API key.
"""

from __future__ import annotations

import email.utils
import re
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ConfigError, WorkbenchError
from ..models import Item, JudgeSpec, Rubric

WorkKey = tuple[str, str, int]
"""(judge config hash, item content hash, repeat): the identity of one judgment."""


# --------------------------------------------------------------------------- neutral types

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


@dataclass
class ModelTurn:
    """One reply of a chat model, in provider-neutral form."""

    text: str | None
    tool_calls: list[ToolCall]
    stop_reason: str | None
    usage: Usage
    model_version: str | None
    refusal: str | None = None  # set when the model or the API declined to answer


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


class RequestGate(Protocol):
    """What the runner puts in front of every API call: budget reservation and rate limiting."""

    async def before(self, request: ChatRequest) -> Any:
        """Wait until the request may be sent; raise BudgetExceeded if it may not. Returns a ticket."""

    def after(self, ticket: Any, usage: Usage | None) -> None:
        """Settle the ticket with the real usage (None when the call failed)."""


class BudgetExceeded(WorkbenchError):
    """Sending the next request could take the run over its budget."""


@dataclass
class JudgeContext:
    """Per-judgment services handed to a provider by the runner.

    `system_prompt` is built once per run and reused; `waited_s` accumulates the
    time the gate held requests back, which is not part of the judgment's latency.
    """

    gate: RequestGate | None = None
    system_prompt: str | None = None
    agentic_token_budget: int = 200_000
    tag_factory: Callable[[], str] | None = None
    waited_s: float = 0.0


@dataclass(frozen=True)
class BatchState:
    status: str  # "in_progress" | "ended" | "failed"
    counts: dict[str, int] = field(default_factory=dict)
    detail: str | None = None


# --------------------------------------------------------------------------- errors and secrets

class ProviderError(WorkbenchError):
    """A failed API call, reduced to what is safe to store and show.

    `kind` is one of: auth (401/402/403), not_found (404), rate_limit (429),
    overloaded (529), server (408, 409, 5xx), connection, timeout, bad_request
    (other 4xx), other. Never holds the SDK exception (nor chains it).
    """

    RETRYABLE = frozenset({"rate_limit", "overloaded", "server", "connection", "timeout"})
    FATAL = frozenset({"auth", "not_found"})  # every other request would fail the same way

    def __init__(self, provider: str, message: str, *, kind: str = "other", status_code: int | None = None,
                 request_id: str | None = None, retry_after: float | None = None):
        self.provider, self.message, self.kind = provider, message, kind
        self.status_code, self.request_id, self.retry_after = status_code, request_id, retry_after
        super().__init__(self.describe())

    @property
    def retryable(self) -> bool:
        return self.kind in self.RETRYABLE

    @property
    def fatal(self) -> bool:
        return self.kind in self.FATAL

    def describe(self) -> str:
        head = f"{self.provider} API error"
        if self.status_code is not None:
            head += f" {self.status_code}"
        if self.request_id:
            head += f" (request {self.request_id})"
        return f"{head}: {self.message}"

    def unscored_reason(self) -> str:
        code = self.status_code if self.status_code is not None else self.kind
        return f"api_error: {code} {self.message}"[:300]

    def __reduce__(self):  # picklable without the SDK object, e.g. across processes
        return (_rebuild_provider_error, (self.provider, self.message, self.kind, self.status_code,
                                          self.request_id, self.retry_after))


def _rebuild_provider_error(provider, message, kind, status_code, request_id, retry_after) -> ProviderError:
    return ProviderError(provider, message, kind=kind, status_code=status_code, request_id=request_id,
                         retry_after=retry_after)


_KEYLIKE = re.compile(r"(?i)\b(?:sk|pk|rk|key|api[-_]?key)[-_][A-Za-z0-9_\-\*\.]{3,}")
_BEARER = re.compile(r"(?i)\b(bearer|x-api-key[\"']?\s*[:=])\s*[\"']?[A-Za-z0-9_\-\.\*]+")


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """Remove API keys (exact values and key-shaped tokens, masked or not) from text."""
    for s in secrets:
        if s and len(s) >= 4:
            text = text.replace(s, "[redacted]")
    text = _KEYLIKE.sub("[redacted]", text)
    return _BEARER.sub(lambda m: m.group(1) + " [redacted]", text)


def _kind_of(status: int | None, type_name: str) -> str:
    if status is None:
        return "timeout" if "Timeout" in type_name else "connection" if "Connection" in type_name else "other"
    if status in (401, 402, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status in (408, 409) or status >= 500:
        return "server"
    return "bad_request"


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def sanitize_sdk_error(provider: str, exc: BaseException, secrets: Sequence[str] = ()) -> ProviderError:
    """Reduce an SDK exception to a ProviderError holding no reference to the exception.

    Call it inside `except` and raise the result *outside* the except block so
    the new error has no `__context__` pointing at the SDK exception.
    """
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    request_id = getattr(exc, "request_id", None)
    body = getattr(exc, "body", None)
    api_message = None
    if isinstance(body, dict):
        err = body.get("error") if isinstance(body.get("error"), dict) else body
        api_message = err.get("message") if isinstance(err.get("message"), str) else None
    if api_message is None:
        api_message = getattr(exc, "message", None) or type(exc).__name__
        if status is not None:  # the SDK's "Error code: 500 - {...}" repeats the body; keep it short
            api_message = str(api_message).split(" - ", 1)[-1]
    retry_after = None
    response = getattr(exc, "response", None)
    if response is not None:
        retry_after = parse_retry_after(getattr(response, "headers", None))
    message = redact(str(api_message), secrets)[:500]
    return ProviderError(provider, message, kind=_kind_of(status, type(exc).__name__), status_code=status,
                         request_id=str(request_id) if request_id else None, retry_after=retry_after)


# --------------------------------------------------------------------------- providers

class JudgeProvider(ABC):
    """A judge backend found by the `provider/` prefix of a judge's model."""

    provider: str = ""
    model: str = ""  # the bare model name sent to the API
    supports_batch: bool = False

    @property
    def model_id(self) -> str:
        """The name the price table knows the model by."""
        return self.model

    @abstractmethod
    async def judge(self, item: Item, rubric: Rubric, spec: JudgeSpec, *,
                    ctx: JudgeContext | None = None) -> JudgeOutcome:
        """Grade one item. Raises ProviderError for failed API calls."""

    async def aclose(self) -> None:
        """Release network resources (a no-op for providers without any)."""

    # Batch mode (Anthropic Message Batches, OpenAI Batch API); chat providers override.
    async def batch_submit(self, requests: Sequence[tuple[str, ChatRequest]], *, description: str = "") -> str:
        raise ConfigError(f"provider '{self.provider}' has no batch mode; run without --batch")

    async def batch_state(self, batch_id: str) -> BatchState:
        raise ConfigError(f"provider '{self.provider}' has no batch mode; run without --batch")

    def batch_results(self, batch_id: str) -> AsyncIterator[tuple[str, ModelTurn | ProviderError]]:
        raise ConfigError(f"provider '{self.provider}' has no batch mode; run without --batch")


class ChatProvider(JudgeProvider):
    """A provider behind a chat API: implements `complete`, inherits single and agentic judging."""

    secrets: tuple[str, ...] = ()

    @abstractmethod
    async def complete(self, request: ChatRequest) -> ModelTurn:
        """Send one request; raise ProviderError (sanitized) on failure."""

    async def send(self, request: ChatRequest, ctx: JudgeContext | None) -> ModelTurn:
        """`complete` behind the run's gate (budget and rate limits)."""
        gate = ctx.gate if ctx is not None else None
        if gate is None:
            return await self.complete(request)
        t0 = time.perf_counter()
        ticket = await gate.before(request)
        ctx.waited_s += time.perf_counter() - t0
        try:
            turn = await self.complete(request)
        except BaseException:
            gate.after(ticket, None)
            raise
        gate.after(ticket, turn.usage)
        return turn

    async def judge(self, item: Item, rubric: Rubric, spec: JudgeSpec, *,
                    ctx: JudgeContext | None = None) -> JudgeOutcome:
        from . import prompting

        if spec.mode == "agentic":
            from .agentic import run_agentic
            return await run_agentic(self, item, rubric, spec, ctx=ctx)
        if spec.mode != "single":
            raise ConfigError(f"judge '{spec.id}' has mode '{spec.mode}'; use 'single' or 'agentic'")
        try:
            request = prompting.single_request(item, rubric, spec, ctx=ctx)
        except prompting.DelimiterCollision as exc:
            return JudgeOutcome(score=None, unscored_reason=f"refused: {exc}", usage=Usage(), n_requests=0)
        turn = await self.send(request, ctx)
        return prompting.outcome_from_turn(turn, rubric, item)
