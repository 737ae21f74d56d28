"""The synthetic demo: seeding a database from the packaged demo files, and writing them into a workspace.

The files are package data (``workbench/features/demo/data/``, read with
``importlib.resources``), so an installed package seeds the demo from any
folder; ``python -m workbench.features.demo.seed`` rewrites them.
"""

from __future__ import annotations

import argparse
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator

from workbench.calibration.rubric_versions import add_rubric, get_rubric
from workbench.core.workspace import Workspace
from workbench.features.demo.eval_awareness import write_eval_awareness
from workbench.features.demo.generator import DATA_DIR, RUBRIC_NAME, DemoConfig, write_demo
from workbench.features.demo.tool_examples import write_tool_examples
from workbench.features.importing import service as importing
from workbench.store import Store

DEMO_GOLDEN_SET = "demo"
# The results boards' Python grader is calibrated on a copy of the demo golden set (its items, labels and
# adjudications), so the demo's own golden set keeps its four recorded judges and their numbers.
BOARD_GOLDEN_SET = "demo-board"
DEMO_LEAD = "lead"  # the seeded rater who sees the lead pages


@dataclass
class DemoSummary:
    rubric: str
    items: int = 0
    labels: int = 0
    adjudications: int = 0
    judgments: dict[str, int] = field(default_factory=dict)
    lead: str = DEMO_LEAD
    files_written: list[Path] = field(default_factory=list)  # demo files newly written into the workspace
    files_kept: list[Path] = field(default_factory=list)     # workspace files that differ from the demo's: left alone
    changed: bool = False  # whether seeding added anything to the database (a second seed adds nothing)
    boards: list[Any] = field(default_factory=list)  # what ``boards`` returned: the results boards it seeded


def demo_data() -> Traversable:
    """The packaged demo, laid out as a workspace: golden_sets/demo/ and rubrics/demo-patch-quality.yaml."""
    return resources.files("workbench.features.demo").joinpath("data")


def demo_files() -> Iterator[tuple[PurePosixPath, Traversable]]:
    """(path relative to a workspace, packaged file) of every demo file, in a stable order."""
    def walk(node: Traversable, rel: PurePosixPath) -> Iterator[tuple[PurePosixPath, Traversable]]:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                yield from walk(child, rel / child.name)
            elif not child.name.startswith(".") and child.name != "__init__.py":
                yield rel / child.name, child
    yield from walk(demo_data(), PurePosixPath())


def write_demo_files(workspace: Workspace) -> tuple[list[Path], list[Path]]:
    """Copy the demo's files into the workspace: (written, kept). A file already there is never overwritten."""
    written, kept = [], []
    for rel, src in demo_files():
        dest = workspace.root.joinpath(*rel.parts)
        data = src.read_bytes()
        if dest.exists():
            if dest.read_bytes() != data:
                kept.append(dest)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        written.append(dest)
    return written, kept


