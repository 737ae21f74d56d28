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

``FILE_OR_URI`` may also be an experiment download (``GET /v1/experiments/{experiment_id}/json``: a list of the
experiment's runs with ``example_id``, ``repetition_number``, ``input``, ``reference_output``, ``output``,
``error`` and ``annotations[]``), or a folder of them, one file per experiment, named by the experiment (any
``*.json`` there that is not ``span_annotations*``/``spans*``):

- each run's example and output is an item, named by its content (so one example answered alike in two
  experiments or two repetitions is one item) with the ``example_id`` kept as metadata; a dict input or output
  of one text field (``{"question": "..."}``) is that text, any other is its JSON;
- each ``LLM`` annotation is a verdict of the judge named by its evaluator (``metadata.model`` as the grader when
  recorded): ``label`` when there is one, else ``score``; an ``error`` is unscored with the error as the reason;
  the verdicts of one experiment are one run of the judge (the file names the experiment, so a folder imported at
  once and its files imported one after the other land the same runs); an item an evaluator grades again in the
  same experiment (a repetition that gave the same output) is a further repeat (0, 1, ...);
- ``CODE`` and ``HUMAN`` annotations (the download names no rater) and runs whose task failed are skipped and
  counted.

Records are numbered within each file (an experiment's N-th run is its record N).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError
from workbench.core.formats import Record, parse_item
from workbench.features.interop.shapes import check
from workbench.features.interop.base import (SourceError, SourceItem, SourceJudgment, SourceLabel, SourceRecord,
    Skipped, export_files, producer_of, read_json, response_rows)

SOURCE = "phoenix"
_SPAN_FILES = ("span_annotations", "spans")
# The fields read of a span (the REST API's ``Span``) and of a span annotation (``SpanAnnotation``, or a record of
# the client's dataframe: its ``result.*`` columns flat), with the types Phoenix writes; what is missing is said
# where it is read.
_TEXT = {"type": ["string", "null"]}
SPAN = {"type": "object", "properties": {
    "name": _TEXT, "span_kind": _TEXT, "attributes": {"type": ["object", "null"]},
    "context": {"type": "object", "properties": {"trace_id": _TEXT, "span_id": {"type": "string"}}}}}
_RESULT = {"label": _TEXT, "score": {"type": ["number", "null"]}, "explanation": _TEXT}
ANNOTATION = {"type": "object", "properties": {
    "id": _TEXT, "span_id": {"type": "string"}, "name": {"type": "string"}, "annotation_name": {"type": "string"},
    "annotator_kind": {"type": "string"}, "result": {"type": ["object", "null"], "properties": _RESULT},
    **{f"result.{k}": v for k, v in _RESULT.items()},
    "metadata": {"type": ["object", "null"], "properties": {"model": _TEXT}},
    "identifier": _TEXT, "user_id": _TEXT, "created_at": _TEXT, "updated_at": _TEXT}}
FIX = "save the response as it came"


class PhoenixAdapter:
    source = SOURCE

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        path = Path(uri)
        if path.is_dir():  # experiment downloads, and beside them perhaps a span export
            experiments = [f for f in sorted(path.glob("*.json")) if not f.name.startswith(_SPAN_FILES)]
            for f in experiments:
                yield from _experiment(f, read_json(SOURCE, str(f)))
            if experiments and not any(path.glob("span_annotations*.json")):
                return
        elif path.is_file() and _is_experiment(body := read_json(SOURCE, uri)):
            yield from _experiment(path, body)
            return
        yield from self._spans(uri)

    def _spans(self, uri: str) -> Iterator[SourceRecord]:
        folder, annotations = export_files(SOURCE, uri, "span_annotations*.json",
                                           fix="save each response of GET /v1/projects/{project}/span_annotations "
                                               "there, or each experiment's GET /v1/experiments/{id}/json")
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
    check(SOURCE, file, n, span, SPAN, fix=FIX)
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
    check(SOURCE, origin, n, a, ANNOTATION, fix=FIX)
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
                              unscored_reason="the annotation has no label or score" if value is None else None,
                              # an evaluator run again updates its annotation in place: a new version, a new verdict
                              source_id=f"{a['id']}@{a.get('updated_at') or ''}" if isinstance(a.get("id"), str)
                              and a.get("id") else None)
    if kind == "CODE":
        return Skipped(n, "CODE annotation (not a human or an LLM judge)")
    raise SourceError(where, n, f"unknown annotator_kind {a.get('annotator_kind')!r}", field="annotator_kind",
                      fix="save the response as it came (kinds are HUMAN, LLM and CODE)")


# --------------------------------------------------------------------------- experiment downloads
@dataclass(frozen=True, slots=True)
class ExperimentAnnotation:
    """An ``annotations[]`` entry of an experiment run: one evaluator's result."""

    name: Any
    annotator_kind: str
    label: Any
    score: Any
    explanation: str | None
    error: str | None
    model: str | None
    end_time: str | None

    @classmethod
    def from_json(cls, d: dict) -> ExperimentAnnotation:
        metadata = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
        model = metadata.get("model")
        return cls(d.get("name"), str(d.get("annotator_kind", "")).upper(), d.get("label"), d.get("score"),
                   d.get("explanation"), d.get("error"), model if isinstance(model, str) and model else None,
                   d.get("end_time"))


