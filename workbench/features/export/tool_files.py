"""Send an approved judge back to the team's own tool: promptfoo, Inspect AI or MLflow.

From a verified bundle this writes the judge in the tool's own terms, with the
approved model (pinned to the model version calibration saw, when it saw one),
temperature and prompt, and a trace of the evidence (the bundle's sha256, the
rubric hash, the golden-set version): a promptfoo `llm-rubric` assertion config
(YAML), an Inspect AI `@scorer` module, and an MLflow `make_judge` judge in
MLflow's own serialized-scorer JSON. The output depends on the bundle alone, so
`workbench check` can write it again and compare.

The prompt is the one the judge was calibrated with (`judges.prompting`): the
rubric's system prompt and the item inside the tagged data block, with the
reply asked for as JSON in the text (no tool call) and, for promptfoo, the
rubric's levels mapped onto llm-rubric's 0-1 score. A Python grader or an
agentic judge is refused: none of the three tools would run the judge that was
calibrated.
"""

from __future__ import annotations

import json
import pprint
import string
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from workbench import __version__
from workbench.core.errors import WorkbenchError
from workbench.core.hashing import sha256_hex
from workbench.judges.prompting import DEFAULT_MAX_TOKENS, system_prompt, wrap_item
from workbench.core.models import JudgeSpec, Rubric, parse_model
from workbench.core.names import safe_path
from workbench.judges.rubrics import rubric_from_dict
from workbench.features.export.bundle import write_atomic
from workbench.features.export.records import Bundle, BundleGoldenSet

TARGETS = ("promptfoo", "inspect", "mlflow")
SUFFIX = {"promptfoo": ".promptfoo.yaml", "inspect": "_inspect_scorer.py", "mlflow": ".mlflow-judge.json"}
TOOL_PREFIX = {  # how each tool spells our providers' models
    "promptfoo": {"anthropic": "anthropic:messages:", "openai": "openai:chat:", "openai-api": "openai:chat:"},
    "inspect": {"anthropic": "anthropic/", "openai": "openai/", "openai-api": "openai-api/{service}/"},
    # MLflow's openai provider calls the server in OPENAI_BASE_URL with OPENAI_API_KEY: an OpenAI-compatible
    # server's judge is exported as openai:/<model>, the two variables set from the service's (see render_mlflow)
    "mlflow": {"anthropic": "anthropic:/", "openai": "openai:/", "openai-api": "openai:/"},
}
MLFLOW_SERIALIZATION_VERSION = 1  # the SerializedScorer layout checked against mlflow 3.18 (tests load it)


class ExportRefused(WorkbenchError):
    """The approved judge cannot be expressed in the requested tool."""


@dataclass(frozen=True)
class ApprovedJudge:
    """What an exported judge must reproduce, read once from a verified bundle."""

    bundle_file: str
    bundle_sha256: str
    rubric: Rubric
    rubric_version: int
    rubric_hash: str
    spec: JudgeSpec
    config_hash: str
    golden_set: BundleGoldenSet
    model_versions: tuple[str, ...]  # as the API reported them during calibration

    @classmethod
    def from_bundle(cls, bundle: Bundle, bundle_file: str) -> "ApprovedJudge":
        return cls(bundle_file=bundle_file, bundle_sha256=bundle.sha256,
                   rubric=rubric_from_dict(bundle.rubric.content), rubric_version=bundle.rubric.version,
                   rubric_hash=bundle.rubric.hash, spec=JudgeSpec(**bundle.judge.config),
                   config_hash=bundle.judge.config_hash, golden_set=bundle.golden_set,
                   model_versions=tuple(bundle.calibration.run.model_versions or ()))

    @property
    def pinned_version(self) -> str | None:
        """The model version to ask for: the one calibration saw, when it saw exactly one."""
        return self.model_versions[0] if len(self.model_versions) == 1 else None

    @property
    def data_tag(self) -> str:
        # A per-request random tag cannot be written into a static config; one derived from the bundle is fixed
        # for this export and unknown to whoever wrote the items.
        return self.bundle_sha256[:32]

    def trace(self, target: str, prompt_sha256: str) -> dict[str, Any]:
        """The evidence an exported judge carries, so a run can be traced to it.

        Hashes are written `sha256:<hex>`: promptfoo redacts a bare 64-character token from results as a
        likely secret, which would cut the trace exactly where it is needed.
        """
        return {"exported_by": f"judge-workbench {__version__}", "target": target, "bundle": self.bundle_file,
                "bundle_sha256": tagged(self.bundle_sha256),
                "rubric": {"name": self.rubric.name, "version": self.rubric_version, "hash": tagged(self.rubric_hash)},
                "judge": {"id": self.spec.id, "model": self.spec.model, "config_hash": tagged(self.config_hash)},
                "model_version": self.pinned_version, "model_versions_calibrated": list(self.model_versions),
                "golden_set": {**self.golden_set.to_json(), "version_hash": tagged(self.golden_set.version_hash)},
                "prompt_sha256": tagged(prompt_sha256)}


