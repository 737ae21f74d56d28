"""Approved bundles: export only a passing (rubric version, judge) pair, and verify a bundle before grading.

A bundle carries the rubric content, the judge config, the golden-set version,
the calibration evidence, the verdict and the policy, and a sha256 over the
canonical JSON of all of it. The same evidence always gives the same file.

The sha256 is a content id, not a proof: anyone can edit a bundle and hash it
again. When the workspace has a signing key (``workbench keys init``, or
``WORKBENCH_SIGNING_KEY``) the bundle also carries a ``signature`` block:
Ed25519 over the same canonical JSON the sha256 covers (every field but
``sha256`` and ``signature``), with the key's id. Verifying it needs only the
public key (:mod:`workbench.features.export.signing`).
"""

from __future__ import annotations

import json
import os
from contextlib import nullcontext
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import jsonschema
import yaml

from workbench.core.errors import InputError, WorkbenchError
from workbench.calibration.gate import UNDECIDED, Verdict
from workbench.core.hashing import sha256_hex
from workbench.core.names import safe_path
from workbench.core.policy import SelectivePolicy
from workbench.features.export.signing import SignatureError, SigningKey, TrustedKeys, find_signing_key, verify_json
from workbench.calibration.report import CalibrationReport
from workbench.store import Store, audit
from workbench.core.strict_yaml import load_yaml, read_utf8
from workbench.core.workspace import Workspace
from workbench.core.workspace import current as current_workspace
from workbench.core.workspace import shown_path
from workbench.calibration.calibrate import Options, Scope, freeze_version, snapshot_needed
from workbench.calibration.rubric_versions import JudgeRow, get_rubric
from workbench.calibration.versions import Context, rubric_ref
from workbench.calibration.golden_sets import RunRow
from workbench.features.export.records import (BUNDLE_SCHEMA, Bundle, BundleCalibration, BundleGoldenSet,
                                               BundleJudge, BundleRubric, ExportedBundle, bundle_content)

#: (the command's context, report, guarantee asked for) -> the report with the gate's selective check, and the
#: bundle's selective section (None when the guarantee does not hold); ``features.selective``'s
#: ``gate_and_section``, which this feature does not import.
Guarantee = Callable[[Context, CalibrationReport, SelectivePolicy],
                     "tuple[CalibrationReport, dict[str, Any] | None]"]

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schemas" / "bundle.schema.json"


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


class SignatureRefused(BundleRefused):
    """A bundle whose signature is missing where one is required, untrusted, malformed or does not match."""


# export_bundle's default: sign with the workspace's key (or WORKBENCH_SIGNING_KEY) when there is one
WORKSPACE_KEY = "workspace"
UNSIGNED_HINT = "Unsigned: run 'workbench keys init' once to sign every bundle this workspace exports."


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
    approved: Bundle
    note: str | None = None  # a sentence when the version exported is not the rubric's current one
    signed_by: str | None = None  # the signing key's id and where it came from; None for an unsigned bundle

    @property
    def bundle(self) -> dict:
        """The bundle's JSON, as written."""
        return self.approved.to_json()


def approve(report: CalibrationReport, scope: Scope) -> Bundle:
    """The bundle with its sha256; ``scope`` holds the report's rubric version and judge, resolved."""
    rv, spec, gs = scope.rubric, scope.spec, report.golden_set
    bundle = Bundle(BUNDLE_SCHEMA, BundleRubric(rv.name, rv.version, rv.hash, rv.rubric.content()),
                    BundleJudge(spec.id, spec.model, spec.family, spec.mode, spec.config(), report.judge.config_hash),
                    BundleGoldenSet(gs.name, gs.version, gs.version_hash), BundleCalibration.of(report),
                    report.verdict.to_dict() if report.verdict else None, report.policy.to_dict(),
                    report.computed_at)
    return bundle.but(sha256=sha256_hex(bundle.content()))


def build_bundle(report: CalibrationReport, scope: Scope) -> dict:
    """:func:`approve`'s bundle as JSON."""
    return approve(report, scope).to_json()


