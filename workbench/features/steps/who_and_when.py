"""`import items --from who-and-when DIR`: the failed multi-agent runs of Who&When (Zhang, Yin et al., ICML 2025,
"Which Agent Causes Task Failures and When?"), each a trajectory item, each human annotation a failing label with
the decisive error step and the agent.

A Who&When file is one run: ``question``, ``question_ID`` (runs of one task share it: they are one cluster),
``ground_truth``, ``history`` (the steps, ``{content, role, name?}``; a step's index is its number from 0),
``mistake_agent``, ``mistake_step`` (that index, as a string) and ``mistake_reason``. Every file is checked against
that shape, and every step against its run, before anything is written; then the items (through ``import items``
itself) and the labels land in one transaction.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from workbench.core.errors import ConfigError, InputError, NotFound, SourceError
from workbench.core.formats import write_jsonl
from workbench.core.models import Item, Label
from workbench.core.names import check_name
from workbench.features.importing import service as importing
from workbench.features.interop.shapes import check
from workbench.judges.rubrics import load_rubric
from workbench.store import Store, audit
from workbench.calibration.rubric_versions import RubricVersion, get_rubric, register_rubric

SOURCE = "who-and-when"
RUBRIC = "who-and-when-attribution"  # the built-in rubric the labels go under when none is named
RATER = "who-and-when-annotators"  # the paper's annotators, as one rater: the files do not say who annotated
TOOL_AGENTS = {"computer_terminal", "computerterminal"}  # agents that only run code: their steps are tool results

#: The fields of a Who&When run that the import reads (the upstream README and files).
RUN = {
    "type": "object",
    "required": ["question", "history", "mistake_agent", "mistake_step", "mistake_reason"],
    "properties": {
        "question": {"type": "string", "minLength": 1},
        "question_ID": {"type": ["string", "integer"]},
        "ground_truth": {"type": ["string", "number", "null"]},
        "history": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["content", "role"],
            "properties": {"content": {"type": "string"}, "role": {"type": "string", "minLength": 1},
                           "name": {"type": "string", "minLength": 1}}}},
        "mistake_agent": {"type": "string", "minLength": 1},
        "mistake_step": {"type": ["string", "integer"], "pattern": r"^\s*\d+\s*$"},
        "mistake_reason": {"type": "string"},
    },
}
FIX = "import the files of the Who&When folder as the upstream repository gives them"


@dataclass(frozen=True)
class Run:
    """One Who&When file, read and checked: its item and its human annotation."""

    file: str  # relative to the folder imported: 'Hand-Crafted/1.json'
    item: Item
    label: Label


@dataclass
class WhoAndWhenResult:
    folder: str
    rubric: str
    runs: int = 0
    items_added: int = 0
    labels_added: int = 0

    def summary_lines(self) -> list[str]:
        if not self.items_added and not self.labels_added:
            return [f"{self.folder}: {self.runs} Who&When runs read; nothing new"]
        return [f"{self.folder}: {self.runs} Who&When runs read, {self.items_added} items and {self.labels_added} "
                f"labels (rubric '{self.rubric}', rater '{RATER}') added or changed"]


def step_agent(step: dict) -> str:
    """Who took a step: its ``name`` (Algorithm-Generated runs), else its ``role`` (Hand-Crafted runs name the
    agent there, e.g. 'Orchestrator (thought)')."""
    return step.get("name") or step["role"]


def _trajectory_step(step: dict) -> dict:
    """A Who&When step in the item format: the agent as ``name``, a role the trajectory viewer knows."""
    agent = step_agent(step)
    key = re.sub(r"[^a-z_]", "", agent.lower())
    role = "user" if key == "human" else "tool" if key in TOOL_AGENTS else "assistant"
    return {"role": role, "name": agent, "content": step["content"]}


def read_run(folder: Path, path: Path) -> Run:
    """One file as an item and its label; refused by one sentence naming the file and field otherwise."""
    rel = path.relative_to(folder).as_posix()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SourceError(f"{SOURCE} {rel}", None, f"is not a JSON file ({str(e)[:80]})", fix=FIX) from None
    check(SOURCE, rel, None, data, RUN, fix=FIX)
    steps = [_trajectory_step(s) for s in data["history"]]
    step = int(str(data["mistake_step"]).strip())
    if step >= len(steps):
        raise SourceError(f"{SOURCE} {rel}", None, f"mistake_step {step} is not a step of the run, which has steps "
                          f"0 to {len(steps) - 1}", field="mistake_step", fix="correct the step number")
    kind = path.parent.name.lower() if path.parent != folder else "who-and-when"
    item_id = f"ww-{kind}-{path.stem}" if path.parent != folder else f"ww-{path.stem}"
    meta = {"source": SOURCE, "file": rel, "ground_truth": data.get("ground_truth")}
    for key in ("level", "is_correct", "is_corrected", "mistake_type", "system_prompt"):
        if key in data:
            meta[key] = data[key]
    task = data.get("question_ID")
    item = Item(id=item_id, input=data["question"], task_id=str(task) if task is not None else item_id,
                category=kind, trajectory=steps,
                reference=None if data.get("ground_truth") is None else str(data["ground_truth"]), metadata=meta)
    label = Label(item_id=item_id, rater=RATER, score=-1, rationale=data["mistake_reason"] or None,
                  step=step, agent=data["mistake_agent"].strip())
    return Run(rel, item, label)


def read_folder(folder: str | Path) -> list[Run]:
    """Every run file under the folder (the Who&When folder, or one of its two subfolders), in file order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{folder} is not a folder: name the Who&When folder (holding Algorithm-Generated/ and "
                          "Hand-Crafted/) or one of its subfolders")
    files = sorted(folder.rglob("*.json"), key=lambda p: (p.parent.as_posix(), _number(p.stem), p.name))
    if not files:
        raise ConfigError(f"{folder} holds no .json files: name the Who&When folder (holding Algorithm-Generated/ "
                          "and Hand-Crafted/) or one of its subfolders")
    return [read_run(folder, f) for f in files]