@dataclass(frozen=True, slots=True)
class ExperimentRun:
    """A record of ``GET /v1/experiments/{id}/json``: the task's output on one example at one repetition."""

    example_id: Any
    repetition_number: Any
    input: Any
    reference_output: Any
    output: Any
    error: str | None
    annotations: list

    @classmethod
    def from_json(cls, d: dict) -> ExperimentRun:
        return cls(d.get("example_id"), d.get("repetition_number"), d.get("input"), d.get("reference_output"),
                   d.get("output"), d.get("error"), d.get("annotations"))


def _is_experiment(body: Any) -> bool:
    """An experiment download is a list of runs with ``example_id`` and ``repetition_number`` (a span export is a
    ``data`` body or a list of annotation records, with ``span_id``)."""
    return isinstance(body, list) and any(isinstance(r, dict) and {"example_id", "repetition_number"} & set(r)
                                          for r in body)


def _experiment(f: Path, body: Any) -> Iterator[SourceRecord]:
    """One experiment's runs: the items, and its evaluators' verdicts as one run per judge (named by the file)."""
    where = f"{SOURCE} {f.name}"
    if not isinstance(body, list) or not all(isinstance(r, dict) for r in body):
        raise SourceError(where, None, "is not a Phoenix experiment download (a list of experiment runs)",
                          fix="save the body of GET /v1/experiments/{experiment_id}/json as it came")
    graded: Counter = Counter()  # (evaluator, grader, item) -> verdicts so far in this experiment
    for n, raw in enumerate(body, start=1):
        run = ExperimentRun.from_json(raw)
        if not isinstance(run.example_id, str) or not run.example_id:
            raise SourceError(where, n, "the experiment run has no example_id", field="example_id",
                              fix="save the body of GET /v1/experiments/{experiment_id}/json as it came")
        if run.error or run.output is None:
            yield Skipped(n, "experiment run whose task failed (no output)")
            continue
        if not isinstance(run.annotations, list):
            raise SourceError(where, n, "annotations must be a list", field="annotations",
                              fix="save the body of GET /v1/experiments/{experiment_id}/json as it came")
        item = {"input": _field_text(run.input), "output": _field_text(run.output),
                "reference": _field_text(run.reference_output) if run.reference_output not in (None, {}, "") else None,
                "metadata": {"phoenix": {"example_id": run.example_id}}}
        item = {k: v for k, v in item.items() if v is not None}
        try:
            item_id = parse_item(Record(where, n, item)).id
        except InputError as e:
            raise SourceError(where, n, e.problem, field=e.field, fix=e.fix) from None
        yield SourceItem(n, {"id": item_id, **item}, origin=f.name)
        for a, raw_annotation in enumerate(run.annotations):
            yield _verdict(where, n, a, raw_annotation, item_id, f, graded)


def _verdict(where: str, n: int, a: int, raw: Any, item_id: str, f: Path, graded: Counter) -> SourceRecord:
    field = f"annotations[{a}]"
    annotation = ExperimentAnnotation.from_json(raw) if isinstance(raw, dict) else None
    if annotation is None or not isinstance(annotation.name, str) or not annotation.name:
        raise SourceError(where, n, "an annotation needs a name", field=f"{field}.name",
                          fix="save the body of GET /v1/experiments/{experiment_id}/json as it came")
    if annotation.annotator_kind == "CODE":
        return Skipped(n, "CODE annotation (not a human or an LLM judge)")
    if annotation.annotator_kind == "HUMAN":
        return Skipped(n, "HUMAN experiment annotation (the download names no rater)")
    if annotation.annotator_kind != "LLM":
        raise SourceError(where, n, f"unknown annotator_kind {annotation.annotator_kind!r}",
                          field=f"{field}.annotator_kind",
                          fix="save the download as it came (kinds are HUMAN, LLM and CODE)")
    value, at = ((annotation.label, f"{field}.label") if annotation.label is not None
                 else (annotation.score, f"{field}.score"))
    key = (annotation.name, annotation.model, item_id)
    repeat, graded[key] = graded[key], graded[key] + 1
    reason = (f"Phoenix evaluator error: {annotation.error}" if annotation.error
              else "the annotation has no label or score" if value is None else None)
    return SourceJudgment(n, item_id, judge=annotation.name, name=annotation.name,
                          value=None if annotation.error else value, model=annotation.model, field=at,
                          repeat=repeat, unscored_reason=reason, rationale=annotation.explanation,
                          created_at=annotation.end_time, origin=f.name, source_run=f.stem)


def _field_text(value: Any) -> str:
    """A dataset field as text: a string as it is, a dict of one text field as that text, anything else as JSON."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(only := next(iter(value.values())), str):
        return only
    return _text(value)