def sign_bundle(bundle: Bundle, key: SigningKey) -> Bundle:
    return bundle.but(signature=key.sign_json(bundle.content()))


def workspace_signing_key(workspace: Workspace | None = None) -> SigningKey | None:
    """``WORKBENCH_SIGNING_KEY`` when set, else the workspace's keys/workbench.key when it exists, else None."""
    ws = workspace or current_workspace()
    return find_signing_key(ws.signing_key_file, shown=shown_path(ws.signing_key_file))


def export_bundle(store: Store, golden_set: str, rubric: str, judge: str, *, out_dir: str | Path | None = None,
                  options: Options = Options(), workspace: Workspace | None = None,
                  signing_key: SigningKey | str | None = WORKSPACE_KEY, actor: str | None = None,
                  selective: SelectivePolicy | None = None, guarantee: Guarantee | None = None,
                  context: Context | None = None) -> ExportResult:
    """Write rubrics/approved/<rubric>@v<version>--<judge>.yaml of the workspace (or ``out_dir``) for a passing
    pair; refuse otherwise.

    ``rubric`` is a name (the newest version the judge has judgments of) or ``NAME@vN`` (version N exactly;
    :class:`~.versions.VersionNotRun` when the judge has no judgments of it). A version is approved only on its own
    judgments: the report, the judge config and every judgment of the run must belong to it.
    Exporting is a write: it freezes the golden-set version the report was computed on (calibrating does not),
    and records the export against the ids the report carries. The bundle is signed with ``signing_key``: by
    default the workspace's (:func:`workspace_signing_key`), read before anything is computed or written; None
    writes an unsigned bundle. The approval is written to the audit log with the export's row, under ``actor``
    (the lead, in the UI; else the command line's user). ``selective`` is the confidence threshold and its
    guarantee asked for (``export --selective``; else the policy's ``selective`` section): the gate then also judges
    it (its "selective guarantee" check, added by ``guarantee``: ``features.selective``'s ``gate_and_section``), and
    the bundle carries the threshold(s) under its sha256 and signature.

    The names are resolved once, into one :class:`~workbench.calibration.versions.Context` (``context``, else
    one made here) whose reads the report, the selective section and the version frozen share, all inside one read
    snapshot of the database; the writes (the frozen version, the export's row, its audit entry) follow it.
    """
    key = workspace_signing_key(workspace) if signing_key == WORKSPACE_KEY else signing_key
    with (nullcontext(context) if context is not None
          else Context.reading(store, golden_set, rubric, options.run)) as ctx:
        report, section, note = _approved(ctx, judge, options, workspace, selective, guarantee)
        scope, snapshot = ctx.scope(judge, options.run), ctx.snapshot() if snapshot_needed(report) else None
    report = freeze_version(store, report, scope, snapshot=snapshot)
    bundle = approve(report, scope)
    if section is not None:
        bundle = bundle.but(selective=section)
        bundle = bundle.but(sha256=sha256_hex(bundle.content()))
    if key is not None:
        bundle = sign_bundle(bundle, key)
    data = bundle.to_json()
    validate_bundle(data, source="the new bundle")
    if out_dir is None:
        out_dir = approved_dir(workspace)
    path = bundle_path(Path(out_dir), bundle.rubric.name, bundle.rubric.version, judge)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ("# Approved by Judge Workbench: do not edit (the sha256 covers every field but the signature, and the "
            "signature covers the same fields).\n"
            + yaml.dump(data, Dumper=_PlainDumper, sort_keys=True, allow_unicode=True, width=120))
    write_atomic(path, text)
    ids = report.ids
    with store.transaction():  # the export's row and its audit entry land together
        known = any(e.get("path") == str(path) and e.get("sha256") == bundle.sha256 for e in store.exports())
        store.record_export(str(path), bundle.sha256, ids.rubric_version_id, ids.judge_pk, ids.golden_set_version_id)
        if not known:
            audit.record(store, actor=actor, action="export.approved",
                         target=f"{bundle.rubric.name}@v{bundle.rubric.version}--{judge}",
                         detail={"golden_set": golden_set, "path": path.name, "sha256": bundle.sha256,
                                 "signed_by": key.key_id if key is not None else None})
    return ExportResult(path, bundle.sha256, bundle, note,
                        f"key {key.key_id} from {key.source}" if key is not None else None)