def _number(stem: str) -> int:
    return int(stem) if stem.isdigit() else -1


def _rubric(store: Store, rubric: str | None) -> RubricVersion:
    """The rubric named (it must hold -1 on its scale), else the built-in one, registered on first use."""
    if rubric is None:
        try:
            return get_rubric(store, RUBRIC)
        except NotFound:
            with resources.as_file(resources.files(__package__) / "who_and_when_rubric.yaml") as path:
                return register_rubric(store, load_rubric(path))
    rv = get_rubric(store, rubric)
    if -1 not in rv.rubric.scale:
        raise ConfigError(f"rubric '{rv.name}' has no -1 on its scale, which Who&When's failed runs are labeled with: "
                          f"name a rubric whose scale holds -1 (or leave --rubric out for '{RUBRIC}')")
    return rv


def import_who_and_when(store: Store, folder: str | Path, golden_set: str, *, rubric: str | None = None,
                        actor: str | None = None) -> WhoAndWhenResult:
    """Import the runs of a Who&When folder: all of them or none; importing them again changes nothing."""
    golden_set = check_name(golden_set, "golden set name")
    runs = read_folder(folder)
    rv = _rubric(store, rubric)
    result = WhoAndWhenResult(Path(folder).name, rv.name, runs=len(runs))
    with store.transaction(), tempfile.TemporaryDirectory(prefix="workbench-who-and-when-") as tmp:
        path = Path(tmp) / "who-and-when-items.jsonl"
        write_jsonl(path, (run.item.to_dict() for run in runs))
        try:
            result.items_added = importing.import_items(store, path, golden_set).added
        except InputError as e:  # name the run's file, not the temporary one
            if e.file == path.name and e.line is not None:
                raise SourceError(f"{SOURCE} {runs[e.line - 1].file}", None, e.problem, field=e.field,
                                  fix=e.fix) from None
            raise
        pks = store.item_pks(store.golden_set(golden_set).id)
        result.labels_added = store.upsert_labels(rv.name, rv.id, [run.label for run in runs], pks)
        if result.labels_added:
            audit.record(store, actor=actor, action="labels.imported", target=f"{golden_set}/{SOURCE}",
                         detail={"source": SOURCE, "folder": Path(folder).name, "rubric": f"{rv.name}@v{rv.version}",
                                 "labels": len(runs), "changed": result.labels_added})
    return result
