"""Real data for the golden-output test: MT-Bench and SummEval coherence from ../shared/data/alttest.

`build(cli, work)` imports the two sets through the CLI and returns the `calibrate --json` arguments of every
(golden set, rubric, judge) the test compares; `python -m tests.real_data_golden_output OUT` writes the reference
reports with the code it is run on (the reference folder's name says the commit). Kept apart from the test so the
reference can be written from a clean checkout of an older commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from validation import validate_shared_data as v

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
RESAMPLES = "400"
# Two judges per set: the one nearest the humans and the one furthest, so both passing and failing checks are kept.
CASES = {
    "mtbench": ("gpt-4o", "mistral-v03"),
    "summeval": ("gpt-4o", "llama-31"),
}


def _items_and_labels(dataset: str) -> tuple[list[dict], list[dict], dict[str, dict]]:
    humans = json.loads((DATA / "alttest" / dataset / "human_annotations.json").read_text())
    llms = json.loads((DATA / "alttest" / dataset / "llm_annotations.json").read_text())
    mt = dataset == "mtbench"
    ids = sorted({i for anns in humans.values() for i in anns if mt or i.endswith("__coherence")})
    items = [{"id": i, "task_id": i.split("__")[0], "category": i.split("__")[-1] if mt else i.split("__")[1][:3],
              "input": f"item {i}", "output": "(text not distributed with the data)"} for i in ids]
    score = (lambda s: v.PAIRWISE[s]) if mt else int
    keep = set(ids)
    labels = [{"item_id": i, "rater": r, "score": score(s)} for r, anns in humans.items() for i, s in anns.items()
              if i in keep]
    judgments = {llm: [{"item_id": i, "score": score(s)} for i, s in anns.items() if i in keep]
                 for llm, anns in llms.items() if llm in CASES[dataset]}
    return items, labels, judgments


def build(cli, work: Path) -> list[tuple[str, list[str]]]:
    """Import both sets with ``cli`` (a callable taking CLI arguments); (name, calibrate args) of each case."""
    cases = []
    for dataset in CASES:
        items, labels, judgments = _items_and_labels(dataset)
        mt = dataset == "mtbench"
        scale = [(-1, "b better"), (0, "tie"), (1, "a better")] if mt else [(s, str(s)) for s in range(1, 6)]
        name = f"real-{dataset}"
        judges = [{"id": j, "model": f"openai-api/alttest/{j}", "family": v.ALT_FAMILY[j]} for j in judgments]
        cli("rubric", "add", v.rubric(work / f"{name}.yaml", name, scale, 0 if mt else 3, judges))
        cli("import", "items", v.jsonl(work / f"{dataset}-items.jsonl", items), "-g", dataset)
        cli("import", "labels", "--new-raters", v.jsonl(work / f"{dataset}-labels.jsonl", labels), "-g", dataset, "-r", name)
        for judge, rows in judgments.items():
            cli("import", "judgments", v.jsonl(work / f"{dataset}-{judge}.jsonl", rows), "-g", dataset, "-r", name,
                "-j", judge)
            cases.append((f"{dataset}--{judge}", ["calibrate", "-g", dataset, "-r", name, "-j", judge, "--json",
                                                  "--resamples", RESAMPLES, "--alt-metric",
                                                  "accuracy" if mt else "neg_rmse"]))
    return cases


def main(out: str) -> None:
    import subprocess
    import tempfile

    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)

        def cli(*args):
            proc = subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(work / "real.db"), "--project",
                                   str(work), *map(str, args)], capture_output=True, text=True, check=True)
            return proc.stdout

        for name, args in build(cli, work):
            (out_dir / f"{name}.json").write_text(json.dumps(json.loads(cli(*args)), indent=1, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
