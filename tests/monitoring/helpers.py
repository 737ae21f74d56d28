"""The CLI on an approved workspace, and a grader that runs the real judge path with the scripted mock provider."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from click.testing import CliRunner

from workbench.cli import main


def cli(approved, *args: str, env: dict | None = None):
    return CliRunner().invoke(main, [*map(str, args), "--db", str(approved.db), "--project", str(approved.root)],
                              env=env, catch_exceptions=False)


def mock_grader(verdict):
    """judge_items for ingest: the bundle's judge with its model swapped for `mock/` scripted by ``verdict(item)``."""
    from workbench.features.judging.service import judge_items

    def run(items, rubric, spec):
        return judge_items(items, rubric, dataclasses.replace(spec, model="mock/gpt-4o"),
                           provider_options={"verdicts": lambda item, request: verdict(item)})
    return run


def label_sampled(approved, stream: str, humans: dict[str, int], tmp: Path, *, rater: str = "ana") -> int:
    """Reviewers label every sampled trace of the stream with its real human label (as the UI would store it)."""
    from workbench.features.importing.service import import_labels

    gs = approved.store.golden_set(stream)
    ids = [r["item_id"] for r in approved.store.item_index(gs.id)]
    path = tmp / f"labels-{stream}-{rater}.jsonl"
    path.write_text("".join(json.dumps({"item_id": i, "rater": rater, "score": humans[i]}) + "\n" for i in ids))
    import_labels(approved.store, path, stream, "logic")
    return len(ids)
