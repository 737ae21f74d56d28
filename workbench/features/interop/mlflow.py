"""MLflow 3 traces and their assessments, from a tracking store or a file of exported traces.

``FILE_OR_URI`` is either a tracking URI with the experiment after ``#experiment=`` (its name or id), e.g.
``sqlite:///mlflow.db#experiment=qa`` or ``http://localhost:5000#experiment=3``, read with
``MlflowClient.search_traces``; or a ``.json`` file holding a list of traces as ``Trace.to_dict()`` writes them.

- each trace is an item: its request is the input, its response the output, its spans (after the root) the
  trajectory: a ``TOOL`` or ``RETRIEVER`` span is a tool step, any other an assistant step;
- each ``Feedback`` from a ``HUMAN`` source is a label by its ``source_id``; from an ``LLM_JUDGE`` source a
  judgment of the judge named by the assessment and its ``source_id`` (several of one judge on a trace are
  repeats, oldest first); a feedback ``error`` is unscored; feedback an evaluation wrote (``mlflow.genai.evaluate``,
  the assessment's ``run_id``) is a run of the judge of its own, one per MLflow run;
- a judge written by ``workbench export --to mlflow`` declares its levels in its instructions, which MLflow keeps
  in the feedback's ``guideline`` metadata: its feedback imports without a map;
- an overridden assessment and an invalid one are skipped and counted, as are expectations (ground truth,
  not a rating) and feedback from ``CODE`` sources.

Record N is the N-th trace.
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.features.interop.shapes import check
from workbench.features.interop.base import (SourceError, SourceItem, SourceJudgment, SourceLabel, SourceRecord,
    Skipped, read_json, require, text_of)

SOURCE = "mlflow"
PAGE = 500
#: ``AssessmentMetadataKey.SOURCE_RUN_ID``: where an evaluation records its run (a store returns the assessment's
#: ``run_id`` only there)
SOURCE_RUN_ID = "mlflow.assessment.sourceRunId"
# A trace as ``Trace.to_dict()`` writes it (MLflow 3's ``TraceInfo``, ``Assessment``, ``AssessmentSource``): the
# fields read, with their types, before MLflow's own parser (whose refusals name no field) reads the rest.
_TEXT = {"type": ["string", "null"]}
_ASSESSMENT = {"type": "object", "properties": {
    "assessment_id": _TEXT, "assessment_name": {"type": "string"}, "trace_id": _TEXT, "rationale": _TEXT,
    "run_id": _TEXT, "overrides": _TEXT, "valid": {"type": ["boolean", "null"]},
    "metadata": {"type": ["object", "null"]}, "feedback": {"type": ["object", "null"]},
    "expectation": {"type": ["object", "null"]},
    "source": {"type": "object", "properties": {"source_type": {"type": "string"}, "source_id": {"type": "string"}}}}}
TRACE = {"type": "object", "required": ["info"], "properties": {
    "info": {"type": "object", "properties": {"trace_id": {"type": "string"}, "trace_location": {"type": "object"},
                                              "request_preview": _TEXT,
                                              "response_preview": _TEXT,
                                              "assessments": {"type": ["array", "null"], "items": _ASSESSMENT}}},
    "data": {"type": ["object", "null"], "properties": {"spans": {"type": ["array", "null"],
                                                                  "items": {"type": "object"}}}}}}
FIX = "export traces with Trace.to_dict()"


class MlflowAdapter:
    source = SOURCE

    def __init__(self) -> None:
        self.mlflow = require("mlflow")

    def read(self, uri: str, **_options: Any) -> Iterator[SourceRecord]:
        for n, trace in enumerate(self._traces(uri), start=1):
            yield from _records(n, trace)

    def _traces(self, uri: str) -> Iterator[Any]:
        from mlflow.entities import Trace

        if "#experiment=" not in uri and ("://" not in uri or Path(uri).is_file()):  # a file of exported traces
            data = read_json(SOURCE, uri)
            traces = data.get("traces") if isinstance(data, dict) else data
            if not isinstance(traces, list):
                raise SourceError(SOURCE, None, f"{uri} holds no list of traces",
                                  fix="write [trace.to_dict() for trace in mlflow.search_traces(return_type='list')]")
            for n, t in enumerate(traces, start=1):
                check(SOURCE, Path(uri).name, n, t, TRACE, fix=FIX)
                try:
                    yield Trace.from_dict(t)
                except Exception as e:  # noqa: BLE001 - MLflow's own parser decides what a trace is
                    # its refusal of a field it does not know, in words that do not read as a crash
                    known = re.search(r"(\w+)\.__init__\(\) got an unexpected keyword argument '([^']+)'", str(e))
                    problem = (f"has a field MLflow's {known[1]} does not have ('{known[2]}')" if known
                               else f"is not an MLflow trace ({type(e).__name__}: {e})")
                    raise SourceError(SOURCE, n, problem, fix=FIX) from None
            return
        tracking_uri, _, fragment = uri.partition("#")
        with _bounded_http():
            yield from self._store_traces(uri, tracking_uri, fragment)

    def _store_traces(self, uri: str, tracking_uri: str, fragment: str) -> Iterator[Any]:
        key, _, experiment = fragment.partition("=")
        if key != "experiment" or not experiment:
            raise SourceError(SOURCE, None, f"the URI {uri} names no experiment",
                              fix=f"add it after '#', e.g. {tracking_uri}#experiment=my-experiment")
        if tracking_uri.startswith("sqlite:///") and not Path(tracking_uri[len("sqlite:///"):]).is_file():
            # MLflow would create an empty store there: reading is never a reason to write one
            raise SourceError(SOURCE, None, f"there is no MLflow store at {tracking_uri}",
                              fix="check the path after sqlite:/// (three slashes, then the file)")
        try:
            client = self.mlflow.MlflowClient(tracking_uri=tracking_uri)
            exp = client.get_experiment_by_name(experiment)
            if exp is None and experiment.isdigit():
                exp = client.get_experiment(experiment)
        except self.mlflow.exceptions.MlflowException as e:  # the store's own sentence says what to do
            raise SourceError(SOURCE, None, f"cannot read the tracking store {tracking_uri}: {e.message}") from None
        if exp is None:
            raise SourceError(SOURCE, None, f"there is no experiment '{experiment}' at {tracking_uri}",
                              fix="give the experiment's name or id after #experiment=")
        token = None
        while True:
            page = client.search_traces(locations=[exp.experiment_id], max_results=PAGE, page_token=token,
                                        order_by=["timestamp_ms ASC"])
            yield from page
            token = page.token
            if not token:
                return


#: An unreachable tracking server is said in seconds, not after MLflow's default retries (7, with a backoff that
#: adds up to four minutes); a variable the user set is kept.
HTTP_LIMITS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2", "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
               "MLFLOW_HTTP_REQUEST_TIMEOUT": "30"}


@contextmanager
def _bounded_http() -> Iterator[None]:
    added = [k for k in HTTP_LIMITS if k not in os.environ]
    os.environ.update({k: HTTP_LIMITS[k] for k in added})
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def _records(n: int, trace: Any) -> Iterator[SourceRecord]:
    info = trace.info
    yield SourceItem(n, _item(trace))
    assessments = list(info.assessments or [])
    overridden = {a.overrides for a in assessments if getattr(a, "overrides", None)}
    repeats: dict[tuple[str, str, str | None], int] = defaultdict(int)
    # oldest first; calls logged within the same millisecond have no known order (the store returns them in any
    # order), so a verdict comes before a failed call, and the assessment id settles the rest: the same store always
    # gives the same repeats, and a failure never shadows a verdict logged with it
    for a in sorted(assessments, key=lambda a: (a.create_time_ms or 0, getattr(a, "error", None) is not None,
                                                a.assessment_id or "")):
        source = a.source
        kind = str(getattr(source.source_type, "value", source.source_type))
        if a.assessment_id in overridden:
            yield Skipped(n, "overridden assessment")
        elif a.valid is False:
            yield Skipped(n, "invalid assessment")
        elif type(a).__name__ != "Feedback":
            yield Skipped(n, f"{type(a).__name__.lower()} (not a rating)")
        elif kind == "HUMAN":
            yield SourceLabel(n, info.trace_id, rater=source.source_id, name=a.name, value=a.value,
                              field=f"assessments.{a.name}", rationale=a.rationale, created_at=_time(a))
        elif kind == "LLM_JUDGE":
            # feedback that an evaluation wrote (mlflow.genai.evaluate: the assessment names its MLflow run) is a run
            # of the judge of its own: an evaluation is closed once done, so a store that grew by another evaluation
            # lands it as a new run holding only its verdicts, the earlier runs as they were; repeats count within it
            # feedback logged outside an evaluation (log_feedback) accumulates in the experiment: one run that grows
            evaluation = getattr(a, "run_id", None) or (a.metadata or {}).get(SOURCE_RUN_ID) or None
            run = evaluation or f"experiment {info.experiment_id}"
            key = (a.name, source.source_id, run)
            error = a.error.error_message or a.error.error_code if a.error else None
            yield SourceJudgment(n, info.trace_id, judge=a.name, name=a.name, value=None if error else a.value,
                                 model=source.source_id, field=f"assessments.{a.name}", repeat=repeats[key],
                                 rationale=a.rationale, created_at=_time(a), source_run=run,
                                 run_grows=evaluation is None,
                                 unscored_reason=f"MLflow feedback error: {error}" if error else (
                                     "the feedback has no value" if a.value is None else None),
                                 carried_map=_carried_map(a.metadata),
                                 source_id=getattr(a, "assessment_id", None) or None)
            repeats[key] += 1
        else:
            yield Skipped(n, f"{kind} feedback (not a human or an LLM judge)")


#: the closing sentence of a judge written by `workbench export --to mlflow`, which MLflow keeps in each feedback's
#: metadata (``guideline``, the judge's instructions): the scale's levels, so its feedback imports without a map
EXPORTED_SCALE = re.compile(r"The value of your feedback is the score, one of ([-+\d, ]+); the rationale is your "
                            r"reasoning by the rubric's criteria\.\Z")


def _carried_map(metadata: Any) -> dict | None:
    found = EXPORTED_SCALE.search(str((metadata or {}).get("guideline") or ""))
    if not found:
        return None
    levels = sorted(int(v) for v in found.group(1).split(","))
    return {"cut_points": [(a + b) / 2 for a, b in zip(levels, levels[1:])], "levels": levels,
            "range": [levels[0], levels[-1]]}


def _time(a: Any) -> str | None:
    from datetime import datetime, timezone

    ms = a.create_time_ms
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="seconds") if ms else None


def _value(raw: Any) -> str:
    """A request or response as text: JSON text is decoded; a single field's text is taken as it is."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return raw
    if isinstance(raw, dict) and len(raw) == 1 and isinstance(next(iter(raw.values())), str):
        return next(iter(raw.values()))
    if isinstance(raw, dict) and isinstance(messages := raw.get("messages"), list):  # chat requests
        return "\n".join(text_of(m.get("content")) for m in messages if isinstance(m, dict))
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)


def _item(trace: Any) -> dict:
    info, data = trace.info, trace.data
    spans = sorted(data.spans or [], key=lambda s: s.start_time_ns or 0)
    steps = []
    for span in spans:
        if span.parent_id is None:
            continue  # the root span is the request and the response themselves
        kind = str(span.span_type or "")
        step: dict[str, Any] = {"role": "tool" if kind in ("TOOL", "RETRIEVER") else "assistant",
                                "content": _value(span.outputs) if span.outputs is not None else "",
                                "name": span.name}
        steps.append(step)
    item: dict[str, Any] = {"id": info.trace_id, "input": _value(data.request) if data.request else "",
                            "output": _value(data.response) if data.response is not None else "",
                            "metadata": {"mlflow": {"trace_id": info.trace_id,
                                                    "experiment_id": getattr(info, "experiment_id", None)}}}
    if steps:
        item["trajectory"] = steps
    return item
