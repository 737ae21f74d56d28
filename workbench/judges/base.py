"""The judge provider interface, and how a failed API call is reduced to what is safe to keep.

A provider turns (item, rubric, judge spec) into a `JudgeOutcome`. Chat
providers (Anthropic, OpenAI, OpenAI-compatible servers, the scripted mock)
share the prompting, verdict parsing and agentic loop through `ChatProvider`;
each only translates a neutral `ChatRequest` to its wire format and the reply
back to a `ModelTurn`. The neutral types live in `workbench.judges.types` and
are re-exported here, so a provider module needs only this one.

Errors from an SDK are turned into `ProviderError`, which keeps only the
message, status code and request id: the SDK's exception object holds the
request, whose headers carry the API key.

A provider may also echo its key back in a successful reply (in the text, the
model name, the response id or a request-id header). `scrub_secrets` removes
the key, and any `KEY_WINDOW` characters of it, from text; the runner applies
it to every judgment record before the sink stores it (`scrub_record`) and to
every error (`ProviderError.redacted`), and `guard_logs` applies it to the log
records of the SDKs and their HTTP clients, which log response headers.
"""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import re
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import Any

from workbench.core.errors import ConfigError, WorkbenchError
from workbench.core.models import Item, JudgeSpec, Rubric
from workbench.judges import prompting
from workbench.judges.agentic import run_agentic
from workbench.judges.types import (BatchState, BudgetExceeded, ChatRequest, JudgeContext, JudgeOutcome, ModelTurn,
    RequestGate, ToolCall, ToolDef, Usage, WorkKey)

__all__ = [  # the neutral types are part of the provider interface
    "BatchState", "BudgetExceeded", "ChatProvider", "ChatRequest", "JudgeContext", "JudgeOutcome", "JudgeProvider",
    "ModelTurn", "ProviderError", "RequestGate", "ToolCall", "ToolDef", "Usage", "WorkKey", "guard_logs",
    "parse_retry_after", "redact", "sanitize_sdk_error", "scrub_record", "scrub_secrets",
]


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

    def redacted(self, secrets: Sequence[str]) -> ProviderError:
        """This error with the secrets (and any KEY_WINDOW characters of them) scrubbed from what it says."""
        return ProviderError(self.provider, redact(self.message, secrets), kind=self.kind,
                             status_code=self.status_code,
                             request_id=scrub_secrets(self.request_id, secrets) if self.request_id else None,
                             retry_after=self.retry_after)

    def __reduce__(self):  # picklable without the SDK object, e.g. across processes
        return (_rebuild_provider_error, (self.provider, self.message, self.kind, self.status_code,
                                          self.request_id, self.retry_after))


def _rebuild_provider_error(provider, message, kind, status_code, request_id, retry_after) -> ProviderError:
    return ProviderError(provider, message, kind=kind, status_code=status_code, request_id=request_id,
                         retry_after=retry_after)


_KEYLIKE = re.compile(r"(?i)\b(?:sk|pk|rk|key|api[-_]?key)[-_][A-Za-z0-9_\-\*\.]{3,}")
_BEARER = re.compile(r"(?i)\b(bearer|x-api-key[\"']?\s*[:=])\s*[\"']?[A-Za-z0-9_\-\.\*]+")
REDACTED = "[redacted]"
KEY_WINDOW = 16  # a reply that holds this many consecutive characters of a key holds the key
_BLOCK = KEY_WINDOW // 2  # every KEY_WINDOW-long piece of a key holds one of its _BLOCK-aligned blocks
MIN_SECRET = 4  # shorter values (a placeholder key such as "x") are not worth scrubbing from text


def _key_spans(text: str, key: str) -> list[tuple[int, int]]:
    """(start, end) of every run in `text` of at least KEY_WINDOW consecutive characters of `key` (the whole
    key if it is shorter). Each run holds an aligned block of the key; it is found by the block and grown
    both ways while the text goes on along the key."""
    if len(key) <= KEY_WINDOW:
        spans, start = [], text.find(key)
        while start != -1:
            spans.append((start, start + len(key)))
            start = text.find(key, start + 1)
        return spans
    spans = []
    for offset in range(0, len(key) - _BLOCK + 1, _BLOCK):
        block = key[offset:offset + _BLOCK]
        at = text.find(block)
        while at != -1:
            lo, hi, k_lo, k_hi = at, at + _BLOCK, offset, offset + _BLOCK
            while lo > 0 and k_lo > 0 and text[lo - 1] == key[k_lo - 1]:
                lo, k_lo = lo - 1, k_lo - 1
            while hi < len(text) and k_hi < len(key) and text[hi] == key[k_hi]:
                hi, k_hi = hi + 1, k_hi + 1
            if hi - lo >= KEY_WINDOW:
                spans.append((lo, hi))
            at = text.find(block, at + 1)
    return spans


