"""Approved bundles: export only a passing (rubric version, judge) pair, and verify a bundle before grading.

A bundle carries the rubric content, the judge config, the golden-set version,
the calibration evidence, the verdict and the policy, and a sha256 over the
canonical JSON of all of it. The same evidence always gives the same file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from ..errors import InputError, WorkbenchError
from ..gate import UNDECIDED, Verdict
from ..hashing import sha256_hex
from ..names import safe_path
from ..report import CalibrationReport
from ..store import Store
from ..strict_yaml import load_yaml, read_utf8
from ..workspace import Workspace
from ..workspace import current as current_workspace
from .calibration import Options, Scope, calibrate, freeze_version
from .rubrics import get_rubric
from .versions import resolve_ref, rubric_ref

BUNDLE_SCHEMA = "workbench.bundle/1"
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "schemas" / "bundle.schema.json"


class GateFailed(WorkbenchError):
    """The pair did not pass the gate (a check failed, or is not decided yet); carries the blocking checks."""

    def __init__(self, rubric: str, judge: str, verdict: Verdict | None):
        self.verdict = verdict
        self.failed = [c for c in (verdict.checks if verdict else ()) if c.blocking]
        head = (f"judge '{judge}' is not decided yet for rubric '{rubric}'" if verdict and verdict.state == UNDECIDED
                else f"judge '{judge}' is not calibrated for rubric '{rubric}'")
        super().__init__(head + ": " + "; ".join(f"{c.name}: {c.reason.rstrip('.')}" for c in self.failed)
                         + ("; run 'workbench plan' for the labels that decide it" if verdict and
                            verdict.state == UNDECIDED else ""))


class VersionMismatch(WorkbenchError):
    """The evidence of a rubric version is not all of that version: refused rather than approved."""


class BundleRefused(WorkbenchError):
    """A bundle that was edited, is malformed, or did not come from an export."""


@lru_cache(maxsize=1)
def bundle_schema() -> dict:
    return json.loads(SCHEMA_FILE.read_text())


def validate_bundle(bundle: Any, *, source: str = "bundle") -> None:
    """Raise BundleRefused naming the first field that breaks the JSON Schema."""
    validator = jsonschema.Draft202012Validator(bundle_schema())
    errors = sorted(validator.iter_errors(bundle), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise BundleRefused(f"{source}: field '{where}': {e.message}; re-export the bundle with 'workbench export'.")


def approved_dir(workspace: Workspace | None = None) -> Path:
    """rubrics/approved of the workspace, or $WORKBENCH_APPROVED_DIR (a deployment's or a test's own folder)."""
    if os.environ.get("WORKBENCH_APPROVED_DIR"):
        return Path(os.environ["WORKBENCH_APPROVED_DIR"])
    return (workspace or current_workspace()).approved


def bundle_path(out_dir: Path, rubric: str, version: int, judge: str) -> Path:
    """The bundle's file in ``out_dir``; refuses names that would put it anywhere else."""
    return safe_path(out_dir, f"{rubric}@v{version}--{judge}.yaml")


