"""`openai/<model>` and `openai-api/<service>/<model>`: chat completions through the official SDK.

Single mode asks for the verdict with a strict JSON-schema `response_format`;
agentic turns offer strict function tools with `tool_choice: required`.
`openai-api/<service>/<model>` talks to any OpenAI-compatible server (vLLM,
Ollama, a gateway) at `<SERVICE>_BASE_URL` with `<SERVICE>_API_KEY` (service
upper-cased, '-' as '_'). The SDK is imported here and only when a provider is
created.

Single mode also asks for token log-probabilities (`logprobs`, `top_logprobs`),
from which the verdict's confidence is read (`prompting.verdict_confidence`):
on by default for `openai/` models but the reasoning ones (o1, o3, o4, gpt-5),
which refuse them; off by default for `openai-api/` servers. `OPENAI_LOGPROBS`
or `<SERVICE>_LOGPROBS` set to 0 or 1 turns them off or on.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from workbench.core.errors import ConfigError, ModelNameError
from workbench.core.models import parse_model
from workbench.judges.base import ChatProvider, ProviderError, guard_logs, sanitize_sdk_error
from workbench.judges.prompting import VERDICT_TOOL
from workbench.judges.types import BatchState, ChatRequest, ModelTurn, SDKMissing, TokenLogprob, ToolCall, Usage

DEFAULT_MAX_RETRIES = 4
#: official models that refuse `logprobs` (reasoning models): asked for none
NO_LOGPROBS = ("o1", "o3", "o4", "gpt-5")
TERMINAL = {"completed": "ended", "expired": "ended", "cancelled": "ended", "failed": "failed"}


def _import_sdk(prefix: str):
    try:
        import openai
    except ImportError:
        raise SDKMissing(prefix) from None
    return openai


def service_env(service: str) -> tuple[str, str]:
    """('<SERVICE>_BASE_URL', '<SERVICE>_API_KEY') for an openai-api service name."""
    stem = service.upper().replace("-", "_")
    return f"{stem}_BASE_URL", f"{stem}_API_KEY"


class OpenAIProvider(ChatProvider):
    provider = "openai"
    supports_batch = True
    #: official OpenAI models take max_completion_tokens; compatible servers mostly know max_tokens
    max_tokens_param = "max_completion_tokens"

    def __init__(self, model: str, *, env: Mapping[str, str] | None = None, http_client: Any = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout: float | None = None,
                 _base_url: str | None = None, _key: str | None = None, _logprobs_var: str = "OPENAI_LOGPROBS"):
        if not model:
            raise ConfigError(f"{self.provider}/ needs a model name, e.g. openai/gpt-4o")
        env = os.environ if env is None else env
        key = _key if _key is not None else env.get("OPENAI_API_KEY")
        if not key:
            raise ConfigError("the openai/ provider needs an API key; set the environment variable OPENAI_API_KEY")
        sdk = _import_sdk(self.provider)
        self.model = model
        self.logprobs = logprobs_wanted(env.get(_logprobs_var), _logprobs_var,
                                        default=self.provider == "openai" and not model.startswith(NO_LOGPROBS))
        self.secrets = (key,)
        guard_logs(self.secrets)  # the SDK logs response headers, where a server may echo the key
        self._sdk = sdk
        kwargs: dict[str, Any] = {"api_key": key, "max_retries": max_retries}
        base_url = _base_url if _base_url is not None else env.get("OPENAI_BASE_URL")
        if base_url:
            kwargs["base_url"] = base_url
        if http_client is not None:
            kwargs["http_client"] = http_client
        if timeout is not None:
            kwargs["timeout"] = timeout
        self.client = sdk.AsyncOpenAI(**kwargs)

    async def aclose(self) -> None:
        await self.client.close()

    # ------------------------------------------------------------------ wire format

    def params(self, request: ChatRequest) -> dict[str, Any]:
        """The chat-completions body for a neutral request (also the batch line's `body`)."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": request.system}]
        messages += _to_messages(request.messages)
        params: dict[str, Any] = {"model": self.model, "messages": messages,
                                  self.max_tokens_param: request.max_tokens}
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.verdict_only:
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "verdict", "strict": True, "schema": request.verdict_schema}}
            if self.logprobs:  # the verdict's confidence: each scale value's token among the top ones
                levels = len(request.verdict_schema.get("properties", {}).get("score", {}).get("enum") or ())
                params["logprobs"] = True
                params["top_logprobs"] = min(20, max(5, levels + 2))
        else:
            tools = [t for t in request.tools if t.name != VERDICT_TOOL]
            params["tools"] = [_function(t.name, t.description, t.parameters) for t in tools] + [
                _function(VERDICT_TOOL, "Submit the final verdict on the item.", request.verdict_schema)]
            params["tool_choice"] = "required"
        return params

    def turn_from_body(self, body: dict[str, Any]) -> ModelTurn:
        """A chat.completion response body (as documented by OpenAI) as a neutral turn."""
        choices = body.get("choices") or []
        choice = choices[0] if choices else {}
        message = choice.get("message") or {}
        calls = []
        for c in message.get("tool_calls") or ():
            fn = c.get("function")
            if not fn:
                continue
            raw = fn.get("arguments") or ""
            try:
                args = json.loads(raw) if raw else {}
            except ValueError:
                args = raw
            calls.append(ToolCall(c.get("id", ""), fn.get("name", ""), args if isinstance(args, dict) else str(raw)))
        u = body.get("usage") or {}
        details = u.get("prompt_tokens_details") or {}
        usage = Usage(input_tokens=u.get("prompt_tokens") or 0, output_tokens=u.get("completion_tokens") or 0,
                      cached_tokens=details.get("cached_tokens") or 0)
        finish = choice.get("finish_reason")
        refusal = message.get("refusal")
        if refusal is None and finish == "content_filter":
            refusal = "content_filter"
        return ModelTurn(text=message.get("content"), tool_calls=calls, stop_reason=finish, usage=usage,
                         model_version=body.get("model"), refusal=refusal, logprobs=_logprobs(choice))

    async def complete(self, request: ChatRequest) -> ModelTurn:
        # `client.post` is the SDK's documented way to send a raw body: the same auth, retries and
        # errors as `chat.completions.create`, without its per-request TypedDict transform and model
        # construction (~1.5 ms of CPU together), which matter against a fast local server.
        error = None
        try:
            text = await self.client.post("/chat/completions", body=self.params(request), cast_to=str)
        except self._sdk.APIError as exc:
            error = sanitize_sdk_error(self.provider, exc, self.secrets)
        if error is not None:  # raised outside `except`: no link back to the SDK exception
            raise error
        try:
            body = json.loads(text)
        except ValueError:
            raise ProviderError(self.provider, "the server's reply is not JSON", kind="server") from None
        return self.turn_from_body(body)

    # ------------------------------------------------------------------ Batch API

    async def _call(self, coro):
        error = None
        try:
            return await coro
        except self._sdk.APIError as exc:
            error = sanitize_sdk_error(self.provider, exc, self.secrets)
        raise error

    async def batch_submit(self, requests: Sequence[tuple[str, ChatRequest]], *, description: str = "") -> str:
        lines = [json.dumps({"custom_id": cid, "method": "POST", "url": "/v1/chat/completions",
                             "body": self.params(req)}, ensure_ascii=False) for cid, req in requests]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        upload = await self._call(self.client.files.create(
            file=("judgments.jsonl", io.BytesIO(data), "application/jsonl"), purpose="batch"))
        metadata = {"description": description[:500]} if description else None
        kwargs: dict[str, Any] = {"input_file_id": upload.id, "endpoint": "/v1/chat/completions",
                                  "completion_window": "24h"}
        if metadata:
            kwargs["metadata"] = metadata
        batch = await self._call(self.client.batches.create(**kwargs))
        return batch.id

    async def batch_state(self, batch_id: str) -> BatchState:
        batch = await self._call(self.client.batches.retrieve(batch_id))
        counts = batch.request_counts.model_dump() if batch.request_counts else {}
        detail = None
        if batch.errors and batch.errors.data:
            detail = "; ".join(f"{e.code}: {e.message}" for e in batch.errors.data if e)[:300]
        return BatchState(TERMINAL.get(batch.status, "in_progress"), counts, detail)

    async def batch_results(self, batch_id: str) -> AsyncIterator[tuple[str, ModelTurn | ProviderError]]:
        batch = await self._call(self.client.batches.retrieve(batch_id))
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self._call(self.client.files.content(file_id))
            for raw in content.text.split("\n"):  # not splitlines(): a reply may hold a raw U+2028
                if not raw.strip():
                    continue
                line = json.loads(raw)
                cid = line.get("custom_id")
                response = line.get("response") or {}
                status = response.get("status_code")
                body = response.get("body")
                if status == 200 and isinstance(body, dict):
                    yield cid, self.turn_from_body(body)
                    continue
                err = line.get("error") or (body.get("error") if isinstance(body, dict) else None) or {}
                message = f"{err.get('code') or err.get('type') or 'error'}: {err.get('message', '')}"[:300]
                kind = "bad_request" if status and 400 <= status < 500 and status not in (408, 409, 429) else "server"
                yield cid, ProviderError(self.provider, message, kind=kind, status_code=status,
                                         request_id=response.get("request_id"))


