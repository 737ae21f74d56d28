"""promptfoo eval results: the JSON of ``promptfoo eval -o results.json`` (an ``OutputFile``: ``results`` is an
``EvaluateSummaryV3`` whose ``results[]`` are ``EvaluateResult``s), read as plain JSON.

- each row (a test, a prompt and a provider) is an item: the rendered prompt is the input, the response's output
  the output, the provider the producer, the test's description the category; the test's vars, and the value of a
  reference-like assertion (``equals``, ``contains``, ``factuality``, ``model-graded-closedqa``), go into the
  metadata and the reference; the item's id is ``test<i>-prompt<j>-<hash>``, the hash of test, prompt and
  provider, so it names no producer to a reviewer and a re-import of the file maps to the same items;
- each model-graded entry of ``gradingResult.componentResults[]`` (``llm-rubric``, ``g-eval``, ``factuality``,
  ``model-graded-closedqa``, ...) is a judgment of the judge named by the assertion's ``metric`` (else its type)
  and its grader provider, resolved as promptfoo resolves it: the assertion's ``provider``, else the test's
  ``options.provider``, else ``defaultTest.options.provider``, else unknown. The value to map is the component's
  ``score`` (``pass`` when it has none); a component promptfoo marks as a grader error (``metadata.graderError``)
  is unscored with its reason; a config written by ``workbench export --to promptfoo`` declares its 0..1 scale
  in ``metadata.workbench_scale`` (an import map for the assertion's metric), used when no map is given;
- a ``human`` component (a rating given in promptfoo's viewer) is a label by the eval's ``metadata.author`` (else
  ``promptfoo-viewer``), its ``comment`` the rationale.

Deterministic assertions (``equals``, ``contains``, ``javascript``, ...) are not LLM judges: skipped and counted.
Record N is the N-th row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.core.hashing import sha256_hex
from workbench.features.interop.shapes import check
from workbench.features.interop.base import (SourceError, SourceItem, SourceJudgment, SourceLabel, SourceRecord,
    Skipped, read_json, text_of)

SOURCE = "promptfoo"
MODEL_GRADED = {"llm-rubric", "g-eval", "factuality", "model-graded-closedqa", "model-graded-factuality",
                "answer-relevance", "context-faithfulness", "context-recall", "context-relevance",
                "select-best", "search-rubric", "conversation-relevance", "pi"}

# The shape of a row the workbench reads, from promptfoo's types (src/types: EvaluateResult, AtomicTestCase,
# GradingResult, Assertion, ProviderResponse): what promptfoo writes in each field it fills. A model-graded or
# human component's score lies in [0, 1] (GradingResult.score; a javascript assertion may return any number,
# and is skipped anyway).
_PROVIDER = {"type": ["string", "object", "null"], "properties": {"id": {"type": "string"}}}
_COMPONENT = {
    "type": "object",
    "properties": {
        "pass": {"type": "boolean"}, "reason": {"type": ["string", "null"]}, "comment": {"type": ["string", "null"]},
        "score": {"type": ["number", "null"]}, "metadata": {"type": ["object", "null"]},
        "tokensUsed": {"type": ["object", "null"]},
        "assertion": {"type": ["object", "null"],
                      "properties": {"type": {"type": "string"}, "metric": {"type": ["string", "null"]},
                                     "provider": _PROVIDER}},
    },
    "if": {"properties": {"assertion": {"type": "object", "required": ["type"], "properties": {
        "type": {"enum": sorted(MODEL_GRADED | {"human"})}}}}, "required": ["assertion"]},
    "then": {"properties": {"score": {"type": ["number", "null"], "minimum": 0, "maximum": 1}}},
}
ROW = {
    "type": "object",
    "required": ["testIdx", "promptIdx"],
    "properties": {
        "testIdx": {"type": "integer", "minimum": 0}, "promptIdx": {"type": "integer", "minimum": 0},
        "testCase": {"type": "object", "properties": {
            "description": {"type": ["string", "null"]}, "vars": {"type": ["object", "null"]},
            "metadata": {"type": ["object", "null"]},
            "assert": {"type": ["array", "null"], "items": {"type": "object"}},
            "options": {"type": ["object", "null"], "properties": {"provider": _PROVIDER}}}},
        "prompt": {"type": "object", "properties": {"raw": {"type": "string"}, "label": {"type": ["string", "null"]}}},
        "provider": {"type": ["object", "string"], "properties": {"id": {"type": "string"}}},
        "response": {"type": ["object", "null"]}, "vars": {"type": ["object", "null"]},
        "error": {"type": ["string", "null"]},
        "gradingResult": {"type": ["object", "null"], "properties": {
            "componentResults": {"type": ["array", "null"], "items": _COMPONENT}}},
    },
}
# The file around the rows (``OutputFile``): the eval's config, whose ``defaultTest`` gives a grader and metadata
# to every test, and the eval's metadata (its ``author`` rated in the viewer).
OUTPUT_FILE = {"type": "object", "properties": {
    "config": {"type": ["object", "null"], "properties": {"defaultTest": {"type": ["object", "string", "null"],
        "properties": {"metadata": {"type": ["object", "null"]},
                       "options": {"type": ["object", "null"], "properties": {"provider": _PROVIDER}}}}}},
    "metadata": {"type": ["object", "null"], "properties": {"author": {"type": ["string", "null"]}}}}}
FIX = "give the results file promptfoo wrote (promptfoo eval -o results.json)"
REFERENCE_KINDS = ("equals", "contains", "icontains", "factuality", "model-graded-factuality",
                   "model-graded-closedqa", "similar")


class PromptfooAdapter:
    source = SOURCE

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        out = read_json(SOURCE, uri)
        summary = out.get("results") if isinstance(out, dict) else None
        rows = summary.get("results") if isinstance(summary, dict) else None
        if not isinstance(rows, list):
            raise SourceError(SOURCE, None, f"{uri} is not a promptfoo results file (no results.results list)",
                              fix="write it with 'promptfoo eval -o results.json'")
        check(SOURCE, Path(uri).name, None, out, OUTPUT_FILE, fix=FIX)
        config = out.get("config") if isinstance(out.get("config"), dict) else {}
        default_metadata = ((config.get("defaultTest") or {}).get("metadata") or {}) \
            if isinstance(config.get("defaultTest"), dict) else {}
        default_provider = _provider_id(((config.get("defaultTest") or {}).get("options") or {}).get("provider")) \
            if isinstance(config.get("defaultTest"), dict) else None
        author = (out.get("metadata") or {}).get("author") or "promptfoo-viewer"  # who rated in the viewer
        for n, row in enumerate(rows, start=1):
            check(SOURCE, Path(uri).name, n, row, ROW, fix=FIX)
            item = _item(n, row)
            yield SourceItem(n, item)
            yield from _grades(n, row, item["id"], default_provider, str(author), default_metadata)


def _provider_id(provider: Any) -> str | None:
    """A grader provider as promptfoo accepts it: 'openai:gpt-4o', {id: ...}, or {text: {id: ...}, ...}."""
    if isinstance(provider, str):
        return provider
    if isinstance(provider, dict):
        if isinstance(provider_id := provider.get("id"), str):
            return provider_id
        text = provider.get("text")
        return _provider_id(text) if text is not None else None
    return None


def item_id(test_idx: Any, prompt_idx: Any, provider_id: str | None) -> str:
    """A row's item id: its test and prompt, and a hash of (test, prompt, provider) for the provider, so that the
    id names no producer (a reviewer reads it; the provider stays in the metadata, for leads), no two items share
    a part that would group them by producer, and a second import of the same results file maps to the same items.

    >>> item_id(0, 0, "openai:gpt-4o")
    'test0-prompt0-4174aee7c77a'
    """
    return f"test{test_idx}-prompt{prompt_idx}-{sha256_hex([test_idx, prompt_idx, provider_id])[:12]}"


def _item(n: int, row: dict) -> dict:
    test = row.get("testCase") or {}
    prompt = row.get("prompt") or {}
    provider = row.get("provider") or {}
    provider_id = provider.get("id") if isinstance(provider, dict) else provider
    response = row.get("response") or {}
    output = response.get("output") if isinstance(response, dict) else None
    test_idx, prompt_idx = row.get("testIdx"), row.get("promptIdx")
    if test_idx is None or prompt_idx is None:
        raise SourceError(SOURCE, n, "the row has no testIdx or promptIdx", field="testIdx",
                          fix="give the file promptfoo wrote")
    reference = next((a.get("value") for a in test.get("assert") or []
                      if isinstance(a, dict) and a.get("type") in REFERENCE_KINDS and isinstance(a.get("value"), str)),
                     None)
    item: dict[str, Any] = {
        "id": item_id(test_idx, prompt_idx, provider_id),
        "task_id": f"test{test_idx}",
        "category": test.get("description") or "default",
        "input": prompt.get("raw") if isinstance(prompt.get("raw"), str) else json.dumps(prompt, ensure_ascii=False),
        "output": output if isinstance(output, str) else (text_of(output) if output is not None else ""),
        "reference": reference,
        "metadata": {"promptfoo": {"vars": row.get("vars") or test.get("vars") or {},
                                   "prompt": prompt.get("label"), "provider": provider_id}},
    }
    if row.get("error"):
        item["metadata"]["promptfoo"]["error"] = row["error"]
    if provider_id:
        from workbench.features.interop.base import producer_of
        item["producer"] = producer_of(provider_id)
    return {k: v for k, v in item.items() if v is not None}


def _carried_map(row: dict, default_metadata: Any, name: str) -> dict | None:
    """The scale a config exported by the workbench declares for its assertion (``metadata.workbench_scale``)."""
    metadata = (row.get("testCase") or {}).get("metadata") or (row.get("metadata") or default_metadata)
    scale = metadata.get("workbench_scale") if isinstance(metadata, dict) else None
    if isinstance(scale, dict) and scale.get("name") == name and isinstance(scale.get("import_map"), dict):
        return scale["import_map"]
    return None


def _grades(n: int, row: dict, item_id: str, default_provider: str | None, author: str,
            default_metadata: Any = None) -> Iterator[SourceRecord]:
    grading = row.get("gradingResult") or {}
    test_options = (row.get("testCase") or {}).get("options") or {}
    for c, comp in enumerate(grading.get("componentResults") or []):
        where = f"gradingResult.componentResults[{c}]"
        assertion = comp.get("assertion") or {}
        kind = assertion.get("type")
        value, field = comp.get("score"), f"{where}.score"
        if value is None:
            value, field = comp.get("pass"), f"{where}.pass"
        if kind == "human":
            yield SourceLabel(n, item_id, rater=author, name="human", value=value, field=field,
                              rationale=comp.get("comment") or comp.get("reason"))
        elif kind in MODEL_GRADED:
            grader = (_provider_id(assertion.get("provider")) or _provider_id(test_options.get("provider"))
                      or default_provider)
            if grader and grader.startswith("file://"):  # a local grader script: named by its file
                grader = grader[len("file://"):].rsplit("/", 1)[-1]
            name = assertion.get("metric") or kind
            error = (comp.get("metadata") or {}).get("graderError")
            tokens = comp.get("tokensUsed") or {}
            yield SourceJudgment(n, item_id, judge=name, name=name, value=None if error else value, model=grader,
                                 field=field, rationale=comp.get("reason"),
                                 unscored_reason=f"promptfoo grader error: {comp.get('reason')}" if error else (
                                     "the grader gave no score" if value is None else None),
                                 extra={"tokens_in": tokens.get("prompt"), "tokens_out": tokens.get("completion")},
                                 carried_map=_carried_map(row, default_metadata, name))
        else:
            yield Skipped(n, f"{kind or 'untyped'} assertion (not an LLM judge)")