class _PlainDumper(yaml.SafeDumper):
    """Never writes anchors and aliases (load_bundle refuses them), even for an object used twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


@dataclass(frozen=True)
class ExportResult:
    path: Path
    sha256: str
    bundle: dict
    note: str | None = None  # a sentence when the version exported is not the rubric's current one


def build_bundle(report: CalibrationReport, scope: Scope) -> dict:
    """The bundle's content and sha256; ``scope`` holds the report's rubric version and judge, resolved."""
    rv, spec = scope.rubric, scope.spec
    r = report.to_json()  # the bundle is an edge: it carries the report's own JSON, section by section
    m = r["metrics"]
    content = {
        "schema": BUNDLE_SCHEMA,
        "rubric": {"name": rv.name, "version": rv.version, "hash": rv.hash, "content": rv.rubric.content()},
        "judge": {"id": spec.id, "model": spec.model, "family": spec.family, "mode": spec.mode,
                  "config": spec.config(), "config_hash": report.judge.config_hash},
        "golden_set": {"name": report.golden_set.name, "version": report.golden_set.version,
                       "version_hash": report.golden_set.version_hash},
        "calibration": {
            "n_items": report.n_items, "n_unresolved": report.n_unresolved, "n_unscored": report.n_unscored,
            "run": r["run"], "bootstrap": r["bootstrap"], "metrics": m, "confusion": r["confusion"],
            "tpr": m["tpr"]["value"], "tnr": m["tnr"]["value"], "denominators": r["denominators"],
            "per_category": r["per_category"],
            "human_ceiling": {k: r["human_ceiling"].get(k) for k in
                              ("krippendorff_alpha_ordinal", "human_pairwise_agreement",
                               "judge_human_pairwise_agreement", "n_items", "n_raters")},
            "alt_test": ({k: r["alt_test"].get(k) for k in
                          ("epsilon", "metric", "q", "winning_rate", "advantage_probability", "passed")}
                         if r["alt_test"] else None),
            "self_preference": {k: {f: v.get(f) for f in ("value", "ci_low", "ci_high", "n", "p_value", "measurable")}
                                for k, v in r["self_preference"].items() if isinstance(v, dict)},  # the effects
            "noise": ({k: r["noise"].get(k) for k in ("flip_rate", "krippendorff_alpha_ordinal", "pass_hat_k",
                                                       "repeats")} if r["noise"] else None),
            "drift": ({"baseline_run": r["drift"]["baseline_run"], "flip_rate": r["drift"]["flip_rate"],
                       "stuart_maxwell": r["drift"]["stuart_maxwell"],
                       "model_versions": r["drift"]["model_versions"]} if r["drift"] else None),
            "probes": ([{k: e.get(k) for k in ("probe", "n_items", "mean_shift", "flip_rate", "robustness_rate",
                                                "consensus_shift", "moves")} for e in r["probes"]["probes"]]
                       if r.get("probes") else None),
        },
        "verdict": r["verdict"],
        "policy": r["policy"],
        "created_at": report.computed_at,
    }
    return {**content, "sha256": sha256_hex(content)}


def export_bundle(store: Store, golden_set: str, rubric: str, judge: str, *, out_dir: str | Path | None = None,
                  options: Options = Options(), workspace: Workspace | None = None) -> ExportResult:
    """Write rubrics/approved/<rubric>@v<version>--<judge>.yaml of the workspace (or ``out_dir``) for a passing
    pair; refuse otherwise.

    ``rubric`` is a name (the newest version the judge has judgments of) or ``NAME@vN`` (version N exactly;
    :class:`~.versions.VersionNotRun` when the judge has no judgments of it). A version is approved only on its own
    judgments: the report, the judge config and every judgment of the run must belong to it.
    Exporting is a write: it freezes the golden-set version the report was computed on (calibrating does not),
    and records the export against the ids the report carries.
    """
    scope = resolve_ref(store, golden_set, rubric, judge, options.run)  # the names, looked up once for all below
    report = calibrate(store, golden_set, scope.rubric.name, judge, options, scope=scope, workspace=workspace)
    check_one_version(store, report, scope)
    if not report.calibrated:
        raise GateFailed(rubric, judge, report.verdict)
    report = freeze_version(store, report, scope)
    bundle = build_bundle(report, scope)
    validate_bundle(bundle, source="the new bundle")
    if out_dir is None:
        out_dir = approved_dir(workspace)
    path = bundle_path(Path(out_dir), bundle["rubric"]["name"], bundle["rubric"]["version"], judge)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ("# Approved by Judge Workbench: do not edit (the sha256 covers every field).\n"
            + yaml.dump(bundle, Dumper=_PlainDumper, sort_keys=True, allow_unicode=True, width=120))
    write_atomic(path, text)
    ids = report.ids
    store.record_export(str(path), bundle["sha256"], ids.rubric_version_id, ids.judge_pk, ids.golden_set_version_id)
    return ExportResult(path, bundle["sha256"], bundle, _older_version_note(store, rubric, scope))


def _older_version_note(store: Store, rubric: str, scope: Scope) -> str | None:
    """Said when ``--rubric NAME`` exported an older version than the current one (the judge has not run it)."""
    rv = scope.rubric
    if rubric_ref(store, rubric)[1] is not None:
        return None  # NAME@vN: the version asked for
    latest = get_rubric(store, rv.name).version
    if latest == rv.version:
        return None
    return (f"Note: this is v{rv.version} of rubric '{rv.name}', the newest version judge '{scope.spec.id}' has "
            f"judgments of; the current version is v{latest} (name a version with --rubric {rv.name}@vN).")


def check_one_version(store: Store, report: CalibrationReport, scope: Scope) -> None:
    """Refuse to approve rubric version N on evidence of another version: the report's rubric, the judge's row and
    run, and the config hash every judgment of the run was recorded under must all be version N's."""
    rv, row, run = scope.rubric, scope.judge_row, scope.run
    found = []
    if (report.rubric.name, report.rubric.version, report.rubric.hash) != (rv.name, rv.version, rv.hash):
        found.append(f"the calibration report is of v{report.rubric.version}")
    if row["rubric_id"] != rv.id or run.get("rubric_version", rv.version) != rv.version:
        found.append(f"run '{run['name']}' belongs to v{run.get('rubric_version')}")
    others = [h for h in store.run_config_hashes(run["id"]) if h != row["config_hash"]]
    if others:
        found.append(f"run '{run['name']}' holds judgments made under {len(others)} other judge config(s)")
    if found:
        raise VersionMismatch(f"rubric '{rv.name}' v{rv.version} was not exported for judge '{row['judge_id']}': "
                              + "; ".join(found) + f"; judge v{rv.version} itself ('workbench judge run') or import "
                              "its own judgments, then export again.")