class OpenAICompatibleProvider(OpenAIProvider):
    """`openai-api/<service>/<model>`: an OpenAI-compatible server configured through the environment."""

    provider = "openai-api"
    max_tokens_param = "max_tokens"

    def __init__(self, model: str, *, env: Mapping[str, str] | None = None, **kwargs: Any):
        try:
            name = parse_model(f"{self.provider}/{model}")
        except ModelNameError:
            name = None
        if name is None or not name.model:
            raise ConfigError(f"'{self.provider}/{model}' must be {self.provider}/<service>/<model>, "
                              "e.g. openai-api/vllm/meta-llama/Llama-3.1-8B-Instruct")
        service, bare = name.service, name.model
        env = os.environ if env is None else env
        url_var, key_var = service_env(service)
        base_url = env.get(url_var)
        if not base_url:
            raise ConfigError(f"openai-api/{service}/ needs the server's URL; set the environment variable "
                              f"{url_var} (e.g. http://127.0.0.1:8000/v1)")
        key = env.get(key_var)
        if not key:
            raise ConfigError(f"openai-api/{service}/ needs an API key; set the environment variable {key_var} "
                              "(any value works for a server that does not check keys)")
        self.service = service
        super().__init__(bare, env=env, _base_url=base_url, _key=key,
                         _logprobs_var=url_var.removesuffix("_BASE_URL") + "_LOGPROBS", **kwargs)


