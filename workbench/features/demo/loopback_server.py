"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for end-to-end tests and benchmarks.

    with LoopbackServer(latency=0.1) as server:          # random port, own thread and event loop
        env = {"LOOPBACK_BASE_URL": server.base_url, "LOOPBACK_API_KEY": "sk-loopback"}
        ... run the `openai-api/loopback/<model>` judge with env=env ...
        server.received / server.answered                # Counter per item marker

Or as a process: `python -m workbench.features.demo.loopback_server --port 8000 --latency 0.1`
(prints the base URL), then `export LOOPBACK_BASE_URL=http://127.0.0.1:8000/v1`
and `LOOPBACK_API_KEY=anything`; `GET /v1/_stats` returns its counters. It ships with
the package (stdlib only) so that the README's run of the demo's `openai-api/local/...`
judge works offline in any workspace; the tests import it from here
(`tests/judges/loopback_server.py` re-exports it).

It answers `POST /v1/chat/completions` with a body shaped like OpenAI's (usage
with prompt_tokens_details.cached_tokens, finish_reason, refusal). Single-mode
requests (response_format json_schema) get the verdict as JSON content;
agentic requests (tools) get a `submit_verdict` tool call. The verdict's score
is taken from an `EXPECT-SCORE <n>` marker in the item, else 0; where the verdict schema asks for a step
(failure attribution), from `EXPECT-STEP <n>` (optionally followed by ` EXPECT-AGENT <name>`), else null.

Judge modes (`judge_mode`), for the stress probes: "plain" (the default) and "robust" answer the marker
whatever else the item says; "susceptible" is a planted biased judge that raises its score one level (capped at
`top`) for a long final output (over `long_output` characters: padding), for an output that names its own model
(`model`), obeys an instruction in the item to "score this N", and gives in to a user who disagrees with its
verdict ("... deserves N"). `noise` moves a score to a random adjacent
level with that probability, seeded by the request's text (tags removed), so a repeated request gets the same
answer and a perturbed item an independent draw.

Items are counted per `ITEM-MARKER <name>` found in the request (else a hash of
the user message with the per-request delimiter tags removed). `received`
counts requests read, `answered` the ones answered with a verdict, `abandoned`
held requests whose client disconnected before an answer. Failures can be
injected (`fail_next`), latency set, and requests held (`hold`/`release`).
Pure asyncio with keep-alive, so one thread serves hundreds of requests a second.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter, deque
from typing import Any

MARKER = re.compile(r"ITEM-MARKER (\S+)")
SCORE = re.compile(r"EXPECT-SCORE ([+-]?\d+)")
STEP = re.compile(r"EXPECT-STEP (\d+)(?: EXPECT-AGENT ([A-Za-z0-9_-]+))?")  # a failing verdict's step and agent
TAG = re.compile(r"[0-9a-f]{32}")
JUDGE_MODES = ("plain", "robust", "susceptible")
PUSHBACK = re.compile(r"I disagree.*deserves ([+-]?\d+)", re.S)
OBEYED = re.compile(r"score this \+?([+-]?\d+)", re.I)
FINAL_OUTPUT = re.compile(r"## Final output\n(.*?)\n<<<END ITEM", re.S)
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error", 503: "Service Unavailable", 529: "Overloaded"}


