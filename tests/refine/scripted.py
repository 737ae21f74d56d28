"""Scripted OpenAI endpoints for the refinement tests: the real OpenAI SDK over ``httpx2.MockTransport``.

``ScriptedJudge`` answers chat completions as the demo's lenient judge would, *following the rubric's wording*
(the system prompt it is sent), so that a rubric edit can change its behaviour:

- it knows each demo item's consensus label (a test fixture may; a real judge would not) and starts from it;
- about one item in ten gets a deterministic off-by-one error whatever the rubric says (so agreement is not 1);
- lenient: on about half of the consensus fails it answers 0 (a pass), and on a third of the competent passes
  it answers +1, unless the rubric contains ``FIX_PHRASE`` (the fix the good optimizer proposes);
- when the item appears among the rubric's graded examples, it repeats that example's score (memorisation).

``ScriptedOptimizer`` answers the optimizer's structured request with an edit built by a policy (the fix, or
memorising the development items it was shown), and records every body it is sent.

Both log each answered request (a key per request) to an optional file, which is how the kill test sees
whether a finished request was sent twice; ``kill_after`` makes the process SIGKILL itself when a request
arrives after that many answered ones, before answering it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
from pathlib import Path
from typing import Any, Callable

import httpx2

from workbench.judges.pricing import cost_usd
from workbench.judges.types import Usage
from workbench.judges.prompting import render_item
from workbench.core.models import Item, JudgeSpec
from workbench.features.refine.service import example_excerpt

FIX_PHRASE = "A claim of success that the final test run contradicts is a fail"
FIX_LEVEL = ("The task is not done: tests fail, the fix is wrong, or the agent claims success it did not achieve. "
             + FIX_PHRASE + ", however confident the report.")
ENV = {"OPENAI_API_KEY": "sk-test-refine-0000"}


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


class KeepOpenClient(httpx2.AsyncClient):
    """The SDK closes its client after each run; the refinement loop makes several runs with one transport."""

    async def aclose(self) -> None:
        return None


class _Endpoint:
    def __init__(self, model: str, log: Path | None = None, kill_after: int | None = None):
        self.model = model
        self.log, self.kill_after = log, kill_after
        self.bodies: list[dict] = []
        self.keys: list[str] = []  # one per answered request: (system prompt, item) for a judge
        self.answered = 0
        self.spent_usd = 0.0

    def client(self) -> httpx2.AsyncClient:
        return KeepOpenClient(transport=httpx2.MockTransport(self))

    def options(self) -> dict[str, Any]:
        return {"env": ENV, "http_client": self.client(), "max_retries": 0}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        if self.kill_after is not None and self._total_answered() >= self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        self.bodies.append(body)
        key, content = self.answer(body)
        chars = sum(len(m.get("content") or "") for m in body["messages"])
        usage = Usage(input_tokens=chars // 4, output_tokens=len(content) // 4 + 1)
        self.spent_usd += cost_usd(self.model, usage) or 0.0
        self.answered += 1
        self.keys.append(key)
        if self.log is not None:
            with self.log.open("a") as f:
                f.write(json.dumps({"key": key, "cost": cost_usd(self.model, usage)}) + "\n")
        return httpx2.Response(200, json={
            "id": "chatcmpl-refine", "object": "chat.completion", "created": 1741570283, "model": self.model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content, "refusal": None}}],
            "usage": {"prompt_tokens": usage.input_tokens, "completion_tokens": usage.output_tokens,
                      "total_tokens": usage.total, "prompt_tokens_details": {"cached_tokens": 0}}})

    def _total_answered(self) -> int:
        if self.log is None or not self.log.exists():
            return self.answered
        return sum(1 for _ in self.log.open())

    def answer(self, body: dict) -> tuple[str, str]:
        raise NotImplementedError


class ScriptedJudge(_Endpoint):
    def __init__(self, items: list[Item], truth: dict[str, int], **kw: Any):
        super().__init__("gpt-4o-mini", **kw)
        self.truth = truth
        spec = JudgeSpec(id="lenient-mini", model="openai/gpt-4o-mini")
        self.rendered = [(render_item(it, spec), it) for it in items]  # what the judge is shown of each item

    def _item(self, message: str) -> Item:
        found = [it for text, it in self.rendered if text in message]
        assert len(found) == 1, f"the scripted judge found {len(found)} items in one request"
        return found[0]

    def score(self, item: Item, system: str) -> int:
        if example_excerpt(item) in system:  # a graded example: memorised
            shown = system.split(example_excerpt(item), 1)[1]
            return int(re.search(r"Score: ([+-]?\d+)", shown).group(1))
        truth, h = self.truth.get(item.id, 0), _h(item.id)  # unresolved items: as a competent pass
        score = truth
        if FIX_PHRASE not in system and ((truth == -1 and h % 2 == 0) or (truth == 0 and h % 3 == 0)):
            score = truth + 1  # lenient
        if h % 10 == 7:
            score = 0 if score != 0 else -1  # noise the rubric does not change
        return score

    def answer(self, body: dict) -> tuple[str, str]:
        system = body["messages"][0]["content"]
        item = self._item(body["messages"][1]["content"])
        verdict = {"rationale": "Scripted by the rubric's wording.", "evidence_steps": [], "score":
                   self.score(item, system)}
        return f"judge:{_h(system)}:{item.id}", json.dumps(verdict)


class ScriptedOptimizer(_Endpoint):
    """policy(shown) -> edit, where shown lists (item_id, consensus) of the disagreements in the request."""

    def __init__(self, policy: Callable[[list[tuple[str, int]]], dict], **kw: Any):
        super().__init__("gpt-4o", **kw)
        self.policy = policy

    def answer(self, body: dict) -> tuple[str, str]:
        text = body["messages"][1]["content"]
        shown = [(m.group(1), int(m.group(2))) for m in
                 re.finditer(r"## item_id (\S+)\nConsensus: ([+-]?\d+)", text)]
        return f"optimizer:{_h(text)}", json.dumps(self.policy(shown))


def fix_leniency(shown: list[tuple[str, int]]) -> dict:
    """The edit a good optimizer makes of the lenient judge's disagreements: a general rule, no examples."""
    return {"summary": "The judge passes claims of success the tests contradict; say that such a claim fails.",
            "levels": [{"value": -1, "description": FIX_LEVEL}], "criteria": [], "instructions": None,
            "examples": []}


def memorise(k: int) -> Callable[[list[tuple[str, int]]], dict]:
    """An overfitting optimizer: copy k of the items it was shown, with their labels, as examples."""
    def policy(shown: list[tuple[str, int]]) -> dict:
        return {"summary": "Memorise the disagreements.", "levels": [], "criteria": [], "instructions": None,
                "examples": [{"item_id": i, "score": c, "rationale": "As the reviewers said."} for i, c in shown[:k]]}
    return policy


def in_turn(*policies: Callable[[list[tuple[str, int]]], dict]) -> Callable[[list[tuple[str, int]]], dict]:
    """The n-th request is answered by the n-th policy (the last one repeating)."""
    calls: list[int] = []

    def policy(shown: list[tuple[str, int]]) -> dict:
        calls.append(1)
        return policies[min(len(calls), len(policies)) - 1](shown)
    return policy
