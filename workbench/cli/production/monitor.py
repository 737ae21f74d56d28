"""`workbench monitor`: production traces an approved bundle grades, their report with alarms, and promoting the
labeled ones into a golden set (issue 31; docs/monitoring.md)."""

from __future__ import annotations

import click

from workbench.cli.common import Ctx, WorkbenchGroup, _echo_json, clean_errors, pass_ctx


@click.group(cls=WorkbenchGroup)
def monitor() -> None:
    """An approved judge watched on live traffic: ingest traces, report pass rates and alarms, promote labels."""
    pass


@monitor.command("ingest", creates_db=False)
@click.option("--stream", "-s", required=True, help="The stream's name; its sampled traces form the golden set of "
              "the same name.")
@click.option("--bundle", "-b", "bundle_file", required=True, type=click.Path(dir_okay=False),
              help="The approved bundle whose judge grades the stream.")
@click.option("--from", "source", required=True, type=click.Choice(["jsonl", "otel"]),
              help="jsonl: one trace per line; otel: an OTLP JSON file of GenAI chat spans.")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--label-rate", type=float, default=0.05, show_default=True,
              help="Probability that a new trace goes to reviewers (independent draws).")
@click.option("--seed", type=int, default=None, help="Seed of the draws (default: a random one, recorded).")
@pass_ctx
@clean_errors
def monitor_ingest(ctx: Ctx, stream: str, bundle_file: str, source: str, file: str, label_rate: float,
                   seed: int | None) -> None:
    """Add FILE's new traces to the stream (ingesting a file again adds nothing).

    \b
    Example:
      workbench monitor ingest --stream support-prod --bundle rubrics/approved/qa@v1--careful.yaml \\
          --from jsonl traces.jsonl --label-rate 0.05
    """
    from workbench.features.export.bundle import load_bundle
    from workbench.features.monitoring.ingest import ingest

    bundle = load_bundle(ctx.store, bundle_file, ctx.workspace)  # its hash, signature, and that this db exported it
    result = ingest(ctx.store, stream, bundle, click.format_filename(bundle_file).rsplit("/", 1)[-1], source, file,
                    label_rate=label_rate, seed=seed)
    click.echo(result.summary())


@monitor.command("report")
@click.option("--stream", "-s", required=True, help="The stream to report on.")
@click.option("--window", type=click.Choice(["day", "week"]), default="day", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print {\"windows\": [...]} as JSON.")
@pass_ctx
@clean_errors
def monitor_report(ctx: Ctx, stream: str, window: str, as_json: bool) -> None:
    """Per window: traces, labels, raw and corrected pass rates, agreement, and alarms as sentences.

    \b
    Example:
      workbench monitor report --stream support-prod --window week --json
    """
    from workbench.features.monitoring.render import report_text
    from workbench.features.monitoring.report import monitor_report as build

    report = build(ctx.store, stream, window=window)
    if as_json:
        _echo_json(report.to_json())
    else:
        click.echo(report_text(report))


@monitor.command("promote")
@click.option("--stream", "-s", required=True, help="The stream whose labeled traces join the golden set.")
@click.option("--golden-set", "-g", "golden_set", required=True, help="The golden set that gains a new version.")
@pass_ctx
@clean_errors
def monitor_promote(ctx: Ctx, stream: str, golden_set: str) -> None:
    """Add the stream's labeled traces (labels and the judge's verdicts) to a golden set as a new frozen version.

    \b
    Example:
      workbench monitor promote --stream support-prod --golden-set qa
    """
    from workbench.features.monitoring.promote import promote

    click.echo(promote(ctx.store, stream, golden_set).summary())


@monitor.command("prune")
@click.option("--stream", "-s", required=True, help="The stream whose old raw traces go.")
@click.option("--keep-days", type=int, required=True, help="Days of raw traces to keep (at least 1; today counts).")
@click.option("--as-of", default=None, help="The day to count from (YYYY-MM-DD; default WORKBENCH_NOW, else today).")
@pass_ctx
@clean_errors
def monitor_prune(ctx: Ctx, stream: str, keep_days: int, as_of: str | None) -> None:
    """Drop the stream's unsampled traces older than --keep-days; the day aggregates (what the report reads) and
    every sampled trace stay, so the report over those days is unchanged.

    \b
    Example:
      workbench monitor prune --stream support-prod --keep-days 30
    """
    from workbench.features.monitoring.production import clock
    from workbench.features.monitoring.prune import prune

    now = clock(as_of) if as_of else clock()
    click.echo(prune(ctx.store, stream, keep_days, now).summary())
