"""Issue 27 item 7: the whole sweep. Hundreds of bad inputs, each run through the CLI (in process, so it is fast).

Every case is named for what it tests and built from a table of kinds below: the gate policy, rubric YAML
(with its gate block), items / labels / adjudications / judgments (.jsonl and .csv), command-line options,
imports from other tools, approved bundles given to ``grade``, garbage given to ``check``, and a workspace
that has no database yet. For each refused case the sweep asserts:

* a non-zero exit, and stderr whose last line is one sentence starting "Error:" (click's own usage errors
  may print the usage first), with no "Traceback" and no "unexpected";
* the database's content unchanged (every table, row by row) and no database created where there was none;
* no file or folder left in the workspace that was not there before;
* the planted API keys (OPENAI_API_KEY, ANTHROPIC_API_KEY) in no output.

Inputs that are fine though odd (a BOM, CRLF line ends, an item id that looks like a path, an empty
policy.yaml, a dry run with the planted keys) are *accepted* cases, documented as such: exit 0, no traceback,
no key shown. A case that finds a bug in a file another helper owns is marked ``xfail(strict=True)`` with the
finding written up for the lead (/tmp/sweep_findings.md of the session that wrote it).

About 600 cases; on 2 cores (``python -m pytest -n 2 tests/test_bad_input_sweep.py``) the sweep takes about
35 s, most of it building the demo workspace once per worker. Every provider SDK points at a closed local
port, so a case that got past validation by mistake fails instead of reaching the network.
"""

from __future__ import annotations

import gc
import json
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import Cli
from tests.db_digest import db_content

SECRETS = {"OPENAI_API_KEY": "sk-sweep-canary-openai-5f3e9b1c2d", "ANTHROPIC_API_KEY": "sk-ant-sweep-canary-77aa01"}
# A case that got past validation by mistake must not reach a provider: every SDK points at a closed local port.
NO_NETWORK = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "OPENAI_BASE_URL": "http://127.0.0.1:9"}
G, R, J = "demo", "demo-patch-quality", "lenient-mini"
MiB = 2**20
BUNDLE = "rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml"


@dataclass
class Case:
    id: str
    args: list[str]  # '{in}' is the folder of the case's input files, '{ws}' the workspace
    files: dict[str, str | bytes] = field(default_factory=dict)  # 'in/NAME' or 'ws/REL' -> content
    workspace: str = "demo"  # "demo" (seeded, with an approved bundle) or "empty" (no database yet)
    accepted: bool = False  # fine though odd: must succeed cleanly
    xfail: str | None = None
    needle: str | None = None  # a text the error must hold (where the case is about a located message)
    prefixes: tuple[str, ...] = ("Error: ",)  # how the last line of stderr starts


CASES: list[Case] = []


def case(id: str, args: list[str], files: dict | None = None, **kw) -> None:
    CASES.append(Case(f"{len(CASES):03d}-{id}", args, files or {}, **kw))


def jl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


# --------------------------------------------------------------------------- rubrics/policy.yaml

CALIBRATE = ["calibrate", "-g", G, "-r", R, "-j", "careful-sonnet", "--resamples", "50"]
POLICY_NUMBERS = {  # key: (below its range, above its range or None)
    "min_items": (-5, None), "min_raters_per_item": (0, None), "min_multi_rated_share": (-0.1, 1.5),
    "min_agreement_lower": (-2, 1.5), "alt_test_min_raters": (0, None), "human_margin": (-0.05, 2),
    "max_self_preference": (-0.1, None), "min_class_items": (0, None), "min_category_items": (-1, None),
    "min_tpr_lower": (-0.5, 1.01), "min_tnr_lower": (-0.5, 7), "max_flip_rate": (-1, 1.1),
    "max_unscored_share": (-0.02, 3), "drift_min_p": (-0.01, 2), "drift_max_agreement_drop": (-0.05, 5),
    "max_probe_shift": (-0.1, None),
}


def policy(id: str, text: str | bytes, needle: str | None = None, **kw) -> None:
    case(f"policy-{id}", CALIBRATE, {"ws/rubrics/policy.yaml": text}, needle=needle, **kw)


for key, (low, high) in POLICY_NUMBERS.items():
    policy(f"{key}-below-range", f"{key}: {low}\n", needle=key)
    if high is not None:
        policy(f"{key}-above-range", f"{key}: {high}\n", needle=key)
    policy(f"{key}-text", f"{key}: many\n", needle=key)
    policy(f"{key}-boolean", f"{key}: true\n", needle=key)
for key in ("min_items", "min_class_items"):
    policy(f"{key}-fraction", f"{key}: 2.5\n", needle=key)
    policy(f"{key}-list", f"{key}: [1, 2]\n", needle=key)
    policy(f"{key}-null", f"{key}:\n", needle=key)
policy("agreement-metric-unknown", "agreement_metric: accuracy_ish\n", needle="agreement_metric")
policy("agreement-metric-number", "agreement_metric: 3\n", needle="agreement_metric")
policy("probe-check-unknown", "probe_check: sometimes\n", needle="probe_check")
for typo, meant in (("min_tpr_lowr", "min_tpr_lower"), ("min_itmes", "min_items"), ("max_flip_rte", "max_flip_rate"),
                    ("Min_Items", "min_items"), ("min-items", "min_items"), ("human_margn", "human_margin")):
    policy(f"unknown-key-{typo}", f"min_items: 60\n{typo}: 0.5\n", needle=f"did you mean {meant}")