def _approved(ctx: Context, judge: str, options: Options, workspace: Workspace | None,
              selective: SelectivePolicy | None,
              guarantee: Guarantee | None) -> tuple[CalibrationReport, dict | None, str | None]:
    """The reads of an export: the report with its verdict (and the selective check asked for), the bundle's
    selective section, and the note for an older version; :class:`GateFailed` when the pair does not pass."""
    report = ctx.report(judge, options, workspace=workspace)
    scope = ctx.scope(judge, options.run)
    check_one_version(ctx.store, report, scope)
    section = None
    if (request := selective if selective is not None else report.policy.selective) is not None:
        if guarantee is None:  # never exported without the guarantee the policy asks for
            raise WorkbenchError(f"rubric '{ctx.rubric}' asks for a selective guarantee (its policy's selective "
                                 "section), which this export does not judge; export it with 'workbench export'")
        report, section = guarantee(ctx, report, request)
    if not report.calibrated:
        raise GateFailed(ctx.rubric, judge, report.verdict)
    return report, section, _older_version_note(ctx.store, ctx.rubric, scope)


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
    rv, row, run = scope.rubric, JudgeRow(**scope.judge_row), RunRow(**scope.run)
    found = []
    if (report.rubric.name, report.rubric.version, report.rubric.hash) != (rv.name, rv.version, rv.hash):
        found.append(f"the calibration report is of v{report.rubric.version}")
    if row.rubric_id != rv.id or run.rubric_version != rv.version:
        found.append(f"run '{run.name}' belongs to v{run.rubric_version}")
    others = [h for h in store.run_config_hashes(run.id) if h != row.config_hash]
    if others:
        found.append(f"run '{run.name}' holds judgments made under {len(others)} other judge config(s)")
    if found:
        raise VersionMismatch(f"rubric '{rv.name}' v{rv.version} was not exported for judge '{row.judge_id}': "
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


def load_bundle(store: Store, path: str | Path, workspace: Workspace | None = None) -> dict:
    """Read and verify a bundle for a command that trusts it (grade, board grade): hash, a signed bundle's signature
    with the workspace's public keys, schema, and that this workbench database exported it."""
    path = Path(path)
    bundle = _verified(path, workspace)
    if not store.export_recorded(Bundle.from_json(bundle).sha256):
        raise BundleRefused(f"{path.name} did not come from an export of this workbench database (its sha256 is not "
                            f"among the recorded exports); grade with the --db it was exported from.")
    return bundle


def read_bundle(path: str | Path) -> dict:
    """Read a bundle and verify what needs no database and no key: plain YAML, its sha256, the schema."""
    path = Path(path)
    bundle = _parse_bundle(path)
    validate_bundle(bundle, source=path.name)
    return bundle


def _parse_bundle(path: Path) -> dict:
    """Plain YAML with a sha256 that matches its content (the schema is not looked at yet)."""
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
    if sha256_hex(bundle_content(bundle)) != bundle["sha256"]:
        raise BundleRefused(f"{path.name} was edited after export: its content no longer matches its sha256; "
                            f"re-export it with 'workbench export' instead of editing it.")
    return bundle


def verify_signature(bundle: dict, name: str, trusted: TrustedKeys, *, allow_unsigned: bool = False,
                     to_trust: str = "pass --trust with that signer's public key if you trust it") -> str:
    """The sentence saying what vouched for the bundle's signature, or :class:`SignatureRefused` with one saying why
    nothing did. ``trusted`` is the --trust files, or the workspace's own public keys; an unsigned bundle passes only
    when no key is trusted at all or with ``allow_unsigned``, and says so."""
    where = ("the trusted keys" if trusted.given else "the workspace's keys") + f" ({trusted.describe()})"
    signature = bundle.get("signature")
    if signature is None:
        if allow_unsigned:
            return f"{name}: skipped the signature check: the bundle is unsigned and --allow-unsigned accepts it."
        if not trusted.keys:
            return (f"{name}: skipped the signature check: the bundle is unsigned and {where} hold no key to ask for "
                    "one (sign bundles with 'workbench keys init', check them with --trust NAME.pub).")
        raise SignatureRefused(f"{name} is not signed, but {where} require a signature; re-export it in the signing "
                               "workspace ('workbench keys init' once, then 'workbench export'), or pass "
                               "--allow-unsigned to accept an old unsigned bundle.")
    key_id = signature.get("key_id") if isinstance(signature, dict) else None
    if not trusted.keys:
        raise SignatureRefused(f"the signature of {name} (key {key_id}) cannot be verified: no --trust was given and "
                               f"there is {trusted.describe()}; pass --trust with the signer's public key "
                               "(the NAME.pub beside its private key).")
    try:
        key = verify_json(signature, bundle_content(bundle), trusted)
    except SignatureError as e:
        if e.reason == "untrusted":
            raise SignatureRefused(f"the signature of {name} was made by key {key_id}, which is not among {where}; "
                                   f"{to_trust}, or re-export the bundle with a trusted key.") from None
        if e.reason == "mismatch":
            raise SignatureRefused(f"the signature of {name} (key {key_id}) does not match its content: the bundle "
                                   "was changed after it was signed, even if its sha256 was recomputed; re-export it "
                                   "with 'workbench export' instead of editing it.") from None
        raise SignatureRefused(f"the signature of {name} is malformed: {e}; re-export it with "
                               "'workbench export'.") from None
    return f"{name}: signature by key {key.key_id} verified with {key.source}."


def read_signed_bundle(path: str | Path, trusted: TrustedKeys, *, allow_unsigned: bool = False) -> tuple[Bundle, str]:
    """Read a bundle, then verify its sha256, its signature (before the schema: an edit that also breaks the schema
    is still reported as a broken signature) and its schema; the bundle and the signature's sentence."""
    path = Path(path)
    bundle = _parse_bundle(path)
    said = verify_signature(bundle, path.name, trusted, allow_unsigned=allow_unsigned)
    validate_bundle(bundle, source=path.name)
    return Bundle.from_json(bundle), said


def workspace_trust(workspace: Workspace | None = None) -> TrustedKeys:
    """The public keys in the workspace's keys/ folder."""
    ws = workspace or current_workspace()
    return TrustedKeys.from_folder(ws.keys, shown_path(ws.keys))


def require_valid_signature(path: str | Path, workspace: Workspace | None = None) -> Bundle:
    """For a command that uses a bundle (grade, export --bundle): a signed bundle must verify with the workspace's
    public keys; an unsigned one passes as before (its sha256 is checked, and grading checks the export record)."""
    return Bundle.from_json(_verified(Path(path), workspace))


def _verified(path: Path, workspace: Workspace | None) -> dict:
    """The bundle's JSON once :func:`require_valid_signature`'s checks pass."""
    bundle = _parse_bundle(path)
    if (signature := bundle.get("signature")) is not None:
        trusted = workspace_trust(workspace)
        if not trusted.keys:
            key_id = signature.get("key_id") if isinstance(signature, dict) else None
            raise SignatureRefused(f"the signature of {path.name} (key {key_id}) cannot be verified: there is "
                                   f"{trusted.describe()}; put the signer's public key (NAME.pub) there, or verify "
                                   "the bundle with 'workbench check --trust NAME.pub'.")
        verify_signature(bundle, path.name, trusted, to_trust=f"put that signer's public key (NAME.pub) in "
                                                              f"{trusted.folder} if you trust it")
    validate_bundle(bundle, source=path.name)
    return bundle


def list_bundles(store: Store) -> list[ExportedBundle]:
    return [ExportedBundle(**row) for row in store.exports()]
