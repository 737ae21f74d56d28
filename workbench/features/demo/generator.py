"""Synthetic coding-agent golden set with planted judge properties (DESIGN section 9).

Every item has a hidden true score. Simulated reviewers see it through their
own error rate; simulated judges see it through planted effects whose size is
a parameter, so tests can show that each effect is found when present and not
found when absent. Only the stdlib ``random`` module is used, seeded, so the
same parameters give byte-identical files on every machine.

Effects are planted as probabilities of moving a score one level on the
ordinal scale:

* ``error``: move to a random adjacent level (judgement noise);
* ``leniency``: move up one level (a lenient judge);
* ``self_preference``: move up one level on items of the judge's own family;
* ``repeat_noise``: per repeat, move to a random adjacent level (run-to-run noise);
* ``drift``: in the second run only, move up one level (a model update).

A move up from the top level is impossible, so the expected residual effect is
the probability times the share of items not already at the top.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from workbench.features.demo.records import DemoData, SimLabel, SimVerdict

SCALE = (-1, 0, 1)
CATEGORIES = ("bug-fix", "feature", "refactor", "test-writing")
PRODUCERS = (("claude-sonnet-4", "anthropic"), ("gpt-4o", "openai"), ("gemini-2.5-pro", "google"))
RUBRIC_NAME = "demo-patch-quality"
DATA_DIR = Path(__file__).parent / "data"  # the package data seed_demo reads


@dataclass(frozen=True)
class SimRater:
    name: str
    accuracy: float  # probability of giving the true score; otherwise an adjacent level
    harshness: float = 0.0  # of the errors, the extra share that go down rather than up


@dataclass(frozen=True)
class SimJudge:
    id: str
    model: str
    family: str
    mode: str = "single"
    error: float = 0.08
    leniency: float = 0.0
    self_preference: float = 0.0
    repeats: int = 1
    repeat_noise: float = 0.0
    drift: float | None = None  # None: one run; a number: a second run with this upward shift
    model_versions: tuple[str, ...] = ()
    price_per_item: float | None = 0.002  # None: no price known (a local model), so no cost is recorded
    latency_ms: float = 1500.0


@dataclass(frozen=True)
class DemoConfig:
    n_items: int = 150
    seed: int = 20261202
    true_distribution: tuple[float, float, float] = (0.3, 0.5, 0.2)
    raters: tuple[SimRater, ...] = (SimRater("ana", 0.93), SimRater("ben", 0.9, harshness=0.2),
                                    SimRater("chloe", 0.86))
    share_three_raters: float = 0.2
    share_one_rater: float = 0.05
    judges: tuple[SimJudge, ...] = field(default_factory=lambda: DEFAULT_JUDGES)


DEFAULT_JUDGES = (
    # careful-sonnet is the clean judge: every gate check's interval clear of its bound. At error 0.05 this seed
    # drew a same-family effect of +0.04 (interval -0.04 to +0.12, across the +0.1 bound: undecided, by chance);
    # at 0.03 it is 0.00 (-0.05 to +0.06). Only its own judgments move: the other files are byte for byte the same.
    SimJudge("careful-sonnet", "anthropic/claude-sonnet-4-5", "anthropic", mode="agentic", error=0.03, repeats=2,
             repeat_noise=0.02, model_versions=("claude-sonnet-4-5-20250929",), price_per_item=0.021,
             latency_ms=9200.0),
    SimJudge("lenient-mini", "openai/gpt-4o-mini", "openai", error=0.06, leniency=0.45,
             model_versions=("gpt-4o-mini-2024-07-18",), price_per_item=0.0004, latency_ms=1100.0),
    SimJudge("gpt4o-self", "openai/gpt-4o", "openai", error=0.05, self_preference=0.7,
             model_versions=("gpt-4o-2024-08-06",), price_per_item=0.006, latency_ms=2100.0),
    SimJudge("noisy-llama", "openai-api/local/llama-3.1-70b", "meta", error=0.1, repeats=3, repeat_noise=0.22,
             drift=0.45, model_versions=("llama-3.1-70b-instruct-q4", "llama-3.1-70b-instruct-q4-2025-03"),
             price_per_item=None, latency_ms=3400.0),
)


def _cost(price_per_item: float | None, jitter: float) -> float | None:
    """A judgment's cost; unknown (None, never $0) without a price. The jitter is drawn either way, so every other
    simulated value stays the same."""
    return None if price_per_item is None else round(price_per_item * jitter, 6)


def _shift(score: int, step: int) -> int:
    return max(SCALE[0], min(SCALE[-1], score + step))


def _adjacent(rng: random.Random, score: int, down_bias: float = 0.0) -> int:
    if score == SCALE[0]:
        return score + 1
    if score == SCALE[-1]:
        return score - 1
    return score - 1 if rng.random() < 0.5 + down_bias else score + 1


# -- scores -------------------------------------------------------------------

@dataclass
class SimItem:
    id: str
    task_id: str
    category: str
    producer_model: str
    producer_family: str
    truth: int


def simulate_items(cfg: DemoConfig, rng: random.Random) -> list[SimItem]:
    items = []
    n_tasks = max(1, int(cfg.n_items / 1.5))
    for n in range(cfg.n_items):
        task = rng.randrange(n_tasks)
        model, family = PRODUCERS[n % len(PRODUCERS)]
        truth = rng.choices(SCALE, weights=cfg.true_distribution)[0]
        items.append(SimItem(f"demo-{n:04d}", f"task-{task:03d}", CATEGORIES[task % len(CATEGORIES)], model, family,
                             truth))
    return items


def simulate_labels(cfg: DemoConfig, items: list[SimItem], rng: random.Random) -> list[dict]:
    labels = []
    for it in items:
        u = rng.random()
        k = 1 if u < cfg.share_one_rater else 3 if u < cfg.share_one_rater + cfg.share_three_raters else 2
        for r in rng.sample(cfg.raters, k=min(k, len(cfg.raters))):
            score = it.truth if rng.random() < r.accuracy else _adjacent(rng, it.truth, r.harshness)
            labels.append({"item_id": it.id, "rater": r.name, "score": score})
    return labels


def simulate_judge(judge: SimJudge, items: list[SimItem], rng: random.Random) -> list[dict]:
    """Scores of a planted judge: one row per (run, repeat, item)."""
    rows = []
    base = {}
    for it in items:
        s = it.truth
        if rng.random() < judge.error:
            s = _adjacent(rng, s)
        if rng.random() < judge.leniency:
            s = _shift(s, 1)
        same_family = it.producer_family == judge.family
        if same_family and rng.random() < judge.self_preference:
            s = _shift(s, 1)
        base[it.id] = s
    runs = [0] if judge.drift is None else [0, 1]
    for run in runs:
        for repeat in range(judge.repeats):
            for it in items:
                s = base[it.id]
                if repeat > 0 and rng.random() < judge.repeat_noise:
                    s = _adjacent(rng, s)
                if run == 1 and rng.random() < (judge.drift or 0.0):
                    s = _shift(s, 1)
                rows.append({"run": run, "repeat": repeat, "item_id": it.id, "score": s})
    return rows


# -- text of the trajectories --------------------------------------------------

FILES = ("src/billing/invoice.py", "src/auth/session.py", "src/search/ranker.py", "src/api/routes.py",
         "src/utils/dates.py", "src/cache/lru.py", "src/export/csv_writer.py", "src/models/user.py")
FUNCS = ("compute_total", "refresh_token", "score_documents", "list_orders", "parse_iso_week", "evict",
         "write_rows", "normalize_email")
TASKS = {
    "bug-fix": "Fix the bug reported in issue #{n}: `{func}` in `{file}` returns the wrong result when the input is empty.",
    "feature": "Add an optional `limit` argument to `{func}` in `{file}` and document it (issue #{n}).",
    "refactor": "Refactor `{func}` in `{file}` to remove the duplicated branch without changing behaviour (issue #{n}).",
    "test-writing": "Write unit tests for `{func}` in `{file}` covering the edge cases listed in issue #{n}.",
}


def _trajectory(it: SimItem, rng: random.Random) -> tuple[str, list[dict], str]:
    k = int(it.task_id.split("-")[1])
    file, func = FILES[k % len(FILES)], FUNCS[k % len(FUNCS)]
    task = TASKS[it.category].format(n=100 + k, func=func, file=file)
    test_file = "tests/" + file.split("/", 1)[1].replace(".py", "_test.py").replace("/", "_")
    passed = {-1: rng.randint(3, 9), 0: rng.randint(12, 20), 1: rng.randint(18, 30)}[it.truth]
    failed = {-1: rng.randint(1, 4), 0: 0, 1: 0}[it.truth]
    steps: list[dict] = [
        {"role": "system", "content": "You are a coding agent working in a Python repository. Use the tools to "
                                      "inspect and edit files and run the tests before you finish."},
        {"role": "user", "content": task},
        {"role": "assistant", "content": f"I'll start by reading `{file}`.",
         "tool_calls": [{"name": "read_file", "arguments": {"path": file}}]},
        {"role": "tool", "name": "read_file", "content": _source(func, rng)},
    ]
    if rng.random() < 0.6:
        steps += [
            {"role": "assistant", "content": f"Let me look for other callers of `{func}`.",
             "tool_calls": [{"name": "bash", "arguments": {"cmd": f"grep -rn '{func}' src tests"}}]},
            {"role": "tool", "name": "bash", "content": "\n".join(
                f"src/{m}.py:{rng.randint(10, 300)}:    result = {func}(...)"
                for m in rng.sample(("api/views", "jobs/nightly", "cli/main", "reports/monthly"), k=2))},
        ]
    fix = {-1: "if not items:\n        pass  # TODO handle empty input",
           0: "if not items:\n        return []",
           1: "if not items:\n        # empty input is valid: return the neutral element early\n        return []"}[it.truth]
    steps += [
        {"role": "assistant", "content": "I'll make the change.",
         "tool_calls": [{"name": "edit_file", "arguments": {"path": file, "old": "    for item in items:",
                                                            "new": f"    {fix}\n    for item in items:"}}]},
        {"role": "tool", "name": "edit_file", "content": f"Edited {file} (+{fix.count(chr(10)) + 1} lines)."},
        {"role": "assistant", "content": "Running the test suite.",
         "tool_calls": [{"name": "bash", "arguments": {"cmd": f"pytest -q {test_file}"}}]},
        {"role": "tool", "name": "bash", "content": _pytest_output(passed, failed, test_file, func)},
    ]
    if it.truth == 1:
        steps += [
            {"role": "assistant", "content": "All green. I'll add a regression test for the empty case as well.",
             "tool_calls": [{"name": "edit_file", "arguments": {"path": test_file, "old": "",
                                                                "new": f"def test_{func}_empty():\n    assert {func}([]) == []\n"}}]},
            {"role": "tool", "name": "edit_file", "content": f"Edited {test_file} (+2 lines)."},
        ]
    output = {
        -1: f"Done. I updated `{func}`; {failed} test(s) still fail but they look unrelated to this change.",
        0: f"Fixed `{func}` in `{file}` to handle empty input. All {passed} tests pass.",
        1: f"Fixed `{func}` in `{file}` to handle empty input, added a regression test, and checked the two "
           f"callers. All {passed} tests pass.",
    }[it.truth]
    if rng.random() < 0.15:  # some trajectories wander: realistic length variation
        steps.insert(4, {"role": "assistant", "content": "Let me check the git history for context.",
                         "tool_calls": [{"name": "bash", "arguments": {"cmd": f"git log --oneline -5 -- {file}"}}]})
        steps.insert(5, {"role": "tool", "name": "bash", "content": "\n".join(
            f"{rng.getrandbits(28):07x} {msg}" for msg in ("tidy imports", "fix typo", "add logging",
                                                           "bump deps", "refactor helpers"))})
    return task, steps, output


def _source(func: str, rng: random.Random) -> str:
    return (f"def {func}(items, *, strict=False):\n"
            f"    \"\"\"Compute the result for a list of items.\"\"\"\n"
            f"    total = {rng.choice(('0', '[]', 'None'))}\n"
            f"    for item in items:\n"
            f"        total = _combine(total, item)\n"
            f"    return total\n")


def _pytest_output(passed: int, failed: int, test_file: str, func: str) -> str:
    lines = [f"{test_file} " + "." * passed + "F" * failed]
    if failed:
        lines += ["", "=================================== FAILURES ===================================",
                  f"___ test_{func}_empty ___", f"    assert {func}([]) == []", "E   TypeError: 'NoneType' object is not iterable"]
        lines.append(f"{failed} failed, {passed} passed in 0.{passed:02d}s")
    else:
        lines.append(f"{passed} passed in 0.{passed:02d}s")
    return "\n".join(lines)


RATIONALES = {
    -1: ("Tests still fail after the change (see the last test run); the agent claims success anyway.",
         "The edit leaves a TODO instead of handling the empty case; the failing test proves it."),
    0: ("The fix is correct and the tests pass; nothing beyond what was asked.",
        "Handles the empty input and runs the tests; competent but no regression test."),
    1: ("Correct fix, regression test added, and callers checked: clearly above a competent patch.",
        "Goes beyond the task with a regression test and a check of the callers; all tests pass."),
}


# -- files ---------------------------------------------------------------------

def generate(cfg: DemoConfig = DemoConfig()) -> DemoData:
    """Everything in memory: items, labels, adjudications, judgments per judge, and the rubric."""
    rng = random.Random(cfg.seed)
    sims = simulate_items(cfg, rng)
    items, n_steps = [], {}
    for it in sims:
        task, steps, output = _trajectory(it, rng)
        items.append({"id": it.id, "task_id": it.task_id, "category": it.category, "input": task,
                      "output": output, "trajectory": steps,
                      "producer": {"model": it.producer_model, "family": it.producer_family},
                      "metadata": {"synthetic": True}})
        n_steps[it.id] = len(steps)
    sim_labels = [SimLabel(**lab) for lab in simulate_labels(cfg, sims, rng)]
    labels = [_label_record(lab, rng) for lab in sim_labels]
    judgments = {judge.id: [_judgment_record(judge, v, n_steps[v.item_id], rng)
                            for v in [SimVerdict(**r) for r in simulate_judge(judge, sims, rng)]]
                 for judge in cfg.judges}
    # a lead has settled a few disagreements already; the rest wait on the Adjudicate page
    by_item: dict[str, list[int]] = {}
    for lab in sim_labels:
        by_item.setdefault(lab.item_id, []).append(lab.score)
    truth = {it.id: it.truth for it in sims}
    split = [i for i, s in by_item.items() if len(s) == 2 and s[0] != s[1]]
    adjudications = [{"item_id": i, "score": truth[i], "note": "Checked the final test run.", "lead": "lead",
                      "created_at": "2026-11-20T09:00:00+00:00"} for i in split[: len(split) // 2]]
    return DemoData(items, labels, adjudications, judgments, demo_rubric(cfg))


def _label_record(lab: SimLabel, rng: random.Random) -> dict[str, Any]:
    """The labels.jsonl record: fails, exceptional items and some passes carry a rationale."""
    record = {"item_id": lab.item_id, "rater": lab.rater, "score": lab.score}
    if lab.score != 0 or rng.random() < 0.3:
        record["rationale"] = rng.choice(RATIONALES[lab.score])
    return record


def _judgment_record(judge: SimJudge, v: SimVerdict, n_steps: int, rng: random.Random) -> dict[str, Any]:
    """The judgments file's record of a simulated verdict (the random draws in the order they always came)."""
    versions = judge.model_versions or (judge.model.split("/")[-1],)
    rationale = rng.choice(RATIONALES[v.score])
    evidence = sorted(rng.sample(range(n_steps), k=2))
    record = {"item_id": v.item_id, "score": v.score, "repeat": v.repeat, "run": f"run-{v.run + 1}",
              "rationale": rationale, "evidence_steps": evidence,
              "model_version": versions[min(v.run, len(versions) - 1)],
              "created_at": f"2026-{10 + v.run:02d}-{1 + v.repeat:02d}T12:00:00+00:00",
              "tokens_in": 1800 + n_steps * 220, "tokens_out": 160 + rng.randint(0, 80),
              "cost_usd": _cost(judge.price_per_item, rng.uniform(0.8, 1.2)),
              "latency_ms": round(judge.latency_ms * rng.uniform(0.6, 1.6), 1)}
    if judge.mode == "agentic":
        record["trace"] = [
            {"tool": "overview", "arguments": {}, "result": f"{n_steps} steps"},
            {"tool": "read_steps", "arguments": {"start": evidence[0], "end": evidence[1]}, "result": "(steps shown)"},
            {"tool": "search_steps", "arguments": {"pattern": "passed|failed"}, "result": "(matches shown)"},
            {"tool": "submit_verdict", "arguments": {"score": v.score}, "result": "recorded"},
        ]
    return record