policy("unknown-key-unrelated", "colour: blue\n", needle="unknown gate key 'colour'")
policy("nan", "min_agreement_lower: .nan\n", needle="not a finite number")
policy("infinity", "max_self_preference: .inf\n", needle="not a finite number")
policy("binary-tag", "min_items: !!binary aGVsbG8=\n", needle="!!binary")
policy("python-tag", "min_items: !!python/object/apply:os.system ['true']\n")
policy("set-tag", "min_items: !!set {a, b}\n")
policy("deep-nesting", "min_items: " + "[" * 200 + "\n")
policy("malformed", "min_items: [1, 2\n")
policy("tab-indent", "min_items:\n\t- 5\n")
policy("latin-1", "# caf\xe9\nmin_items: 60\n".encode("latin-1"), needle="UTF-8")
policy("utf-16", "min_items: 60\n".encode("utf-16"))
policy("binary-png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
policy("huge", "# " + "x" * (2 * MiB) + "\nmin_items: 60\n", needle="limit")
policy("lone-surrogate", 'agreement_metric: "\\ud800"\n')
policy("nul-char", "min_items: 6\x000\n")
policy("empty-file-accepted", "", accepted=True)
policy("comments-only-accepted", "# nothing overridden yet\n", accepted=True)
policy("bom-crlf-accepted", "\ufeffmin_items: 60\r\nmax_flip_rate: 0.2\r\n".encode("utf-8"), accepted=True)

# --------------------------------------------------------------------------- rubric YAML

RUBRIC_OK = """name: sweep
title: Sweep rubric
instructions: Judge the answer.
judges:
  - id: judge-a
    model: openai/gpt-4o
"""


def rubric(id: str, text: str | bytes, needle: str | None = None, *, workspace: str = "demo", **kw) -> None:
    case(f"rubric-{id}", ["rubric", "add", "{in}/sweep.yaml"], {"in/sweep.yaml": text}, needle=needle,
         workspace=workspace, **kw)


def judge_yaml(**fields) -> str:
    body = {"id": "judge-a", "model": "openai/gpt-4o", **fields}
    lines = [f"    {k}: {v}" for k, v in body.items() if v is not None]
    return "name: sweep\njudges:\n  - " + "\n".join(lines)[4:] + "\n"


for typo, meant in (("titel", "title"), ("judgs", "judges"), ("pass_treshold", "pass_threshold"),
                    ("gates", "gate"), ("instruction", "instructions"), ("Scale", "scale")):
    rubric(f"unknown-key-{typo}", RUBRIC_OK + f"{typo}: x\n", needle=f"did you mean {meant}")
rubric("unknown-key-unrelated", RUBRIC_OK + "owner: me\n", needle="unknown key 'owner'")
# issue 49: a Python grader must name its function; a provider prefix typo gets the nearest provider
for id, model, needle in (("python-without-function", "python/my_graders", "field 'judges[0].model': model "
                           "'python/my_graders' does not name a function; write python/<module>:<function>"),
                          ("python-two-colons", "python/a:b:c", "model 'python/a:b:c' does not name a function"),
                          ("provider-typo", "opnai/gpt-4o", "did you mean openai/gpt-4o?")):
    rubric(f"judge-model-{id}", judge_yaml(model=model), needle=needle)

for typo, meant in (("modell", "model"), ("temprature", "temperature"), ("max_token", "max_tokens"),
                    ("see_refrence", "see_reference")):
    rubric(f"unknown-judge-key-{typo}", RUBRIC_OK + f"    {typo}: 1\n", needle=f"did you mean {meant}")
rubric("unknown-scale-key", "name: sweep\nscale:\n  - {value: 0, lable: fail}\n  - {value: 1, label: pass}\n",
       needle="did you mean label")
for key, value, needle in (("min_tpr_lowr", "0.5", "did you mean min_tpr_lower"), ("min_items", "-5", "min_items"),
                           ("max_flip_rate", "2", "max_flip_rate"), ("agreement_metric", "vibes", "agreement_metric"),
                           ("min_items", "lots", "min_items"), ("probe_check", "always", "probe_check"),
                           ("min_agreement_lower", ".nan", "finite"), ("human_margin", "true", "human_margin")):
    rubric(f"gate-{key}-{value.strip('.')}", RUBRIC_OK + f"gate:\n  {key}: {value}\n", needle=needle)
rubric("gate-list", RUBRIC_OK + "gate: [min_items, 5]\n", needle="gate")
rubric("gate-text", RUBRIC_OK + "gate: strict\n", needle="gate")
for id, scale in (("not-a-list", "scale: three levels"), ("one-level", "scale:\n  - {value: 0, label: only}"),
                  ("duplicate-values", "scale:\n  - {value: 0, label: a}\n  - {value: 0, label: b}"),
                  ("fraction", "scale:\n  - {value: 0.5, label: a}\n  - {value: 1, label: b}"),
                  ("text-value", "scale:\n  - {value: low, label: a}\n  - {value: 1, label: b}"),
                  ("boolean-value", "scale:\n  - {value: false, label: a}\n  - {value: true, label: b}"),
                  ("no-label", "scale:\n  - {value: 0}\n  - {value: 1, label: b}"),
                  ("level-not-mapping", "scale:\n  - 0\n  - 1"),
                  ("description-number", "scale:\n  - {value: 0, label: a, description: 5}\n  - {value: 1, label: b}")):
    rubric(f"scale-{id}", f"name: sweep\n{scale}\n")
for value in ("5", "zero", "0.5", "true", "[0]"):
    rubric(f"pass-threshold-{value.strip('[]')}", f"name: sweep\npass_threshold: {value}\n", needle="pass_threshold")
for id, fields in (("model-no-provider", {"model": "gpt-4o"}), ("model-unknown-provider", {"model": "foo/bar"}),
                   ("model-empty", {"model": '""'}), ("model-number", {"model": "42"}), ("model-missing", {"model": None}),
                   ("model-openai-api-no-service", {"model": "openai-api/llama"}),
                   ("mode-unknown", {"mode": "multi"}), ("temperature-high", {"temperature": "3"}),
                   ("temperature-negative", {"temperature": "-1"}), ("temperature-text", {"temperature": "hot"}),
                   ("temperature-inf", {"temperature": ".inf"}), ("max-tokens-zero", {"max_tokens": "0"}),
                   ("max-tokens-negative", {"max_tokens": "-5"}), ("max-tokens-fraction", {"max_tokens": "1.5"}),
                   ("max-tokens-boolean", {"max_tokens": "true"}), ("repeats-zero", {"repeats": "0"}),
                   ("repeats-huge", {"repeats": "100000000"}), ("max-turns-huge", {"max_turns": "10000000"}),
                   ("max-tokens-beyond-64-bits", {"max_tokens": "99999999999999999999"}),
                   ("max-turns-text", {"max_turns": "many"}), ("family-number", {"family": "5"}),
                   ("see-reference-text", {"see_reference": "sometimes"}), ("id-traversal", {"id": "../../escaped"}),
                   ("id-slash", {"id": "a/b"}), ("id-space", {"id": '"two words"'}), ("id-empty", {"id": '""'}),
                   ("id-dash-start", {"id": "-rf"}), ("id-list", {"id": "[a, b]"})):
    rubric(f"judge-{id}", judge_yaml(**fields))
rubric("judge-duplicate-id", RUBRIC_OK + "  - id: judge-a\n    model: anthropic/claude-sonnet-4-5\n", needle="twice")
rubric("judges-text", "name: sweep\njudges: all of them\n")
rubric("judge-not-mapping", "name: sweep\njudges:\n  - openai/gpt-4o\n")
rubric("criteria-not-mapping", "name: sweep\ncriteria:\n  - correctness\n")
rubric("criteria-no-description", "name: sweep\ncriteria:\n  - {id: c}\n")
rubric("examples-not-list", "name: sweep\nexamples: some\n")
rubric("example-score-off-scale", "name: sweep\nexamples:\n  - {item: x, score: 9}\n", needle="9")
rubric("example-score-text", "name: sweep\nexamples:\n  - {item: x, score: high}\n")
rubric("name-traversal", "name: ../../escaped\n", needle="contains '..'")
rubric("name-empty", 'name: ""\n')
rubric("name-list", "name: [a, b]\n")
rubric("name-control-char", 'name: "a\\x1bb"\n')
rubric("title-list", "name: sweep\ntitle: [a]\n")
rubric("description-mapping", "name: sweep\ndescription: {a: 1}\n")
rubric("instructions-number", "name: sweep\ninstructions: 7\n")
rubric("import-map-off-scale", "name: sweep\nimport_maps:\n  correctness:\n    categorical: {C: 7}\n")
rubric("import-map-unknown-key", "name: sweep\nimport_maps:\n  correctness:\n    catgorical: {C: 1}\n",
       needle="did you mean categorical")
rubric("empty-file", "")
# The same hostile YAML for both kinds of YAML file a user hands in (the bomb: 9**3 lists from 4 lines).
ALIAS_BOMB = "".join(f"{name}: {anchor}[{','.join([item] * 9)}]\n" for name, anchor, item in
                     (("a", "&a ", "x"), ("b", "&b ", "*a"), ("c", "&c ", "*b"), ("d", "", "*c")))
for add, key, value, other in ((policy, "min_items", "60", "min_class_items"), (rubric, "name", "sweep", "title")):
    add("root-list", f"- {key}: {value}\n")
    add("root-scalar", f"{value}\n")
    add("anchor-alias", f"{key}: &n {value}\n{other}: *n\n", needle="anchors and aliases")
    add("alias-bomb", f"{key}: {value}\n" + ALIAS_BOMB, needle="anchors and aliases")
    add("duplicate-key", f"{key}: {value}\n{other}: a\n{other}: b\n", needle="appears twice")
rubric("duplicate-judge-key", "name: sweep\njudges:\n  - id: a\n    model: openai/gpt-4o\n    model: openai/gpt-4o\n",
       needle="appears twice")
rubric("deep-nesting", "name: sweep\ngate:\n  x: " + "[" * 500 + "\n", needle="deeper")
rubric("nan-temperature", judge_yaml(temperature=".nan"), needle="finite")
rubric("binary-tag", "name: sweep\ndescription: !!binary aGVsbG8=\n", needle="!!binary")
rubric("set-tag", "name: sweep\ngate: !!set {a, b}\n", needle="!!set")
rubric("python-tag", "name: !!python/object/apply:os.system ['touch pwned']\n")
rubric("latin-1", "name: sweep\ndescription: caf\xe9\n".encode("latin-1"), needle="UTF-8")
rubric("utf-16", RUBRIC_OK.encode("utf-16"))
rubric("binary-png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)
rubric("over-1-mib", RUBRIC_OK + "description: " + "x" * (MiB + 10) + "\n", needle="limited to 1 MiB")
rubric("malformed", "name: sweep\njudges: [\n")
rubric("tab-indent", "name: sweep\njudges:\n\t- id: a\n")
rubric("lone-surrogate", 'name: sweep\ndescription: "\\udc00"\n', needle="surrogate")
rubric("nul-char", "name: sweep\x00\n")
case("rubric-missing-file", ["rubric", "add", "{in}/nope.yaml"])
case("rubric-folder", ["rubric", "add", "{in}"], {"in/x.txt": "x"})
for id, text in (("unknown-key", RUBRIC_OK + "titel: x\n"), ("over-1-mib", "name: a\n#" + "x" * (MiB + 1) + "\n"),
                 ("alias-bomb", "name: &n x\ntitle: *n\n"), ("binary", b"\x00\x01\x02"), ("empty", ""),
                 ("traversal-name", "name: ../../x\n")):
    rubric(f"empty-workspace-{id}", text, workspace="empty")
rubric("bom-crlf-accepted", "\ufeffname: sweep-ok\r\ntitle: t\r\n".encode("utf-8"), accepted=True)

# --------------------------------------------------------------------------- items, labels, adjudications, judgments

ITEM = {"id": "sweep-1", "input": "task", "output": "answer"}
IMPORT_ITEMS = ["import", "items", "{in}/items.jsonl", "-g", "sweep-set"]


def items(id: str, body: str | bytes, needle: str | None = None, *, name: str = "items.jsonl",
          golden_set: str = "sweep-set", **kw) -> None:
    case(f"items-{id}", ["import", "items", "{in}/" + name, "-g", golden_set], {"in/" + name: body}, needle=needle,
         **kw)


def item(**changes) -> str:
    d = {**ITEM, **changes}
    return jl({k: v for k, v in d.items() if v is not None})


ok_item = jl({"id": "sweep-0", "input": "t", "output": "o"})
items("malformed-json", ok_item + '{"id": "a", "input": "t", "output": "o"\n', needle="items.jsonl line 2")
items("trailing-comma", ok_item + '{"id": "a", "input": "t", "output": "o",}\n', needle="line 2")
items("single-quotes", "{'id': 'a', 'input': 't', 'output': 'o'}\n")
items("array-line", ok_item + '["a", "t", "o"]\n', needle="line 2")
items("string-line", ok_item + '"just text"\n', needle="line 2")
items("number-line", ok_item + "42\n", needle="line 2")
items("missing-input", ok_item + item(input=None), needle="input")
items("input-number", ok_item + item(input=5), needle="input")
items("input-empty", ok_item + item(input="   "), needle="input")
items("output-list", ok_item + item(output=["a"]), needle="output")
items("no-output-no-trajectory", ok_item + item(output=None), needle="output")
items("trajectory-not-list", ok_item + item(trajectory="steps"), needle="trajectory")
items("step-bad-role", ok_item + item(trajectory=[{"role": "robot", "content": "x"}]), needle="trajectory[0]")
items("step-not-object", ok_item + item(trajectory=["x"]), needle="trajectory[0]")
items("step-content-object", ok_item + item(trajectory=[{"role": "tool", "content": {"a": 1}}]))
items("tool-calls-bad", ok_item + item(trajectory=[{"role": "assistant", "content": "", "tool_calls": "ls"}]))
items("producer-text", ok_item + item(producer="gpt-4o"), needle="producer")
items("producer-no-family", ok_item + item(producer={"model": "gpt-4o"}), needle="producer")
items("producer-extra-key", ok_item + item(producer={"model": "m", "family": "f", "size": 7}), needle="producer")
items("metadata-list", ok_item + item(metadata=[1, 2]), needle="metadata")
items("category-number", ok_item + item(category=3), needle="category")
for typo in ("ouput", "inputs", "task", "catgory", "Id"):
    items(f"unknown-field-{typo}", ok_item + item(**{typo: "x"}), needle="unknown field")
items("id-empty", ok_item + item(id=""), needle="id")
items("id-list", ok_item + item(id=["a"]), needle="id")
items("id-object", ok_item + item(id={"a": 1}), needle="id")
items("id-boolean", ok_item + item(id=True), needle="id")
items("id-control-char", ok_item + item(id="a\x1b[31mred"), needle="control character")
items("id-newline", ok_item + item(id="a\nb"), needle="control character")
items("task-id-nul", ok_item + item(task_id="t\x00"), needle="control character")
items("category-control", ok_item + item(category="c\x07"), needle="control character")
items("duplicate-id-other-content", ok_item + item(id="sweep-0", output="other"), needle="appears twice")
items("conflicts-with-stored-item", item(id="demo-0000", output="changed"), golden_set=G, needle="already in")
items("nan", ok_item + '{"id": "a", "input": "t", "output": "o", "metadata": {"x": NaN}}\n', needle="NaN")
items("infinity", ok_item + '{"id": "a", "input": "t", "output": "o", "metadata": {"x": -Infinity}}\n')
items("integer-beyond-64-bits", ok_item + '{"id": "a", "input": "t", "output": "o", "metadata": {"n": 1' + "0" * 30 + '}}\n',
      needle="too large")
items("1e999", ok_item + '{"id": "a", "input": "t", "output": "o", "metadata": {"x": 1e999}}\n')
items("lone-surrogate", ok_item + '{"id": "a", "input": "t\\ud800", "output": "o"}\n', needle="surrogate")
items("deep-nesting", ok_item + '{"id": "a", "input": "t", "output": "o", "metadata": ' + "[" * 10_000 + "\n",
      needle="deeper")
items("empty-file", "", needle="empty")
items("whitespace-only", "\n  \n\n", needle="no records")
items("huge-line", ok_item + '{"id": "a", "input": "' + "x" * (17 * MiB) + '", "output": "o"}\n', needle="16 MiB")
items("latin-1", (ok_item + '{"id": "a", "input": "caf\xe9", "output": "o"}\n').encode("latin-1"),
      needle="line 2")
items("utf-16", (ok_item * 2).encode("utf-16"))
items("binary", b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
items("unknown-extension", ok_item, name="items.txt", needle="unknown file type")
items("json-array-file", json.dumps([ITEM]), name="items.json")
items("golden-set-traversal", ok_item, golden_set="../../escaped", needle="contains '..'")
items("golden-set-empty", ok_item, golden_set="", needle="empty")
case("items-missing-file", IMPORT_ITEMS[:2] + ["{in}/nope.jsonl"] + IMPORT_ITEMS[3:], needle="not found")
case("items-folder", IMPORT_ITEMS[:2] + ["{in}"] + IMPORT_ITEMS[3:], {"in/x.jsonl": ok_item})
CSV_HEAD = "id,input,output\n"
items("csv-unknown-column", "id,input,output,colour\na,t,o,red\n", name="items.csv", needle="unknown field 'colour'")
items("csv-misspelt-column", "id,input,ouptut\na,t,o\n", name="items.csv", needle="did you mean output")
items("csv-semicolons", "id;input;output\na;t;o\n", name="items.csv", needle="semicolons")
items("csv-duplicate-column", "id,input,output,input\na,t,o,u\n", name="items.csv", needle="twice")
items("csv-too-many-cells", CSV_HEAD + "a,t,o,extra\n", name="items.csv", needle="more cells")
items("csv-unclosed-quote", CSV_HEAD + 'a,"t,o\nb,t,o\n', name="items.csv")
items("csv-bad-json-cell", "id,input,trajectory\na,t,[{not json}]\n", name="items.csv", needle="trajectory")
items("csv-header-only", CSV_HEAD, name="items.csv", needle="no records")
items("csv-no-input-column", "id,output\na,o\n", name="items.csv", needle="input")
items("csv-latin-1", (CSV_HEAD + "a,caf\xe9,o\n").encode("latin-1"), name="items.csv", needle="line 2")
items("csv-nul", CSV_HEAD + "a,t\x00,o\n", name="items.csv")
items("csv-control-id", CSV_HEAD + "a\x1b,t,o\n", name="items.csv", needle="control character")
items("bom-crlf-accepted", "\ufeff" + ok_item.replace("\n", "\r\n"), accepted=True)
items("csv-bom-crlf-accepted", ("\ufeff" + CSV_HEAD + "a,t,o\r\n").encode("utf-8"), name="items.csv", accepted=True)
items("path-like-id-accepted", item(id="../../etc/passwd"), accepted=True)  # an id is data, never a path

LABEL = {"item_id": "demo-0000", "rater": "sweep-rater", "score": 0}


def labels(id: str, *records, needle: str | None = None, name: str = "labels.jsonl", raw: str | bytes | None = None,
           **kw) -> None:
    case(f"labels-{id}", ["import", "labels", "--new-raters", "{in}/" + name, "-g", G, "-r", R],
         {"in/" + name: raw if raw is not None else jl(LABEL, *records)}, needle=needle, **kw)


def label(**changes) -> dict:
    d = {**LABEL, "item_id": "demo-0001", **changes}
    return {k: v for k, v in d.items() if v is not None}


for value in (9, -2, 2, 100):
    labels(f"score-{value}", label(score=value), needle="labels.jsonl line 2: field 'score'")
for id, value in (("fraction", 0.5), ("text", "high"), ("boolean", True), ("list", [0]), ("object", {"v": 0})):
    labels(f"score-{id}", label(score=value), needle="score")
labels("score-null", label(score=None) | {"score": None}, needle="score")
labels("score-nan", raw=jl(LABEL) + '{"item_id": "demo-0001", "rater": "x", "score": NaN}\n', needle="NaN")
labels("score-beyond-64-bits", raw=jl(LABEL) + '{"item_id": "demo-0001", "rater": "x", "score": 1e20}\n',
       needle="too large")
labels("score-infinity", raw=jl(LABEL) + '{"item_id": "demo-0001", "rater": "x", "score": Infinity}\n')
labels("score-missing", label(score=None), needle="score")
labels("rater-missing", label(rater=None), needle="rater")
labels("item-id-missing", label(item_id=None), needle="item_id")
labels("unknown-item", label(item_id="no-such-item"), needle="unknown item")
labels("item-id-traversal", label(item_id="../../etc/passwd"), needle="unknown item")
for typo in ("scroe", "raters", "rationle", "comment"):
    labels(f"unknown-field-{typo}", label(**{typo: "x"}), needle="unknown field")
labels("rater-traversal", label(rater="../x"), needle="contains '..'")
labels("rater-slash", label(rater="a/b"), needle="contains '/'")
labels("rater-control", label(rater="a\x1bb"))
labels("rater-number", label(rater=5))
labels("duplicate-rater-item", LABEL, needle="twice")
labels("created-at-text", label(created_at="last tuesday"), needle="ISO 8601")
labels("inclusion-zero", label(inclusion_probability=0), needle="inclusion_probability")
labels("inclusion-above-one", label(inclusion_probability=2), needle="inclusion_probability")
labels("inclusion-text", label(inclusion_probability="often"), needle="inclusion_probability")
labels("csv-score-9", raw="item_id,rater,score\ndemo-0000,ana2,0\ndemo-0001,ana2,9\n", name="labels.csv",
       needle="labels.csv line 3")
labels("csv-score-high", raw="item_id,rater,score\ndemo-0001,ana2,high\n", name="labels.csv", needle="score")
labels("csv-score-nan", raw="item_id,rater,score\ndemo-0001,ana2,nan\n", name="labels.csv", needle="score")
labels("csv-wrong-columns", raw="item,who,value\ndemo-0001,ana2,0\n", name="labels.csv", needle="unknown field")
labels("empty-file", raw="", needle="empty")
case("labels-rubric-unknown", ["import", "labels", "--new-raters", "{in}/l.jsonl", "-g", G, "-r", "no-such-rubric"],
     {"in/l.jsonl": jl(LABEL)})
case("labels-golden-set-unknown", ["import", "labels", "--new-raters", "{in}/l.jsonl", "-g", "no-such-set", "-r", R],
     {"in/l.jsonl": jl(LABEL)})
case("labels-rubric-traversal", ["import", "labels", "--new-raters", "{in}/l.jsonl", "-g", G, "-r", "../../x"],
     {"in/l.jsonl": jl(LABEL)})


def adjudications(id: str, *records, needle: str | None = None, raw: str | None = None) -> None:
    case(f"adjudications-{id}", ["import", "adjudications", "{in}/adj.jsonl", "-g", G, "-r", R],
         {"in/adj.jsonl": raw if raw is not None else jl({"item_id": "demo-0002", "score": 0}, *records)},
         needle=needle)


for value in (9, -2):
    adjudications(f"score-{value}", {"item_id": "demo-0003", "score": value}, needle="adj.jsonl line 2")
adjudications("score-text", {"item_id": "demo-0003", "score": "fail"}, needle="score")
adjudications("score-missing", {"item_id": "demo-0003"}, needle="score")
adjudications("same-item-twice", {"item_id": "demo-0002", "score": 1}, needle="twice")
adjudications("unknown-field", {"item_id": "demo-0003", "score": 0, "notes": "x"}, needle="did you mean note")
adjudications("lead-traversal", {"item_id": "demo-0003", "score": 0, "lead": "../boss"}, needle="contains '..'")
adjudications("unknown-item", {"item_id": "nope", "score": 0}, needle="unknown item")
adjudications("malformed", raw='{"item_id": "demo-0002", "score": 0\n')

JUDGMENT = {"item_id": "demo-0000", "score": 0}


def judgments(id: str, *records, needle: str | None = None, name: str = "j.jsonl", raw: str | None = None,
              judge: str = J) -> None:
    case(f"judgments-{id}", ["import", "judgments", "{in}/" + name, "-g", G, "-r", R, "-j", judge],
         {"in/" + name: raw if raw is not None else jl(JUDGMENT, *records)}, needle=needle)


def judgment(**changes) -> dict:
    return {**JUDGMENT, "item_id": "demo-0001", **changes}


for value in (9, -2, 3):
    judgments(f"score-{value}", judgment(score=value), needle="j.jsonl line 2: field 'score'")
for id, value in (("fraction", 0.5), ("text", "high"), ("boolean", False), ("list", [1])):
    judgments(f"score-{id}", judgment(score=value), needle="score")
judgments("score-nan", raw=jl(JUDGMENT) + '{"item_id": "demo-0001", "score": NaN}\n', needle="NaN")
judgments("score-infinity", raw=jl(JUDGMENT) + '{"item_id": "demo-0001", "score": Infinity}\n')
judgments("score-missing", {"item_id": "demo-0001"}, needle="score")
judgments("null-without-reason", judgment(score=None), needle="unscored_reason")
judgments("score-and-reason", judgment(unscored_reason="timeout"), needle="unscored_reason")
judgments("repeat-negative", judgment(repeat=-1), needle="repeat")
judgments("repeat-text", judgment(repeat="first"), needle="repeat")
judgments("run-traversal", judgment(run="../../run"), needle="contains '..'")
judgments("unknown-item", judgment(item_id="ghost"), needle="unknown item")
judgments("unknown-field", judgment(scroe=1), needle="did you mean score")
judgments("evidence-negative", judgment(evidence_steps=[-1]), needle="evidence_steps")
judgments("evidence-beyond", judgment(evidence_steps=[999]), needle="evidence_steps")
judgments("evidence-text", judgment(evidence_steps="3"), needle="evidence_steps")
judgments("tokens-negative", judgment(tokens_in=-10), needle="tokens_in")
judgments("tokens-beyond-64-bits", raw=jl(JUDGMENT) + '{"item_id": "demo-0001", "score": 0, "tokens_in": 99999999999999999999}\n',
          needle="too large")
judgments("repeat-beyond-64-bits", raw=jl(JUDGMENT) + '{"item_id": "demo-0001", "score": 0, "repeat": 1e300}\n',
          needle="too large")
judgments("csv-score-beyond-64-bits", raw="item_id,score\ndemo-0001,99999999999999999999999\n", name="j.csv",
          needle="too large")
judgments("cost-text", judgment(cost_usd="cheap"), needle="cost_usd")
judgments("latency-negative", judgment(latency_ms=-3), needle="latency_ms")
judgments("created-at-text", judgment(created_at="yesterday"), needle="ISO 8601")
judgments("duplicate-repeat", JUDGMENT, needle="twice")
judgments("csv-score-9", raw="item_id,score\ndemo-0000,0\ndemo-0001,9\n", name="j.csv", needle="j.csv line 3")
judgments("csv-nan-cost", raw="item_id,score,cost_usd\ndemo-0001,0,nan\n", name="j.csv", needle="cost_usd")
judgments("judge-unknown", judge="no-such-judge")
judgments("judge-traversal", judge="../../x")

# --------------------------------------------------------------------------- grade with an approved bundle

NEW_ITEMS = jl(*({"id": f"new-{n}", "input": "task", "output": "answer"} for n in range(10)))


def grade(id: str, files: dict, extra: list[str], needle: str | None = None, bundle: str = "{ws}/" + BUNDLE,
          **kw) -> None:
    case(f"grade-{id}", ["grade", "--bundle", bundle, "--items", "{in}/new.jsonl", *extra],
         {"in/new.jsonl": NEW_ITEMS, **files}, needle=needle, **kw)


def judged(bad_line: int, value, raw: str | None = None) -> str:
    lines = [json.dumps({"item_id": f"new-{n}", "score": 0}) for n in range(10)]
    lines[bad_line - 1] = raw if raw is not None else json.dumps({"item_id": f"new-{bad_line - 1}", "score": value})
    return "\n".join(lines) + "\n"


for value in (9, -2, 0.5, "high", True):
    grade(f"judgments-score-{value}-line-7", {"in/j.jsonl": judged(7, value)}, ["--judgments", "{in}/j.jsonl"],
          needle="j.jsonl line 7")
grade("judgments-score-nan-line-7", {"in/j.jsonl": judged(7, None, '{"item_id": "new-6", "score": NaN}')},
      ["--judgments", "{in}/j.jsonl"], needle="j.jsonl line 7")
grade("judgments-unknown-item", {"in/j.jsonl": judged(3, None, '{"item_id": "elsewhere", "score": 0}')},
      ["--judgments", "{in}/j.jsonl"], needle="line 3")
grade("judgments-unknown-field", {"in/j.jsonl": judged(2, None, '{"item_id": "new-1", "scor": 0}')},
      ["--judgments", "{in}/j.jsonl"], needle="did you mean score")
grade("labels-score-9", {"in/j.jsonl": judged(1, 0), "in/l.jsonl": jl({"item_id": "new-0", "rater": "a", "score": 9})},
      ["--judgments", "{in}/j.jsonl", "--labels", "{in}/l.jsonl"], needle="l.jsonl line 1")
grade("items-duplicate-id", {"in/new.jsonl": NEW_ITEMS + jl({"id": "new-0", "input": "x", "output": "y"}),
                             "in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl"], needle="twice")
grade("items-malformed", {"in/new.jsonl": "{not json\n", "in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl"])
grade("resamples-zero", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl", "--resamples", "0"])
grade("seed-negative", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl", "--seed", "-1"])
grade("seed-text", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl", "--seed", "abc"])
grade("resamples-huge", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl", "--resamples", "10000000"])
grade("seed-huge", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl", "--seed", "99999999999999999999"])
for id, text in (("empty", ""), ("not-yaml", "{{{ not: yaml ["), ("binary", b"\x89PNG\r\n\x1a\n\x00\x00"),
                 ("list", "- a\n- b\n"), ("anchors", "schema: &s workbench.bundle/1\nx: *s\n"),
                 ("python-tag", "!!python/object/apply:os.system ['true']\n"), ("latin-1", "a: caf\xe9\n".encode("latin-1")),
                 ("huge", "a: " + "x" * (17 * MiB) + "\n")):
    grade(f"bundle-{id}", {"in/b.yaml": text, "in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl"],
          bundle="{in}/b.yaml")
grade("bundle-missing", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl"], bundle="{in}/nope.yaml")
grade("bundle-folder", {"in/j.jsonl": judged(1, 0)}, ["--judgments", "{in}/j.jsonl"], bundle="{in}")
# these three copy the real bundle and change it (see _materialize: 'BUNDLE:' + an edit)
grade("bundle-truncated", {"in/b.yaml": "BUNDLE:truncate", "in/j.jsonl": judged(1, 0)},
      ["--judgments", "{in}/j.jsonl"], bundle="{in}/b.yaml")
grade("bundle-edited-threshold", {"in/b.yaml": "BUNDLE:edit", "in/j.jsonl": judged(1, 0)},
      ["--judgments", "{in}/j.jsonl"], bundle="{in}/b.yaml")
grade("bundle-with-anchor", {"in/b.yaml": "BUNDLE:anchor", "in/j.jsonl": judged(1, 0)},
      ["--judgments", "{in}/j.jsonl"], bundle="{in}/b.yaml", needle="anchors and aliases")
grade("refused-leaves-no-reports-folder", {"in/j.jsonl": judged(7, 9)}, ["--judgments", "{in}/j.jsonl"],
      workspace="demo-no-reports")  # finding F1, fixed: grade made reports/ before reading its inputs

CHECK_PREFIXES = ("Error: ", "FAIL: ")  # check is a CI gate: a bundle it refuses is a FAIL line, with a non-zero exit
for id, text in (("empty", ""), ("not-yaml", "{{{ ["), ("binary", b"\x00\x01\x02\x03"), ("list", "- 1\n"),
                 ("anchors", "a: &x 1\nb: *x\n"), ("rubric-not-bundle", RUBRIC_OK)):
    case(f"check-{id}", ["check", "{in}/b.yaml"], {"in/b.yaml": text}, prefixes=CHECK_PREFIXES)
case("check-missing", ["check", "{in}/nope.yaml"], prefixes=CHECK_PREFIXES)

# --------------------------------------------------------------------------- command-line options

SCOPE = ["-g", G, "-r", R, "-j", "careful-sonnet"]
for cmd in ("calibrate", "report", "plan", "export"):
    case(f"options-{cmd}-golden-set-unknown", [cmd, "-g", "no-such-set", "-r", R, "-j", "careful-sonnet"])
    case(f"options-{cmd}-rubric-unknown", [cmd, "-g", G, "-r", "no-such-rubric", "-j", "careful-sonnet"])
    case(f"options-{cmd}-judge-unknown", [cmd, "-g", G, "-r", R, "-j", "no-such-judge"])
    case(f"options-{cmd}-judge-traversal", [cmd, "-g", G, "-r", R, "-j", "x/../../../escaped"])
    case(f"options-{cmd}-rubric-version-unknown", [cmd, "-g", G, "-r", f"{R}@v99", "-j", "careful-sonnet"])
for cmd in ("calibrate", "report", "export"):
    case(f"options-{cmd}-resamples-zero", [cmd, *SCOPE, "--resamples", "0"], needle="--resamples")
    case(f"options-{cmd}-seed-negative", [cmd, *SCOPE, "--seed", "-1"], needle="--seed")
    case(f"options-{cmd}-epsilon-nan", [cmd, *SCOPE, "--epsilon", "nan"], needle="--epsilon")
# (a version beyond 64 bits was 'unexpected OverflowError': finding F4, fixed)
for ref in (f"{R}@vx", f"{R}@v0", f"{R}@v-1", f"{R}@", f"{R}@v1@v1", "@v1", f"{R}@v99999999999999999999"):
    case(f"options-calibrate-rubric-ref-{ref.replace(R, 'R')}", ["calibrate", "-g", G, "-r", ref, "-j", "careful-sonnet"])
    case(f"options-import-judgments-rubric-ref-{ref.replace(R, 'R')}",
         ["import", "judgments", "{in}/j.jsonl", "-g", G, "-r", ref, "-j", J], {"in/j.jsonl": jl(JUDGMENT)})
case("options-calibrate-seed-text", ["calibrate", *SCOPE, "--seed", "abc"])
for cmd in ("calibrate", "compare", "report"):
    scope = SCOPE[:4] if cmd == "compare" else SCOPE
    case(f"options-{cmd}-resamples-huge", [cmd, *scope, "--resamples", "99999999999999999999"], needle="--resamples")
    case(f"options-{cmd}-seed-huge", [cmd, *scope, "--seed", "99999999999999999999"], needle="--seed")
case("options-board-show-resamples-huge", ["board", "show", "nope", "--resamples", "10000000"], needle="--resamples")
case("options-refine-seed-huge", ["refine", *SCOPE, "--seed", "99999999999999999999", "--dry-run"])  # finding F3, fixed
case("options-calibrate-resamples-text", ["calibrate", *SCOPE, "--resamples", "many"])
case("options-calibrate-target-width-inf", ["calibrate", *SCOPE, "--target-width", "inf"])
case("options-calibrate-alt-metric-unknown", ["calibrate", *SCOPE, "--alt-metric", "vibes"])
case("options-calibrate-run-unknown", ["calibrate", *SCOPE, "--run", "no-such-run"])
case("options-compare-epsilon-high", ["compare", "-g", G, "-r", R, "--epsilon", "1.5"])
case("options-compare-rubric-unknown", ["compare", "-g", G, "-r", "nope"])
for value in ("-3", "abc", "1.5"):
    case(f"options-plan-budget-{value}", ["plan", *SCOPE, "--budget", value], needle="--budget")
for value in ("0", "-0.1", "nan", "inf"):
    case(f"options-plan-target-width-{value}", ["plan", *SCOPE, "--target-width", value], needle="--target-width")
case("options-plan-missing-judge", ["plan", "-g", G, "-r", R])
for option, value in (("--repeats", "0"), ("--concurrency", "0"), ("--limit", "-1"), ("--budget", "-3"),
                      ("--budget", "nan"), ("--rpm", "0"), ("--tpm", "inf"), ("--repeats", "x"),
                      ("--repeats", "100000000")):
    case(f"options-judge-run{option}-{value}", ["judge", "run", "-g", G, "-r", R, "-j", "careful-sonnet", option,
                                                value])
for judge in ("careful-sonnet", "gpt4o-self"):  # the planted keys are read, and must not be shown
    case(f"keys-judge-run-dry-run-{judge}-accepted", ["judge", "run", "-g", G, "-r", R, "-j", judge, "--dry-run",
                                                      "--limit", "3"], accepted=True)
    case(f"keys-probe-dry-run-{judge}-accepted", ["probe", "-g", G, "-r", R, "-j", judge, "--dry-run", "--limit", "2"],
         accepted=True)
case("options-judge-run-judge-unknown", ["judge", "run", "-g", G, "-r", R, "-j", "ghost", "--dry-run"])
for option, value in (("--budget", "-3"), ("--limit", "0"), ("--probes", "no-such-probe"), ("--concurrency", "0")):
    case(f"options-probe{option}-{value}", ["probe", *SCOPE, option, value, "--dry-run"])
for option, value in (("--budget", "-3"), ("--rounds", "0"), ("--held-out", "1.5"), ("--examples", "-1")):
    case(f"options-refine{option}-{value}", ["refine", *SCOPE, option, value, "--dry-run"])
for args in (["golden-set", "show", "nope"], ["golden-set", "freeze", "nope"], ["golden-set", "show", "../x"],
             ["golden-set", "export", "nope", "--out", "{in}/out"], ["rubric", "show", "nope"],
             ["rubric", "show", R, "--version", "99"], ["rubric", "show", R, "--version", "0"],
             ["rubric", "show", R, "--version", "99999999999999999999"], ["board", "show", "nope"],
             ["board", "show", "nope", "--q", "2"], ["board", "show", "nope", "--resamples", "5"],
             ["rater", "set", "../boss", "--role", "lead"], ["rater", "set", "x", "--role", "king"],
             ["golden-set", "queue", G, "--order", "sideways"],
             ["golden-set", "queue", G, "--order", "active", "--rubric", R, "--judge", "careful-sonnet",
              "--expected-labels", "-5"],
             ["golden-set", "queue", G, "--order", "active", "--rubric", R, "--judge", "careful-sonnet",
              "--expected-labels", "0"],
             ["golden-set", "queue", G, "--order", "active", "--rubric", R, "--judge", "nope"],
             ["board", "show", "nope", "--seed", "-5"], ["board", "compare", "a", "b", "--pair", "x"], ["refine-decide", "99999", "--accept", "--lead", "x"]):
    case("options-" + "-".join(a.strip("-./{}") for a in args if a)[:60], args)

# issue 49 item 5: a cascade naming one judge twice; a stream name that is no name, or no stream
SELECTIVE = ["--selective", "--target-agreement", "0.8", "--risk", "0.1"]
for cmd in ("calibrate", "export"):  # export names the cascade's first judge with --judge
    first = lambda j: ["-j", j] if cmd == "export" else []  # noqa: E731
    case(f"options-{cmd}-cascade-twice", [cmd, "-g", G, "-r", R, *first("careful-sonnet"), *SELECTIVE, "--cascade",
                                          "careful-sonnet,careful-sonnet"],
         needle="--cascade names judge 'careful-sonnet' twice")
    case(f"options-{cmd}-cascade-twice-of-three", [cmd, "-g", G, "-r", R, *first("a"), *SELECTIVE, "--cascade",
                                                   "a,b,a"], needle="--cascade names judge 'a' twice")
for cmd, extra in (("report", []), ("promote", ["--golden-set", "x"]), ("prune", ["--keep-days", "3"])):
    case(f"options-monitor-{cmd}-stream-traversal", ["monitor", cmd, "--stream", "../x", *extra], needle="stream")
    case(f"options-monitor-{cmd}-stream-unknown", ["monitor", cmd, "--stream", "no-such-stream", *extra],
         needle="no-such-stream")
case("options-monitor-ingest-stream-traversal", ["monitor", "ingest", "--stream", "../x", "--bundle", "{ws}/" + BUNDLE,
                                                 "--from", "jsonl", "{in}/t.jsonl"],
     {"in/t.jsonl": jl({"id": "t1", "timestamp": "2026-11-20T09:00:00Z", "input": "q", "output": "a"})},
     needle="stream name")

# --------------------------------------------------------------------------- imports from other tools

SOURCES = ("inspect", "promptfoo", "deepeval", "mlflow", "langfuse", "phoenix")


def source(id: str, src: str, uri: str, files: dict | None = None, **kw) -> None:
    case(f"from-{src}-{id}", ["import", "--from", src, uri, "-g", "sweep-set", "-r", R], files, **kw)


for src in SOURCES:
    ext = ".eval" if src == "inspect" else ".json"
    source("missing-path", src, "/tmp/nope-sweep/results" + ext)
    source("empty-folder", src, "{in}/empty-folder", {"in/empty-folder/.keep": ""})
    source("wrong-file-type", src, "{in}/results" + ext, {"in/results" + ext: b"\x89PNG\r\n\x1a\n\x00\x00\x00\x00"})
    source("truncated-json", src, "{in}/results" + ext, {"in/results" + ext: '{"results": {"results": [{"a": '})
    source("empty-file", src, "{in}/results" + ext, {"in/results" + ext: ""})
    source("json-number", src, "{in}/results" + ext, {"in/results" + ext: "42"})
    source("json-empty-list", src, "{in}/results" + ext, {"in/results" + ext: "[]"})
    case(f"from-{src}-empty-workspace-missing-path", ["import", "--from", src, "/tmp/nope/mlruns", "-g", "g", "-r",
                                                      "r"], workspace="empty")
SHAPES = {  # JSON that parses but is not the tool's export, or rows of the wrong shape
    "promptfoo": {"no-results": {}, "results-not-list": {"results": {}},
                  "rows-not-objects": {"results": {"results": [1, "x", None, {}]}},
                  "row-wrong-types": {"results": {"results": [{"vars": 5, "response": 7}]}},
                  "grading-not-objects": {"results": {"results": [{"testCase": {"assert": [{"type": "llm-rubric"}]},
                                                                   "gradingResult": {"componentResults": [1]}}]}}},
    "deepeval": {"no-test-cases": {}, "case-not-object": {"testCases": [1]}, "case-empty": {"testCases": [{}]},
                 "case-wrong-types": {"testCases": [{"input": 5, "metricsData": [1, {}]}]},
                 "cases-not-list": {"testCases": {}}},
    "langfuse": {"score-not-object": {"data": [1]}, "score-empty": {"data": [{}]},
                 "score-wrong-types": {"data": [{"traceId": 5, "value": "x", "name": None}]}},
    "phoenix": {"annotation-not-object": {"data": [1]}, "annotation-empty": {"data": [{}]},
                "records-wrong-types": [{"span_id": 1}], "result-number": {"data": [{"result": 5}]}},
    "mlflow": {"trace-empty": [{}], "trace-number": [1], "traces-key-empty": {"traces": [{}]},
               "trace-without-fields": {"traces": [{"info": {}, "data": {}}]}},
    "inspect": {"empty-object": {}, "eval-empty": {"eval": {}},
                "header-only": {"version": 2, "status": "success", "eval": {"task": "t"}}},
}
for src, shapes in SHAPES.items():
    for id, doc in shapes.items():
        source(f"shape-{id}", src, "{in}/export.json", {"in/export.json": json.dumps(doc)})
# Issue 49: files a tool wrote wrong, each refused by the one validation layer (features/interop/shapes.py) with
# the file, the record, the field, what was found and what is allowed.
PROMPTFOO_ROW = {"testIdx": 0, "promptIdx": 0, "testCase": {"assert": [{"type": "llm-rubric", "value": "v"}]},
                 "prompt": {"raw": "Add 2 and 2", "label": "p"}, "provider": {"id": "openai:gpt-4o-mini"},
                 "response": {"output": "4"}, "gradingResult": {"pass": True, "score": 1.0, "componentResults": [
                     {"pass": True, "score": 1.0, "reason": "ok", "assertion": {"type": "llm-rubric", "value": "v"}}]}}
DEEPEVAL_CASE = {"name": "sum", "input": "Add 2 and 2", "actualOutput": "4", "metricsData": [
    {"name": "Correctness", "score": 1.0, "threshold": 0.5, "success": True, "evaluationModel": "gpt-4o"}]}


def _mutated(doc: dict, path: tuple, value) -> dict:
    doc = json.loads(json.dumps(doc))
    at = doc
    for key in path[:-1]:
        at = at[key]
    if path[-1] == "+":
        at.append(value)
    else:
        at[path[-1]] = value
    return doc


COMPONENT = ("gradingResult", "componentResults")
for id, path, value, needle in (
        ("testcase-string", ("testCase",), "t", "field testCase: found the string \"t\", expected an object"),
        ("prompt-list", ("prompt",), ["p"], "field prompt: found a list"),
        ("component-integer", (*COMPONENT, "+"), 7, "field gradingResult.componentResults[1]: found 7"),
        ("provider-number", ("provider",), 5, "field provider: found 5, expected an object or a string"),
        ("assertion-string", (*COMPONENT, 0, "assertion"), "llm-rubric",
         "field gradingResult.componentResults[0].assertion: found the string"),
        ("grading-list", ("gradingResult",), [1], "field gradingResult: found a list"),
        ("score-42", (*COMPONENT, 0, "score"), 42, "field gradingResult.componentResults[0].score: found 42, expected a number from 0 to 1"),
        ("score-negative", (*COMPONENT, 0, "score"), -0.5, "field gradingResult.componentResults[0].score: found -0.5, expected a number from 0 to 1"),
        ("score-1.5", (*COMPONENT, 0, "score"), 1.5, "field gradingResult.componentResults[0].score: found 1.5, expected a number from 0 to 1")):
    doc = {"results": {"results": [_mutated(PROMPTFOO_ROW, path, value)]}}
    source(f"promptfoo-{id}", "promptfoo", "{in}/results.json", {"in/results.json": json.dumps(doc)},
           needle="promptfoo results.json record 1: " + needle)
for id, value, needle in (("evaluation-model-number", {"evaluationModel": 5}, "evaluationModel: found 5"),
                          ("score-minus-5", {"score": -5}, "score: found -5, expected a number from 0 to 1"),
                          ("score-3", {"score": 3}, "score: found 3"), ("score-1.2", {"score": 1.2}, "score: found 1.2")):
    doc = {"testCases": [{**DEEPEVAL_CASE, "metricsData": [{**DEEPEVAL_CASE["metricsData"][0], **value}]}]}
    source(f"deepeval-{id}", "deepeval", "{in}/test_run_1.json", {"in/test_run_1.json": json.dumps(doc)},
           needle="deepeval test_run_1.json record 1: field metricsData[0]." + needle)
# the unmutated records fit their shapes and import: what refuses the mutations is the shape, not the record
case("from-promptfoo-well-formed", ["import", "--from", "promptfoo", "{in}/results.json", "-g", "sweep-set", "-r", R,
                                    "--map", "{in}/map.yaml"],
     {"in/results.json": json.dumps({"results": {"results": [PROMPTFOO_ROW]}}),
      "in/map.yaml": "llm-rubric: {cut_points: [0.5], levels: [-1, 0]}\n"}, accepted=True)
source("deepeval-well-formed", "deepeval", "{in}/test_run_1.json",
       {"in/test_run_1.json": json.dumps({"testCases": [DEEPEVAL_CASE]})}, accepted=True)
source("unknown-source", "excel", "{in}/x.json", {"in/x.json": "{}"}, needle="--from excel: there is no import adapter")
source("unknown-source-typo", "promptfo", "{in}/x.json", {"in/x.json": "{}"}, needle="did you mean promptfoo?")
case("labels-rubric-typo", ["import", "labels", "--new-raters", "{in}/l.jsonl", "-g", G, "-r", "demo-patch-qualty"],
     {"in/l.jsonl": jl({"item_id": "x", "rater": "a@example.com", "score": 0})},
     needle="no rubric 'demo-patch-qualty' (rubrics: demo-patch-quality); did you mean demo-patch-quality?")
case("judgments-judge-typo", ["import", "judgments", "{in}/j.jsonl", "-g", G, "-r", R, "-j", "lenient-min"],
     {"in/j.jsonl": jl({"item_id": "x", "score": 0})}, needle="no judge 'lenient-min' (declared: ")
case("judgments-judge-typo-nearest", ["import", "judgments", "{in}/j.jsonl", "-g", G, "-r", R, "-j", "lenient-min"],
     {"in/j.jsonl": jl({"item_id": "x", "score": 0})}, needle="did you mean lenient-mini?")
case("refine-optimizer-provider-typo", ["refine", "-g", G, "-r", R, "-j", J, "--optimizer", "opnai/gpt-4o",
                                        "--dry-run"], needle="unknown judge provider 'opnai/' in 'opnai/gpt-4o'; "
     "did you mean openai/gpt-4o?")
case("refine-optimizer-not-chat", ["refine", "-g", G, "-r", R, "-j", J, "--optimizer", "python/m:f", "--dry-run"],
     needle="must be a chat model of a registered provider")
source("uri-without-experiment", "mlflow", "sqlite:///{in}/mlflow.db")
source("tracking-store-missing", "mlflow", "sqlite:///{ws}/mlflow.db#experiment=qa")
source("relative-file-store", "mlflow", "mlruns#experiment=qa")
source("http-store-unreachable", "mlflow", "http://127.0.0.1:9#experiment=qa")
case("from-promptfoo-rubric-unknown", ["import", "--from", "promptfoo", "{in}/x.json", "-g", "s", "-r", "nope"],
     {"in/x.json": "{}"})
case("from-promptfoo-golden-set-traversal", ["import", "--from", "promptfoo", "{in}/x.json", "-g", "../../x", "-r", R],
     {"in/x.json": "{}"})
for id, text in (("unknown-key", "correctness:\n  catgorical: {C: 1}\n"), ("off-scale", "c:\n  categorical: {C: 7}\n"),
                 ("alias", "c: &a\n  categorical: {C: 1}\nd: *a\n"), ("latin-1", "c: caf\xe9\n".encode("latin-1")),
                 ("binary", b"\x00\x01"), ("not-a-mapping", "- c\n"), ("huge", "c: " + "x" * (2 * MiB) + "\n"),
                 ("json-nan", None)):
    name = "map.json" if id == "json-nan" else "map.yaml"
    body = '{"c": {"cut_points": [NaN, 0.5]}}' if id == "json-nan" else text
    case(f"from-promptfoo-map-{id}", ["import", "--from", "promptfoo", "{in}/x.json", "-g", "s", "-r", R, "--map",
                                      "{in}/" + name], {"in/x.json": "{}", "in/" + name: body})

# --------------------------------------------------------------------------- a workspace with no database yet

for args, files in (
        (["import", "items", "{in}/i.jsonl", "-g", "g"], {"in/i.jsonl": "{broken\n"}),
        (["import", "items", "{in}/i.jsonl", "-g", "../x"], {"in/i.jsonl": jl(ITEM)}),
        (["import", "items", "{in}/nope.jsonl", "-g", "g"], {}),
        (["import", "labels", "--new-raters", "{in}/l.jsonl", "-g", "g", "-r", "r"], {"in/l.jsonl": jl(LABEL)}),
        (["import", "judgments", "{in}/j.jsonl", "-g", "g", "-r", "r", "-j", "j"], {"in/j.jsonl": jl(JUDGMENT)}),
        (["import", "adjudications", "{in}/a.jsonl", "-g", "g", "-r", "r"], {"in/a.jsonl": jl(JUDGMENT)}),
        (["rater", "set", "../x", "--role", "lead"], {}),
        (["calibrate", "-g", "g", "-r", "r", "-j", "j"], {}),
        (["golden-set", "list"], {}),
        (["import", "--from", "mlflow", "sqlite:///{in}/mlflow.db#experiment=qa", "-g", "g", "-r", "r"], {}),
):
    case("empty-workspace-" + "-".join(a.strip("-./{}") for a in args[:3]).replace("/", "-"), args, files,
         workspace="empty")


case("empty-workspace-demo-with-a-bad-policy", ["demo", "--no-ui"], {"ws/rubrics/policy.yaml": "min_tpr_lowr: 0.5\n"},
     workspace="empty", needle="did you mean min_tpr_lower")

# --------------------------------------------------------------------------- board run files

RUN = {"id": "run-0", "task_id": "t0", "category": "web", "repeat": 0, "input": "task", "output": "answer",
       "producer": {"model": "model-a", "family": "openai"}}


def board(id: str, body: str | bytes | None, extra: list[str] | None = None, needle: str | None = None,
          bundle: str = "{ws}/" + BUNDLE) -> None:
    files = {"in/runs.jsonl": body} if body is not None else {}
    case(f"board-grade-{id}", ["board", "grade", "{in}/runs.jsonl", "--bundle", bundle, "--name", "wk",
                               *(extra or [])], files, needle=needle)


def run(**changes) -> str:
    return jl({k: v for k, v in {**RUN, "id": "run-1", "repeat": 1, **changes}.items() if v is not None})


board("malformed-json", jl(RUN) + '{"id": "run-1",\n', needle="runs.jsonl line 2")
board("repeat-negative", jl(RUN) + run(repeat=-1), needle="repeat")
board("repeat-text", jl(RUN) + run(repeat="again"), needle="repeat")
board("repeat-beyond-64-bits", jl(RUN) + run(repeat=10**20), needle="too large")
board("task-id-missing", jl(RUN) + run(task_id=None), needle="task_id")
board("producer-missing", jl(RUN) + run(producer=None), needle="producer")
board("unknown-field", jl(RUN) + run(modle="x"), needle="unknown field")
board("same-repeat-twice", jl(RUN) + run(repeat=0), needle="twice")
board("category-changes", jl(RUN) + run(category="sql"), needle="category")
board("category-html-control", jl(RUN) + run(category="<b>\x1b[31m</b>"), needle="control character")
board("empty-file", "", needle="empty")
board("missing-file", None)
board("name-traversal", jl(RUN), ["--name", "../../wk"])
board("judge-repeats-zero", jl(RUN), ["--judge-repeats", "0"], needle="--judge-repeats")
board("judge-repeats-huge", jl(RUN), ["--judge-repeats", "100000000"], needle="--judge-repeats")
board("budget-negative", jl(RUN), ["--budget", "-1"], needle="--budget")
board("bundle-not-yaml", jl(RUN), bundle="{in}/runs.jsonl")
board("bundle-missing", jl(RUN), bundle="{in}/nope.yaml")


# --------------------------------------------------------------------------- files that never end

for id, args in (("rubric-add", ["rubric", "add", "/dev/zero"]), ("import-items", ["import", "items", "/dev/zero", "-g", "s"]),
                 ("import-labels", ["import", "labels", "--new-raters", "/dev/urandom", "-g", G, "-r", R]),
                 ("grade-bundle", ["grade", "--bundle", "/dev/zero", "--items", "/dev/zero"]),
                 ("import-map", ["import", "--from", "promptfoo", "{in}/x.json", "-g", "s", "-r", R, "--map", "/dev/zero"]),
                 ("check", ["check", "/dev/zero"])):
    case(f"device-{id}", args, {"in/x.json": "{}"}, prefixes=CHECK_PREFIXES, needle="not a regular file")


# --------------------------------------------------------------------------- the database file itself (--db)

for id, content in (("text-file", "hello\n"), ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
                    ("truncated-sqlite", "TRUNCATED_DB")):
    for args in (["golden-set", "list"], ["import", "items", "{in}/i.jsonl", "-g", "g"], ["rubric", "list"]):
        case(f"db-{id}-{args[0]}-{args[1]}", args, {"ws/workbench.db": content, "in/i.jsonl": jl(ITEM)},
             workspace="empty")
case("db-another-applications-sqlite", ["golden-set", "list"], {"ws/workbench.db": "FOREIGN_DB"}, workspace="empty")
# (finding F2, fixed in the store: another application's SQLite file was migrated into)


# --------------------------------------------------------------------------- running the cases


def _same_bytes(db: Path, template: Path) -> bool:
    """The case's database file is the template's byte for byte, and no write-ahead log holds more."""
    wal = db.with_name(db.name + "-wal")
    return (db.exists() and not (wal.exists() and wal.stat().st_size) and db.stat().st_size == template.stat().st_size
            and db.read_bytes() == template.read_bytes())


def listing(root: Path) -> set[str]:
    """Every file and folder under the workspace; the open database's -wal/-shm files are its own."""
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if not (p.name.endswith(("-wal", "-shm")) and p.name.startswith("workbench.db"))}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A demo workspace (database, files and one approved bundle), built once per worker."""
    from workbench.calibration.calibrate import Options
    from workbench.features.export.bundle import export_bundle
    from workbench.store import Store
    from workbench.core.workspace import Workspace

    root = tmp_path_factory.mktemp("sweep") / "ws"
    root.mkdir()
    r = Cli(root / "workbench.db")("demo", "--no-ui")
    assert r.exit_code == 0, r.output
    gc.collect()  # the command's own store connection: closed now, not at some later collection
    with Store(root / "workbench.db") as s:
        export_bundle(s, G, R, "careful-sonnet", out_dir=root / "rubrics" / "approved",
                      options=Options(resamples=200), workspace=Workspace(root, root / "workbench.db"))
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert (root / BUNDLE).exists()
    (root / "reports").mkdir()  # as after a first grade; 'refused-leaves-no-reports-folder' runs without it
    return root


@pytest.fixture(scope="module")
def template_db(template: Path) -> str:
    return db_content(template / "workbench.db")


def _materialize(c: Case, ws: Path, inputs: Path) -> None:
    for where, content in c.files.items():
        base, _, rel = where.partition("/")
        path = (ws if base == "ws" else inputs) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if content in ("TRUNCATED_DB", "FOREIGN_DB"):  # a real SQLite database: cut short, or whole
            content = _sqlite_head(whole=content == "FOREIGN_DB")
        if isinstance(content, str) and content.startswith("BUNDLE:"):
            text = (ws / BUNDLE).read_text()
            edit = content.split(":", 1)[1]
            content = {"truncate": text[: len(text) // 2],
                       "edit": text.replace("pass_threshold: 0", "pass_threshold: -1", 1),
                       "anchor": text.replace("schema: workbench.bundle/1", "schema: &s workbench.bundle/1\nx: *s",
                                              1)}[edit]
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _sqlite_head(*, whole: bool = False) -> bytes:
    """Another application's SQLite database (a table 't'); cut short unless ``whole``: 'malformed'."""
    folder = Path(tempfile.mkdtemp(prefix="sweep-db-"))
    conn = sqlite3.connect(folder / "x.db")
    conn.execute("CREATE TABLE t (a TEXT)")
    conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    conn.commit()
    conn.close()
    data = (folder / "x.db").read_bytes()
    shutil.rmtree(folder)
    return data if whole else data[:5000]


def _args(c: Case, ws: Path, inputs: Path) -> list[str]:
    return [a.replace("{in}", str(inputs)).replace("{ws}", str(ws)) for a in c.args]


def _params():
    for c in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else []
        yield pytest.param(c, id=c.id, marks=marks)


@pytest.mark.parametrize("c", list(_params()))
def test_bad_input(c: Case, template: Path, template_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    if c.workspace == "empty":
        ws.mkdir()
    else:
        # everything is checkpointed into the database file: an open connection's -wal/-shm hold nothing more
        shutil.copytree(template, ws, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
        if c.workspace == "demo-no-reports":
            shutil.rmtree(ws / "reports", ignore_errors=True)
    inputs = tmp_path / "in"
    inputs.mkdir()
    _materialize(c, ws, inputs)
    for key, value in {**SECRETS, **NO_NETWORK}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("WORKBENCH_DEBUG", raising=False)
    monkeypatch.chdir(ws)
    systmp = tmp_path / "systmp"  # where imports stage their items: nothing may be left there either
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    db = ws / "workbench.db"
    before_db, before_files = template_db if c.workspace != "empty" else db_content(db), listing(ws)

    r = Cli(db)(*_args(c, ws, inputs))

    out = r.stdout + r.stderr
    assert "Traceback" not in out, out
    for secret in SECRETS.values():
        assert secret not in out
    if c.accepted:
        assert r.exit_code == 0, out
        return
    assert r.exit_code != 0, f"accepted: {out[-500:]}"
    assert r.exit_code != 0 and r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
    assert last.startswith(c.prefixes), r.stderr
    assert "unexpected" not in last and "Traceback" not in r.stderr, last
    earlier = r.stderr.strip().splitlines()[:-1]  # click's usage lines, or a progress label
    assert all(not line.startswith(c.prefixes) for line in earlier), r.stderr
    if c.needle is not None:
        assert c.needle in last, last
    if c.workspace == "empty" or not _same_bytes(db, template / "workbench.db"):  # the same bytes: the same rows
        assert db_content(db) == before_db, "the database changed"
    assert listing(ws) == before_files, f"left behind: {sorted(listing(ws) ^ before_files)}"
    assert listing(systmp) == set(), f"left in the temporary folder: {sorted(listing(systmp))}"


def test_the_sweep_is_big_enough() -> None:
    assert len(CASES) >= 250, len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)


def test_a_records_file_over_its_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """The 1 GiB limit of items, labels and judgments files, shown with a limit small enough to write."""
    from workbench.core import inputs

    monkeypatch.setitem(inputs.LIMITS, "records", 1024)
    f = tmp_path / "in" / "items.jsonl"
    f.parent.mkdir()
    f.write_text(jl(*({"id": f"a{n}", "input": "t", "output": "o"} for n in range(40))))
    r = Cli(tmp_path / "ws" / "workbench.db")("import", "items", f, "-g", "g")
    assert r.exit_code == 1 and "records files are limited to 1 KiB" in r.stderr, r.stderr
    assert not (tmp_path / "ws").exists()  # nothing stored, no database, not even its folder
