"""The CI check: is the judge about to grade the approved one, and is its evidence still what was approved?

`check_bundle` verifies the bundle (its sha256, its signature against the
trusted public keys, and its schema), compares the golden set it was
calibrated on with the workspace database (or, told to, says it did not), and
compares a judge config with the approved judge: one of the files
`workbench export --to` writes (read without running them), a rubric YAML, or
a judge entry of one. Every difference is one sentence; what was compared and
found equal is said too, so a green check says what it vouched for.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError, WorkbenchError
from workbench.core.hashing import sha256_hex
from workbench.core.models import parse_model
from workbench.judges.rubrics import JUDGE_KEYS, parse_rubric, rubric_from_dict
from workbench.store import Store
from workbench.core.strict_yaml import load_yaml, read_utf8
from workbench.features.export.signing import TrustedKeys
from workbench.features.export.bundle import BundleRefused, read_signed_bundle
from workbench.calibration.snapshots import Snapshot, current_snapshot
from workbench.features.export.records import Bundle
from workbench.features.export.tool_files import (ApprovedJudge, ExportRefused, promptfoo_prompt_sha256, render,
    untagged)
from workbench.features.monitoring.production import check_production, clock


@dataclass
class CheckResult:
    problems: list[str] = field(default_factory=list)  # one sentence each; any makes the check fail
    compared: list[str] = field(default_factory=list)  # what was compared and found as approved, or not compared

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class GradingJudge:
    """The judge a config file would grade with, read from the file."""

    kind: str  # promptfoo | inspect | mlflow | rubric | judge
    model: str | None  # in the tool's spelling
    temperature: float | None
    max_tokens: int | None
    prompt_sha256: str | None  # of the prompt text found in the file
    declared: DeclaredEvidence  # what the file says it was exported from (nothing, for the workbench's own YAML)
    source: Any = None  # the workbench's own YAML: the rubric's text, or the judge entry


@dataclass(frozen=True, slots=True)
class DeclaredEvidence:
    """The hashes an exported file's trace names (``ApprovedJudge.trace``), back to plain hex; None where absent."""

    bundle_sha256: Any = None
    rubric_hash: Any = None
    golden_set_hash: Any = None

    @classmethod
    def from_trace(cls, trace: dict) -> DeclaredEvidence:
        """Read from the trace as the file holds it, which may have been edited into any shape."""
        return cls(untagged(trace.get("bundle_sha256")), untagged((trace.get("rubric") or {}).get("hash")),
                   untagged((trace.get("golden_set") or {}).get("version_hash")))


class NoDatabase(WorkbenchError):
    """`check` was asked to compare the golden set, and there is no database to compare it with."""


def check_bundle(bundle_path: str | Path, *, judge_config: str | Path | None = None, store: Store | None = None,
                 db_name: str = "the database", trusted: TrustedKeys = TrustedKeys(), allow_unsigned: bool = False,
                 golden_set_check: bool = True, as_of: str | None = None) -> CheckResult:
    """Compare everything there is to compare; ``store`` is None when the workspace has no database, which is
    refused (:class:`NoDatabase`) unless ``golden_set_check`` is off. ``trusted``: the keys a signature may come
    from (the --trust files, else the workspace's own public keys). Production too: the approval's expiry
    (``revalidate_after``) and the validity alarms of the streams the bundle grades, as of ``as_of``
    (YYYY-MM-DD), else ``WORKBENCH_NOW``, else now."""
    res = CheckResult()
    bundle_path = Path(bundle_path)
    if store is None and golden_set_check:
        raise NoDatabase(f"there is no workbench database at {db_name} to compare the golden set of "
                         f"{bundle_path.name} with; give --db PATH, or pass --no-golden-set-check to check its "
                         "signature and judge config without one (as a CI job without the database does).")
    try:
        bundle, signed = read_signed_bundle(bundle_path, trusted, allow_unsigned=allow_unsigned)
    except BundleRefused as e:  # edited, unsigned, malformed, or not a bundle: nothing in it can be trusted
        res.problems.append(str(e))
        return res
    res.compared.append(f"bundle {bundle_path.name}: sha256 {bundle.sha256[:16]}… matches its content.")
    res.compared.append(signed)
    if not golden_set_check:
        res.compared.append(f"golden set '{bundle.golden_set.name}' not compared (--no-golden-set-check): "
                            "its items and consensus labels were not checked against a database.")
    if store is not None:
        _check_store(bundle, bundle_path.name, store, db_name, res, golden_set=golden_set_check)
    if judge_config is not None:
        _check_judge(ApprovedJudge.from_bundle(bundle, bundle_path.name), Path(judge_config), res)
    production = check_production(bundle.to_json(), bundle_path.name, store, clock(as_of))
    res.problems += production.problems
    res.compared += production.compared
    return res


