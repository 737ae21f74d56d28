"""A calibration result in EvalEval's "Every Eval Ever" schema (`every-eval-ever` 0.3.0).

The model evaluated is the judge; each agreement metric of DESIGN section 5
(and the two self-preference effects) is one evaluation result whose
`uncertainty.confidence_interval` holds the report's 95% interval, with its
method, the number of items and of bootstrap resamples. The judge's prompt and
model go in `metric_config.llm_scoring`, the humans' own agreement in its
`expert_baseline`, the golden set and its version hash in `source_data`.
Every record is validated against the package's JSON Schema, vendored in
`workbench/schemas/every_eval_ever/` (see SOURCE.md there: the package needs
Python 3.12).
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from workbench import __version__
from workbench.core.errors import WorkbenchError
from workbench.judges.prompting import DEFAULT_MAX_TOKENS, system_prompt
from workbench.core.names import safe_path
from workbench.calibration.presentation import CLOSED_FORM, INTERVAL_WORDS
from workbench.calibration.report import CalibrationReport, Effect, Metric
from workbench.stats.bias import INTERVAL as SELF_PREFERENCE_INTERVAL
from workbench.store import Store
from workbench.core.workspace import Workspace
from workbench.core.workspace import current as current_workspace
from workbench.calibration.calibrate import Options
from workbench.features.export.bundle import write_atomic
from workbench.calibration.versions import Context

EEE_SCHEMA_VERSION = "0.3.0"
SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "every_eval_ever" / "eval.schema.json"
FIRST_PARTY = {"anthropic": "Anthropic", "openai": "OpenAI"}  # APIs whose models have closed weights

# name: (display name, metric kind, unit, min, max); None bounds are the scale's signed range
METRICS: dict[str, tuple[str, str, str, Any, Any]] = {
    "exact_agreement": ("Exact agreement with the human consensus", "accuracy", "proportion", 0, 1),
    "cohen_kappa": ("Cohen's kappa", "cohen_kappa", "coefficient", -1, 1),
    "cohen_kappa_linear": ("Cohen's kappa, linear weights", "cohen_kappa", "coefficient", -1, 1),
    "cohen_kappa_quadratic": ("Cohen's kappa, quadratic weights", "cohen_kappa", "coefficient", -1, 1),
    "krippendorff_alpha_ordinal": ("Krippendorff's alpha (ordinal)", "krippendorff_alpha", "coefficient",
                                   "-Infinity", 1),
    "gwet_ac2_linear": ("Gwet's AC2, linear weights", "gwet_ac2", "coefficient", "-Infinity", 1),
    "spearman": ("Spearman rank correlation", "spearman", "coefficient", -1, 1),
    "mean_signed_error": ("Mean signed error, judge minus consensus (above 0: lenient)", "mean_signed_error",
                          "scale points", None, None),
    "tpr": ("True positive rate: judge passes what the humans pass", "recall", "proportion", 0, 1),
    "tnr": ("True negative rate: judge fails what the humans fail", "specificity", "proportion", 0, 1),
}
BEST_AT_ZERO = {"mean_signed_error", "same_model", "same_family"}  # signed errors: neither direction is better
EXPERT_BASELINE = {"exact_agreement": "human_pairwise_agreement", "krippendorff_alpha_ordinal": "krippendorff_alpha_ordinal"}


@lru_cache(maxsize=1)
def eee_schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def validate_eee(record: dict) -> None:
    """Raise WorkbenchError naming the first field that breaks the Every Eval Ever schema."""
    errors = sorted(jsonschema.Draft7Validator(eee_schema()).iter_errors(record), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise WorkbenchError(f"the Every Eval Ever record breaks its schema at '{where}': {e.message}; this is a bug "
                             "in workbench/features/export/eee.py, please report it.")


def _strings(d: dict[str, Any]) -> dict[str, str]:
    """The schema's additional_details hold strings only."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in d.items() if v is not None}


def _model_info(spec, model_versions: list[str]) -> dict[str, Any]:
    provider = spec.provider
    return {
        "name": spec.model_name, "id": spec.model, "developer": spec.family or provider,
        "inference_platform": FIRST_PARTY.get(provider, provider),
        "additional_details": _strings({
            "deployment_type": "externally_managed" if provider in FIRST_PARTY else
            "self_deployed" if provider == "python" else "unknown",
            "model_availability": "closed_weights" if provider in FIRST_PARTY else "unknown",
            "judge_mode": spec.mode, "model_versions_seen": ", ".join(model_versions) or None,
        }),
    }


def _interval(m: Metric | Effect, method: str, n: int | None, resamples: int) -> dict[str, Any] | None:
    if m.ci_low is None or m.ci_high is None:
        return None
    out: dict[str, Any] = {"confidence_interval": {"lower": m.ci_low, "upper": m.ci_high,
                                                   "confidence_level": 0.95, "method": method}}
    if n is not None:
        out["num_samples"] = int(n)
    if "bootstrap" in method:
        out["num_bootstrap_samples"] = int(resamples)
    return out


