"""Labels to MLflow 3: each a ``Feedback`` assessment from a ``HUMAN`` source on the item's trace.

``DEST`` is a tracking URI, optionally with the experiment after ``#experiment=`` (its name or id; default: an
experiment named after the golden set, made if missing), e.g. ``sqlite:///mlflow.db#experiment=qa``. Each label is
``Feedback(name=<rubric>, value=<score>, rationale=<rationale>, source=AssessmentSource(HUMAN, <rater>))`` with the
metadata ``workbench.golden_set``, ``workbench.item_id``, ``workbench.rubric_version`` and ``workbench.level``.

The trace of an item is, in this order: the trace it was imported from (``metadata.mlflow.trace_id``), when the
store holds it; a trace of the experiment tagged ``workbench.golden_set`` and ``workbench.item_id`` (made by an
earlier export); else a new one, with those tags, the item's input and output, and the source trace id
(``workbench.source_trace_id``) when the item came from another store.

Idempotent: a label whose feedback (same rubric, rater and item, made by an export) is on the trace already is left
alone when it is the same, updated in place (``mlflow.update_assessment``) when the label changed since; only a new
label adds an assessment. Feedback not made by an export (e.g. the one a label was imported from) is never touched.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import groupby
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from workbench.core.errors import InputError
from workbench.features.interop.base import LibraryMissing, require
from workbench.features.interop.writeback import HumanLabel, LabelsExport

PAGE = 500
TAG_SET, TAG_ITEM, TAG_SOURCE = "workbench.golden_set", "workbench.item_id", "workbench.source_trace_id"


def shown(uri: str) -> str:
    """A tracking URI without the user and password it may carry (they never reach a message)."""
    parts = urlsplit(uri)
    if parts.username or parts.password:
        parts = parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))
    return urlunsplit(parts)


def split_dest(dest: str, golden_set: str) -> tuple[str, str]:
    tracking_uri, _, fragment = dest.partition("#")
    if not fragment:
        return tracking_uri, golden_set
    key, _, experiment = fragment.partition("=")
    if key != "experiment" or not experiment:
        raise InputError(f"the MLflow destination {shown(dest)} has '#{fragment}' where an experiment belongs",
                         fix=f"write {shown(tracking_uri)}#experiment=NAME, or leave '#...' out for an experiment "
                             f"named '{golden_set}'")
    return tracking_uri, experiment


@contextmanager
def _tracking(uri: str) -> Iterator[None]:
    """MLflow's tracer exports to the global tracking URI: point it at ``uri`` for the export (traces written
    before their feedback), then put back what was there."""
    import mlflow

    previous = os.environ.get("MLFLOW_TRACKING_URI")  # set_tracking_uri mirrors the global URI there; None: unset
    sync = "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING" not in os.environ
    if sync:
        os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(previous)
        if sync:
            os.environ.pop("MLFLOW_ENABLE_ASYNC_TRACE_LOGGING", None)


def write(labels: list[HumanLabel], dest: str, result: LabelsExport, **_options: object) -> None:
    try:
        mlflow = require("mlflow")
    except LibraryMissing:
        from workbench.core.errors import ConfigError

        raise ConfigError("exporting labels to MLflow needs its Python package; run: "
                          "pip install 'judge-workbench[mlflow]'") from None
    tracking_uri, experiment = split_dest(dest, labels[0].golden_set)
    result.dest = shown(dest)
    try:
        with _tracking(tracking_uri):
            _write(mlflow, labels, tracking_uri, experiment, result)
    except mlflow.exceptions.MlflowException as e:  # the store's own sentence says what is wrong
        raise InputError(f"cannot write labels to the MLflow tracking store {shown(tracking_uri)}: {e.message}",
                         fix="check the tracking URI") from None


def _write(mlflow: Any, labels: list[HumanLabel], tracking_uri: str, experiment: str, result: LabelsExport) -> None:
    client = mlflow.MlflowClient(tracking_uri=tracking_uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None and experiment.isdigit():
        exp = client.get_experiment(experiment)
    experiment_id = exp.experiment_id if exp is not None else client.create_experiment(experiment)
    golden_set = labels[0].golden_set
    made = _tagged_traces(client, experiment_id, golden_set)
    for item_id, group in groupby(labels, key=lambda label: label.item_id):
        group = list(group)
        trace = _trace_of(mlflow, client, group[0], made.get(item_id), experiment_id, result)
        ours = {(a.name, a.source.source_id): a for a in trace.info.assessments or []
                if type(a).__name__ == "Feedback" and a.valid is not False
                and str(getattr(a.source.source_type, "value", a.source.source_type)) == "HUMAN"
                and (a.metadata or {}).get(TAG_SET) == golden_set and (a.metadata or {}).get(TAG_ITEM) == item_id}
        for label in group:
            _put(mlflow, trace.info.trace_id, label, ours.get((label.rubric, label.rater)), result)


def _tagged_traces(client: Any, experiment_id: str, golden_set: str) -> dict[str, Any]:
    """The experiment's traces made by an earlier export of this golden set, by item id."""
    quoted = golden_set.replace("'", "\\'")
    found, token = {}, None
    while True:
        page = client.search_traces(locations=[experiment_id], filter_string=f"tag.`{TAG_SET}` = '{quoted}'",
                                    max_results=PAGE, page_token=token, include_spans=False)
        for trace in page:
            found.setdefault(trace.info.tags.get(TAG_ITEM), trace)
        token = page.token
        if not token:
            return found


def _trace_of(mlflow: Any, client: Any, label: HumanLabel, tagged: Any, experiment_id: str,
              result: LabelsExport) -> Any:
    source_id = label.source.mlflow_trace_id
    if source_id:
        try:
            return client.get_trace(source_id, display=False)
        except mlflow.exceptions.MlflowException:
            pass  # not in this store: the item gets a trace of its own here
    if tagged is not None:
        return client.get_trace(tagged.info.trace_id, display=False)
    item = label.item
    tags = {TAG_SET: label.golden_set, TAG_ITEM: label.item_id}
    if source_id:
        tags[TAG_SOURCE] = source_id
    span = client.start_trace(f"workbench item {label.item_id}", inputs={"input": item.input}, tags=tags,
                              experiment_id=experiment_id)
    client.end_trace(span.trace_id, outputs={"output": item.output or ""})
    mlflow.flush_trace_async_logging()
    result.traces_made += 1
    return client.get_trace(span.trace_id, display=False)


def _put(mlflow: Any, trace_id: str, label: HumanLabel, existing: Any, result: LabelsExport) -> None:
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Feedback

    metadata = {TAG_SET: label.golden_set, TAG_ITEM: label.item_id,
                "workbench.rubric_version": str(label.rubric_version), "workbench.level": label.level}
    if existing is None:
        mlflow.log_feedback(trace_id=trace_id, name=label.rubric, value=label.score, rationale=label.rationale,
                            source=AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id=label.rater),
                            metadata=metadata)
        result.added += 1
    elif existing.value == label.score and existing.rationale == label.rationale and existing.metadata == metadata:
        result.unchanged += 1
    else:
        mlflow.update_assessment(trace_id=trace_id, assessment_id=existing.assessment_id, assessment=Feedback(
            name=label.rubric, value=label.score, rationale=label.rationale, metadata=metadata,
            source=AssessmentSource(source_type=AssessmentSourceType.HUMAN, source_id=label.rater)))
        result.updated += 1