def tagged(hex_digest: str) -> str:
    return f"sha256:{hex_digest}"


def untagged(value: Any) -> Any:
    """A hash as the trace wrote it, back to plain hex (anything else as it is)."""
    return value.removeprefix("sha256:") if isinstance(value, str) else value


def tool_model(aj: ApprovedJudge, target: str) -> str:
    """The approved model in the tool's spelling, pinned to the calibrated version when there is one."""
    name = parse_model(aj.spec.model)
    prefix = TOOL_PREFIX[target].get(name.provider)
    if prefix is None:
        others = [t for t in TARGETS if name.provider in TOOL_PREFIX[t]]
        raise ExportRefused(f"judge '{aj.spec.id}' uses {aj.spec.model}, which {target} cannot call as this workbench "
                            "does; " + (f"export it to {' or '.join(others)} instead." if others else
                                        f"only judges of {', '.join(p + '/' for p in TOOL_PREFIX['inspect'])} models "
                                        "can be exported."))
    return prefix.format(service=name.service) + (aj.pinned_version or name.model)


def _refuse_unexportable(aj: ApprovedJudge, target: str) -> None:
    if aj.spec.provider == "python":
        raise ExportRefused(f"judge '{aj.spec.id}' is a Python grader ({aj.spec.model}), not a model: {target} "
                            "cannot run it as an LLM judge; call the grader from your pipeline instead.")
    if aj.spec.mode == "agentic":
        raise ExportRefused(f"judge '{aj.spec.id}' is agentic (it explores trajectories with the workbench's tools), "
                            f"and {target} would grade in one call, so the exported judge would not be the one "
                            "calibrated; calibrate a single-mode judge of the rubric and export that one.")


def _levels(rubric: Rubric) -> str:
    return ", ".join(str(v) for v in rubric.scale.values)


def _normalized(rubric: Rubric, value: int) -> float:
    """A level on llm-rubric's 0-1 score: lowest level 0, highest 1."""
    lo, hi = rubric.scale.values[0], rubric.scale.values[-1]
    return round((value - lo) / (hi - lo), 4)


def carried_scale(rubric: Rubric, values: list[float]) -> dict[str, Any]:
    """The import map an exported judge's results carry (`workbench import` reads it when no --map is given):
    the tool's value of each level (``values``, lowest level first) cut halfway to the next, onto the levels."""
    return {"cut_points": [round((a + b) / 2, 4) for a, b in zip(values, values[1:])],
            "levels": list(rubric.scale.values), "range": [values[0], values[-1]]}


def _reply_json(rubric: Rubric) -> str:
    return ("\n\n## Reply format\nReply with only a JSON object and no other text: "
            '{"rationale": "<why, by the criteria; cite step numbers>", "evidence_steps": [<step numbers>], '
            f'"score": <one of {_levels(rubric)}>}}.')


def _reply_promptfoo(rubric: Rubric) -> str:
    mapping = ", ".join(f"{v} -> {_normalized(rubric, v)}" for v in rubric.scale.values)
    return ("\n\n## Reply format\nReply with only a JSON object and no other text: "
            f'{{"reason": "<your rationale>", "level": <your score, one of {_levels(rubric)}>, '
            f'"score": <the level mapped as {mapping}>, '
            f'"pass": <true when the level is {rubric.pass_threshold} or higher, else false>}}.')


def _item_template(aj: ApprovedJudge, task: str, output: str, reference: str | None) -> str:
    out = ["## Task given to the AI system", task, "", "## Final output", output]
    if aj.spec.see_reference and reference:
        out += ["", "## Reference (you may use it to grade)", reference]
    return wrap_item("\n".join(out), aj.data_tag)


# --------------------------------------------------------------------------- the three writers