def build_eee(report: CalibrationReport, rubric_text: str | None, spec, *, organization: str = "unspecified") -> dict:
    """The Every Eval Ever record of a calibration report (``rubric_text``: the judge's prompt, None for a grader)."""
    b = report.bootstrap
    methods = b.intervals
    created = datetime.fromisoformat(report.computed_at)
    retrieved = str(int(created.timestamp()))
    gs, rub, judge = report.golden_set, report.rubric, report.judge
    model_info = _model_info(spec, report.run.model_versions)
    scale = report.confusion.labels
    span = scale[-1] - scale[0]
    source_data = {"dataset_name": gs.name, "source_type": "other", "additional_details": _strings({
        "golden_set_version": gs.version, "golden_set_version_hash": gs.version_hash,
        "reference": "consensus of human labels (adjudicated, else strict majority)",
        "n_unresolved": report.n_unresolved, "n_unscored": report.n_unscored})}
    llm_scoring = None
    if rubric_text is not None:
        llm_scoring = {"judges": [{"model_info": model_info, **({"temperature": spec.temperature}
                                                                 if spec.temperature is not None else {})}],
                       "input_prompt": rubric_text}
    hc = report.human_ceiling
    results = []
    rows: list[tuple[str, Metric | Effect, str, str, str, Any, Any]] = [
        (name, report.metric(name), *meta) for name, meta in METRICS.items()]
    rows += [(f"self_preference_{k}", getattr(report.self_preference, k) or Effect(), f"Self-preference, "
              f"{k.replace('_', ' ')} effect (mean residual on its own items minus on other families' items)",
              "self_preference", "scale points", None, None) for k in ("same_model", "same_family")]
    for name, m, display, kind, unit, lo, hi in rows:
        if m.value is None:
            continue  # not measurable here (too few items of a class, no item of the judge's family)
        base = name.removeprefix("self_preference_")
        method_key = SELF_PREFERENCE_INTERVAL if name != base else methods.get(name, "percentile")
        method = {**INTERVAL_WORDS, "expanded": "expanded percentile bootstrap",
                  "posterior": "Dirichlet-process posterior (Bayesian bootstrap with a one-item prior)"
                  }.get(method_key, method_key)
        if method_key == "posterior":
            method += f", {b.resamples} draws over task clusters, seed {b.seed}"
        elif method_key not in CLOSED_FORM:
            method += f", {b.resamples} resamples of task clusters, seed {b.seed}"
        n = m.n if m.n is not None else report.n_items
        config: dict[str, Any] = {
            "evaluation_description": f"Agreement of judge '{judge.id}' with the human consensus on rubric "
                                      f"'{rub.name}' v{rub.version} (scale {scale}).",
            "metric_id": f"judge_workbench.{name}", "metric_name": display, "metric_kind": kind,
            "metric_unit": unit, "lower_is_better": False, "score_type": "continuous",
            "min_score": -span if lo is None else lo, "max_score": span if hi is None else hi,
            "additional_details": _strings({"best_value": "0 (a signed error: neither direction is better)"
                                            if base in BEST_AT_ZERO else None,
                                            "rubric_hash": rub.hash, "judge_config_hash": judge.config_hash}),
        }
        if llm_scoring is not None:
            scoring = dict(llm_scoring)
            if name in EXPERT_BASELINE and (baseline := getattr(hc, EXPERT_BASELINE[name])) is not None:
                scoring["expert_baseline"] = baseline  # the humans among themselves
            config["llm_scoring"] = scoring
        details = {"score": m.value, "details": _strings({"n": n, "interval_method": method_key})}
        if (u := _interval(m, method, n, b.resamples)) is not None:
            details["uncertainty"] = u
        args: dict[str, Any] = {"temperature": spec.temperature}
        if spec.provider != "python":
            args["max_tokens"] = spec.max_tokens or DEFAULT_MAX_TOKENS
        results.append({"evaluation_result_id": name, "evaluation_name": f"{rub.name}: {display}",
                        "source_data": source_data, "evaluation_timestamp": report.computed_at,
                        "metric_config": config, "score_details": details,
                        "generation_config": {"generation_args": args,
                                              "additional_details": _strings({"run": report.run.name})}})
    return {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": f"{rub.name}@v{rub.version}--{judge.id}/{spec.model}/{retrieved}",
        "evaluation_timestamp": report.computed_at,
        "retrieved_timestamp": retrieved,
        "source_metadata": {"source_name": "Judge Workbench calibration", "source_type": "evaluation_run",
                            "source_organization_name": organization,
                            "evaluator_relationship": "third_party" if spec.provider in FIRST_PARTY else "other",
                            "additional_details": _strings({
                                "calibrated": "yes" if report.calibrated else "no",
                                "failed_checks": ", ".join(c.name for c in report.verdict.failed) or None})},
        "eval_library": {"name": "judge-workbench", "version": __version__,
                         "additional_details": _strings({"report_schema": report.schema,
                                                         "cluster_bootstrap": b.cluster,
                                                         "bootstrap_seed": b.seed})},
        "model_info": model_info,
        "evaluation_results": results,
    }


def write_eee(store: Store, golden_set: str, rubric: str, judge: str, *, out: str | Path | None = None,
              options: Options = Options(), workspace: Workspace | None = None,
              organization: str = "unspecified") -> Path:
    """Calibrate (or read the cached report), build the record, validate it, write it; returns the file."""
    workspace = workspace or current_workspace()
    with Context.reading(store, golden_set, rubric, options.run) as ctx:  # resolved once, read in one snapshot
        scope = ctx.scope(judge, options.run)  # the prompt needs the rubric, not the judgments
        report = ctx.report(judge, options, workspace=workspace)
    prompt = system_prompt(scope.rubric.rubric, scope.spec) if scope.spec.provider != "python" else None
    record = build_eee(report, prompt, scope.spec, organization=organization)
    validate_eee(record)
    name = f"calibration-{report.rubric.name}-v{report.rubric.version}-{judge}.eee.json"
    path = Path(out) if out else safe_path(workspace.reports, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return path
