"""Validate the workbench on real public data with human and LLM-judge labels of the same items.

Converts ../shared/data (see its README) into the workbench's file formats,
imports them through the public CLI into a scratch database, runs
``workbench calibrate --json`` for every judge, and prints Markdown tables with
the published figures beside ours where the same computation was published.
Skips (exit 0 with a note) when ../shared/data is absent.

    python validation/validate_shared_data.py [--data ../shared/data] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

PAIRWISE = {"model_a": 1, "tie": 0, "model_b": -1}  # the data README's ordinal mapping
# The AltTest notebook's printed advantage probabilities (github nitaytech/AltTest, alt_test_example.ipynb);
# every winning rate it prints is 0.00.
PUBLISHED_ADVANTAGE = {
    "mtbench": {"gemini_flash": 0.72, "gemini_pro": 0.76, "gpt-4o": 0.77, "llama-31": 0.69, "gpt-4o-mini": 0.74,
                "mistral-v03": 0.68},
    "summeval": {"gemini_flash": 0.46, "gemini_pro": 0.44, "gpt-4o": 0.48, "llama-31": 0.58, "gpt-4o-mini": 0.54,
                 "mistral-v03": 0.62},
}
ALT_FAMILY = {"gemini_flash": "google", "gemini_pro": "google", "gpt-4o": "openai", "gpt-4o-mini": "openai",
              "llama-31": "meta", "mistral-v03": "mistral"}


def cli(db: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "workbench.cli", "--db", str(db), *args], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"workbench {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rubric(path: Path, name: str, scale: list[tuple[int, str]], threshold: int, judges: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"name": name, "title": name, "pass_threshold": threshold,
                                    "scale": [{"value": v, "label": l} for v, l in scale], "judges": judges},
                                   sort_keys=False))
    return path


def alttest(data: Path, work: Path, db: Path, dataset: str, resamples: int) -> list[dict]:
    humans = json.loads((data / "alttest" / dataset / "human_annotations.json").read_text())
    llms = json.loads((data / "alttest" / dataset / "llm_annotations.json").read_text())
    conv = {}
    if (data / "alttest" / dataset / "prompts.json").exists():
        conv = json.loads((data / "alttest" / dataset / "prompts.json").read_text())
    ids = sorted({i for anns in humans.values() for i in anns})
    mt = dataset == "mtbench"
    items = []
    for i in ids:
        parts = i.split("__")
        if mt:
            c = conv.get(i, {})
            items.append({"id": i, "task_id": parts[0], "category": f"turn {parts[-1]}",
                          "input": f"Which answer is better? Question {parts[0]}, {parts[1]} (a) vs {parts[2]} (b).",
                          "output": f"A: {str(c.get('conversation_a', ''))[:2000]}\nB: {str(c.get('conversation_b', ''))[:2000]}"})
        else:
            items.append({"id": i, "task_id": parts[0], "category": parts[2],
                          "input": f"Summarise news article {parts[0]} (rate {parts[2]})",
                          "output": f"(summary by system {parts[1]}; text not distributed with the data)"})
    scale = [(-1, "model_b better"), (0, "tie"), (1, "model_a better")] if mt else [(v, str(v)) for v in range(1, 6)]
    name = f"alttest-{dataset}"
    judges = [{"id": llm, "model": f"openai-api/alttest/{llm}", "family": ALT_FAMILY[llm]} for llm in llms]
    cli(db, "rubric", "add", str(rubric(work / f"{name}.yaml", name, scale, 0 if mt else 3, judges)))
    cli(db, "import", "items", str(jsonl(work / f"{dataset}-items.jsonl", items)), "--golden-set", dataset)
    conv_score = (lambda s: PAIRWISE[s]) if mt else int
    cli(db, "import", "labels", str(jsonl(work / f"{dataset}-labels.jsonl", [
        {"item_id": i, "rater": r, "score": conv_score(s)} for r, anns in humans.items() for i, s in anns.items()])),
        "--golden-set", dataset, "--rubric", name, "--new-raters")  # the data's raters are new to this workspace
    rows = []
    for llm, anns in llms.items():
        f = jsonl(work / f"{dataset}-{llm}.jsonl", [{"item_id": i, "score": conv_score(s)} for i, s in anns.items()
                                                    if i in set(ids)])
        cli(db, "import", "judgments", str(f), "--golden-set", dataset, "--rubric", name, "--judge", llm)
        rep = json.loads(cli(db, "calibrate", "--golden-set", dataset, "--rubric", name, "--judge", llm, "--json",
                             "--resamples", str(resamples), "--alt-metric", "accuracy" if mt else "neg_rmse"))
        rows.append({"dataset": dataset, "judge": llm, "report": rep,
                     "published_advantage": PUBLISHED_ADVANTAGE[dataset].get(llm)})
    return rows


def family_of(model: str) -> str:
    for prefix, fam in (("anthropic.", "anthropic"), ("meta.", "meta"), ("mistral.", "mistral"), ("gpt-", "openai")):
        if model.startswith(prefix):
            return fam
    return "unknown"


def judge_model(model: str) -> str:
    return f"openai/{model}" if model.startswith("gpt-") else f"openai-api/bedrock/{model}"


def play_favorites(data: Path, work: Path, db: Path, resamples: int, judges: list[str] | None = None) -> list[dict]:
    """Import Play Favorites through the CLI and calibrate each judge (all nine, or those named)."""
    import pandas as pd
    df = pd.read_csv(data / "play_favorites" / "Logical_correctness.csv")
    df["item_id"] = df["prompt_id"] + "__" + df["model"]
    first = df.drop_duplicates("item_id")
    items = [{"id": r.item_id, "task_id": r.prompt_id, "category": r.dataset, "input": f"prompt {r.prompt_id}",
              "output": f"(answer by {r.model}; text not distributed with the data)",
              "producer": {"model": r.model, "family": family_of(r.model)}} for r in first.itertuples()]
    # gt is the mean of the human ratings (0..2); its rounding is the consensus, and a mean of exactly
    # .5 (two raters who disagree) is left unresolved, as the workbench does with a split vote.
    labels = [{"item_id": r.item_id, "rater": "human-mean", "score": int(round(r.gt)) - 1}
              for r in first.itertuples() if abs(r.gt - round(r.gt)) != 0.5]
    all_judges = sorted(df["judge"].unique())
    name = "play-favorites-logic"
    cli(db, "rubric", "add", str(rubric(work / f"{name}.yaml", name, [(-1, "0"), (0, "1"), (1, "2")], 0,
                                        [{"id": j.replace(":", "_"), "model": judge_model(j), "family": family_of(j)}
                                         for j in all_judges])))
    cli(db, "import", "items", str(jsonl(work / "pf-items.jsonl", items)), "--golden-set", "play-favorites")
    cli(db, "import", "labels", str(jsonl(work / "pf-labels.jsonl", labels)), "--golden-set", "play-favorites",
        "--rubric", name, "--new-raters")
    rows = []
    for j in [j for j in all_judges if judges is None or j in judges]:
        sub = df[df["judge"] == j]
        jid = j.replace(":", "_")
        f = jsonl(work / f"pf-{jid}.jsonl", [{"item_id": r.item_id, "score": int(r.rating) - 1} for r in sub.itertuples()])
        cli(db, "import", "judgments", str(f), "--golden-set", "play-favorites", "--rubric", name, "--judge", jid)
        rep = json.loads(cli(db, "calibrate", "--golden-set", "play-favorites", "--rubric", name, "--judge", jid,
                             "--json", "--resamples", str(resamples)))
        rows.append({"dataset": "play-favorites", "judge": j, "report": rep})
    return rows


def self_preference_status(report: dict) -> str:
    """The gate's self-preference check: passed, failed, undecided (the interval crosses the bound) or
    not_measurable."""
    return next(c["status"] for c in report["verdict"]["checks"] if c["id"] == "self_preference")


def f(x, d=2) -> str:
    return "n/a" if x is None else f"{x:.{d}f}"


def ci(m: dict, d=2) -> str:
    return f"{f(m['value'], d)} [{f(m['ci_low'], d)}, {f(m['ci_high'], d)}]"


VERDICT_WORDS = {"passed": "calibrated", "failed": "not calibrated", "undecided": "not decided yet"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    data = Path(args.data)
    if not (data / "alttest").is_dir():
        print(f"skipped: {data} is not present")
        return 0
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        db = work / "validation.db"
        alt_rows = alttest(data, work, db, "mtbench", args.resamples) + alttest(data, work, db, "summeval", args.resamples)
        pf_rows = play_favorites(data, work, db, args.resamples) if (data / "play_favorites").is_dir() else []
    print("### Alternative-annotator test on the AltTest paper's data (epsilon 0.2; mtbench accuracy, summeval neg_rmse)\n")
    print("| dataset | judge | winning rate (published) | advantage prob. (published) | alpha vs consensus | "
          "quadratic kappa | humans' alpha |")
    print("|---|---|---|---|---|---|---|")
    for r in alt_rows:
        rep = r["report"]
        a = rep["alt_test"] or {}
        print(f"| {r['dataset']} | {r['judge']} | {f(a.get('winning_rate'))} (0.00) | "
              f"{f(a.get('advantage_probability'))} ({f(r['published_advantage'])}) | "
              f"{ci(rep['metrics']['krippendorff_alpha_ordinal'])} | {ci(rep['metrics']['cohen_kappa_quadratic'])} | "
              f"{f(rep['human_ceiling']['krippendorff_alpha_ordinal'])} |")
    if pf_rows:
        print("\n### Self-preference on Play Favorites (logical correctness, 0/1/2 as -1/0/+1; consensus = rounded "
              "mean human rating)\n")
        print("| judge | n | alpha vs consensus | mean signed error | same model | same family | OLS p (family) | "
              "self-preference check | verdict |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in pf_rows:
            rep = r["report"]
            sp = rep["self_preference"]
            print(f"| {r['judge']} | {rep['n_items']} | {ci(rep['metrics']['krippendorff_alpha_ordinal'])} | "
                  f"{ci(rep['metrics']['mean_signed_error'])} | "
                  f"{ci(sp['same_model']) if sp['same_model']['value'] is not None else 'n/m'} | "
                  f"{ci(sp['same_family']) if sp['same_family']['value'] is not None else 'n/m'} | "
                  f"{f(sp['same_family'].get('p_value'), 3)} | {self_preference_status(rep)} | "
                  f"{VERDICT_WORDS[rep['verdict']['state']]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
