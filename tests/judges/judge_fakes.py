"""Test doubles for the judge engine.

- Response bodies shaped like the providers' documented responses (Anthropic
  Messages, OpenAI chat completions, their error envelopes and batch objects).
- `Transport`: a scripted `httpx2.MockTransport` handler that records requests,
  for the real SDK clients (`http_client=transport.client()`).
- `ScriptedProvider`: a chat provider whose replies come from a script, for
  runner and agentic tests that need no HTTP at all.
- `FakeClock`: a clock and sleep pair that advance time without sleeping.
- `JsonlSink`: a RunSink in an append-only JSONL file (survives SIGKILL).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx2

from workbench.judges.base import ChatProvider, ChatRequest, ModelTurn, ProviderError, ToolCall, Usage
from workbench.judges.sink import PendingBatch
from workbench.core.models import Item, Judgment

CANARY = "sk-canary-9f8e7d6c5b4a3210XXXX"

# --------------------------------------------------------------------------- Anthropic bodies


def anthropic_message(tool_input: dict | None = None, *, text: str | None = None, stop_reason: str = "tool_use",
                      model: str = "claude-sonnet-4-5-20250929", input_tokens: int = 1200, output_tokens: int = 85,
                      cache_read: int = 0, cache_write: int = 0, tool_name: str = "submit_verdict",
                      tool_id: str = "toolu_01A09q90qw90lq917835lq9", tool_uses: list[dict] | None = None,
                      stop_details: dict | None = None) -> dict:
    content: list[dict] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_input is not None:
        content.append({"type": "tool_use", "id": tool_id, "name": tool_name, "input": tool_input})
    for use in tool_uses or ():
        content.append({"type": "tool_use", **use})
    body = {"id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                      "cache_creation_input_tokens": cache_write, "cache_read_input_tokens": cache_read,
                      "service_tier": "standard"}}
    if stop_details is not None:
        body["stop_details"] = stop_details
    return body


def anthropic_error(status: int, etype: str, message: str, request_id: str = "req_011CSHoEeqs5C35K2UUqR7Fy"):
    return httpx2.Response(status, headers={"request-id": request_id},
                           json={"type": "error", "error": {"type": etype, "message": message},
                                 "request_id": request_id})


# --------------------------------------------------------------------------- OpenAI bodies


def openai_completion(content: str | None = None, *, tool_calls: list[dict] | None = None,
                      refusal: str | None = None, finish_reason: str = "stop", model: str = "gpt-4o-2024-08-06",
                      prompt_tokens: int = 1100, completion_tokens: int = 70, cached_tokens: int = 0) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal, "annotations": []}
    if tool_calls:
        message["tool_calls"] = [{"id": tc.get("id", f"call_{i}"), "type": "function",
                                  "function": {"name": tc["name"], "arguments": tc["arguments"]
                                               if isinstance(tc["arguments"], str) else json.dumps(tc["arguments"])}}
                                 for i, tc in enumerate(tool_calls)]
    return {"id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1741570283,
            "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                    "accepted_prediction_tokens": 0,
                                                    "rejected_prediction_tokens": 0}},
            "service_tier": "default", "system_fingerprint": "fp_fc9f1d7035"}


def openai_error(status: int, message: str, etype: str = "invalid_request_error", code: str | None = None,
                 request_id: str = "req_8f3c2b1a0d9e", headers: dict | None = None):
    return httpx2.Response(status, headers={"x-request-id": request_id, **(headers or {})},
                           json={"error": {"message": message, "type": etype, "param": None, "code": code}})


def verdict(score: int = 0, rationale: str = "Tests pass at step 3.", steps: list[int] | None = None) -> dict:
    return {"rationale": rationale, "evidence_steps": [] if steps is None else steps, "score": score}


# --------------------------------------------------------------------------- HTTP transport


class Transport:
    """Scripted responses for the real SDK clients; records every request.

    `script` items are httpx2.Response, a dict (sent as a 200 JSON body), or a
    callable(request) -> Response. The last item repeats when the script runs out.
    """

    def __init__(self, *script: Any):
        self.script = list(script)
        self.requests: list[httpx2.Request] = []
        self.times: list[float] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        import time
        self.requests.append(request)
        self.times.append(time.monotonic())
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if callable(item) and not isinstance(item, httpx2.Response):
            item = item(request)
        if isinstance(item, dict):
            item = httpx2.Response(200, json=item)
        return item

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self))

    def bodies(self) -> list[dict]:
        return [json.loads(r.content) for r in self.requests if r.content]


# --------------------------------------------------------------------------- scripted provider


def turn(*, verdict_args: dict | str | None = None, calls: list[tuple[str, dict]] | None = None,
         text: str | None = None, stop: str = "tool_use", refusal: str | None = None,
         tokens: tuple[int, int] = (1000, 50), model: str = "scripted-1") -> ModelTurn:
    tool_calls = [ToolCall(f"call_{i}", name, args) for i, (name, args) in enumerate(calls or ())]
    if verdict_args is not None:
        tool_calls.append(ToolCall("call_v", "submit_verdict", verdict_args))
    return ModelTurn(text=text, tool_calls=tool_calls, stop_reason=stop,
                     usage=Usage(tokens[0], tokens[1]), model_version=model, refusal=refusal)


class ScriptedProvider(ChatProvider):
    """Replies from `reply(request, n)` (n = call number for this item) or a fixed list; counts requests."""

    provider = "scripted"

    def __init__(self, reply: Callable[[ChatRequest, int], ModelTurn | Exception] | list, *,
                 model: str = "claude-sonnet-4-5", delay: float = 0.0):
        self.model = model
        self.reply = reply
        self.delay = delay
        self.requests: list[ChatRequest] = []
        self.per_item: Counter[str] = Counter()

    async def complete(self, request: ChatRequest) -> ModelTurn:
        self.requests.append(request)
        key = request.messages[0]["content"][-200:]
        self.per_item[key] += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(self.reply, list):
            out = self.reply.pop(0) if len(self.reply) > 1 else self.reply[0]
        else:
            out = self.reply(request, len(self.requests))
        if isinstance(out, Exception):
            raise out
        return out


def rate_limited(retry_after: float | None = 2.5) -> ProviderError:
    return ProviderError("scripted", "rate limited", kind="rate_limit", status_code=429,
                         request_id="req_429", retry_after=retry_after)


# --------------------------------------------------------------------------- clock, sinks


class FakeClock:
    def __init__(self, start: float = 1000.0):
        self.t = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
        await asyncio.sleep(0)


class JsonlSink:
    """A RunSink that appends one JSON line per judgment and flushes it: survives SIGKILL."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _lines(self) -> list[dict]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:  # a line cut by a kill
                pass
        return out

    def done_keys(self) -> set:
        return {tuple(d["key"]) for d in self._lines() if "key" in d}

    def judgments(self) -> list[tuple[tuple, Judgment]]:
        return [(tuple(d["key"]), Judgment(**{**d["judgment"], "evidence_steps": tuple(d["judgment"]["evidence_steps"])}))
                for d in self._lines() if "key" in d]

    def record(self, key, judgment: Judgment) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps({"key": list(key), "judgment": asdict(judgment)}) + "\n")
            f.flush()

    def save_batch(self, provider, batch_id, keys) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps({"batch": batch_id, "provider": provider, "keys": [list(k) for k in keys]}) + "\n")

    def pending_batches(self) -> list[PendingBatch]:
        lines = self._lines()
        done = {d["batch_done"] for d in lines if "batch_done" in d}
        return [PendingBatch(d["provider"], d["batch"], tuple(tuple(k) for k in d["keys"]))
                for d in lines if "batch" in d and d["batch"] not in done]

    def mark_batch_done(self, batch_id) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps({"batch_done": batch_id}) + "\n")


