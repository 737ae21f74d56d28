"""`anthropic/<model>`: Claude through the official SDK (AsyncAnthropic).

The verdict comes through a forced `submit_verdict` tool call; agentic turns
offer the read-only tools with `tool_choice: any`. The system prompt is marked
for prompt caching (it is the same for every item of a run). The SDK is
imported here and only when a provider is created.

API version 2026-10-21 (the default of SDK 2.x) refuses sampling parameters
(temperature, top_p, top_k) with a 400, and the SDK no longer has them: a
judge's `temperature` is therefore not sent to Anthropic (logged once).
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from workbench.core.errors import ConfigError
from workbench.judges.base import ChatProvider, ProviderError, guard_logs, sanitize_sdk_error
from workbench.judges.prompting import VERDICT_TOOL
from workbench.judges.types import BatchState, ChatRequest, ModelTurn, SDKMissing, ToolCall, Usage

log = logging.getLogger(__name__)

KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_MAX_RETRIES = 4


def _import_sdk(prefix: str):
    try:
        import anthropic
    except ImportError:
        raise SDKMissing(prefix) from None
    return anthropic


class AnthropicProvider(ChatProvider):
    provider = "anthropic"
    supports_batch = True
    _warned_temperature = False

    def __init__(self, model: str, *, env: Mapping[str, str] | None = None, http_client: Any = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout: float | None = None):
        if not model:
            raise ConfigError("anthropic/ needs a model name, e.g. anthropic/claude-sonnet-4-5")
        env = os.environ if env is None else env
        key = env.get(KEY_ENV)
        if not key:
            raise ConfigError(f"the anthropic/ provider needs an API key; set the environment variable {KEY_ENV}")
        sdk = _import_sdk(self.provider)
        self.model = model
        self.secrets = (key,)
        guard_logs(self.secrets)  # the SDK logs response headers, where a server may echo the key
        self._sdk = sdk
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": max_retries}
        if http_client is not None:
            kwargs["http_client"] = http_client
        if timeout is not None:
            kwargs["timeout"] = timeout
        self.client = sdk.AsyncAnthropic(**kwargs)

    async def aclose(self) -> None:
        await self.client.close()

    # ------------------------------------------------------------------ wire format

    def params(self, request: ChatRequest) -> dict[str, Any]:
        """The Messages API parameters for a neutral request (also the batch `params`)."""
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "system": [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
            "messages": _to_messages(request.messages),
        }
        if request.temperature is not None and not self._warned_temperature:
            self._warned_temperature = True
            log.warning("temperature %s is not sent: the Anthropic API takes no sampling parameters",
                        request.temperature)
        verdict = {"name": VERDICT_TOOL, "description": "Submit the final verdict on the item.",
                   "input_schema": request.verdict_schema}
        if request.verdict_only:
            params["tools"] = [verdict]
            params["tool_choice"] = {"type": "tool", "name": VERDICT_TOOL}
        else:
            params["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                               for t in request.tools if t.name != VERDICT_TOOL] + [verdict]
            params["tool_choice"] = {"type": "any"}
        return params

    def turn_from_message(self, message: Any) -> ModelTurn:
        texts, calls = [], []
        for block in message.content or ():
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                args = block.input if isinstance(block.input, dict) else str(block.input)
                calls.append(ToolCall(block.id, block.name, args))
        u = message.usage
        read = u.cache_read_input_tokens or 0
        write = u.cache_creation_input_tokens or 0
        usage = Usage(input_tokens=(u.input_tokens or 0) + read + write, output_tokens=u.output_tokens or 0,
                      cached_tokens=read, cache_write_tokens=write)
        refusal = None
        if message.stop_reason == "refusal":
            details = getattr(message, "stop_details", None)
            refusal = (getattr(details, "explanation", None) or " ".join(texts) or "refusal")
        return ModelTurn(text="\n".join(texts) or None, tool_calls=calls, stop_reason=message.stop_reason,
                         usage=usage, model_version=message.model, refusal=refusal)

    async def complete(self, request: ChatRequest) -> ModelTurn:
        error = None
        try:
            message = await self.client.messages.create(**self.params(request))
        except self._sdk.APIError as exc:
            error = sanitize_sdk_error(self.provider, exc, self.secrets)
        if error is not None:  # raised outside `except`: no link back to the SDK exception
            raise error
        return self.turn_from_message(message)

    # ------------------------------------------------------------------ Message Batches

    async def batch_submit(self, requests: Sequence[tuple[str, ChatRequest]], *, description: str = "") -> str:
        error = None
        try:
            batch = await self.client.messages.batches.create(
                requests=[{"custom_id": cid, "params": self.params(req)} for cid, req in requests])
        except self._sdk.APIError as exc:
            error = sanitize_sdk_error(self.provider, exc, self.secrets)
        if error is not None:
            raise error
        return batch.id

    async def batch_state(self, batch_id: str) -> BatchState:
        error = None
        try:
            batch = await self.client.messages.batches.retrieve(batch_id)
        except self._sdk.APIError as exc:
            error = sanitize_sdk_error(self.provider, exc, self.secrets)
        if error is not None:
            raise error
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        status = "ended" if batch.processing_status == "ended" else "in_progress"
        return BatchState(status, counts)

    async def batch_results(self, batch_id: str) -> AsyncIterator[tuple[str, ModelTurn | ProviderError]]:
        error = None
        try:
            results = await self.client.messages.batches.results(batch_id)
        except self._sdk.APIError as exc:
            error = sanitize_sdk_error(self.provider, exc, self.secrets)
        if error is not None:
            raise error
        async for line in results:
            result = line.result
            if result.type == "succeeded":
                yield line.custom_id, self.turn_from_message(result.message)
            elif result.type == "errored":
                err = getattr(result.error, "error", None)
                etype = getattr(err, "type", "api_error")
                kind = "bad_request" if etype == "invalid_request_error" else "server"
                yield line.custom_id, ProviderError(self.provider, f"{etype}: {getattr(err, 'message', '')}"[:300],
                                                    kind=kind)
            else:  # canceled or expired: not attempted, submit again later
                yield line.custom_id, ProviderError(self.provider, f"request {result.type}", kind="server")


def _to_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages to Anthropic's: tool results go back as tool_result blocks in a user turn."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m["role"]
        if role == "user":
            block = {"type": "text", "text": m["content"]}
            if out and out[-1]["role"] == "user":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant":
            content: list[dict[str, Any]] = []
            if m.get("content"):
                content.append({"type": "text", "text": m["content"]})
            for c in m.get("tool_calls") or ():
                args = c.arguments if isinstance(c.arguments, dict) else {"_unparsed": c.arguments}
                content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": args})
            out.append({"role": "assistant", "content": content or [{"type": "text", "text": "(no reply)"}]})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": m["content"]}
            if m.get("is_error"):
                block["is_error"] = True
            if out and out[-1]["role"] == "user":
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    return out