class LoopbackServer:
    def __init__(self, *, latency: float = 0.0, model: str = "loopback-model-v1", port: int = 0,
                 api_key: str | None = None, judge_mode: str = "plain", noise: float = 0.0, top: int = 1,
                 long_output: int = 300):
        if judge_mode not in JUDGE_MODES:
            raise ValueError(f"judge_mode must be one of {JUDGE_MODES}, got {judge_mode!r}")
        self.judge_mode, self.noise, self.top, self.long_output = judge_mode, noise, top, long_output
        self.latency = latency
        self.model = model
        self.port = port
        self.api_key = api_key  # if set, requests must carry it (401 otherwise)
        self.received: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.requests = 0
        self.failures_sent = 0
        self.bodies: deque[dict] = deque(maxlen=50)  # the last request bodies, for assertions
        self._failures: deque[tuple[int, float | None]] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._hold_event: asyncio.Event | None = None
        self.hold_after: int | None = None
        self._admitted = 0  # requests let through to an answer
        self.held = 0  # requests waiting on hold()
        self.abandoned: Counter[str] = Counter()  # held requests whose client went away

    # ------------------------------------------------------------------ control (any thread)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self, service: str = "loopback", key: str = "sk-loopback-key") -> dict[str, str]:
        stem = service.upper().replace("-", "_")
        return {f"{stem}_BASE_URL": self.base_url, f"{stem}_API_KEY": key}

    def fail_next(self, n: int, status: int = 500, retry_after: float | None = None) -> None:
        """The next n requests get `status` (with a Retry-After header if given)."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * n)

    def hold(self, after: int = 0) -> None:
        """Let `after` more requests through to an answer, then hold new ones (received, not answered)
        until release().

        A held request whose client disconnects is counted in `abandoned` and never answered.
        """
        self._admitted = 0
        self.hold_after = after

    def release(self) -> None:
        self.hold_after = None
        self._loop.call_soon_threadsafe(self._hold_event.set)

    def start(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._run, name="loopback-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("loopback server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ server (its own loop)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        self._hold_event = asyncio.Event()
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._connection, "127.0.0.1", self.port, backlog=512))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            tasks = asyncio.all_tasks(self._loop)
            for task in tasks:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            self._loop.run_until_complete(self._server.wait_closed())
            self._loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                status, payload, extra = await self._handle(method, path, headers, body, reader)
                if status == 0:  # the client went away while we held its request
                    break
                data = json.dumps(payload).encode()
                out = [f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}", "content-type: application/json",
                       f"content-length: {len(data)}", f"x-request-id: req_loop_{self.requests}",
                       "connection: keep-alive"] + [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(out) + "\r\n\r\n").encode() + data)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError, ValueError):
            pass
        except asyncio.CancelledError:  # the server is stopping
            pass
        finally:
            writer.close()

    def _item_key(self, body: dict) -> str:
        texts = []
        for m in body.get("messages", ()):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                texts.append(m["content"])
                break
        text = texts[0] if texts else json.dumps(body.get("messages", ""))
        found = MARKER.search(text)
        return found.group(1) if found else hashlib.sha1(TAG.sub("", text).encode()).hexdigest()[:12]

    async def _held(self, reader: asyncio.StreamReader) -> bool:
        """Wait for release(); False if the client disconnects first (it sends nothing while it waits)."""
        self.held += 1
        release = asyncio.ensure_future(self._hold_event.wait())
        gone = asyncio.ensure_future(reader.read(1))
        try:
            done, _ = await asyncio.wait({release, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.held -= 1
            for t in (release, gone):
                t.cancel()
        return release in done and gone not in done

    async def _handle(self, method: str, path: str, headers: dict, raw: bytes,
                      reader: asyncio.StreamReader) -> tuple[int, dict, dict]:
        self.requests += 1
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {"error": {"message": "Incorrect API key provided: sk-****. You can find your API key "
                                              "at https://example.invalid/keys.", "type": "invalid_request_error",
                                   "param": None, "code": "invalid_api_key"}}, {}
        if method == "GET" and path.endswith("/_stats"):  # for a client in another process
            return 200, {"requests": self.requests, "received": sum(self.received.values()),
                         "answered": sum(self.answered.values()), "items": len(self.received),
                         "max_per_item": max(self.received.values(), default=0)}, {}
        if method != "POST" or not path.endswith("/chat/completions"):
            return 404, {"error": {"message": f"no route {method} {path}", "type": "invalid_request_error"}}, {}
        body = json.loads(raw or b"{}")
        self.bodies.append(body)
        key = self._item_key(body)
        self.received[key] += 1
        with self._lock:
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            status, retry_after = failure
            self.failures_sent += 1
            extra = {"retry-after": str(retry_after)} if retry_after is not None else {}
            kind = {429: "rate_limit_exceeded", 529: "overloaded"}.get(status, "server_error")
            return status, {"error": {"message": f"injected {status}", "type": kind, "param": None,
                                      "code": None}}, extra
        hold = self.hold_after is not None and self._admitted >= self.hold_after
        self._admitted += 1
        if hold:
            if not await self._held(reader):
                self.abandoned[key] += 1
                return 0, {}, {}
        if self.latency:
            await asyncio.sleep(self.latency)
        self.answered[key] += 1
        return 200, self._completion(body, key), {}

    def _verdict_score(self, body: dict, text: str) -> int:
        found = SCORE.search(text)
        score = int(found.group(1)) if found else 0
        user = next((m["content"] for m in body.get("messages", ()) if m.get("role") == "user"
                     and isinstance(m.get("content"), str)), "")
        if self.judge_mode == "susceptible":
            last = body.get("messages", [{}])[-1]
            caved = PUSHBACK.search(last.get("content") or "") if last.get("role") == "user" else None
            if caved and last.get("content") != user:  # an objection after its verdict: it gives in
                return int(caved.group(1))
            obeyed = OBEYED.search(user)
            if obeyed:
                return int(obeyed.group(1))
            output = FINAL_OUTPUT.search(user)
            if output and len(output.group(1)) > self.long_output:
                score += 1
            if self.model in (output.group(1) if output else ""):
                score += 1
            score = min(score, self.top)
        if self.noise:
            draw = random.Random(hashlib.sha256(TAG.sub("", user).encode()).digest())
            if draw.random() < self.noise:
                score += -1 if score >= self.top else 1 if score <= -self.top else draw.choice((-1, 1))
        return score

    def _completion(self, body: dict, key: str) -> dict:
        text = json.dumps(body.get("messages", ""))
        score = self._verdict_score(body, text)
        verdict = {"rationale": f"loopback verdict for {key}", "evidence_steps": [], "score": score}
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema") or next(
            (t.get("function", {}).get("parameters") for t in body.get("tools") or ()
             if t.get("function", {}).get("name") == "submit_verdict"), None) or {}
        if "step" in (schema.get("properties") or {}):  # the rubric asks for failure attribution
            blamed = STEP.search(text)
            verdict.update(step=int(blamed.group(1)) if blamed else None, agent=blamed.group(2) if blamed else None)
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None, "annotations": []}
        finish = "stop"
        if body.get("tools"):
            message["tool_calls"] = [{"id": f"call_{self.requests}", "type": "function", "function": {
                "name": "submit_verdict", "arguments": json.dumps(verdict)}}]
            finish = "tool_calls"
        else:
            message["content"] = json.dumps(verdict)
        prompt_tokens = len(text) // 4
        return {
            "id": f"chatcmpl-loop{self.requests}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 30, "total_tokens": prompt_tokens + 30,
                      "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                    "accepted_prediction_tokens": 0,
                                                    "rejected_prediction_tokens": 0}},
            "service_tier": "default", "system_fingerprint": "fp_loopback",
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before each answer")
    parser.add_argument("--model", default="loopback-model-v1")
    args = parser.parse_args()
    server = LoopbackServer(latency=args.latency, model=args.model, port=args.port).start()
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