def logprobs_wanted(setting: str | None, variable: str, *, default: bool) -> bool:
    """Whether to ask for token log-probabilities: the variable's 0/1 (also off/on, false/true), else the default."""
    if setting is None or not setting.strip():
        return default
    value = setting.strip().lower()
    if value in ("1", "on", "true", "yes"):
        return True
    if value in ("0", "off", "false", "no"):
        return False
    raise ConfigError(f"{variable} is '{setting}', not 0 or 1; set it to 1 to ask for token log-probabilities (the "
                      "verdict's confidence) or 0 not to")


def _logprobs(choice: dict[str, Any]) -> tuple[TokenLogprob, ...] | None:
    """The reply's tokens with their log-probabilities (``choices[0].logprobs.content``), None when absent."""
    content = (choice.get("logprobs") or {}).get("content")
    if not content:
        return None
    out = []
    for t in content:
        if not isinstance(t, dict) or not isinstance(t.get("token"), str) or t.get("logprob") is None:
            return None  # a malformed list gives no confidence rather than a wrong one
        top = tuple((a["token"], float(a["logprob"])) for a in t.get("top_logprobs") or ()
                    if isinstance(a, dict) and isinstance(a.get("token"), str) and a.get("logprob") is not None)
        out.append(TokenLogprob(t["token"], float(t["logprob"]), top))
    return tuple(out)


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": parameters, "strict": True}}


def _to_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "user":
            out.append({"role": "user", "content": m["content"]})
        elif m["role"] == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.get("content")}
            calls = m.get("tool_calls") or ()
            if calls:
                msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                    "name": c.name,
                    "arguments": json.dumps(c.arguments) if isinstance(c.arguments, dict) else str(c.arguments)}}
                    for c in calls]
            out.append(msg)
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
    return out