def make_items(n: int, *, prefix: str = "i", trajectory: bool = False) -> list[Item]:
    """Distinct items whose marker the loopback server counts; score planted with EXPECT-SCORE."""
    items = []
    for i in range(n):
        traj = None
        if trajectory:
            traj = [{"role": "user", "content": f"task {i}"},
                    {"role": "assistant", "content": "running tests", "tool_calls": [{"name": "bash", "arguments": {"cmd": "pytest"}}]},
                    {"role": "tool", "name": "bash", "content": "16 passed"}]
        items.append(Item(id=f"{prefix}{i}", input=f"Task {i}: fix the bug. ITEM-MARKER {prefix}{i} EXPECT-SCORE {i % 3 - 1}",
                          output=f"Patched; tests pass ({i}).", trajectory=traj))
    return items


# --------------------------------------------------------------------------- batch APIs


class FakeAnthropicBatches:
    """Message Batches endpoints: create, retrieve (in_progress `polls` times, then ended), results (JSONL)."""

    def __init__(self, answer: Callable[[str, dict], dict], *, polls: int = 1, id_prefix: str = "abc"):
        self.answer = answer  # (custom_id, params) -> the `result` object of the results line
        self.polls = polls
        self.id_prefix = id_prefix
        self.batches: dict[str, list[dict]] = {}
        self.retrievals: Counter[str] = Counter()
        self.requests: list[httpx2.Request] = []

    def _batch(self, bid: str) -> dict:
        n = len(self.batches[bid])
        ended = self.retrievals[bid] > self.polls
        return {"id": bid, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": {"processing": 0 if ended else n, "succeeded": n if ended else 0, "errored": 0,
                                   "canceled": 0, "expired": 0},
                "ended_at": "2026-11-02T18:37:24.100435Z" if ended else None,
                "created_at": "2026-11-01T18:37:24.100435Z", "expires_at": "2026-11-02T18:37:24.100435Z",
                "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"https://api.anthropic.com/v1/messages/batches/{bid}/results" if ended else None}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages/batches":
            bid = f"msgbatch_{len(self.batches):02d}{self.id_prefix}"
            self.batches[bid] = json.loads(request.content)["requests"]
            return httpx2.Response(200, json=self._batch(bid))
        bid = path.split("/")[4]
        if path.endswith("/results"):
            lines = [json.dumps({"custom_id": r["custom_id"], "result": self.answer(r["custom_id"], r["params"])})
                     for r in self.batches[bid]]
            return httpx2.Response(200, content="\n".join(lines).encode(), headers={"content-type": "application/binary"})
        self.retrievals[bid] += 1
        return httpx2.Response(200, json=self._batch(bid))

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self))