def demo_rubric(cfg: DemoConfig) -> dict:
    return {
        "name": RUBRIC_NAME,
        "title": "Patch quality of a coding agent (synthetic demo)",
        "description": "Grades whether a coding agent's patch does the task, judged from its whole trajectory.",
        "scale": [
            {"value": -1, "label": "fail", "description": "The task is not done: tests fail, the fix is wrong, "
                                                          "or the agent claims success it did not achieve."},
            {"value": 0, "label": "competent pass", "description": "The task is done correctly and the tests pass."},
            {"value": 1, "label": "exceptional", "description": "Done correctly and clearly better than competent: "
                                                                "regression test, callers checked, clear report."},
        ],
        "pass_threshold": 0,
        "criteria": [
            {"id": "correctness", "description": "The change does what the task asks; the final test run passes."},
            {"id": "honesty", "description": "The final report matches what the trajectory shows."},
            {"id": "thoroughness", "description": "Edge cases, regression tests and callers are considered."},
        ],
        "instructions": "Read the trajectory, check the final test run, and compare the agent's claims with what "
                        "the tool results show. Cite the steps that decide your score.",
        "examples": [],
        "judges": [{"id": j.id, "model": j.model, "family": j.family, "mode": j.mode, "temperature": 0.0,
                    "repeats": j.repeats} for j in cfg.judges]
        # a deterministic grader with no recorded outputs: `workbench judge run` runs it with no key or network
        + [{"id": "test-results", "model": "python/workbench.features.demo.graders:test_results", "mode": "single"}],
    }


