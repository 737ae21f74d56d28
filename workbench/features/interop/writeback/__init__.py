"""`workbench export-labels`: the golden set's human labels, written back where the team looks (interop's way back).

    result = export_labels(store, "qa", "mlflow", "sqlite:///mlflow.db#experiment=qa")

Every label of the golden set (of one rubric with ``rubric=``) goes out exactly once, as the store holds it now: a
label changed after an earlier export goes out with its latest score and rationale. One module per target writes
them: ``jsonl`` (a file, one line per label), ``mlflow`` (HUMAN feedback on a trace of a tracking store) and
``langfuse`` (a file of score-create events for Langfuse's ingestion API). Writing again is idempotent: the same
file, or no new MLflow assessment.

An item imported from MLflow or Langfuse keeps the trace it came from in its metadata (``metadata.mlflow.trace_id``,
``metadata.langfuse.traceId``; see ``interop/mlflow.py`` and ``interop/langfuse.py``), so its labels land on that
trace.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from workbench.calibration.rubric_versions import RubricVersion, get_rubric, get_rubric_by_id
from workbench.core.errors import InputError, NotFound
from workbench.core.models import Item
from workbench.store import Store

TARGETS = ("jsonl", "mlflow", "langfuse")


@dataclass(frozen=True)
class SourceTrace:
    """Where an item came from in another tool, as its import recorded it in the item's metadata."""

    mlflow_trace_id: str | None = None
    langfuse_trace_id: str | None = None  # an observation's trace (the item itself is then the observation)

    @classmethod
    def of(cls, item: Item) -> SourceTrace:
        meta = item.metadata or {}
        mlflow, langfuse = meta.get("mlflow"), meta.get("langfuse")
        return cls(mlflow_trace_id=mlflow.get("trace_id") if isinstance(mlflow, dict) else None,
                   langfuse_trace_id=langfuse.get("traceId") if isinstance(langfuse, dict) else None)


@dataclass(frozen=True)
class HumanLabel:
    """One human label as it goes out: the item, the rater, the rubric and the score with its level's label."""

    golden_set: str
    item_id: str
    rater: str
    rubric: str
    rubric_version: int
    score: int
    level: str  # the scale level's label, e.g. "pass"
    rationale: str | None
    created_at: str
    updated_at: str
    source: SourceTrace
    item: Item  # what a trace made for the item shows (its input and output)


@dataclass
class LabelsExport:
    """What one export-labels wrote: ``labels`` went out; of them ``added`` are new in the target, ``updated``
    changed there (a label changed since the last export) and ``unchanged`` were there already."""

    target: str
    dest: str
    labels: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    traces_made: int = 0  # MLflow: traces made for items that had none in the store

    def summary(self) -> str:
        if self.target == "mlflow":
            return (f"{self.labels} labels to {self.dest}: {self.added} added, {self.updated} updated, "
                    f"{self.unchanged} already there; {self.traces_made} traces made for items without one")
        return f"{self.labels} labels written to {self.dest}"


def human_labels(store: Store, golden_set: str, rubric: str | None = None) -> list[HumanLabel]:
    """Every label of the golden set (of ``rubric`` when given), in item order, then rubric and rater."""
    gs = store.golden_set(golden_set)
    if rubric is not None:
        get_rubric(store, rubric)  # an unknown rubric is named as such, not exported as "no labels"
    items = {item.id: item for item in store.items(gs.id)}
    versions: dict[int, RubricVersion] = {}  # the rubric version each label was made under, read once
    out = []
    for item_id, rater, rubric_name, rubric_id, score, rationale, created_at, updated_at in \
            store.labels_to_write_back(gs.id, rubric):
        if rubric_id not in versions:
            versions[rubric_id] = get_rubric_by_id(store, rubric_id)
        rv = versions[rubric_id]
        item = items[item_id]
        out.append(HumanLabel(gs.name, item_id, rater, rubric_name, rv.version, score, rv.rubric.scale.label_of(score),
                              rationale, created_at, updated_at, SourceTrace.of(item), item))
    return out


def export_labels(store: Store, golden_set: str, target: str, dest: str, *, rubric: str | None = None,
                  data_type: str = "numeric") -> LabelsExport:
    """Write the golden set's human labels to ``target`` (jsonl, mlflow or langfuse) at ``dest``.

    ``data_type`` (langfuse): ``numeric`` sends the score, ``categorical`` its level's label.
    """
    if target not in TARGETS:
        raise InputError(f"export-labels cannot write to '{target}'", fix=f"use one of: {', '.join(TARGETS)}")
    labels = human_labels(store, golden_set, rubric)
    if not labels:
        raise NotFound(f"golden set '{golden_set}' has no human labels"
                       + (f" under rubric '{rubric}'" if rubric else "")
                       + "; label items first ('workbench ui' or 'workbench import labels FILE')")
    writer = importlib.import_module(f"workbench.features.interop.writeback.{target}")
    result = LabelsExport(target, dest, labels=len(labels))
    writer.write(labels, dest, result, data_type=data_type)
    return result