# --------------------------------------------------------------------------- the database

def _check_store(bundle: Bundle, name: str, store: Store, db_name: str, res: CheckResult, *,
                 golden_set: bool = True) -> None:
    if not store.export_recorded(bundle.sha256):
        res.problems.append(f"{name} was not exported from {db_name} (its sha256 is not among the recorded "
                            "exports); check it against the database it came from, or re-export it.")
    if not golden_set:
        return
    gs = bundle.golden_set
    try:
        golden = store.golden_set(gs.name)
    except WorkbenchError:
        res.problems.append(f"golden set '{gs.name}' of {name} is not in {db_name}, so its evidence cannot be "
                            "compared; check against the database the bundle was exported from.")
        return
    now_hash, now = current_snapshot(store, gs.name)
    if now_hash == gs.version_hash:
        res.compared.append(f"golden set '{gs.name}' in {db_name}: items and consensus labels unchanged since "
                            f"approval (version {gs.version}, {gs.version_hash[:16]}…).")
        return
    approved = store.golden_set_version_by_hash(golden.id, gs.version_hash)
    changes = _snapshot_changes(Snapshot(**_loads(approved["snapshot"])), Snapshot(**now)) if approved else \
        "the approved version is not recorded in this database"
    res.problems.append(f"golden set '{gs.name}' has changed since approval: {changes} (compared version "
                        f"{gs.version}, {gs.version_hash[:16]}…, with the items and labels now in {db_name}); "
                        "calibrate the judge again and re-export its bundle.")


def _loads(value: Any) -> dict:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _snapshot_changes(then: Snapshot, now: Snapshot) -> str:
    """What differs between two golden-set snapshots, in a few words."""
    old, new = dict(map(tuple, then.items)), dict(map(tuple, now.items))
    parts = []
    for count, what in ((len(new.keys() - old.keys()), "added"), (len(old.keys() - new.keys()), "removed"),
                        (sum(old[i] != new[i] for i in old.keys() & new.keys()), "with changed content")):
        if count:
            parts.append(f"{count} item{'s' if count != 1 else ''} {what}")
    for rubric in sorted(set(then.consensus) | set(now.consensus)):
        a, b = then.consensus.get(rubric, {}), now.consensus.get(rubric, {})
        changed = sum(a.get(i) != b.get(i) for i in set(a) | set(b))
        if changed:
            parts.append(f"{changed} consensus label{'s' if changed != 1 else ''} of rubric '{rubric}' changed")
    return ", ".join(parts) or "its content hash differs"


# --------------------------------------------------------------------------- the judge config

def _check_judge(aj: ApprovedJudge, path: Path, res: CheckResult) -> None:
    try:
        actual = read_judge_config(path, aj)
    except ExportRefused as e:
        res.problems.append(str(e))
        return
    if actual.kind in ("rubric", "judge"):
        return _compare_own(aj, path, actual, res)
    try:
        expected = _parse(actual.kind, render(aj, actual.kind), path.name, aj)
    except ExportRefused as e:
        res.problems.append(f"{path.name}: {e}")
        return
    before = len(res.problems)
    name = path.name
    declared = actual.declared
    if declared.bundle_sha256 != aj.bundle_sha256:
        res.problems.append(f"{name} was exported from another bundle (sha256 {_short(declared.bundle_sha256)}), "
                            f"not from {aj.bundle_file} ({aj.bundle_sha256[:16]}…); export it from this bundle.")
    if declared.rubric_hash != aj.rubric_hash:
        res.problems.append(f"{name} names rubric hash {_short(declared.rubric_hash)}, but the "
                            f"approved rubric's hash is {aj.rubric_hash[:16]}…; re-export it from the bundle.")
    if declared.golden_set_hash != aj.golden_set.version_hash:
        res.problems.append(f"{name} names golden-set version {_short(declared.golden_set_hash)}"
                            f", but the judge was approved on {aj.golden_set.version_hash[:16]}…; re-export it.")
    if actual.model != expected.model:
        res.problems.append(_model_sentence(aj, name, actual.model, expected.model))
    if actual.temperature != expected.temperature:
        res.problems.append(f"{name} grades at temperature {_show(actual.temperature)}, but the approved judge used "
                            f"{_show(expected.temperature)}; set it back or calibrate the new setting.")
    if actual.max_tokens != expected.max_tokens:
        res.problems.append(f"{name} allows {_show(actual.max_tokens)} output tokens, but the approved judge "
                            f"allowed {_show(expected.max_tokens)}; set it back or calibrate the new setting.")
    if actual.prompt_sha256 != expected.prompt_sha256:
        res.problems.append(f"{name}: the grading prompt differs from the approved one (sha256 "
                            f"{_short(actual.prompt_sha256)} instead of {_short(expected.prompt_sha256)}); re-export "
                            "it, or calibrate the edited prompt as a new rubric version.")
    if actual.kind in ("inspect", "mlflow") and len(res.problems) == before:
        # anything else edited in a file the team runs as it is (the scorer's code, the scale, the judge's name)
        text, again = read_utf8(path), render(aj, actual.kind)
        if text != again:
            line = next(i for i, (a, b) in enumerate(zip(text.splitlines() + [""], again.splitlines() + [""]), 1)
                        if a != b)
            res.problems.append(f"{name} line {line} differs from what 'workbench export --to {actual.kind}' writes "
                                "for this bundle; re-export it instead of editing it.")
    if len(res.problems) == before:
        res.compared.append(f"judge config {name} ({actual.kind}): model {actual.model}, temperature "
                            f"{_show(actual.temperature)}, prompt {_short(actual.prompt_sha256)}, rubric "
                            f"{aj.rubric_hash[:16]}… and bundle as approved.")