def scrub_secrets(text: str, secrets: Sequence[str]) -> str:
    """Replace each secret in `text`, and any KEY_WINDOW consecutive characters of one, with [redacted].

    >>> scrub_secrets("key sk-0123456789abcdefghij, its tail 456789abcdefghij", ["sk-0123456789abcdefghij"])
    'key [redacted], its tail [redacted]'
    """
    spans = sorted(span for secret in secrets if secret and len(secret) >= MIN_SECRET
                   for span in _key_spans(text, secret))
    if not spans:
        return text
    out, pos = [], 0
    for start, end in spans:
        if end <= pos:
            continue
        if start > pos:
            out.append(text[pos:start])
        if start >= pos:
            out.append(REDACTED)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def scrub_record(value: Any, secrets: Sequence[str]) -> Any:
    """`scrub_secrets` over every string in a record: a dataclass (a Judgment), dicts (keys too), lists, tuples."""
    if not secrets:
        return value
    if isinstance(value, str):
        return scrub_secrets(value, secrets)
    if isinstance(value, dict):
        return {scrub_record(k, secrets): scrub_record(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_record(v, secrets) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: scrub_record(getattr(value, f.name), secrets)
                                             for f in dataclasses.fields(value) if f.init})
    return value


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """Remove API keys from an error message: the secrets (and any KEY_WINDOW characters of them) and
    key-shaped tokens, masked or not."""
    text = scrub_secrets(text, secrets)
    text = _KEYLIKE.sub(REDACTED, text)
    return _BEARER.sub(lambda m: m.group(1) + " " + REDACTED, text)


class _ScrubLogRecords(logging.Filter):
    """Scrubs the keys of the providers made in this process from log records (message and traceback)."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = scrub_secrets(message, self.secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info:
            trace = logging.Formatter().formatException(record.exc_info)
            clean_trace = scrub_secrets(trace, self.secrets)
            if clean_trace != trace:  # the text without the live exception, which holds the key
                record.exc_info, record.exc_text = None, clean_trace
        return True


_LOG_FILTER = _ScrubLogRecords()
LOGGED_PACKAGES = frozenset({"anthropic", "openai", "httpx", "httpx2", "httpcore", "httpcore2", "workbench"})


def guard_logs(secrets: Sequence[str]) -> None:
    """Scrub `secrets` from every log record of the SDKs, their HTTP clients and the workbench.

    A filter on a logger sees only the records logged through that very logger, so it goes on each
    logger of those packages that exists now (call it after importing the SDK).
    """
    _LOG_FILTER.secrets.update(s for s in secrets if s and len(s) >= MIN_SECRET)
    names = [name for name in list(logging.root.manager.loggerDict) if name.split(".")[0] in LOGGED_PACKAGES]
    for name in names + sorted(LOGGED_PACKAGES):
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)


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
                         request_id=scrub_secrets(str(request_id), secrets) if request_id else None,
                         retry_after=retry_after)


# --------------------------------------------------------------------------- providers

class JudgeProvider(ABC):
    """A judge backend found by the `provider/` prefix of a judge's model."""

    provider: str = ""
    model: str = ""  # the bare model name sent to the API
    supports_batch: bool = False
    secrets: tuple[str, ...] = ()  # the API key(s): scrubbed from everything the runner stores or shows

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
        if spec.mode == "agentic":
            return await run_agentic(self, item, rubric, spec, ctx=ctx)
        if spec.mode != "single":
            raise ConfigError(f"judge '{spec.id}' has mode '{spec.mode}'; use 'single' or 'agentic'")
        try:
            request = prompting.single_request(item, rubric, spec, ctx=ctx)
        except prompting.DelimiterCollision as exc:
            return JudgeOutcome(score=None, unscored_reason=f"refused: {exc}", usage=Usage(), n_requests=0)
        turn = await self.send(request, ctx)
        outcome = prompting.outcome_from_turn(turn, rubric, item)
        if ctx is not None and ctx.followup is not None and outcome.score is not None:
            return await self._pushed_back(request, outcome, rubric, item, ctx)
        return outcome

    async def _pushed_back(self, request: ChatRequest, first: JudgeOutcome, rubric: Rubric, item: Item,
                           ctx: JudgeContext) -> JudgeOutcome:
        """The pushback probe: the judge's verdict, a user's objection, and its verdict again (the judgment).

        The first verdict is kept in the trace; usage and requests are those of both turns.
        """
        objection = ctx.followup(first.score)
        if objection is None:
            return first
        said = {"rationale": first.rationale or "", "evidence_steps": list(first.evidence_steps), "score": first.score}
        messages = request.messages + ({"role": "assistant", "content": json.dumps(said)},
                                       {"role": "user", "content": objection})
        turn = await self.send(dataclasses.replace(request, messages=messages), ctx)
        second = prompting.outcome_from_turn(turn, rubric, item)
        second.usage = (first.usage or Usage()) + (second.usage or Usage())
        second.n_requests = 2
        second.trace = [{"role": "first_verdict", "score": first.score, "rationale": first.rationale},
                        {"role": "user", "content": objection}] + (second.trace or [])
        return second