def write_demo(root: Path, cfg: DemoConfig = DemoConfig()) -> None:
    """Write golden_sets/demo/ and rubrics/demo-patch-quality.yaml under ``root`` (``seed.write_demo_files`` writes
    them with the other demo files)."""
    data = generate(cfg)
    gs = root / "golden_sets" / "demo"
    rub = gs / RUBRIC_NAME
    (rub / "judgments").mkdir(parents=True, exist_ok=True)
    (gs / "golden_set.yaml").write_text(yaml.safe_dump(
        {"name": "demo", "overlap": 2, "synthetic_demo": True,
         "note": "Synthetic data made by workbench.features.demo.generator; not real agent runs or real reviewers."},
        sort_keys=False))

    def jsonl(path: Path, rows: list[dict]) -> None:
        path.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows),
                        encoding="utf-8")

    jsonl(gs / "items.jsonl", data.items)
    jsonl(rub / "labels.jsonl", data.labels)
    jsonl(rub / "adjudications.jsonl", data.adjudications)
    for judge_id, rows in data.judgments.items():
        jsonl(rub / "judgments" / f"{judge_id}.jsonl", rows)
    (root / "rubrics").mkdir(exist_ok=True)
    (root / "rubrics" / f"{RUBRIC_NAME}.yaml").write_text(
        "# Synthetic demo rubric; its judges' outputs are simulated with planted properties\n"
        "# (see workbench/features/demo/generator.py): careful-sonnet is well calibrated, lenient-mini is lenient,\n"
        "# gpt4o-self favours its own family, noisy-llama is noisy and its second run drifts;\n"
        "# test-results is a deterministic Python grader that reads the trajectory's last test run.\n"
        + yaml.safe_dump(data.rubric, sort_keys=False, allow_unicode=True, width=100))


def with_effects(*, n_items: int = 200, seed: int = 0, self_preference: float = 0.0, leniency: float = 0.0,
                 error: float = 0.08, repeat_noise: float = 0.0, drift: float | None = None) -> DemoConfig:
    """A config with one judge of chosen planted effects, for simulations in tests."""
    judge = SimJudge("sim", "openai/gpt-4o", "openai", error=error, leniency=leniency, self_preference=self_preference,
                     repeats=2 if repeat_noise else 1, repeat_noise=repeat_noise, drift=drift)
    return replace(DemoConfig(), n_items=n_items, seed=seed, judges=(judge,))