def _short(h: Any) -> str:
    return f"{h[:16]}…" if isinstance(h, str) and h else "(none)"


def _show(v: Any) -> str:
    return "the provider's default" if v is None else str(v)


def _model_sentence(aj: ApprovedJudge, name: str, actual: str | None, expected: str | None) -> str:
    """A different model, or the same model at a version calibration did not see."""
    approved = parse_model(aj.spec.model).model
    split = lambda m: (m or "").replace(":/", "/").replace(":", "/").rpartition("/")[::2]  # noqa: E731
    (prefix, bare), (expected_prefix, _) = split(actual), split(expected)
    seen = ", ".join(aj.model_versions) or "none recorded"
    if prefix == expected_prefix and bare.startswith(approved):
        return (f"{name} grades with model version {actual}, but calibration saw only {seen} (approved model "
                f"{aj.spec.model}); pin {expected} or calibrate the new version.")
    return (f"{name} grades with model {actual}, but the approved judge is {aj.spec.model} ({expected} in this "
            "tool); use the approved model or calibrate the new one.")


def read_judge_config(path: Path, aj: ApprovedJudge) -> GradingJudge:
    """Which kind of file this is, and the judge it would grade with."""
    text = read_utf8(path)
    if path.suffix == ".py":
        return _parse("inspect", text, path.name, aj)
    if path.suffix == ".json":
        return _parse("mlflow", text, path.name, aj)
    data, _ = load_yaml(text, file=path.name)
    if isinstance(data, dict) and ("defaultTest" in data or "prompts" in data or "tests" in data):
        return _parse("promptfoo", text, path.name, aj)
    if isinstance(data, dict) and "judges" in data:
        return GradingJudge("rubric", None, None, None, None, DeclaredEvidence(), source=text)
    if isinstance(data, dict) and "model" in data:
        return GradingJudge("judge", None, None, None, None, DeclaredEvidence(), source=data)
    raise ExportRefused(f"{path.name} is not a judge config the check knows: give a file written by "
                        "'workbench export --to promptfoo|inspect|mlflow', a rubric YAML, or a judge entry "
                        "(id, model, temperature, ...).")


def _parse(kind: str, text: str, name: str, aj: ApprovedJudge) -> GradingJudge:
    return {"inspect": _parse_inspect, "mlflow": _parse_mlflow, "promptfoo": _parse_promptfoo}[kind](text, name, aj)


def _parse_inspect(text: str, name: str, aj: ApprovedJudge) -> GradingJudge:
    """The module's constants, read with `ast` (never run)."""
    try:
        tree = ast.parse(text, filename=name)
    except SyntaxError as e:
        raise ExportRefused(f"{name} line {e.lineno}: not valid Python ({e.msg}); re-export it with "
                            "'workbench export --to inspect'.") from None
    consts: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass  # not a literal: not one of ours
    if "WORKBENCH" not in consts or "MODEL" not in consts:
        raise ExportRefused(f"{name} is not an Inspect scorer written by 'workbench export --to inspect' (it has no "
                            "WORKBENCH and MODEL constants); export one from the bundle.")
    trace = consts["WORKBENCH"]
    return GradingJudge("inspect", consts.get("MODEL"), consts.get("TEMPERATURE"), consts.get("MAX_TOKENS"),
                        sha256_hex({"system": consts.get("SYSTEM_PROMPT"), "user": consts.get("USER_TEMPLATE")}),
                        DeclaredEvidence.from_trace(trace if isinstance(trace, dict) else {}))