def render_inspect(aj: ApprovedJudge) -> str:
    system = system_prompt(aj.rubric, aj.spec) + _reply_json(aj.rubric)
    user = wrap_item("{item}", aj.data_tag)
    prompt_sha = sha256_hex({"system": system, "user": user})
    template = string.Template(resources.files("workbench").joinpath("templates/inspect_scorer.py.tmpl")
                               .read_text(encoding="utf-8"))
    lit = lambda v: pprint.pformat(v, width=110, sort_dicts=True)  # noqa: E731 - Python literals for the module
    return template.substitute(
        judge_id=aj.spec.id, rubric_name=aj.rubric.name, rubric_version=aj.rubric_version,
        bundle_file=aj.bundle_file, bundle_sha256=aj.bundle_sha256, golden_set=aj.golden_set.name,
        golden_set_version=aj.golden_set.version, golden_set_hash=aj.golden_set.version_hash,
        module_name=export_file_name(aj, "inspect").removesuffix(".py"),
        scale_text=", ".join(f"{lv.value} {lv.label}" for lv in aj.rubric.scale.levels),
        workbench=lit(aj.trace("inspect", prompt_sha)), model=lit(tool_model(aj, "inspect")),
        temperature=lit(aj.spec.temperature), max_tokens=lit(aj.spec.max_tokens or DEFAULT_MAX_TOKENS),
        see_reference=lit(aj.spec.see_reference), scale=lit({lv.value: lv.label for lv in aj.rubric.scale.levels}),
        pass_threshold=lit(aj.rubric.pass_threshold), system_prompt=lit(system), user_template=lit(user),
        data_tag=lit(aj.data_tag), workbench_scale=lit({"name": aj.rubric.name, "import_map": carried_scale(
            aj.rubric, list(aj.rubric.scale.values))}))


@dataclass(frozen=True, slots=True)
class PromptfooJudge:
    """The parts of a promptfoo config that grade: the llm-rubric assertion, its grader and its grading prompt."""

    assertion: dict[str, Any]
    provider: dict[str, Any]
    rubric_prompt: list[dict[str, str]]

    @property
    def prompt_sha256(self) -> str:
        return promptfoo_prompt_sha256(self.assertion, self.rubric_prompt)


def promptfoo_judge_parts(aj: ApprovedJudge) -> PromptfooJudge:
    """The assertion, the grader provider and the grading prompt of the promptfoo config."""
    rubric_text = system_prompt(aj.rubric, aj.spec)
    if any(mark in rubric_text for mark in ("{{", "{%", "{#")):  # promptfoo renders the value with Nunjucks
        rubric_text = "{% raw %}" + rubric_text + "{% endraw %}"
    reference = "{{ reference }}" if aj.spec.see_reference else None
    rubric_prompt = [
        {"role": "system", "content": "{{ rubric }}" + _reply_promptfoo(aj.rubric)},
        {"role": "user", "content": _item_template(
            aj, "{% if task %}{{ task }}{% else %}(not given: set the test variable 'task'){% endif %}",
            "{{ output }}", reference)},
    ]
    config: dict[str, Any] = {"max_tokens": aj.spec.max_tokens or DEFAULT_MAX_TOKENS}
    if aj.spec.temperature is not None:
        config["temperature"] = aj.spec.temperature
    name = parse_model(aj.spec.model)
    if name.provider == "openai-api":  # the same server and key variables the workbench reads
        from workbench.judges.providers.openai import service_env  # no SDK import: the provider imports it when created

        base_url, api_key = service_env(name.service)
        config.update(apiBaseUrl=f"{{{{ env.{base_url} }}}}", apiKeyEnvar=api_key)
    assertion = {"type": "llm-rubric", "metric": aj.rubric.name, "value": rubric_text,
                 "threshold": _normalized(aj.rubric, aj.rubric.pass_threshold)}
    return PromptfooJudge(assertion, {"id": tool_model(aj, "promptfoo"), "config": config}, rubric_prompt)


def promptfoo_prompt_sha256(assertion: dict, rubric_prompt: Any) -> str:
    return sha256_hex({"value": assertion.get("value"), "threshold": assertion.get("threshold"),
                       "rubricPrompt": rubric_prompt})