class FakeOpenAIBatches:
    """Files + Batch API: upload, create, retrieve (in_progress `polls` times), output and error files."""

    def __init__(self, answer: Callable[[str, dict], dict], *, polls: int = 1):
        self.answer = answer  # (custom_id, body) -> a full output line (without custom_id)
        self.polls = polls
        self.files: dict[str, list[dict]] = {}
        self.batches: dict[str, str] = {}  # batch id -> input file id
        self.retrievals: Counter[str] = Counter()
        self.requests: list[httpx2.Request] = []

    def _batch(self, bid: str) -> dict:
        done = self.retrievals[bid] > self.polls
        n = len(self.files[self.batches[bid]])
        return {"id": bid, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                "input_file_id": self.batches[bid], "completion_window": "24h",
                "status": "completed" if done else "in_progress",
                "output_file_id": f"file-out-{bid}" if done else None,
                "error_file_id": f"file-err-{bid}" if done else None,
                "created_at": 1762000000, "in_progress_at": 1762000010, "expires_at": 1762086400,
                "completed_at": 1762000500 if done else None,
                "request_counts": {"total": n, "completed": n if done else 0, "failed": 0},
                "metadata": {"description": "workbench"}}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        path = request.url.path
        if request.method == "POST" and path == "/v1/files":
            text = request.content.decode()
            lines = [json.loads(line) for line in text.splitlines() if line.startswith('{"custom_id"')]
            fid = f"file-in{len(self.files)}"
            self.files[fid] = lines
            return httpx2.Response(200, json={"id": fid, "object": "file", "bytes": len(text), "created_at": 1762000000,
                                              "filename": "judgments.jsonl", "purpose": "batch", "status": "processed"})
        if request.method == "POST" and path == "/v1/batches":
            bid = f"batch_{len(self.batches):02d}"
            self.batches[bid] = json.loads(request.content)["input_file_id"]
            return httpx2.Response(200, json=self._batch(bid))
        if path.startswith("/v1/batches/"):
            bid = path.split("/")[3]
            self.retrievals[bid] += 1
            return httpx2.Response(200, json=self._batch(bid))
        if path.startswith("/v1/files/") and path.endswith("/content"):
            fid = path.split("/")[3]
            bid = fid.split("-", 2)[2]
            want_errors = fid.startswith("file-err")
            out = []
            for i, line in enumerate(self.files[self.batches[bid]]):
                answer = self.answer(line["custom_id"], line["body"])
                is_error = answer.get("error") is not None or (answer.get("response") or {}).get("status_code") != 200
                if is_error == want_errors:
                    out.append(json.dumps({"id": f"batch_req_{i}", "custom_id": line["custom_id"], **answer}))
            return httpx2.Response(200, content="\n".join(out).encode())
        return httpx2.Response(404, json={"error": {"message": f"no route {path}", "type": "invalid_request_error"}})

    def client(self) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=httpx2.MockTransport(self))
