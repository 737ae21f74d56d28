"""`workbench init`, `demo` and `ui`: a workspace, the seeded demo, and the UI server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

import click

from workbench.cli.common import (
    UI_STOP_GRACE_S,
    Ctx,
    WorkbenchCommand,
    Workspace,
    _quote,
    _shown,
    clean_errors,
    pass_ctx,
)


@click.command(cls=WorkbenchCommand, creates_db=True)
@pass_ctx
@clean_errors
def init(ctx: Ctx) -> None:
    """Make an empty workspace: the database, an example rubric and the gate policy.

    \b
    Example:
      workbench init
      workbench init --project ~/evals/patch-quality
    """
    from workbench.core.workspace import init_workspace

    ws = ctx.workspace
    res = init_workspace(ws)
    ctx.store  # creates and migrates the database
    click.echo(f"Workspace {ws.root}:")
    for path in res.written:
        click.echo(f"  wrote {_shown(path)}")
    for path in res.kept:
        click.echo(f"  kept  {_shown(path)} (already there)")
    click.echo(f"  database {_shown(ws.db)}")
    click.echo("Next:" + (f"  (in {_quote(ws.root)}, or add --project {_quote(ws.root)} to each command)"
                          if ws.root != Path.cwd().absolute() else "") + "\n"
               "  1. edit rubrics/example.yaml (scale, criteria, judges), then:  workbench rubric add "
               "rubrics/example.yaml\n"
               "  2. workbench import items ITEMS.jsonl --golden-set NAME     (.jsonl or .csv: id, task_id, category, input, output, ...)\n"
               "  3. workbench rater set YOUR_NAME --role lead, then  workbench ui  to label and adjudicate\n"
               "  4. workbench judge run --golden-set NAME --rubric example --judge sonnet --dry-run\n"
               "  5. workbench calibrate --golden-set NAME --rubric example --judge sonnet\n"
               "To see all of it on synthetic data first:  workbench demo")


@click.command(cls=WorkbenchCommand, creates_db=True)
@click.option("--no-ui", is_flag=True, help="Seed the database and stop; do not start the UI.")
@click.option("--port", default=8501, show_default=True, help="Port of the UI on 127.0.0.1.")
@pass_ctx
@clean_errors
def demo(ctx: Ctx, no_ui: bool, port: int) -> None:
    """Seed the database with the synthetic demo, write its files into the workspace, and open the UI.

    \b
    Example:
      workbench demo              # seeds ./workbench.db, UI on http://127.0.0.1:8501
      workbench demo --no-ui --db /tmp/d.db
    """
    from workbench.calibration.gate import load_policy
    from workbench.features.demo.seed import seed_demo

    load_policy(ctx.workspace.policy_file)  # the workspace's own policy is refused before a demo file is written
    db = ctx.workspace.db
    db_existed = ctx.workspace.db_exists()
    from workbench.features.board.demo import seed_demo_boards

    summary = seed_demo(ctx.store, ctx.workspace, precompute=True,  # the lead pages open on cached reports
                        boards=seed_demo_boards)  # and the Board page on the demo's boards
    n_judgments = sum(summary.judgments.values())
    click.echo(f"Seeded {_shown(db)} with the SYNTHETIC demo: {summary.items} items, {summary.labels} "
               f"labels, {summary.adjudications} adjudications, {n_judgments} recorded judgments of "
               f"{len(summary.judgments)} judges, rubric {summary.rubric}"
               + ("." if summary.changed else " (all there already: nothing added)."))
    for path in summary.files_kept:
        click.echo(f"Kept {_shown(path)}: it differs from the demo's copy (the database has the demo's).", err=True)
    click.echo(f"In the UI, pick the rater '{summary.lead}' to see the lead pages; a new name is a reviewer.")
    bundles = sorted({b.bundle for b in summary.boards if getattr(b, "bundle", None) is not None})
    click.echo(_files_written(ctx.workspace, summary.files_written + bundles,
                              db if not db_existed or summary.changed else None, created=not db_existed))
    if not no_ui:
        _run_ui(ctx.workspace, port)


def _files_written(workspace: Workspace, files: list[Path], db: Path | None, *, created: bool) -> str:
    """The demo's last line: how many files it wrote and where, the database first; a folder's files counted once.

    >>> from pathlib import Path
    >>> ws = Workspace(Path("/w"), Path("/w/workbench.db"))
    >>> _files_written(ws, [Path("/w/golden_sets/demo/items.jsonl"), Path("/w/golden_sets/demo/golden_set.yaml"),
    ...                     Path("/w/rubrics/demo-patch-quality.yaml")], Path("/w/workbench.db"), created=True)
    'Wrote 4 files into /w: workbench.db (the database), golden_sets/demo/ (2 files), rubrics/demo-patch-quality.yaml.'
    >>> _files_written(ws, [], None, created=False)
    'Wrote 0 files into /w: the database and the demo files were there already.'
    """
    root = workspace.root
    where = "" if root.absolute() == Path.cwd() else f" into {root}"
    db = db if isinstance(db, Path) else None  # a server's database is no file written here
    n = len(files) + (db is not None)
    if not n:
        return f"Wrote 0 files{where}: the database and the demo files were there already."
    parts: list[str] = []
    if db is not None:
        shown = db.relative_to(root).as_posix() if db.is_relative_to(root) else _shown(db)
        parts.append(f"{shown} (the database{'' if created else ', updated'})")
    groups: dict[str, int] = {}
    for f in files:
        rel = f.relative_to(root).parts
        key = "/".join(rel[:2]) + "/" if rel[0] in ("golden_sets", "examples") and len(rel) > 2 else "/".join(rel)
        groups[key] = groups.get(key, 0) + 1
    parts += [key + (f" ({k} file{'s' if k != 1 else ''})" if key.endswith("/") else "") for key, k in groups.items()]
    return f"Wrote {n} file{'s' if n != 1 else ''}{where}: {', '.join(parts)}."


LOOPBACK = "127.0.0.1"
AUTH_KEYS = ("redirect_uri", "cookie_secret")  # in [auth] itself
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")  # in [auth] or [auth.default]
HOW_TO_SIGN_IN = ("give it redirect_uri (http(s)://HOST:PORT/oauth2callback), cookie_secret (a long random string), "
                  "client_id, client_secret and server_metadata_url (your OIDC provider's "
                  ".well-known/openid-configuration URL)")


@click.command(cls=WorkbenchCommand)
@click.option("--host", default=LOOPBACK, show_default=True,
              help="Address to listen on; anything but loopback (e.g. 0.0.0.0) needs sign-in configured.")
@click.option("--port", default=8501, show_default=True, help="Port of the UI.")
@click.option("--insecure-no-login", is_flag=True,
              help="Serve a non-loopback --host without sign-in: anyone who reaches it can act as any rater.")
@pass_ctx
@clean_errors
def ui(ctx: Ctx, host: str, port: int, insecure_no_login: bool) -> None:
    """Start the Streamlit UI (on 127.0.0.1 unless --host says otherwise).

    \b
    Example:
      workbench ui --port 8502
      workbench ui --host 0.0.0.0 --port 8501   # a team's server: needs [auth] in .streamlit/secrets.toml
    """
    if not is_loopback(host):
        _check_team_server(ctx.workspace, host, insecure_no_login)
    ctx.store  # refuses a database that does not exist
    _run_ui(ctx.workspace, port, host)


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or localhost: only this machine can reach the server."""
    import ipaddress

    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def secrets_files(root: Path) -> list[Path]:
    """The secrets.toml files Streamlit reads when started in ``root``, in order (a later [auth] replaces an earlier)."""
    return [Path.home() / ".streamlit" / "secrets.toml", root / ".streamlit" / "secrets.toml"]