class _BlockDumper(yaml.SafeDumper):
    """Multi-line prompts as literal blocks, so a reviewer reads them as written."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_BlockDumper.add_representer(str, lambda dumper, s: dumper.represent_scalar(
    "tag:yaml.org,2002:str", s, style="|" if "\n" in s else None))


def render_promptfoo(aj: ApprovedJudge) -> str:
    parts = promptfoo_judge_parts(aj)
    trace = aj.trace("promptfoo", parts.prompt_sha256)
    config = {
        "description": f"Approved judge {aj.spec.id} for rubric {aj.rubric.name} v{aj.rubric_version} "
                       f"(Judge Workbench bundle {aj.bundle_sha256[:16]})",
        "prompts": ["{{task}}"],
        "defaultTest": {
            "options": {"provider": parts.provider, "rubricPrompt": parts.rubric_prompt},
            "assert": [parts.assertion],
            # on every test's result: a run traces back to the evidence, and its scores import back without a map
            "metadata": {"workbench": trace, "workbench_scale": {"name": aj.rubric.name, "import_map": carried_scale(
                aj.rubric, [_normalized(aj.rubric, v) for v in aj.rubric.scale.values])}},
        },
    }
    head = (f"# Written by `workbench export --to promptfoo` from {aj.bundle_file}; do not edit the judge.\n"
            "# Add your providers and tests (each with a `task` variable: the task given to the system graded);\n"
            "# `workbench check BUNDLE --judge-config THIS_FILE` fails when the grader, its temperature or the\n"
            "# rubric prompt differ from the approved judge.\n")
    return head + yaml.dump(config, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=120)


def mlflow_instructions(aj: ApprovedJudge) -> str:
    """make_judge's instructions; MLflow keeps them in each feedback's metadata (``guideline``), where the closing
    sentence naming the levels tells `workbench import --from mlflow` the scale (no --map needed)."""
    reference = "{{ expectations }}" if aj.spec.see_reference else None
    return (system_prompt(aj.rubric, aj.spec) + "\n\n## The item\n"
            + _item_template(aj, "{{ inputs }}", "{{ outputs }}", reference)
            + f"\n\nThe value of your feedback is the score, one of {_levels(aj.rubric)}; the rationale is your "
              "reasoning by the rubric's criteria.")


def mlflow_judge(aj: ApprovedJudge) -> dict[str, Any]:
    """The judge in MLflow's serialized-scorer layout (what `Scorer.model_validate` reads)."""
    model = tool_model(aj, "mlflow")  # an OpenAI-compatible server's model as openai:/ (its URL from the environment)
    params: dict[str, Any] = {"max_tokens": aj.spec.max_tokens or DEFAULT_MAX_TOKENS}
    if aj.spec.temperature is not None:
        params["temperature"] = aj.spec.temperature
    values = list(aj.rubric.scale.values)
    return {
        "name": f"{aj.rubric.name}--{aj.spec.id}",
        "description": f"Approved by Judge Workbench: rubric {aj.rubric.name} v{aj.rubric_version} "
                       f"(hash {aj.rubric_hash}), bundle sha256 {aj.bundle_sha256}, golden set "
                       f"{aj.golden_set.name} version {aj.golden_set.version} ({aj.golden_set.version_hash}).",
        "aggregations": [], "is_session_level_scorer": False, "mlflow_version": "3.18.0",
        "serialization_version": MLFLOW_SERIALIZATION_VERSION,
        "builtin_scorer_class": None, "builtin_scorer_pydantic_data": None, "call_source": None,
        "call_signature": None, "original_func_name": None,
        "instructions_judge_pydantic_data": {
            "instructions": mlflow_instructions(aj), "model": model,
            "feedback_value_type": {"enum": values, "title": "Result", "type": "integer"},
            "inference_params": params,
        },
    }


def render_mlflow(aj: ApprovedJudge) -> str:
    judge = mlflow_judge(aj)
    data: dict[str, Any] = {"workbench": aj.trace("mlflow", sha256_hex(mlflow_instructions(aj)))}
    name = parse_model(aj.spec.model)
    if name.provider == "openai-api":  # the variables to set, named, never their values
        from workbench.judges.providers.openai import service_env

        base_url, api_key = service_env(name.service)
        data["environment"] = {"OPENAI_BASE_URL": f"the value of {base_url}",
                               "OPENAI_API_KEY": f"the value of {api_key}"}
    data.update({"load_with": "from mlflow.genai.scorers import Scorer; "
                              "judge = Scorer.model_validate(json.load(open(PATH))['mlflow_scorer'])",
                 "mlflow_scorer": judge})
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


RENDER = {"promptfoo": render_promptfoo, "inspect": render_inspect, "mlflow": render_mlflow}


def render(aj: ApprovedJudge, target: str) -> str:
    if target not in RENDER:
        raise ExportRefused(f"unknown export target '{target}'; use one of {', '.join(TARGETS)}.")
    _refuse_unexportable(aj, target)
    return RENDER[target](aj)


def export_file_name(aj: ApprovedJudge, target: str) -> str:
    stem = f"{aj.rubric.name}@v{aj.rubric_version}--{aj.spec.id}"
    if target == "inspect":  # an importable module name
        stem = "".join(c if c.isalnum() else "_" for c in stem)
    return stem + SUFFIX[target]


def export_judge(bundle: Bundle, bundle_file: str | Path, target: str, out_dir: str | Path) -> Path:
    """Write the approved judge of a verified bundle for ``target`` into ``out_dir``; returns the file."""
    aj = ApprovedJudge.from_bundle(bundle, Path(bundle_file).name)
    text = render(aj, target)
    path = safe_path(Path(out_dir), export_file_name(aj, target))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    return path
