"""Phoenix span annotations, as the Phoenix REST API returns them or as ``phoenix.client`` frames them.

``FILE_OR_URI`` is a span-annotations response saved as JSON (``GET /v1/projects/{project}/span_annotations``,
``{"data": [...], "next_cursor": ...}``), or the records of ``client.spans.get_span_annotations_dataframe(...)``
(``df.reset_index().to_json(path, orient="records")``); or a folder of such files named ``span_annotations*.json``
with ``spans*.json`` beside them (``GET /v1/projects/{project}/spans``) for the spans themselves.

- each span is an item: its OpenInference ``input.value`` and ``output.value`` attributes, its name as the
  category, ``llm.model_name`` / ``llm.provider`` as the producer when it is an LLM span;
- an annotation whose ``annotator_kind`` is ``HUMAN`` is a label by its ``user_id`` (else its ``identifier``);
  ``LLM`` a judgment of the judge named by the annotation (its ``metadata.model`` as the grader model when
  recorded); the value to map is ``result.label`` when there is one, else ``result.score``; ``result.explanation``
  is the rationale;
- ``CODE`` annotations and notes are skipped and counted.

Records are numbered within each file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from workbench.features.interop.base import (SourceError, SourceItem, SourceJudgment, SourceLabel, SourceRecord,
    Skipped, export_files, producer_of, response_rows)

SOURCE = "phoenix"


class PhoenixAdapter:
    source = SOURCE

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        folder, annotations = export_files(SOURCE, uri, "span_annotations*.json",
                                           fix="save each response of GET /v1/projects/{project}/span_annotations "
                                               "there")
        for f in sorted(folder.glob("spans*.json")) if folder else ():
            for n, span in enumerate(response_rows(SOURCE, f), start=1):
                yield SourceItem(n, _item(span, f.name, n), origin=f.name)
        for f in annotations:
            for n, annotation in enumerate(response_rows(SOURCE, f, records_ok=True), start=1):
                yield _annotation(n, annotation, f.name if folder else None)


def _attribute(attributes: dict, key: str) -> Any:
    """An OpenInference attribute, whether the API gave it flat ('input.value') or nested."""
    if key in attributes:
        return attributes[key]
    node: Any = attributes
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _item(span: Any, file: str, n: int) -> dict:
    context = span.get("context") if isinstance(span, dict) else None
    if not isinstance(context, dict) or not (span_id := context.get("span_id")):
        raise SourceError(f"{SOURCE} {file}", n, "the span has no context.span_id", field="context.span_id",
                          fix="save the response as it came")
    attributes = span.get("attributes") or {}
    item: dict[str, Any] = {"id": span_id, "input": _text(_attribute(attributes, "input.value")),
                            "output": _text(_attribute(attributes, "output.value")),
                            "category": span.get("name") or "default",
                            "metadata": {"phoenix": {"trace_id": context.get("trace_id"),
                                                     "span_kind": span.get("span_kind")}}}
    model = _attribute(attributes, "llm.model_name")
    if isinstance(model, str) and model:
        provider = _attribute(attributes, "llm.provider")
        item["producer"] = producer_of(f"{provider}/{model}" if provider else model)
        if item["producer"]["family"] == "unknown":
            item.pop("producer")  # a family the span does not give is better left out than guessed
    return item


def _annotation(n: int, a: Any, origin: str | None) -> SourceRecord:
    where = f"{SOURCE} {origin}" if origin else SOURCE
    if not isinstance(a, dict):
        raise SourceError(where, n, "an annotation must be an object", fix="save the response as it came")
    name = a.get("name", a.get("annotation_name"))
    span_id = a.get("span_id")
    if not isinstance(name, str) or not span_id:
        raise SourceError(where, n, "an annotation needs a name and a span_id", field="name",
                          fix="save the response as it came (reset the dataframe's index to keep span_id)")
    if name == "note":
        return Skipped(n, "note (not a rating)")
    result = a.get("result") if isinstance(a.get("result"), dict) else {
        k.split(".", 1)[1]: v for k, v in a.items() if k.startswith("result.")}
    label, score = result.get("label"), result.get("score")
    value, field = (label, "result.label") if label is not None else (score, "result.score")
    kind = str(a.get("annotator_kind", "")).upper()
    explanation = result.get("explanation")
    at = a.get("updated_at") or a.get("created_at")
    if kind == "HUMAN":
        rater = a.get("user_id") or a.get("identifier")
        if not rater:
            raise SourceError(where, n, "a HUMAN annotation names no user_id or identifier", field="user_id",
                              fix="annotate in the Phoenix app (it records the user), or give each reviewer's "
                                  "annotations an identifier")
        return SourceLabel(n, span_id, rater=str(rater), name=name, value=value, field=field,
                           rationale=explanation, created_at=at, origin=origin)
    if kind == "LLM":
        model = (a.get("metadata") or {}).get("model")
        return SourceJudgment(n, span_id, judge=name, name=name, value=value, model=model, field=field,
                              rationale=explanation, created_at=at, origin=origin,
                              unscored_reason="the annotation has no label or score" if value is None else None)
    if kind == "CODE":
        return Skipped(n, "CODE annotation (not a human or an LLM judge)")
    raise SourceError(where, n, f"unknown annotator_kind {a.get('annotator_kind')!r}", field="annotator_kind",
                      fix="save the response as it came (kinds are HUMAN, LLM and CODE)")