def sign_in_problem(root: Path) -> tuple[str, str] | None:
    """Why st.login (OIDC, default provider) would not work with this workspace's secrets, and the fix; None if it would.

    Only key names are ever reported: the values (client_secret, cookie_secret) stay in the file.
    """
    import importlib.util
    import tomllib

    auth, source = None, root / ".streamlit" / "secrets.toml"
    for path in secrets_files(root):
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:  # the message gives line and column, no value
            return f"{_shown(path)} is not valid TOML ({e})", "correct it"
        if "auth" in data:  # Streamlit merges files key by key: a later [auth] replaces an earlier one whole
            auth, source = data.get("auth"), path
    if not isinstance(auth, dict):
        return f"{_shown(source)} has no [auth] section", "add one and " + HOW_TO_SIGN_IN
    provider = auth.get("default") if isinstance(auth.get("default"), dict) else auth
    missing = [k for k in AUTH_KEYS if not auth.get(k)] + [k for k in PROVIDER_KEYS if not provider.get(k)]
    if missing:
        return f"the [auth] section of {_shown(source)} lacks {', '.join(missing)}", HOW_TO_SIGN_IN
    if importlib.util.find_spec("authlib") is None:  # st.login would fail at the first sign-in
        return "Authlib, which st.login needs, is not installed", "pip install 'judge-workbench[auth]'"
    return None


