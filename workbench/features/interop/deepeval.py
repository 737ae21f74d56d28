"""DeepEval test runs: the JSON that ``evaluate()`` writes (``DEEPEVAL_RESULTS_FOLDER/test_run_*.json``,
``.deepeval/.latest_test_run.json``), read as plain JSON (the ``TestRun`` model of ``deepeval.test_run``).

- each ``testCases[]`` entry is an item (``input``, ``actualOutput`` as the output, ``expectedOutput`` as the
  reference); each ``conversationalTestCases[]`` entry too, its ``turns`` as the trajectory (the first user turn
  is the input, the last assistant turn the output);
- each ``metricsData[]`` entry is a judgment of the judge named by the metric and its ``evaluationModel``: the
  ``score`` is the value to map (``success`` when there is no score), ``reason`` the rationale; an ``error`` is
  unscored with the error as the reason.

A test case keeps its ``name`` as the item id, except DeepEval's default names (``test_case_0``, ...), which
repeat across runs: those items are named by their content. Record N is the N-th test case of the file
(conversational cases after the others).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from workbench.features.interop.base import SourceError, SourceItem, SourceJudgment, SourceRecord, read_json

SOURCE = "deepeval"
_DEFAULT_NAME = re.compile(r"test_case_\d+")


_CONTEXT = ("context", "retrievalContext", "toolsCalled", "tags", "metadata", "scenario", "expectedOutcome")


@dataclass(frozen=True, slots=True)
class DeepEvalMetric:
    """A ``metricsData[]`` entry: the metric's result on a test case."""

    name: Any
    score: Any
    success: Any
    error: Any
    reason: str | None
    evaluation_model: str | None
    evaluation_cost: Any

    @classmethod
    def from_json(cls, d: dict) -> DeepEvalMetric:
        return cls(d.get("name"), d.get("score"), d.get("success"), d.get("error"), d.get("reason"),
                   d.get("evaluationModel"), d.get("evaluationCost"))


@dataclass(frozen=True, slots=True)
class DeepEvalTurn:
    """A turn of a conversational test case."""

    role: Any
    content: str
    order: Any
    tools_called: list[dict]

    @classmethod
    def from_json(cls, d: dict) -> DeepEvalTurn:
        return cls(d.get("role"), d.get("content") or "", d.get("order", 0), d.get("toolsCalled") or [])

    def step(self) -> dict[str, Any]:
        """The trajectory step: the turn's role and text, with the tools it called."""
        calls = [{"name": c.get("name"), "arguments": c.get("inputParameters") or {}} for c in self.tools_called]
        return {"role": self.role, "content": self.content, **({"tool_calls": calls} if calls else {})}


@dataclass(frozen=True, slots=True)
class DeepEvalCase:
    """A ``testCases[]`` or ``conversationalTestCases[]`` entry, with its context fields (kept as metadata)."""

    name: Any
    input: Any
    actual_output: str | None
    expected_output: str | None
    scenario: str | None
    expected_outcome: str | None
    turns: list[DeepEvalTurn]
    metrics: list[dict]
    context: dict[str, Any]

    @classmethod
    def from_json(cls, d: dict) -> DeepEvalCase:
        turns = [DeepEvalTurn.from_json(t) for t in d.get("turns") or []]
        return cls(d.get("name"), d.get("input"), d.get("actualOutput"), d.get("expectedOutput"), d.get("scenario"),
                   d.get("expectedOutcome"), sorted(turns, key=lambda t: t.order), d.get("metricsData") or [],
                   {k: v for k in _CONTEXT if (v := d.get(k)) is not None})


class DeepEvalAdapter:
    source = SOURCE

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        run = read_json(SOURCE, uri)
        if not isinstance(run, dict) or not ({"testCases", "conversationalTestCases"} & set(run)):
            raise SourceError(SOURCE, None, f"{uri} is not a DeepEval test run (no testCases)",
                              fix="give the test_run_*.json that evaluate() writes to DEEPEVAL_RESULTS_FOLDER")
        cases = [(c, False) for c in run.get("testCases") or []] + \
                [(c, True) for c in run.get("conversationalTestCases") or []]
        for n, (raw, conversational) in enumerate(cases, start=1):
            if not isinstance(raw, dict):
                raise SourceError(SOURCE, n, "a test case must be an object", fix="give the file evaluate() wrote")
            case = DeepEvalCase.from_json(raw)
            item = _conversation(n, case) if conversational else _single(n, case)
            yield SourceItem(n, item)
            item_id = item.get("id") or _derived_id(item)
            for m, metric in enumerate(case.metrics):
                yield _judgment(n, m, item_id, metric)


def _derived_id(item: dict) -> str:
    from workbench.core.models import derived_item_id
    return derived_item_id(item)


def _named(case: DeepEvalCase) -> dict[str, Any]:
    """The item id (the case's own name) and the case's context fields as metadata."""
    name = case.name
    own = isinstance(name, str) and name and not _DEFAULT_NAME.fullmatch(name)
    meta = {**case.context, **({"name": name} if name and not own else {})}
    return {**({"id": name} if own else {}), **({"metadata": {"deepeval": meta}} if meta else {})}


def _single(n: int, case: DeepEvalCase) -> dict:
    if not isinstance(case.input, str):
        raise SourceError(SOURCE, n, "the test case has no input", field="testCases.input",
                          fix="give the test run as DeepEval wrote it")
    item = {**_named(case), "input": case.input, "output": case.actual_output or "",
            "reference": case.expected_output}
    return {k: v for k, v in item.items() if v is not None}


def _conversation(n: int, case: DeepEvalCase) -> dict:
    if not case.turns:
        raise SourceError(SOURCE, n, "the conversational test case has no turns",
                          field="conversationalTestCases.turns", fix="give the test run as DeepEval wrote it")
    user = next((t.content for t in case.turns if t.role == "user"), None)
    last = next((t.content for t in reversed(case.turns) if t.role == "assistant"), None)
    item = {**_named(case), "input": case.scenario or user or "", "trajectory": [t.step() for t in case.turns],
            "output": last, "reference": case.expected_outcome}
    return {k: v for k, v in item.items() if v is not None}


def _judgment(n: int, m: int, item_id: str, raw: Any) -> SourceJudgment:
    where = f"metricsData[{m}]"
    metric = DeepEvalMetric.from_json(raw) if isinstance(raw, dict) else None
    if metric is None or not isinstance(metric.name, str):
        raise SourceError(SOURCE, n, "a metric result needs a name", field=where,
                          fix="give the test run as DeepEval wrote it")
    error, value, field = metric.error, metric.score, f"{where}.score"
    if value is None and not error and metric.success is not None:
        value, field = metric.success, f"{where}.success"
    cost = metric.evaluation_cost
    extra = {"cost_usd": cost} if isinstance(cost, (int, float)) else {}
    return SourceJudgment(n, item_id, judge=metric.name, name=metric.name, value=None if error else value,
                          model=metric.evaluation_model, field=field, rationale=metric.reason,
                          unscored_reason=f"DeepEval error: {error}" if error else (
                              "DeepEval recorded no score" if value is None else None), extra=extra)