def write_atomic(path: Path, text: str) -> None:
    """Temp file + rename: a reader sees the old file or the new one, never half; a failed write leaves nothing."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def load_bundle(store: Store, path: str | Path) -> dict:
    """Read and verify a bundle: schema, hash, and that this workbench exported it."""
    path = Path(path)
    bundle = read_bundle(path)
    if not store.export_recorded(bundle["sha256"]):
        raise BundleRefused(f"{path.name} did not come from an export of this workbench database (its sha256 is not "
                            f"among the recorded exports); grade with the --db it was exported from.")
    return bundle


def read_bundle(path: str | Path) -> dict:
    """Read a bundle and verify what needs no database: plain YAML, its sha256, the schema."""
    path = Path(path)
    text = read_utf8(path)
    try:
        bundle, _ = load_yaml(text, file=path.name)
    except InputError as e:  # anchors, duplicate keys, tags, malformed YAML: an export writes none of them
        where = f"{e.file} line {e.line}" if e.line else f"{e.file}"
        raise BundleRefused(f"{where}: {e.problem}; re-export the bundle with 'workbench export' instead of "
                            "editing it.") from None
    if not isinstance(bundle, dict) or "sha256" not in bundle:
        raise BundleRefused(f"{path.name} did not come from an export: it has no sha256; "
                            f"export an approved pair with 'workbench export'.")
    content = {k: v for k, v in bundle.items() if k != "sha256"}
    if sha256_hex(content) != bundle["sha256"]:
        raise BundleRefused(f"{path.name} was edited after export: its content no longer matches its sha256; "
                            f"re-export it with 'workbench export' instead of editing it.")
    validate_bundle(bundle, source=path.name)
    return bundle


def list_bundles(store: Store) -> list[dict]:
    return store.exports()