def _check_team_server(ws: Workspace, host: str, insecure_no_login: bool) -> None:
    """A server others can reach signs them in (st.login), or says loudly that it does not."""
    from workbench.core.errors import WorkbenchError

    found = sign_in_problem(ws.root)
    if found is None:
        return
    problem, fix = found
    if not insecure_no_login:
        raise WorkbenchError(f"workbench ui --host {host} serves other machines, so it needs sign-in, but {problem}: "
                             f"{fix}, or pass --insecure-no-login to serve without sign-in.")
    click.secho(f"WARNING: serving on {host} WITHOUT sign-in (--insecure-no-login; {problem}): anyone who can reach "
                "this address can pick any rater name, a lead's included, and read and change every label.",
                fg="yellow", err=True)


def _run_ui(ws: Workspace, port: int, host: str = LOOPBACK) -> None:
    app = Path(__file__).parents[1] / "ui" / "app.py"
    env = {**os.environ, **ws.environ()}
    shown = f"http://{host}:{port}" if host not in ("0.0.0.0", "::") else f"port {port} of every address of this machine"
    click.echo(f"Judge Workbench UI on {shown} (Ctrl-C to stop)")
    # streamlit run, with the pages' libraries imported while the server starts (workbench/ui/serve.py); the
    # command line carries no secret: Streamlit reads [auth] from .streamlit/secrets.toml itself. No file watcher:
    # nobody edits the app under a running server, and the watcher walked every imported module on every rerun
    cmd = [sys.executable, "-m", "workbench.ui.serve", "run", str(app), "--server.address", host,
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    sys.exit(_serve(cmd, env=env, cwd=ws.root))


def _serve(cmd: list[str], *, env: dict[str, str], cwd: Path) -> int:
    """Run the server until it ends or we are told to stop; it never outlives this process.

    SIGINT, SIGTERM and SIGHUP are passed on to the server (SIGKILL after a grace
    period, or at the second signal), and on Linux the server also gets SIGTERM
    if this process dies of anything else (SIGKILL included). Exit status: the
    server's, 0 after Ctrl-C, 128 + the signal after SIGTERM or SIGHUP.
    """
    received: list[int] = []
    proc: subprocess.Popen | None = None

    def stop(signum: int, _frame: Any) -> None:
        received.append(signum)
        if proc is not None and proc.poll() is None:
            if len(received) > 1:  # asked twice (a second Ctrl-C): do not wait any longer
                proc.kill()
                return
            proc.terminate()
            timer = threading.Timer(UI_STOP_GRACE_S, lambda: proc.poll() is None and proc.kill())
            timer.daemon = True
            timer.start()

    handled = [s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    previous = {s: signal.signal(s, stop) for s in handled}
    try:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, preexec_fn=_die_with_parent(os.getpid()))
        if received:  # a signal came while the server was starting
            proc.terminate()
        rc = proc.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    if received:
        return 0 if received[0] == signal.SIGINT else 128 + received[0]
    return rc


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """In the child before exec (Linux): ask the kernel for SIGTERM when the parent dies, however it dies."""
    if not sys.platform.startswith("linux"):
        return None

    def arm() -> None:
        import ctypes
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            return
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return arm
