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
from typing import Any

from workbench.features.interop.base import SourceError, SourceItem, SourceJudgment, SourceRecord, read_json

SOURCE = "deepeval"
_DEFAULT_NAME = re.compile(r"test_case_\d+")


class DeepEvalAdapter:
    source = SOURCE

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        run = read_json(SOURCE, uri)
        if not isinstance(run, dict) or not ({"testCases", "conversationalTestCases"} & set(run)):
            raise SourceError(SOURCE, None, f"{uri} is not a DeepEval test run (no testCases)",
                              fix="give the test_run_*.json that evaluate() writes to DEEPEVAL_RESULTS_FOLDER")
        cases = [(c, False) for c in run.get("testCases") or []] + \
                [(c, True) for c in run.get("conversationalTestCases") or []]
        for n, (case, conversational) in enumerate(cases, start=1):
            if not isinstance(case, dict):
                raise SourceError(SOURCE, n, "a test case must be an object", fix="give the file evaluate() wrote")
            item = _conversation(n, case) if conversational else _single(n, case)
            yield SourceItem(n, item)
            item_id = item.get("id") or _derived_id(item)
            for m, metric in enumerate(case.get("metricsData") or []):
                yield _judgment(n, m, item_id, metric)


def _derived_id(item: dict) -> str:
    from workbench.core.models import derived_item_id
    return derived_item_id(item)


def _named(case: dict) -> dict[str, Any]:
    """The item id (the case's own name) and the case's context fields as metadata."""
    name = case.get("name")
    meta = {k: case[k] for k in ("context", "retrievalContext", "toolsCalled", "tags", "metadata", "scenario",
                                 "expectedOutcome") if case.get(k) is not None}
    out: dict[str, Any] = {}
    if isinstance(name, str) and name and not _DEFAULT_NAME.fullmatch(name):
        out["id"] = name
    elif name:
        meta["name"] = name
    if meta:
        out["metadata"] = {"deepeval": meta}
    return out


def _single(n: int, case: dict) -> dict:
    if not isinstance(case.get("input"), str):
        raise SourceError(SOURCE, n, "the test case has no input", field="testCases.input",
                          fix="give the test run as DeepEval wrote it")
    item = {**_named(case), "input": case["input"], "output": case.get("actualOutput") or "",
            "reference": case.get("expectedOutput")}
    return {k: v for k, v in item.items() if v is not None}


def _conversation(n: int, case: dict) -> dict:
    turns = sorted(case.get("turns") or [], key=lambda t: t.get("order", 0))
    if not turns:
        raise SourceError(SOURCE, n, "the conversational test case has no turns",
                          field="conversationalTestCases.turns", fix="give the test run as DeepEval wrote it")
    steps = []
    for t in turns:
        step: dict[str, Any] = {"role": t.get("role"), "content": t.get("content") or ""}
        if t.get("toolsCalled"):
            step["tool_calls"] = [{"name": c.get("name"), "arguments": c.get("inputParameters") or {}}
                                  for c in t["toolsCalled"]]
        steps.append(step)
    user = next((s["content"] for s in steps if s["role"] == "user"), None)
    last = next((s["content"] for s in reversed(steps) if s["role"] == "assistant"), None)
    item = {**_named(case), "input": case.get("scenario") or user or "", "trajectory": steps, "output": last,
            "reference": case.get("expectedOutcome")}
    return {k: v for k, v in item.items() if v is not None}


def _judgment(n: int, m: int, item_id: str, metric: Any) -> SourceJudgment:
    where = f"metricsData[{m}]"
    if not isinstance(metric, dict) or not isinstance(metric.get("name"), str):
        raise SourceError(SOURCE, n, "a metric result needs a name", field=where,
                          fix="give the test run as DeepEval wrote it")
    name = metric["name"]
    error = metric.get("error")
    value = metric.get("score")
    field = f"{where}.score"
    if value is None and not error and metric.get("success") is not None:
        value, field = metric["success"], f"{where}.success"
    extra = {"cost_usd": metric["evaluationCost"]} if isinstance(metric.get("evaluationCost"), (int, float)) else {}
    return SourceJudgment(n, item_id, judge=name, name=name, value=None if error else value,
                          model=metric.get("evaluationModel"), field=field, rationale=metric.get("reason"),
                          unscored_reason=f"DeepEval error: {error}" if error else (
                              "DeepEval recorded no score" if value is None else None), extra=extra)
