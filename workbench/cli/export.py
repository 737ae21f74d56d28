"""`workbench export`, `grade` and `report`: an approved bundle, grading with it, and the report card; `keys`, the
signing key pair with which export signs every bundle; and `check`, the CI gate in front of grading."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from workbench.cli.common import (
    EXIT_GATE_FAILED,
    Ctx,
    WorkbenchCommand,
    _calibration_options,
    _echo_json,
    _options,
    _require,
    _shown,
    clean_errors,
    pass_ctx,
)
from workbench.core.scale import fmt as _fmt


@click.command(cls=WorkbenchCommand)
@click.option("--golden-set", "-g", default=None)
@click.option("--rubric", "-r", default=None,
              help="NAME (the newest version the judge has judgments of) or NAME@vN (exactly version N).")
@click.option("--judge", "-j", default=None)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the bundle (default: rubrics/approved in the project).")
@click.option("--to", "targets", type=click.Choice(["promptfoo", "inspect", "mlflow"]), multiple=True,
              help="Also write the approved judge for this tool (repeatable): a promptfoo llm-rubric config, an "
                   "Inspect AI scorer module or an MLflow make_judge JSON, beside the bundle.")
@click.option("--bundle", "bundle_file", type=click.Path(dir_okay=False), default=None,
              help="With --to: write the tool files from this approved bundle instead of exporting one.")
@click.option("--selective", is_flag=True, help="Carry a confidence threshold with its guarantee (docs/selective.md).")
@click.option("--target-agreement", type=float, default=None, help="--selective: agreement wanted on kept items.")
@click.option("--risk", type=float, default=None, help="--selective: chance the guarantee may fail, in (0, 0.5].")
@click.option("--cascade", default=None, help="--selective: J1,J2[,J3] (J1 the judge exported): each judge's threshold.")
@_calibration_options
@pass_ctx
@clean_errors
def export(ctx: Ctx, golden_set: str | None, rubric: str | None, judge: str | None, out_dir: str | None,
           targets: tuple[str, ...], bundle_file: str | None, selective: bool, target_agreement: float | None,
           risk: float | None, cascade: str | None, **opts: Any) -> None:
    """Export an approved bundle for a pair that passes the gate (exit 3 when it does not).

    With --to, the approved judge is also written for promptfoo, Inspect AI or
    MLflow, carrying the bundle's sha256 and golden-set version. The bundle is
    signed (Ed25519) with WORKBENCH_SIGNING_KEY (PEM text or a key file's path)
    when set, else with keys/workbench.key when 'workbench keys init' made one.

    \b
    Example:
      workbench export --golden-set demo --rubric demo-patch-quality --judge careful-sonnet
      workbench export --golden-set demo --rubric demo-patch-quality@v1 --judge careful-sonnet
      workbench export -g demo -r demo-patch-quality -j careful-single --to promptfoo --to inspect
      workbench export --bundle rubrics/approved/demo-patch-quality@v2--careful-single.yaml --to mlflow
      workbench export -g demo -r demo-patch-quality -j careful-sonnet --selective --target-agreement 0.85 --risk 0.1

    A selective export (or a rubric whose policy has a selective section) is
    refused, exit 3, unless its "selective guarantee" check passes too.
    """
    from workbench.features.export.bundle import require_valid_signature
    from workbench.features.export.tool_files import export_judge

    if bundle_file is not None:
        _require(bool(targets) and not (golden_set or rubric or judge), "--bundle", bundle_file,
                 "given with --to and without --golden-set, --rubric or --judge",
                 f"{bundle_file} --to promptfoo")
        bundle, path = require_valid_signature(bundle_file, ctx.workspace), Path(bundle_file)
    else:
        for option, value in (("--golden-set", golden_set), ("--rubric", rubric), ("--judge", judge)):
            _require(value is not None, option, "nothing", "given (or give --bundle FILE with --to)", "NAME")
        from workbench.features.selective.service import selective_request

        request = selective_request(None, judge, selective=selective, target=target_agreement, risk=risk,
                                    cascade=cascade)  # the flags checked before anything is computed
        bundle, path = _exported(ctx, golden_set, rubric, judge, out_dir, request, _options(**opts))
    for target in targets:
        written = export_judge(bundle, path, target, out_dir or path.parent)
        click.echo(f"Wrote {_shown(written)} ({target}); check it with: workbench check {_shown(path)} "
                   f"--judge-config {_shown(written)}")


def _exported(ctx: Ctx, golden_set: str, rubric: str, judge: str, out_dir: str | None, request: Any,
              options: Any) -> tuple[Any, Path]:
    """Export the pair and say so (the bundle and its file), or say why not and exit 3."""
    from workbench.calibration.versions import VersionNotRun
    from workbench.features.export.bundle import UNSIGNED_HINT, GateFailed, VersionMismatch, export_bundle
    from workbench.features.selective.service import gate_and_section

    try:
        res = export_bundle(ctx.store, golden_set, rubric, judge, out_dir=out_dir, options=options,
                            workspace=ctx.workspace, selective=request, guarantee=gate_and_section)
    except GateFailed as e:
        _refused(e, golden_set, rubric, judge)
    except (VersionNotRun, VersionMismatch) as e:  # nothing of that version to approve: refused like the gate
        click.secho(f"Not exported: {e}", fg="red", err=True)
        sys.exit(EXIT_GATE_FAILED)
    click.echo(f"Exported {_shown(res.path)} (sha256 {res.sha256[:16]}"
               + (f", signed with {res.signed_by})." if res.signed_by else f"). {UNSIGNED_HINT}"))
    if res.note:
        click.echo(res.note)
    return res.approved, res.path


def _refused(e: Any, golden_set: str, rubric: str, judge: str) -> None:
    """Say why the gate refused the pair (and what decides an undecided one), and exit 3."""
    from workbench.calibration.gate import STATUS_MARK

    undecided = e.verdict is not None and e.verdict.state == "undecided"
    click.secho(f"Not exported: judge '{judge}' " + ("is not decided yet" if undecided else
                                                      "does not pass the gate")
                + f" for rubric '{rubric}'" + (": a check still straddles its bound, and an undecided "
                                                "check blocks export like a failure." if undecided else "."),
                fg="red", err=True)
    for c in e.failed:
        click.echo(f"  [{STATUS_MARK[c.status]}] {c.name}: {c.message}", err=True)
    if undecided and any(c.id != "selective" for c in e.verdict.undecided):  # plan knows the whole-set checks
        click.echo(f"  The labels that decide it: workbench plan -g {golden_set} -r {rubric} -j {judge}",
                   err=True)
    sys.exit(EXIT_GATE_FAILED)


@click.command(cls=WorkbenchCommand)
@click.option("--bundle", "bundle_file", required=True, type=click.Path(dir_okay=False),
              help="Approved bundle written by 'workbench export'.")
@click.option("--items", "items_file", required=True, type=click.Path(dir_okay=False),
              help="New items to grade (.jsonl or .csv).")
@click.option("--labels", "labels_file", type=click.Path(dir_okay=False), default=None,
              help="Human labels of some of the items (enables prediction-powered inference).")
@click.option("--judgments", "judgments_file", type=click.Path(dir_okay=False), default=None,
              help="The judge's outputs made elsewhere, instead of running the judge.")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Per-item results (.jsonl; default: reports/<items>.graded.jsonl in the project).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--resamples", default=2000, show_default=True)
@click.option("--seed", default=0, show_default=True)
@click.option("--queue", default=None, help="Selective bundle: put the items the judge abstains on into this golden set.")
@click.option("--cascade-judgments", "cascade_files", multiple=True, metavar="JUDGE=FILE",
              help="Cascade bundle: the judgments of a later judge of the cascade (repeatable).")
@pass_ctx
@clean_errors
def grade(ctx: Ctx, bundle_file: str, items_file: str, labels_file: str | None, judgments_file: str | None,
          out: str | None, as_json: bool, resamples: int, seed: int, queue: str | None,
          cascade_files: tuple[str, ...]) -> None:
    """Grade new items with an approved judge; report raw and bias-corrected pass rates.

    \b
    Example:
      workbench grade --bundle rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml \\
          --items new_items.jsonl --labels some_labels.jsonl --out graded.jsonl
    """
    from workbench.features.export.records import GradeResult
    from workbench.features.grading.service import grade as run

    _require(resamples >= 1, "--resamples", resamples, "a whole number of at least 1", "2000")
    _require(seed >= 0, "--seed", seed, "a whole number of 0 or more", "0")
    for given in cascade_files:
        _require(given.count("=") == 1 and all(given.split("=")), "--cascade-judgments", given, "JUDGE=FILE",
                 "strong-judge=strong_judgments.jsonl")
    if out is None:
        out = str(ctx.workspace.reports / f"{Path(items_file).stem}.graded.jsonl")  # made once the grades are in
    data = run(ctx.store, bundle_file, items_file, labels_file=labels_file, judgments_file=judgments_file, out=out,
               resamples=resamples, seed=seed, workspace=ctx.workspace, queue=queue,  # a signed bundle must verify
               cascade_judgments=dict(f.split("=") for f in cascade_files) or None)
    r = GradeResult.from_json(data)
    if as_json:
        _echo_json(data)
        click.echo(f"Per-item results: {_shown(Path(r.results_file))}", err=True)
        return
    raw, cor = r.raw_pass_rate, r.corrected_pass_rate
    click.echo(f"Graded {r.n_scored} of {r.n_items} items with {r.bundle.judge} "
               f"(rubric {r.bundle.rubric} v{r.bundle.rubric_version}).")
    if r.n_abstained is not None:
        click.echo(_abstention_line(r, queue))
    click.echo(f"  raw pass rate        {_fmt(raw.value)}  ({_fmt(raw.ci_low)} to {_fmt(raw.ci_high)})")
    click.echo(f"  corrected pass rate  {_fmt(cor.value)}  ({_fmt(cor.ci_low)} to {_fmt(cor.ci_high)})"
               f"  [Rogan-Gladen, TPR {_fmt(r.tpr)}, TNR {_fmt(r.tnr)}]")
    if r.correction_reason:
        click.echo(f"  note: {r.correction_reason}")
    if r.ppi:
        p = r.ppi
        click.echo(f"  prediction-powered   {_fmt(p.estimate)}  ({_fmt(p.ci_low)} to {_fmt(p.ci_high)})"
                   f"  [{p.n_labeled} human-labeled, lambda {_fmt(p.weight, 2)}]")
    click.echo(f"Per-item results: {_shown(Path(r.results_file))}")


def _abstention_line(r: Any, queue: str | None) -> str:
    """What a selective bundle's judge (or cascade) kept and abstained on, in one line."""
    stages = r.selective.get("cascade") or []
    below = ("no judge of the cascade kept them: " + ", ".join(
        f"{s['judge']} graded {s['n_graded']}" + ("" if s["threshold"] is None else f" (>= {s['threshold']:.3g})")
        for s in stages) if stages else f"confidence below {r.selective.get('threshold'):.3g}")
    return (f"  abstained on {r.n_abstained} of {r.n_items} items ({r.share_abstained:.0%}: {below}); the pass "
            f"rates are over the kept items" + (f"; the abstained items are in golden set '{queue}'"
                                                if queue and r.n_abstained else ""))


@click.command(cls=WorkbenchCommand)
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--judge", "-j", required=True)
@click.option("--format", "fmt", type=click.Choice(["md", "html", "eee"]), default="html", show_default=True,
              help="md or html: the calibration card; eee: the result in EvalEval's Every Eval Ever schema (JSON).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="File to write (default: reports/calibration-<rubric>-v<version>-<judge>.<format> in the project; "
                   ".eee.json for eee).")
@click.option("--organization", default="unspecified", show_default=True,
              help="eee only: the organization that provides the result (source_organization_name).")
@click.option("--selective", is_flag=True, help="md or html: the card also says the selective guarantee (docs/selective.md).")
@click.option("--target-agreement", type=float, default=None, help="--selective: agreement wanted on kept items.")
@click.option("--risk", type=float, default=None, help="--selective: chance the guarantee may fail, in (0, 0.5].")
@_calibration_options
@pass_ctx
@clean_errors
def report(ctx: Ctx, golden_set: str, rubric: str, judge: str, fmt: str, out: str | None, organization: str,
           selective: bool, target_agreement: float | None, risk: float | None, **opts: Any) -> None:
    """Write a shareable calibration card (Markdown or HTML), or the result in the Every Eval Ever schema.

    \b
    Example:
      workbench report --golden-set demo --rubric demo-patch-quality --judge gpt4o-self --format html
      workbench report -g demo -r demo-patch-quality -j careful-sonnet --format eee --organization "Acme evals"
    """
    if fmt == "eee":
        from workbench.features.export.eee import write_eee

        path = write_eee(ctx.store, golden_set, rubric, judge, out=out, options=_options(**opts),
                         workspace=ctx.workspace, organization=organization)
        click.echo(f"Wrote {_shown(path)} (Every Eval Ever schema, validated)")
        return
    from workbench.calibration.versions import Context
    from workbench.features.export.card import write_card
    from workbench.features.selective.service import card_guarantee

    with Context.reading(ctx.store, golden_set, rubric, opts.get("run")) as names:  # resolved once, one snapshot
        # the guarantee asked for (the flags, else the policy's selective section): its check and its one sentence
        guarantee = card_guarantee(names, selective=selective, target=target_agreement, risk=risk)
        path = write_card(ctx.store, golden_set, rubric, judge, fmt=fmt, out=out, options=_options(**opts),
                          workspace=ctx.workspace, guarantee=guarantee, context=names)
    click.echo(f"Wrote {_shown(path)}")


def _register_keys(main: click.Group) -> None:
    @main.group("keys")
    def keys() -> None:
        """The signing key pair: export signs bundles with it, check verifies them with its public half."""

    @keys.command("init")
    @click.option("--key", "key_path", type=click.Path(dir_okay=False), default=None,
                  help="Where to write the private key (default: keys/workbench.key in the project); the public key "
                       "goes beside it as NAME.pub.")
    @click.option("--force", is_flag=True, help="Replace an existing key pair (bundles signed with the old key then "
                                                "verify only with the old public key).")
    @pass_ctx
    @clean_errors
    def init(ctx: Ctx, key_path: str | None, force: bool) -> None:
        """Write an Ed25519 key pair: the private key owner-only (mode 600), the public key as NAME.pub.

        \b
        The private key is never printed; keys/.gitignore keeps it out of git.
        Commit the .pub: `check --trust` verifies bundles with it.
        Example:
          workbench keys init
          workbench keys init --key ~/.config/workbench/team.key     # then WORKBENCH_SIGNING_KEY=that path
        """
        from workbench.features.export.signing import generate_key_pair, public_path_for, write_gitignore

        ws = ctx.workspace
        private = Path(key_path).expanduser() if key_path else ws.signing_key_file
        in_workspace = private.absolute().parent == ws.keys.absolute()
        key = generate_key_pair(private, force=force, shown=_shown(private))
        public = public_path_for(private)
        click.echo(f"Wrote the private key {_shown(private)} (owner-only, mode 600; never share or commit it) and the "
                   f"public key {_shown(public)} (key id {key.key_id}).")
        if in_workspace:
            click.echo(f"{_shown(write_gitignore(ws.keys))} keeps every *.key of {_shown(ws.keys)} out of git; commit "
                       f"{_shown(public)}.")
        if private.absolute() != ws.signing_key_file.absolute():
            click.echo(f"export signs with it when WORKBENCH_SIGNING_KEY={_shown(private)} is set (the variable may "
                       "also hold the key file's PEM text, as a CI secret).")
        else:
            click.echo("Every 'workbench export' of this workspace now signs its bundle.")
        click.echo(f"Verify a bundle with: workbench check BUNDLE --trust {_shown(public)}")

    @keys.command("show")
    @pass_ctx
    @clean_errors
    def show(ctx: Ctx) -> None:
        """Print the signing key's id and its public key (PEM), never the private key.

        \b
        The key is WORKBENCH_SIGNING_KEY when set, else keys/workbench.key.
        Example:
          workbench keys show
        """
        from workbench.features.export.bundle import workspace_signing_key
        from workbench.features.export.signing import public_pem

        key = workspace_signing_key(ctx.workspace)
        if key is None:
            click.echo(f"No signing key: {_shown(ctx.workspace.signing_key_file)} does not exist and "
                       "WORKBENCH_SIGNING_KEY is not set; create one with 'workbench keys init'.")
            return
        click.echo(f"Signing key {key.key_id} ({key.source}); its public key:")
        click.echo(public_pem(key.public.key), nl=False)


def _register_check(main: click.Group) -> None:
    @main.command("check")
    @click.argument("bundle", type=click.Path(dir_okay=False))
    @click.option("--judge-config", "judge_config", type=click.Path(dir_okay=False), default=None,
                  help="The judge about to grade: a file written by 'export --to promptfoo|inspect|mlflow', a rubric "
                       "YAML, or a judge entry (id, model, temperature, ...).")
    @click.option("--trust", "trust_files", type=click.Path(dir_okay=False), multiple=True, metavar="KEYS.pub",
                  help="Public key file(s) a signature may come from (repeatable; a file may hold several PEM keys). "
                       "Default: every keys/*.pub of the workspace. With trusted keys, an unsigned bundle fails.")
    @click.option("--allow-unsigned", is_flag=True,
                  help="Accept an unsigned bundle (exported before signing) and say that its signature was skipped.")
    @click.option("--no-golden-set-check", "no_golden_set_check", is_flag=True,
                  help="Do not compare the golden set with a database (a CI job without one); without this flag a "
                       "missing database is an error.")
    @click.option("--as-of", "as_of", metavar="YYYY-MM-DD", default=None,
                  help="Judge expiry and production alarms as of this day (or set WORKBENCH_NOW; default: today).")
    @pass_ctx
    @clean_errors
    def check(ctx: Ctx, bundle: str, judge_config: str | None, trust_files: tuple[str, ...], allow_unsigned: bool,
              no_golden_set_check: bool, as_of: str | None) -> None:
        """Fail (exit 3) when the bundle was edited or is not signed by a trusted key, the judge differs from the
        approved one, or its golden set changed.

        \b
        Prints one sentence per problem. A signed bundle is verified with the
        --trust keys, else with the workspace's keys/*.pub. The golden set is
        compared with the workspace database (--db); a job without one passes
        --no-golden-set-check.
        Example:
          workbench check rubrics/approved/demo-patch-quality@v2--careful-single.yaml --trust keys/workbench.pub \\
              --judge-config rubrics/approved/demo-patch-quality@v2--careful-single.promptfoo.yaml
          workbench check BUNDLE --trust keys/workbench.pub --no-golden-set-check      # CI, no database
        """
        from workbench.features.export.bundle import workspace_trust
        from workbench.features.export.check import check_bundle
        from workbench.features.export.signing import TrustedKeys

        trusted = (TrustedKeys.from_files((Path(f), f) for f in trust_files) if trust_files
                   else workspace_trust(ctx.workspace))
        db = ctx.workspace.db
        store = ctx.store if ctx.workspace.db_exists() else None
        result = check_bundle(bundle, judge_config=judge_config, store=store, db_name=_shown(db), trusted=trusted,
                              allow_unsigned=allow_unsigned, golden_set_check=not no_golden_set_check, as_of=as_of)
        for line in result.compared:
            click.echo(f"ok: {line}")
        for line in result.problems:
            click.secho(f"FAIL: {line}", fg="red", err=True)
        if not result.ok:
            sys.exit(EXIT_GATE_FAILED)
        click.echo(f"The judge is the approved one ({len(result.compared)} comparisons).")


@click.command("export-labels", cls=WorkbenchCommand)
@click.option("--golden-set", "-g", required=True, help="Golden set whose human labels go out.")
@click.option("--to", "target", required=True, type=click.Choice(["jsonl", "mlflow", "langfuse"]),
              help="jsonl: a file, one line per label; mlflow: HUMAN feedback on traces of a tracking store; "
                   "langfuse: a file of score-create events for Langfuse's ingestion API.")
@click.argument("dest", metavar="DEST")
@click.option("--rubric", "-r", default=None, help="Only the labels of this rubric (default: every rubric's).")
@click.option("--data-type", type=click.Choice(["numeric", "categorical"]), default="numeric", show_default=True,
              help="langfuse: the score as a NUMERIC value, or its level's label as a CATEGORICAL one.")
@pass_ctx
@clean_errors
def export_labels(ctx: Ctx, golden_set: str, target: str, dest: str, rubric: str | None, data_type: str) -> None:
    """Write every human label of a golden set to DEST, once each (the latest value of a changed label).

    DEST is a file for jsonl and langfuse, a tracking URI for mlflow (with
    #experiment=NAME, else an experiment named after the golden set). Exporting
    again writes the same file, or adds no MLflow assessment.

    \b
    Example:
      workbench export-labels --golden-set qa --to jsonl labels-out.jsonl
      workbench export-labels --golden-set qa --to mlflow 'sqlite:///mlflow.db#experiment=qa'
      workbench export-labels -g qa --to langfuse scores.json --rubric qa --data-type categorical
    """
    from workbench.features.interop.writeback import export_labels as write_back

    click.echo(write_back(ctx.store, golden_set, target, dest, rubric=rubric, data_type=data_type).summary())


def register(main: click.Group) -> None:
    for command in (export, grade, report, export_labels):
        main.add_command(command)
    _register_keys(main)
    _register_check(main)
