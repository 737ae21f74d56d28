"""DeepEval test runs: the JSON that ``evaluate()`` writes (``DEEPEVAL_RESULTS_FOLDER/test_run_*.json``,
``.deepeval/.latest_test_run.json``), read as plain JSON (the ``TestRun`` model of ``deepeval.test_run``).

- each ``testCases[]`` entry is an item (``input``, ``actualOutput`` as the output, ``expectedOutput`` as the
  reference); each ``conversationalTestCases[]`` entry too, its ``turns`` as the trajectory (the first user turn
  is the input, the last assistant turn the output);
- each ``metricsData[]`` entry is a judgment of the judge named by the metric and its ``evaluationModel``: the
  ``score`` is the value to map (``success`` when there is no score), ``reason`` the rationale; an ``error`` is
  unscored with the error as the reason;
- with the rubric at hand (``read(uri, rubric=...)``), a metric result with a ``threshold`` and a ``success``
  carries its own map (used when neither ``--map`` nor the rubric maps the metric): DeepEval's success is the
  rubric's pass level (``pass_threshold``), a failure the highest level below it. DeepEval decides success itself
  (``score >= threshold``; ``<=`` for metrics where lower is better; strict mode), so the record's score maps to
  the level of that decision.

A test case keeps its ``name`` as the item id, except DeepEval's default names (``test_case_0``, ...), which
repeat across runs: those items are named by their content (as ``import items`` names an item without an id; the
default name is not kept). Record N is the N-th test case of the file (conversational cases after the others).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from dataclasses import dataclass
from typing import Any

from workbench.core.errors import InputError
from workbench.core.formats import Record, parse_item
from workbench.core.models import Rubric
from workbench.features.interop.base import SourceError, SourceItem, SourceJudgment, SourceRecord, read_json
from workbench.features.interop.shapes import check

SOURCE = "deepeval"
_DEFAULT_NAME = re.compile(r"test_case_\d+")


# The shape of a test case the workbench reads, from DeepEval's TestRun model (deepeval/test_run/api.py:
# LLMApiTestCase, ConversationalApiTestCase, MetricData, TurnApi): a metric's score lies in [0, 1], as every
# DeepEval metric reports it.
_METRIC = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"}, "score": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    "threshold": {"type": ["number", "null"]}, "success": {"type": ["boolean", "null"]},
    "reason": {"type": ["string", "null"]}, "strictMode": {"type": ["boolean", "null"]},
    "evaluationModel": {"type": ["string", "null"]}, "error": {"type": ["string", "null"]},
    "evaluationCost": {"type": ["number", "null"]}}}
_TEXT = {"type": ["string", "null"]}
CASE = {"type": "object", "properties": {
    "name": _TEXT, "input": _TEXT, "actualOutput": _TEXT, "expectedOutput": _TEXT, "scenario": _TEXT,
    "expectedOutcome": _TEXT, "metricsData": {"type": ["array", "null"], "items": _METRIC},
    "turns": {"type": ["array", "null"], "items": {"type": "object", "properties": {
        "role": {"type": "string"}, "content": _TEXT, "order": {"type": ["integer", "null"]},
        "toolsCalled": {"type": ["array", "null"], "items": {"type": "object"}}}}}}}
# The test run around the cases (``TestRun``): its lists of single-turn and conversational test cases.
TEST_RUN = {"type": "object", "properties": {"testCases": {"type": ["array", "null"]},
                                             "conversationalTestCases": {"type": ["array", "null"]}}}
FIX = "give the test_run_*.json that evaluate() writes, as DeepEval wrote it"

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
    threshold: Any = None

    @classmethod
    def from_json(cls, d: dict) -> DeepEvalMetric:
        return cls(d.get("name"), d.get("score"), d.get("success"), d.get("error"), d.get("reason"),
                   d.get("evaluationModel"), d.get("evaluationCost"), d.get("threshold"))


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
    """Reads a test run; given the rubric (here or to ``read``), each thresholded metric result carries its
    pass/fail map."""

    source = SOURCE
    read_options = ("rubric",)  # the import's rubric, for the pass/fail maps

    def __init__(self, rubric: Rubric | None = None):
        self.rubric = rubric

    def read(self, uri: str, *, rubric: Rubric | None = None, **_options: Any) -> Iterator[SourceRecord]:
        rubric = rubric or self.rubric
        levels = _pass_fail_levels(rubric) if rubric is not None else None
        run = read_json(SOURCE, uri)
        if not isinstance(run, dict) or not ({"testCases", "conversationalTestCases"} & set(run)):
            raise SourceError(SOURCE, None, f"{uri} is not a DeepEval test run (no testCases)",
                              fix="give the test_run_*.json that evaluate() writes to DEEPEVAL_RESULTS_FOLDER")
        check(SOURCE, Path(uri).name, None, run, TEST_RUN, fix=FIX)
        cases = [(c, False) for c in run.get("testCases") or []] + \
                [(c, True) for c in run.get("conversationalTestCases") or []]
        for n, (raw, conversational) in enumerate(cases, start=1):
            check(SOURCE, Path(uri).name, n, raw, CASE, fix=FIX)
            case = DeepEvalCase.from_json(raw)
            item = _conversation(n, case) if conversational else _single(n, case)
            yield SourceItem(n, item)
            item_id = item.get("id") or _derived_id(n, item)
            for m, metric in enumerate(case.metrics):
                yield _judgment(n, m, item_id, metric, levels)


def _derived_id(n: int, item: dict) -> str:
    """The id ``import items`` gives an item without one (its content's hash, with the defaults it fills in)."""
    try:
        return parse_item(Record(SOURCE, n, item)).id
    except InputError as e:
        raise SourceError(SOURCE, n, e.problem, field=e.field, fix=e.fix) from None


def _pass_fail_levels(rubric: Rubric) -> tuple[int, int] | None:
    """(the pass level, the highest level below it) of the rubric; None when its scale has no level on either side.

    >>> from workbench.core.scale import Scale, ScaleLevel
    >>> five = Scale(tuple(ScaleLevel(v, str(v)) for v in range(1, 6)))
    >>> _pass_fail_levels(Rubric("qa")), _pass_fail_levels(Rubric("qa", scale=five, pass_threshold=4))
    ((0, -1), (4, 3))
    """
    passing = [v for v in rubric.scale.values if v >= rubric.pass_threshold]
    below = [v for v in rubric.scale.values if v < rubric.pass_threshold]
    return (min(passing), max(below)) if passing and below else None


def _named(case: DeepEvalCase) -> dict[str, Any]:
    """The item id (the case's own name) and the case's context fields as metadata."""
    name = case.name
    own = isinstance(name, str) and name and not _DEFAULT_NAME.fullmatch(name)
    default = isinstance(name, str) and _DEFAULT_NAME.fullmatch(name)  # its place in one run: not content
    meta = {**case.context, **({"name": name} if name and not own and not default else {})}
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


def _judgment(n: int, m: int, item_id: str, raw: Any, levels: tuple[int, int] | None) -> SourceJudgment:
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
                              "DeepEval recorded no score" if value is None else None), extra=extra,
                          carried_map=None if error or value is None else _success_map(metric, value, levels))


def _success_map(metric: DeepEvalMetric, value: Any, levels: tuple[int, int] | None) -> dict | None:
    """The map of this result's value to the level of DeepEval's own decision: success -> pass, else below it."""
    if levels is None or not isinstance(metric.success, bool) or isinstance(metric.threshold, bool) \
            or not isinstance(metric.threshold, (int, float)):
        return None
    level = levels[0] if metric.success else levels[1]
    if isinstance(value, bool):
        return {"boolean": {value: level}}
    if isinstance(value, (int, float)):
        return {"categorical": {str(value): level}}
    return None
