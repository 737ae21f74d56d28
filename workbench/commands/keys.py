"""`workbench keys`: the workspace's Ed25519 signing key pair, with which `export` signs every bundle."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.cli import Ctx, _shown, clean_errors, pass_ctx


def register(main: click.Group) -> None:
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
        from workbench.signing import generate_key_pair, public_path_for, write_gitignore

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
        from workbench.services.export import workspace_signing_key
        from workbench.signing import public_pem

        key = workspace_signing_key(ctx.workspace)
        if key is None:
            click.echo(f"No signing key: {_shown(ctx.workspace.signing_key_file)} does not exist and "
                       "WORKBENCH_SIGNING_KEY is not set; create one with 'workbench keys init'.")
            return
        click.echo(f"Signing key {key.key_id} ({key.source}); its public key:")
        click.echo(public_pem(key.public.key), nl=False)
