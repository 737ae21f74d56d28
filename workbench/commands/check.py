"""`workbench check`: the CI gate in front of grading: is the judge about to grade the approved one?"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from workbench.cli import EXIT_GATE_FAILED, Ctx, _shown, clean_errors, pass_ctx


def register(main: click.Group) -> None:
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
    @pass_ctx
    @clean_errors
    def check(ctx: Ctx, bundle: str, judge_config: str | None, trust_files: tuple[str, ...], allow_unsigned: bool,
              no_golden_set_check: bool) -> None:
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
        from workbench.services.export import workspace_trust
        from workbench.services.judge_check import check_bundle
        from workbench.signing import TrustedKeys

        trusted = (TrustedKeys.from_files((Path(f), f) for f in trust_files) if trust_files
                   else workspace_trust(ctx.workspace))
        db = ctx.workspace.db
        store = ctx.store if str(db) == ":memory:" or db.exists() else None
        result = check_bundle(bundle, judge_config=judge_config, store=store, db_name=_shown(db), trusted=trusted,
                              allow_unsigned=allow_unsigned, golden_set_check=not no_golden_set_check)
        for line in result.compared:
            click.echo(f"ok: {line}")
        for line in result.problems:
            click.secho(f"FAIL: {line}", fg="red", err=True)
        if not result.ok:
            sys.exit(EXIT_GATE_FAILED)
        click.echo(f"The judge is the approved one ({len(result.compared)} comparisons).")
