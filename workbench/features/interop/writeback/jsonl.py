"""Labels as JSON Lines: one line per label, ``item_id``, ``rater``, ``rubric``, ``score`` and the rationale.

    {"item_id": "q1", "rater": "alice", "rubric": "qa", "rubric_version": 1, "score": 0, "level": "pass",
     "rationale": "checked by hand", "created_at": "...", "updated_at": "..."}

The file is written whole (a temporary file, then renamed) and holds only what the store holds, in the store's
order, so exporting twice writes the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from workbench.core.formats import write_jsonl
from workbench.features.interop.writeback import HumanLabel, LabelsExport


def line(label: HumanLabel) -> dict:
    return {"item_id": label.item_id, "rater": label.rater, "rubric": label.rubric,
            "rubric_version": label.rubric_version, "score": label.score, "level": label.level,
            "rationale": label.rationale, "created_at": label.created_at, "updated_at": label.updated_at}


def write(labels: list[HumanLabel], dest: str, result: LabelsExport, **_options: object) -> None:
    result.added = write_jsonl(Path(dest), (line(label) for label in labels))