def _parse_mlflow(text: str, name: str, aj: ApprovedJudge) -> GradingJudge:
    try:
        data = json.loads(text)
        judge = data["mlflow_scorer"]["instructions_judge_pydantic_data"]
    except (ValueError, KeyError, TypeError):
        raise ExportRefused(f"{name} is not an MLflow judge written by 'workbench export --to mlflow' (no "
                            "mlflow_scorer.instructions_judge_pydantic_data); export one from the bundle.") from None
    params = judge.get("inference_params") or {}
    return GradingJudge("mlflow", judge.get("model"), params.get("temperature"), params.get("max_tokens"),
                        sha256_hex(judge.get("instructions")), DeclaredEvidence.from_trace(data.get("workbench") or {}))


def _parse_promptfoo(text: str, name: str, aj: ApprovedJudge) -> GradingJudge:
    """The llm-rubric assertion of the approved rubric, and the grader promptfoo would resolve for it."""
    data, _ = load_yaml(text, file=name)
    default = data.get("defaultTest") if isinstance(data.get("defaultTest"), dict) else {}
    options = default.get("options") or {}
    found = [a for a in default.get("assert") or [] if isinstance(a, dict) and a.get("type") == "llm-rubric"
             and a.get("metric") == aj.rubric.name]
    if not found:
        raise ExportRefused(f"{name} has no llm-rubric assertion with metric '{aj.rubric.name}' under defaultTest; "
                            "re-export it with 'workbench export --to promptfoo'.")
    assertion = found[0]
    provider = assertion.get("provider") or options.get("provider")  # as promptfoo resolves a grader
    if isinstance(provider, str):
        provider = {"id": provider}
    provider = provider if isinstance(provider, dict) else {}
    config = provider.get("config") or {}
    rubric_prompt = (assertion.get("options") or {}).get("rubricPrompt", options.get("rubricPrompt"))
    return GradingJudge("promptfoo", provider.get("id"), config.get("temperature"), config.get("max_tokens"),
                        promptfoo_prompt_sha256(assertion, rubric_prompt),
                        DeclaredEvidence.from_trace((default.get("metadata") or {}).get("workbench") or {}))


def _compare_own(aj: ApprovedJudge, path: Path, actual: GradingJudge, res: CheckResult) -> None:
    """A rubric YAML (its content and its entry for the judge) or a bare judge entry, against the bundle."""
    name = path.name
    before = len(res.problems)
    if actual.kind == "rubric":
        try:
            rubric = parse_rubric(actual.source, file=name)
        except InputError as e:
            res.problems.append(str(e))
            return
        if rubric.content_hash != aj.rubric_hash:
            res.problems.append(f"{name}: the rubric's content hash is {rubric.content_hash[:16]}…, but the approved "
                                f"rubric's is {aj.rubric_hash[:16]}… (the rubric changed since approval); calibrate "
                                "the new version before grading with it.")
        try:
            spec = rubric.judge(aj.spec.id)
        except WorkbenchError:
            res.problems.append(f"{name} declares no judge '{aj.spec.id}', the approved judge; add it back.")
            return
    else:
        data = {k: v for k, v in actual.source.items() if k in JUDGE_KEYS}
        data.setdefault("id", aj.spec.id)
        try:
            spec = rubric_from_dict({"name": aj.rubric.name, "judges": [data]}).judges[0]
        except InputError as e:
            res.problems.append(f"{name}: {e}")
            return
    for key, what in (("model", "model"), ("temperature", "temperature"), ("mode", "mode"),
                      ("max_tokens", "max_tokens"), ("see_reference", "see_reference")):
        a, b = getattr(spec, key), getattr(aj.spec, key)
        if a != b:
            res.problems.append(f"{name}: judge '{aj.spec.id}' has {what} {_show(a)}, but the approved judge has "
                                f"{_show(b)}; set it back or calibrate the change.")
    if len(res.problems) == before:
        res.compared.append(f"judge config {name} ({actual.kind}): judge '{aj.spec.id}' ({aj.spec.model}, "
                            f"temperature {_show(aj.spec.temperature)})"
                            + (" and rubric content" if actual.kind == "rubric" else "") + " as approved.")