def seed_demo(store: Store, workspace: Workspace | None = None, *, precompute: bool = False,
              boards: Callable[..., list[Any]] | None = None) -> DemoSummary:
    """Load rubric, items, labels, adjudications and recorded judgments of the demo; idempotent.

    A second seed changes no table, even after the rubric gained versions: the recorded judgments go into the
    demo's own rubric version (v1 as shipped), never the newest one, and nothing is recomputed when nothing was
    added. With a workspace, the demo's files are also written into it (those missing), so the README's
    walkthrough can read ``golden_sets/demo/`` there. ``precompute`` also computes what the lead pages open on
    (:func:`precompute_reports`), as ``workbench demo`` does. ``boards`` (with ``precompute``) seeds the results
    boards: the golden set :data:`BOARD_GOLDEN_SET` (a copy of the demo's, without its judgments) is loaded and
    ``boards(store, BOARD_GOLDEN_SET, rubric, run_files, workspace, actor)`` called with the demo's packaged run
    files (:func:`board_run_files`); ``workbench demo`` passes the board feature's ``seed_demo_boards`` (a feature
    the demo may not import).
    """
    data = demo_data()
    folder = data / "golden_sets" / DEMO_GOLDEN_SET
    rubric_dir = folder / RUBRIC_NAME
    with resources.as_file(data / "rubrics" / f"{RUBRIC_NAME}.yaml") as path:
        rv = add_rubric(store, path)
    summary = DemoSummary(rubric=f"{rv.name} v{rv.version}", changed=rv.created)
    (summary.items, summary.labels, summary.adjudications), added = _load_golden_set(
        store, DEMO_GOLDEN_SET, rv.name, before_labels=lambda: store.set_rater_role(DEMO_LEAD, "lead"))
    summary.changed = summary.changed or added
    version = f"{rv.name}@v{rv.version}"  # the demo's version: its recorded judgments were made under it
    for judgments in sorted((rubric_dir / "judgments").iterdir(), key=lambda t: t.name):
        if judgments.name.endswith(".jsonl"):
            judge = judgments.name.removesuffix(".jsonl")
            with resources.as_file(judgments) as path:
                res = importing.import_judgments(store, path, DEMO_GOLDEN_SET, version, judge)
            summary.judgments[judge], summary.changed = res.records, summary.changed or res.added > 0
    if workspace is not None:
        summary.files_written, summary.files_kept = write_demo_files(workspace)
    if precompute and summary.changed and get_rubric(store, rv.name).version == rv.version:
        if boards is not None:
            _load_golden_set(store, BOARD_GOLDEN_SET, rv.name)
            with ExitStack() as files:
                runs = [files.enter_context(resources.as_file(f)) for f in board_run_files()]
                summary.boards = boards(store, BOARD_GOLDEN_SET, rv.name, runs, workspace, DEMO_LEAD)
        precompute_reports(store, workspace)  # the reports of this state (a re-seed that added nothing: cached)
    return summary


def _load_golden_set(store: Store, name: str, rubric: str, *,
                     before_labels: Callable[[], object] | None = None) -> tuple[tuple[int, int, int], bool]:
    """The demo's items, labels and adjudications into golden set ``name``: (their counts, whether any was new)."""
    folder = demo_data() / "golden_sets" / DEMO_GOLDEN_SET
    with resources.as_file(folder / "items.jsonl") as path:
        items = importing.import_items(store, path, name, is_demo=True)
    store.ensure_golden_set(name, is_demo=True, overlap=2)
    if before_labels is not None:
        before_labels()
    with resources.as_file(folder / RUBRIC_NAME / "labels.jsonl") as path:
        labels = importing.import_labels(store, path, name, rubric)
    with resources.as_file(folder / RUBRIC_NAME / "adjudications.jsonl") as path:
        adjudications = importing.import_adjudications(store, path, name, rubric)
    return ((items.records, labels.records, adjudications.records),
            any(r.added > 0 for r in (items, labels, adjudications)))


def board_run_files() -> list[Traversable]:
    """The demo's weeks of model runs for the results board (``examples/board/week-*.jsonl``), oldest first."""
    folder = demo_data() / "examples" / "board"
    return sorted((f for f in folder.iterdir() if f.name.startswith("week-") and f.name.endswith(".jsonl")),
                  key=lambda f: f.name)


def precompute_reports(store: Store, workspace: Workspace | None = None) -> None:
    """Compute and keep in the report cache what the lead pages open on: every judge's calibration report (with
    the comparison) and drift timeline, so a page's first load reads them back instead of computing them."""
    from workbench.calibration.calibrate import compare
    from workbench.calibration.insights import drift_timeline

    result = compare(store, DEMO_GOLDEN_SET, RUBRIC_NAME, workspace=workspace)
    for report in result.judges:
        drift_timeline(store, DEMO_GOLDEN_SET, RUBRIC_NAME, report.judge.id, workspace=workspace)


def generate_demo_data(root: Path, cfg: DemoConfig = DemoConfig()) -> None:
    """Write every demo file under ``root``: golden_sets/demo/ and rubrics/demo-patch-quality.yaml, and beside them
    the eval-awareness audit's golden set and rubric (rubrics/examples/, a separate golden set: the demo's own
    numbers do not move) and a promptfoo results file to import (examples/promptfoo/)."""
    write_demo(root, cfg)
    write_eval_awareness(root)
    write_tool_examples(root)


def main() -> None:  # pragma: no cover - a maintenance entry point
    parser = argparse.ArgumentParser(description="Regenerate the committed demo files (the package data).")
    parser.add_argument("--root", default=str(DATA_DIR), help=f"folder to write into (default: {DATA_DIR})")
    generate_demo_data(Path(parser.parse_args().root))


if __name__ == "__main__":  # pragma: no cover
    main()
