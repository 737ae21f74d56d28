"""The `workbench` command line: thin commands over the services (DESIGN section 8).

Every command takes the global --db (or WORKBENCH_DB) and --project (or
WORKBENCH_PROJECT), before or after the subcommand; the workspace is resolved
once here and handed to the services. Errors are one sentence with the fix
and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import errno
import functools
import io
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn

import click

from .errors import InputError, NotFound, WorkbenchError
from .inputs import MAX_REPEATS, MAX_RESAMPLES, MAX_SEED  # noqa: F401 - also the bounds commands/ take from here
from .models import Role
from .scale import fmt as _fmt
from .scale import fmt_usd
from .workspace import Workspace
from .workspace import shown_path as _shown

if TYPE_CHECKING:  # the store pulls in sqlite-utils and pandas: `workbench --help` should not wait for them
    from .store import Store

EXIT_ERROR = 1
EXIT_GATE_FAILED = 3
EXIT_BROKEN_PIPE = 128 + 13  # as a command killed by SIGPIPE (`yes | head -1`): the reader stopped reading
UI_STOP_GRACE_S = 10.0  # how long the UI server may take to stop before it is killed


class Ctx:
    """The global options of one invocation, and the workspace and store they resolve to (once, lazily)."""

    def __init__(self, db: str | None = None, project: str | None = None):
        self.db = db
        self.project = project
        self.creates_db = False  # set by the command: may it create a missing database?
        self._workspace: Workspace | None = None
        self._store: Store | None = None
        self._created: list[Path] = []  # the database file and folders this invocation made (removed if it fails)
        self._fresh: tuple | None = None  # the content fingerprint of the database this invocation created

    @property
    def workspace(self) -> Workspace:
        if self._workspace is None:
            ws = Workspace.resolve(self.project, self.db)
            if not ws.root.is_dir() and not self.creates_db:
                raise NotFound(f"the project folder {ws.root} does not exist; create it with "
                               f"'workbench init --project {_quote(ws.root)}' or give --project an existing folder.")
            self._workspace = ws
        return self._workspace

    @property
    def store(self) -> Store:
        """The workspace's store; only commands that add data may create a missing database file."""
        if self._store is None:
            db = self.workspace.db
            if not self.creates_db and str(db) != ":memory:" and not db.exists():
                raise NotFound(f"there is no workbench database at {_shown(db)}; run 'workbench demo' to try the demo "
                               "or 'workbench import items FILE --golden-set G' to start your own, or point --db "
                               "at an existing one.")
            if str(db) != ":memory:" and not db.exists():
                folder, made = db.parent, []
                while not folder.exists() and folder != folder.parent:
                    made.append(folder)
                    folder = folder.parent
                self._created = [db, *made]  # deepest folder first: removed in this order
            db.parent.mkdir(parents=True, exist_ok=True)
            from .services import open_store

            self._store = open_store(db)
            if self._created:
                self._fresh = self._store.data_version()  # what a new, empty database holds
        return self._store

    def discard_created(self) -> None:
        """A refused or failed command leaves no database behind: remove the one it created, and its folders.

        Only what this invocation made goes: a database that was there before is untouched (its writes are
        transactions, rolled back on the error), and so is a new one that meanwhile holds data (another process
        started using it, or the command itself landed part of its work before it failed).
        """
        if not self._created:
            return
        if self._store is not None:
            try:
                # another process may have started using the new database meanwhile: whatever landed in it stays
                landed = self._store.data_version() != self._fresh
                self._store.close()
            except Exception:  # noqa: BLE001 - already failing: removing the file matters more
                landed = False
            self._store = None
            if landed:
                self._created = []
                return
        db, *folders = self._created
        self._created = []
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        for folder in folders:
            try:
                folder.rmdir()  # only if empty: a folder the command also wrote files into stays
            except OSError:
                break


def _quote(path: Path) -> str:
    text = str(path)
    return f"'{text}'" if any(c.isspace() for c in text) else text


def _set_global_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value is not None:  # given after the subcommand: wins over the one given before it
        setattr(ctx.ensure_object(Ctx), param.name, value)
    return value


def _global_options() -> list[click.Option]:
    return [
        click.Option(["--db"], metavar="PATH", default=None, expose_value=False, callback=_set_global_option,
                     help="SQLite database file (or set WORKBENCH_DB; default: workbench.db in the project)."),
        click.Option(["--project"], metavar="DIR", default=None, expose_value=False, callback=_set_global_option,
                     help="Workspace folder with golden_sets/, rubrics/ and reports/ (or set WORKBENCH_PROJECT; "
                          "default: the working directory)."),
    ]


class WorkbenchCommand(click.Command):
    """A command that also takes the global options after its name, and says whether it may create a database."""

    def __init__(self, *args: Any, creates_db: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.creates_db = creates_db
        self.params.extend(_global_options())

    def invoke(self, ctx: click.Context) -> Any:
        ctx.ensure_object(Ctx).creates_db = self.creates_db
        return super().invoke(ctx)


class WorkbenchGroup(click.Group):
    command_class = WorkbenchCommand
    group_class = type  # subgroups (rubric, import, ...) make their commands the same way


def clean_errors(fn: Callable) -> Callable:
    """Turn our named errors (and anything unexpected) into one line on stderr and exit 1.

    A command that fails after creating the database removes it again (``Ctx.discard_created``): a refused
    command leaves no file behind.
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return _sentences(fn, args, kwargs)
        except SystemExit as e:
            if e.code not in (0, None, 130, EXIT_BROKEN_PIPE):
                _discard_created(args)
            raise
        except click.ClickException:
            _discard_created(args)
            raise

    return wrapper


def _discard_created(args: tuple) -> None:
    ctx = next((a for a in args if isinstance(a, Ctx)), None)
    if ctx is not None:
        ctx.discard_created()


def _sentences(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Run a command; each error class becomes one sentence on stderr and exit 1."""
    try:
        return fn(*args, **kwargs)
    except BrokenPipeError:
        _quiet_broken_pipe()
    except WorkbenchError as e:
        click.secho(f"Error: {e}", fg="red", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        click.echo("Interrupted; everything finished so far is saved.", err=True)
        sys.exit(130)
    except (click.exceptions.Exit, click.ClickException, SystemExit):
        raise
    except (OSError, sqlite3.DatabaseError) as e:  # a full or read-only disk, a folder without permission, not a db
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        sentence = _os_error_sentence(e) if isinstance(e, OSError) else _db_error_sentence(e, args)
        click.secho(f"Error: {sentence or _unexpected(e)}", fg="red", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as e:  # noqa: BLE001 - the edge: users get a sentence, developers the env switch
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        click.secho(f"Error: {_unexpected(e)}", fg="red", err=True)
        sys.exit(EXIT_ERROR)


def _quiet_broken_pipe() -> NoReturn:
    """The reader of our output went away (`workbench ... | head`): stop without a word, as peers do.

    Standard output is pointed at /dev/null first, so the interpreter's final flush
    of what is still buffered does not fail again on the way out.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a real file (the test runner's capture): nothing will be flushed to a pipe
    sys.exit(EXIT_BROKEN_PIPE)


def _unexpected(e: Exception) -> str:
    return f"unexpected {type(e).__name__}: {e}; rerun with WORKBENCH_DEBUG=1 for details."


def _os_error_sentence(e: OSError) -> str | None:
    """The sentence for a file the command could not write or read, or None for other OS errors."""
    if e.errno == errno.ENOSPC:
        fix = "free some disk space (or choose another folder) and run the command again"
    elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "choose a folder you can write to, or change its permissions"
    elif e.filename and e.errno in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EEXIST):
        fix = "check the path"
    else:
        return None
    where = f"'{e.filename}'" if e.filename else "a file"
    return f"cannot write or read {where}: {e.strerror or e}; {fix}."


def _db_error_sentence(e: sqlite3.DatabaseError, args: tuple) -> str | None:
    ctx = next((a for a in args if isinstance(a, Ctx)), None)
    db = _shown(ctx.workspace.db) if ctx is not None and ctx._workspace is not None else "the database"
    text = str(e).lower()
    if "readonly" in text or "read-only" in text:
        return f"the database {db} is read-only ({e}); use a --db file you can write to, or change its permissions."
    if "disk is full" in text or "disk i/o" in text:
        return f"the database {db} could not be written ({e}); free some disk space and run the command again."
    if "unable to open" in text:
        return f"the database {db} cannot be opened ({e}); check that its folder exists and is writable."
    if "file is not a database" in text:
        return (f"{db} is not a workbench database ({e}); point --db (or WORKBENCH_DB) at the workbench database, "
                "or move this file out of the way.")
    if "malformed" in text or "corrupt" in text:
        return f"the database {db} is damaged ({e}); restore it from a backup, or point --db at another database."
    return None


def _require(ok: bool, option: str, value: Any, rule: str, example: str) -> None:
    """Options are checked before anything is written (no empty run or golden-set version left behind)."""
    if not ok:
        raise InputError(f"option {option} must be {rule}, got {value}", fix=f"write e.g. {option} {example}")


def _finite(x: float | None) -> bool:
    return x is None or math.isfinite(x)


def _echo_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, ensure_ascii=False, default=str))


def _count_lines(path: Path) -> int:
    n = 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            n += chunk.count(b"\n")
    return max(n, 1)


def _with_progress(path: str, label: str, run: Callable[[Callable[[int], None]], Any]) -> Any:
    p = Path(path)
    if not p.exists() or p.stat().st_size < 5_000_000:
        return run(lambda n: None)
    with click.progressbar(length=_count_lines(p), label=label, file=sys.stderr) as bar:
        result = run(bar.update)
        bar.update(bar.length)
        return result


pass_ctx = click.make_pass_decorator(Ctx, ensure=True)


@click.group(cls=WorkbenchGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--db", metavar="PATH", default=None,
              help="SQLite database file (or set WORKBENCH_DB; default: workbench.db in the project).")
@click.option("--project", metavar="DIR", default=None,
              help="Workspace folder with golden_sets/, rubrics/ and reports/ (or set WORKBENCH_PROJECT; "
                   "default: the working directory).")
@click.version_option(package_name="judge-workbench")
@click.pass_context
def main(ctx: click.Context, db: str | None, project: str | None) -> None:
    """Judge Workbench: decide which LLM judges you may trust.

    \b
    Label a golden set, run or import judges, score each judge against the
    humans, and export only calibrated rubrics. --db and --project may also
    follow the subcommand.

    \b
    Start here:  workbench demo        (the synthetic demo, in this folder)
                 workbench init        (an empty workspace of your own)
    """
    ctx.obj = Ctx(db, project)


# -- workspace, demo and ui ---------------------------------------------------------

@main.command(creates_db=True)
@pass_ctx
@clean_errors
def init(ctx: Ctx) -> None:
    """Make an empty workspace: the database, an example rubric and the gate policy.

    \b
    Example:
      workbench init
      workbench init --project ~/evals/patch-quality
    """
    from .services.workspace import init_workspace

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


@main.command(creates_db=True)
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
    from .gate import load_policy
    from .services.demo import seed_demo

    load_policy(ctx.workspace.policy_file)  # the workspace's own policy is refused before a demo file is written
    db = ctx.workspace.db
    db_existed = str(db) == ":memory:" or db.exists()
    summary = seed_demo(ctx.store, ctx.workspace, precompute=True)  # the lead pages open on cached reports
    n_judgments = sum(summary.judgments.values())
    click.echo(f"Seeded {_shown(db)} with the SYNTHETIC demo: {summary.items} items, {summary.labels} "
               f"labels, {summary.adjudications} adjudications, {n_judgments} recorded judgments of "
               f"{len(summary.judgments)} judges, rubric {summary.rubric}"
               + ("." if summary.changed else " (all there already: nothing added)."))
    for path in summary.files_kept:
        click.echo(f"Kept {_shown(path)}: it differs from the demo's copy (the database has the demo's).", err=True)
    click.echo(f"In the UI, pick the rater '{summary.lead}' to see the lead pages; a new name is a reviewer.")
    click.echo(_files_written(ctx.workspace, summary.files_written,
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


@main.command()
@click.option("--port", default=8501, show_default=True, help="Port of the UI on 127.0.0.1.")
@pass_ctx
@clean_errors
def ui(ctx: Ctx, port: int) -> None:
    """Start the Streamlit UI on 127.0.0.1.

    \b
    Example:
      workbench ui --port 8502
    """
    ctx.store  # refuses a database that does not exist
    _run_ui(ctx.workspace, port)


def _run_ui(ws: Workspace, port: int) -> None:
    app = Path(__file__).parent / "ui" / "app.py"
    env = {**os.environ, **ws.environ()}
    click.echo(f"Judge Workbench UI on http://127.0.0.1:{port} (Ctrl-C to stop)")
    # streamlit run, with the pages' libraries imported while the server starts (workbench/ui/serve.py)
    cmd = [sys.executable, "-m", "workbench.ui.serve", "run", str(app), "--server.address", "127.0.0.1",
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
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


# -- rubrics -------------------------------------------------------------------

@main.group()
def rubric() -> None:
    """Add, list and show rubric versions."""


@rubric.command("add", creates_db=True)
@click.argument("path", type=click.Path(dir_okay=False))
@pass_ctx
@clean_errors
def rubric_add(ctx: Ctx, path: str) -> None:
    """Add a rubric YAML; changed content becomes a new version.

    \b
    Example:
      workbench rubric add rubrics/demo-patch-quality.yaml
    """
    from .services.rubrics import add_rubric

    rv = add_rubric(ctx.store, path)
    state = "added as" if rv.created else "unchanged:"
    click.echo(f"Rubric '{rv.name}' {state} version {rv.version} ({rv.hash[:12]}), "
               f"{len(rv.rubric.judges)} judge(s): {', '.join(j.id for j in rv.rubric.judges) or 'none'}.")


@rubric.command("list")
@pass_ctx
@clean_errors
def rubric_list(ctx: Ctx) -> None:
    """List rubrics and their latest versions.

    \b
    Example:
      workbench rubric list
    """
    from .services.rubrics import is_refine_candidate, list_rubrics

    rows = list_rubrics(ctx.store)
    if not rows:
        click.echo("No rubrics yet; add one with 'workbench rubric add rubrics/NAME.yaml'.")
    for r in rows:
        mark = "\t(refinement candidate: accept or reject it with 'workbench refine-decide')" \
            if is_refine_candidate(r["name"]) else ""
        click.echo(f"{r['name']}\tv{r['latest_version']}\t({r['n_versions']} version(s)){mark}")


@rubric.command("show")
@click.argument("name")
@click.option("--version", type=int, default=None, help="Version number (default: latest).")
@pass_ctx
@clean_errors
def rubric_show(ctx: Ctx, name: str, version: int | None) -> None:
    """Print a rubric version as YAML.

    \b
    Example:
      workbench rubric show demo-patch-quality --version 1
    """
    from .rubrics import dump_rubric
    from .services.rubrics import get_rubric

    _require(version is None or 1 <= version <= MAX_SEED, "--version", version, "a version number from 1", "1")
    rv = get_rubric(ctx.store, name, version)
    click.echo(f"# {rv.name} version {rv.version}, hash {rv.hash}")
    click.echo(dump_rubric(rv.rubric))


# -- imports -------------------------------------------------------------------

class _ImportGroup(WorkbenchGroup):
    """`import items|labels|...` as subcommands, and `import --from SOURCE FILE_OR_URI ...` on the group itself."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        subcommand = bool(args) and not args[0].startswith("-") and args[0] in self.commands
        if not subcommand and any(a == "--from" or a.startswith("--from=") for a in args):
            # the hidden command named '--from' takes this form ('--' ends the group's own options)
            args = ["--", "--from", *args]
        return super().parse_args(ctx, args)


@main.group("import", cls=_ImportGroup)
def import_() -> None:
    """Import items, labels, adjudications and judgments (.jsonl or .csv), or another tool's results.

    \b
    From another eval tool (items, human labels and LLM-judge verdicts at once):
      workbench import --from inspect|promptfoo|deepeval|mlflow|langfuse|phoenix FILE_OR_URI \\
          --golden-set G --rubric R [--map MAP.yaml]
    See 'workbench import --from SOURCE --help' for the options.
    """


def _source_names() -> list[str]:
    from .interop.base import adapter_names  # stdlib only: cheap enough for --help
    return adapter_names()


def _sources_epilog() -> str:
    from .interop.base import adapter_entries
    return "\b\nSources:\n" + "\n".join(f"  {e.name:10s} {e.what}" for e in adapter_entries())


@import_.command("--from", hidden=True, creates_db=True, options_metavar="SOURCE [OPTIONS]",
                 epilog=_sources_epilog())
@click.option("--from", "source", required=True, metavar="SOURCE",
              help=f"The tool the results come from: {', '.join(_source_names())} (or an adapter registered with "
                   "workbench.interop.base.source_adapter).")
@click.argument("uri", metavar="FILE_OR_URI")
@click.option("--golden-set", "-g", required=True, help="Golden set to import into (created if new).")
@click.option("--rubric", "-r", required=True, help="Rubric whose scale the values are mapped onto.")
@click.option("--map", "map_file", type=click.Path(dir_okay=False), default=None,
              help="Import map (YAML or JSON) from the tool's values to the scale (default: the rubric's "
                   "import_maps).")
@pass_ctx
@clean_errors
def import_from_source(ctx: Ctx, source: str, uri: str, golden_set: str, rubric: str, map_file: str | None) -> None:
    """Import another eval tool's results: items, human labels and LLM-judge verdicts, all or nothing.

    \b
    Example:
      workbench import --from inspect logs/2026-11-20_qa.eval --golden-set qa --rubric qa-correctness
      workbench import --from deepeval .deepeval/test_run.json -g qa -r qa-correctness --map deepeval-map.yaml
    """
    from .services.interop import import_from

    shown = {"n": None}

    def progress(n: int) -> None:
        shown["n"] = n
        click.echo(f"\rReading {source} records: {n}", err=True, nl=False)

    try:
        res = import_from(ctx.store, source, uri, golden_set, rubric, map_file=map_file, progress=progress)
    finally:
        if shown["n"] is not None:  # end the progress line, so an error starts a line of its own
            click.echo(err=True)
    for line in res.summary_lines():
        click.echo(line)


@import_.command("items", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set to import into (created if new).")
@pass_ctx
@clean_errors
def import_items(ctx: Ctx, file: str, golden_set: str) -> None:
    """Import items into a golden set; the whole file lands or nothing does.

    \b
    Example:
      workbench import items golden_sets/demo/items.jsonl --golden-set demo
    """
    from .services import importing as svc

    res = _with_progress(file, "Importing items",
                         lambda tick: svc.import_items(ctx.store, file, golden_set, progress=tick))
    click.echo(res.summary("items"))


@import_.command("labels", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set the items belong to.")
@click.option("--rubric", "-r", required=True, help="Rubric whose scale the scores are on.")
@pass_ctx
@clean_errors
def import_labels(ctx: Ctx, file: str, golden_set: str, rubric: str) -> None:
    """Import human labels; one label per item, rater and rubric.

    \b
    Example:
      workbench import labels golden_sets/demo/demo-patch-quality/labels.jsonl \\
          --golden-set demo --rubric demo-patch-quality
    """
    from .services import importing as svc

    res = _with_progress(file, "Importing labels",
                         lambda tick: svc.import_labels(ctx.store, file, golden_set, rubric, progress=tick))
    click.echo(res.summary("labels"))


@import_.command("adjudications", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set the items belong to.")
@click.option("--rubric", "-r", required=True, help="Rubric whose scale the scores are on.")
@pass_ctx
@clean_errors
def import_adjudications(ctx: Ctx, file: str, golden_set: str, rubric: str) -> None:
    """Import leads' final labels (item_id, score, note, lead).

    \b
    Example:
      workbench import adjudications golden_sets/demo/demo-patch-quality/adjudications.jsonl \\
          --golden-set demo --rubric demo-patch-quality
    """
    from .services import importing as svc

    click.echo(svc.import_adjudications(ctx.store, file, golden_set, rubric).summary("adjudications"))


@import_.command("judgments", creates_db=True)
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--golden-set", "-g", required=True, help="Golden set the items belong to.")
@click.option("--rubric", "-r", required=True, help="Rubric that declares the judge.")
@click.option("--judge", "-j", required=True, help="Judge id declared in the rubric.")
@pass_ctx
@clean_errors
def import_judgments(ctx: Ctx, file: str, golden_set: str, rubric: str, judge: str) -> None:
    """Import judgments made elsewhere for a declared judge.

    \b
    Example:
      workbench import judgments golden_sets/demo/demo-patch-quality/judgments/lenient-mini.jsonl \\
          --golden-set demo --rubric demo-patch-quality --judge lenient-mini

    The judgments land in the rubric's current version, or in version N with --rubric NAME@vN.
    """
    from .services import importing as svc

    res = _with_progress(file, "Importing judgments",
                         lambda tick: svc.import_judgments(ctx.store, file, golden_set, rubric, judge, progress=tick))
    click.echo(res.summary("judgments"))


# -- golden sets ---------------------------------------------------------------

@main.group("golden-set")
def golden_set() -> None:
    """List, show, freeze and export golden sets."""


@golden_set.command("list")
@pass_ctx
@clean_errors
def golden_set_list(ctx: Ctx) -> None:
    """List golden sets with counts.

    \b
    Example:
      workbench golden-set list
    """
    from .services.golden_sets import list_golden_sets

    rows = list_golden_sets(ctx.store)
    if not rows:
        click.echo("No golden sets yet; run 'workbench demo --no-ui' or 'workbench import items FILE --golden-set G'.")
    for r in rows:
        demo = "  [synthetic demo]" if r["is_demo"] else ""
        click.echo(f"{r['name']}\t{r['n_items']} items\t{r['n_labels']} labels by {r['n_raters']} raters\t"
                   f"{r['n_judgments']} judgments\tversion {r['latest_version'] or '-'}{demo}")


@golden_set.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_ctx
@clean_errors
def golden_set_show(ctx: Ctx, name: str, as_json: bool) -> None:
    """Show a golden set: categories, producers, labels, consensus, runs.

    \b
    Example:
      workbench golden-set show demo
    """
    from .services.golden_sets import show_golden_set

    info = show_golden_set(ctx.store, name)
    if as_json:
        _echo_json(info)
        return
    click.echo(f"Golden set '{info['name']}': {info['items']} items" +
               (" (SYNTHETIC demo data)" if info["synthetic_demo"] else ""))
    click.echo("  categories: " + ", ".join(f"{k} {v}" for k, v in sorted(info["categories"].items())))
    click.echo("  producer families: " + ", ".join(f"{k} {v}" for k, v in sorted(info["producer_families"].items())))
    for rubric, r in info["rubrics"].items():
        click.echo(f"  rubric {rubric}: {r['labels']} labels by {r['raters']} raters on {r['labeled_items']} items, "
                   f"{r['with_2_or_more']} with 2+ labels; {r['resolved']} with consensus, {r['unresolved']} "
                   f"unresolved, {r['adjudicated']} adjudicated")
    for run in info["runs"]:
        click.echo(f"  judge {run['judge']} (rubric {run['rubric']} v{run['rubric_version']}), run {run['run']}: "
                   f"{run['judgments']} judgments [{run['source']}, {run['status']}]")
    for v in info["versions"]:
        click.echo(f"  frozen version {v['version']}: {v['hash'][:16]} at {v['created_at']}")


@golden_set.command("freeze")
@click.argument("name")
@pass_ctx
@clean_errors
def golden_set_freeze(ctx: Ctx, name: str) -> None:
    """Freeze a version: item ids, content hashes and consensus labels, named by their hash.

    \b
    Example:
      workbench golden-set freeze demo
    """
    from .services.snapshots import freeze

    v = freeze(ctx.store, name)
    click.echo(f"Golden set '{name}' version {v['version']}: {v['hash']} ({v['n_items']} items).")


@golden_set.command("queue")
@click.argument("name")
@click.option("--order", type=click.Choice(["active", "random"]), default=None,
              help="Switch the labeling queue's order (without it: show the current one).")
@click.option("--rubric", default=None, help="With --order active: the rubric whose gate checks it serves.")
@click.option("--judge", default=None, help="With --order active: the judge whose scores stratify the items.")
@click.option("--expected-labels", type=int, default=None, help="Items the design expects to label (default N/4).")
@pass_ctx
@clean_errors
def golden_set_queue(ctx: Ctx, name: str, order: str | None, rubric: str | None, judge: str | None,
                     expected_labels: int | None) -> None:
    """Show or set the labeling queue's order: random (default) or active (Neyman-stratified by the judge).

    \b
    Example:
      workbench golden-set queue demo --order active --rubric demo-patch-quality --judge careful-sonnet
    """
    from .services.active_queue import queue_setting, set_queue_order

    _require(expected_labels is None or expected_labels >= 1, "--expected-labels", expected_labels,
             "a whole number of at least 1", "200")
    q = (set_queue_order(ctx.store, name, order, rubric=rubric, judge=judge, expected_labels=expected_labels,
                         workspace=ctx.workspace) if order else queue_setting(ctx.store, name))
    click.echo(f"Golden set '{name}': queue order {q.order}.")
    if q.order == "active" and q.design:
        d = q.design
        click.echo(f"  design for judge '{d['judge_id']}' (rubric {d['rubric_name']}), serving the checks "
                   f"{', '.join(d['checks'])}; {len(q.strata)} strata:")
        for r in q.strata:
            click.echo(f"  {r['stratum']:50s}{r['n_items']:>7} items  inclusion {r['probability']:.3f}  "
                       f"labeled {r['n_labeled']}")


@golden_set.command("export")
@click.argument("name")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder to write.")
@pass_ctx
@clean_errors
def golden_set_export(ctx: Ctx, name: str, out: str) -> None:
    """Write items, labels, adjudications and judgments back to files (lossless).

    \b
    Example:
      workbench golden-set export demo --out /tmp/demo-export
    """
    from .names import staged_folder
    from .services.snapshots import export_golden_set

    with staged_folder(out) as stage:  # all files land in --out, or none do
        counts = export_golden_set(ctx.store, name, stage)
    for f, n in counts.items():
        click.echo(f"{Path(out) / f}\t{n} records")


# -- raters --------------------------------------------------------------------

@main.group()
def rater() -> None:
    """Raters and their roles (reviewer, lead, admin)."""


@rater.command("set", creates_db=True)
@click.argument("name")
@click.option("--role", type=click.Choice([r.value for r in Role]), required=True)
@click.option("--email", default=None, help="The address st.login reports, for deployments with [auth].")
@pass_ctx
@clean_errors
def rater_set(ctx: Ctx, name: str, role: str, email: str | None) -> None:
    """Give a rater a role; with login, the email decides who they are.

    \b
    Example:
      workbench rater set maria --role lead --email maria@example.com
    """
    from .services.raters import set_role

    r = set_role(ctx.store, name, role, email)
    click.echo(f"Rater '{r['name']}' is a {r['role']}" + (f" ({r['email']})." if r["email"] else "."))


@rater.command("list")
@pass_ctx
@clean_errors
def rater_list(ctx: Ctx) -> None:
    """List raters with their roles.

    \b
    Example:
      workbench rater list
    """
    from .services.raters import list_raters

    for r in list_raters(ctx.store):
        click.echo(f"{r['name']}\t{r['role']}\t{r['email'] or ''}")


# -- judges --------------------------------------------------------------------

@main.group()
def judge() -> None:
    """Run a rubric's judges on a golden set."""


@judge.command("run")
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--judge", "-j", "judge_id", required=True, help="Judge id declared in the rubric.")
@click.option("--repeats", type=int, default=None, help="Judgments per item (default: the judge's repeats).")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Requests in flight at most.")
@click.option("--limit", type=int, default=None, help="Only the first N items.")
@click.option("--batch", is_flag=True, help="Use the provider's batch API (half price, results within 24 h).")
@click.option("--dry-run", is_flag=True, help="Print the token and cost estimate; send nothing.")
@click.option("--budget", type=float, default=None, help="Hard stop in USD: never send a request that could pass it.")
@click.option("--new-run", is_flag=True, help="Start a fresh run of the same config (to measure drift).")
@click.option("--rpm", type=float, default=None, help="Client-side limit of requests per minute.")
@click.option("--tpm", type=float, default=None, help="Client-side limit of tokens per minute.")
@pass_ctx
@clean_errors
def judge_run(ctx: Ctx, golden_set: str, rubric: str, judge_id: str, repeats: int | None, concurrency: int,
              limit: int | None, batch: bool, dry_run: bool, budget: float | None, new_run: bool, rpm: float | None,
              tpm: float | None) -> None:
    """Run a judge on the golden set; an interrupted run resumes without paying twice.

    \b
    Example:
      workbench judge run -g demo -r demo-patch-quality -j lenient-mini --dry-run
      workbench judge run -g demo -r demo-patch-quality -j lenient-mini --repeats 2 --budget 5
    """
    from .services import judging

    _require(repeats is None or 1 <= repeats <= MAX_REPEATS, "--repeats", repeats,
             f"a whole number from 1 to {MAX_REPEATS}", "2")
    _require(concurrency >= 1, "--concurrency", concurrency, "a whole number of at least 1", "8")
    _require(limit is None or limit >= 1, "--limit", limit, "a whole number of at least 1", "20")
    _require(budget is None or (_finite(budget) and budget > 0), "--budget", budget, "a positive amount in USD",
             "5")
    for option, value, example in (("--rpm", rpm, "50"), ("--tpm", tpm, "40000")):
        _require(value is None or (_finite(value) and value > 0), option, value, "a positive number", example)
    if dry_run:
        e = judging.estimate(ctx.store, golden_set, rubric, judge_id, repeats=repeats, limit=limit, batch=batch,
                             new_run=new_run)
        from .presentation import estimate_sentence

        click.echo(f"{e.model}: {estimate_sentence(e)} (price table {e.price_table_version}).")
        return
    state: dict[str, Any] = {"bar": None, "last": 0}

    def progress(done: int, total: int, cost: float) -> None:
        if state["bar"] is None:
            state["bar"] = click.progressbar(length=total, label="Judging", file=sys.stderr,
                                             item_show_func=lambda _: f"${state.get('cost', 0):.4f}")
            state["bar"].__enter__()
            state["bar"].update(done - 1)
            state["last"] = done - 1
        state["cost"] = cost
        state["bar"].update(done - state["last"], current_item=done)
        state["last"] = done

    try:
        summary = judging.run(ctx.store, golden_set, rubric, judge_id, repeats=repeats, limit=limit,
                              concurrency=concurrency, budget_usd=budget, new_run=new_run, batch=batch,
                              requests_per_minute=rpm, tokens_per_minute=tpm, progress=progress)
    finally:
        if state["bar"] is not None:
            state["bar"].__exit__(None, None, None)
    if batch:
        click.echo(f"Run {summary['run']}: batch mode; " + ", ".join(f"{k} {v}" for k, v in summary.items()
                                                                     if k not in ("run", "judge", "model")))
        return
    if summary["cost_unknown"] and not summary["cost_usd"]:
        cost = "unknown (the model is not in the price table)"
    else:
        cost = fmt_usd(summary["cost_usd"], 4) + (" (some costs unknown)" if summary["cost_unknown"] else "")
    click.echo(f"Run {summary['run']} of {judge_id}: {summary['n_recorded']} judgments recorded "
               f"({summary['n_unscored']} unscored), {summary['n_skipped']} already done, {summary['n_failed']} "
               f"failed; cost {cost}; {summary['n_requests']} requests in {summary['wall_s']:.1f} s.")
    for f in summary["failures"][:5]:
        click.echo(f"  failure: {f}", err=True)
    if summary["stopped"]:
        click.echo(f"Stopped ({summary['stopped']}); run the same command again to resume.", err=True)
    elif not summary["complete"]:
        click.echo("Some judgments failed; run the same command again to retry them.", err=True)


# -- calibration ---------------------------------------------------------------

def _calibration_options(f: Callable) -> Callable:
    for opt in reversed([
        click.option("--resamples", default=2000, show_default=True, help="Bootstrap resamples."),
        click.option("--seed", default=0, show_default=True, help="Bootstrap seed (recorded in the report)."),
        click.option("--epsilon", default=0.2, show_default=True,
                     help="Alt-test epsilon: 0.2 expert raters, 0.15 skilled, 0.1 crowd."),
        click.option("--alt-metric", type=click.Choice(["accuracy", "neg_rmse"]), default="accuracy",
                     show_default=True, help="How the alt-test aligns a score with the other raters."),
        click.option("--run", default=None, help="Run name to calibrate (default: the latest)."),
        click.option("--target-width", default=0.1, show_default=True,
                     help="Noise floor: how many more labels would bring the alpha interval to this width."),
    ]):
        f = opt(f)
    return f


def _options(resamples: int, seed: int, epsilon: float, alt_metric: str, run: str | None, target_width: float):
    from .services.calibration import Options
    _require(1 <= resamples <= MAX_RESAMPLES, "--resamples", resamples, f"a whole number from 1 to {MAX_RESAMPLES:,}",
             "2000")
    _require(0 <= seed <= MAX_SEED, "--seed", seed, "a whole number from 0 to 2**63 - 1", "0")
    _require(_finite(epsilon) and 0 <= epsilon <= 1, "--epsilon", epsilon, "a number from 0 to 1",
             "0.2 (expert raters), 0.15 (skilled) or 0.1 (crowd)")
    _require(_finite(target_width) and target_width > 0, "--target-width", target_width, "a positive number", "0.1")
    return Options(resamples=resamples, seed=seed, epsilon=epsilon, alt_metric=alt_metric, run=run,
                   target_width=target_width)


@main.command()
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--judge", "-j", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report object (schema workbench.calibration/1).")
@_calibration_options
@pass_ctx
@clean_errors
def calibrate(ctx: Ctx, golden_set: str, rubric: str, judge: str, as_json: bool, **opts: Any) -> None:
    """Score a judge against the humans: agreement with intervals, ceiling, alt-test, bias, noise, drift, verdict.

    --rubric NAME is the newest version the judge has judgments of; NAME@vN is version N.

    \b
    Example:
      workbench calibrate --golden-set demo --rubric demo-patch-quality --judge careful-sonnet
      workbench calibrate --golden-set demo --rubric demo-patch-quality@v1 --judge careful-sonnet
      workbench calibrate -g demo -r demo-patch-quality -j noisy-llama --json
    """
    from .services.calibration import calibrate as run
    from .services.versions import resolve_ref

    options = _options(**opts)
    scope = resolve_ref(ctx.store, golden_set, rubric, judge, options.run)  # NAME, or NAME@vN for that version
    report = run(ctx.store, golden_set, scope.rubric.name, judge, options, scope=scope, workspace=ctx.workspace)
    if as_json:
        _echo_json(report.to_json())
        return
    from .presentation import report_text

    for line in report_text(report):
        click.secho(line.text, fg=TONE_COLOURS.get(line.tone), bold=line.bold or None)


TONE_COLOURS = {"pass": "green", "fail": "red", "warn": "yellow"}


@main.command()
@click.option("--golden-set", "-g", required=True)
@click.option("--rubric", "-r", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_calibration_options
@pass_ctx
@clean_errors
def compare(ctx: Ctx, golden_set: str, rubric: str, as_json: bool, **opts: Any) -> None:
    """All judges of a rubric side by side, with paired-bootstrap differences from the best.

    \b
    Example:
      workbench compare --golden-set demo --rubric demo-patch-quality
    """
    from .services.calibration import compare as run

    result = run(ctx.store, golden_set, rubric, _options(**opts), workspace=ctx.workspace)
    if as_json:
        _echo_json(result.to_json())
        return
    from .presentation import compare_text

    for line in compare_text(result):
        click.echo(line)


# -- export and grading -------------------------------------------------------------

@main.command()
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
@_calibration_options
@pass_ctx
@clean_errors
def export(ctx: Ctx, golden_set: str | None, rubric: str | None, judge: str | None, out_dir: str | None,
           targets: tuple[str, ...], bundle_file: str | None, **opts: Any) -> None:
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
    """
    from .gate import STATUS_MARK
    from .services.export import UNSIGNED_HINT, GateFailed, VersionMismatch, export_bundle, require_valid_signature
    from .services.interop_export import export_judge
    from .services.versions import VersionNotRun

    if bundle_file is not None:
        _require(bool(targets) and not (golden_set or rubric or judge), "--bundle", bundle_file,
                 "given with --to and without --golden-set, --rubric or --judge",
                 f"{bundle_file} --to promptfoo")
        bundle, path = require_valid_signature(bundle_file, ctx.workspace), Path(bundle_file)
    else:
        for option, value in (("--golden-set", golden_set), ("--rubric", rubric), ("--judge", judge)):
            _require(value is not None, option, "nothing", "given (or give --bundle FILE with --to)",
                     f"{option} NAME")
        try:
            res = export_bundle(ctx.store, golden_set, rubric, judge, out_dir=out_dir, options=_options(**opts),
                                workspace=ctx.workspace)
        except GateFailed as e:
            undecided = e.verdict is not None and e.verdict.state == "undecided"
            click.secho(f"Not exported: judge '{judge}' " + ("is not decided yet" if undecided else
                                                              "does not pass the gate")
                        + f" for rubric '{rubric}'" + (": a check still straddles its bound, and an undecided "
                                                        "check blocks export like a failure." if undecided else "."),
                        fg="red", err=True)
            for c in e.failed:
                click.echo(f"  [{STATUS_MARK[c.status]}] {c.name}: {c.message}", err=True)
            if undecided:
                click.echo(f"  The labels that decide it: workbench plan -g {golden_set} -r {rubric} -j {judge}",
                           err=True)
            sys.exit(EXIT_GATE_FAILED)
        except (VersionNotRun, VersionMismatch) as e:  # nothing of that version to approve: refused like the gate
            click.secho(f"Not exported: {e}", fg="red", err=True)
            sys.exit(EXIT_GATE_FAILED)
        click.echo(f"Exported {_shown(res.path)} (sha256 {res.sha256[:16]}"
                   + (f", signed with {res.signed_by})." if res.signed_by else f"). {UNSIGNED_HINT}"))
        if res.note:
            click.echo(res.note)
        bundle, path = res.bundle, res.path
    for target in targets:
        written = export_judge(bundle, path, target, out_dir or path.parent)
        click.echo(f"Wrote {_shown(written)} ({target}); check it with: workbench check {_shown(path)} "
                   f"--judge-config {_shown(written)}")


@main.command()
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
@pass_ctx
@clean_errors
def grade(ctx: Ctx, bundle_file: str, items_file: str, labels_file: str | None, judgments_file: str | None,
          out: str | None, as_json: bool, resamples: int, seed: int) -> None:
    """Grade new items with an approved judge; report raw and bias-corrected pass rates.

    \b
    Example:
      workbench grade --bundle rubrics/approved/demo-patch-quality@v1--careful-sonnet.yaml \\
          --items new_items.jsonl --labels some_labels.jsonl --out graded.jsonl
    """
    from .services.grading import grade as run

    _require(resamples >= 1, "--resamples", resamples, "a whole number of at least 1", "2000")
    _require(seed >= 0, "--seed", seed, "a whole number of 0 or more", "0")
    if out is None:
        out = str(ctx.workspace.reports / f"{Path(items_file).stem}.graded.jsonl")  # made once the grades are in
    r = run(ctx.store, bundle_file, items_file, labels_file=labels_file, judgments_file=judgments_file, out=out,
            resamples=resamples, seed=seed, workspace=ctx.workspace)  # a signed bundle must verify
    if as_json:
        _echo_json(r)
        click.echo(f"Per-item results: {_shown(Path(r['results_file']))}", err=True)
        return
    raw, cor = r["raw_pass_rate"], r["corrected_pass_rate"]
    click.echo(f"Graded {r['n_scored']} of {r['n_items']} items with {r['bundle']['judge']} "
               f"(rubric {r['bundle']['rubric']} v{r['bundle']['rubric_version']}).")
    click.echo(f"  raw pass rate        {_fmt(raw['value'])}  ({_fmt(raw['ci_low'])} to {_fmt(raw['ci_high'])})")
    click.echo(f"  corrected pass rate  {_fmt(cor['value'])}  ({_fmt(cor['ci_low'])} to {_fmt(cor['ci_high'])})"
               f"  [Rogan-Gladen, TPR {_fmt(r['tpr'])}, TNR {_fmt(r['tnr'])}]")
    if r["correction_reason"]:
        click.echo(f"  note: {r['correction_reason']}")
    if r["ppi"]:
        p = r["ppi"]
        click.echo(f"  prediction-powered   {_fmt(p['estimate'])}  ({_fmt(p['ci_low'])} to {_fmt(p['ci_high'])})"
                   f"  [{p['n_labeled']} human-labeled, lambda {_fmt(p['lambda'], 2)}]")
    click.echo(f"Per-item results: {_shown(Path(r['results_file']))}")


@main.command()
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
@_calibration_options
@pass_ctx
@clean_errors
def report(ctx: Ctx, golden_set: str, rubric: str, judge: str, fmt: str, out: str | None, organization: str,
           **opts: Any) -> None:
    """Write a shareable calibration card (Markdown or HTML), or the result in the Every Eval Ever schema.

    \b
    Example:
      workbench report --golden-set demo --rubric demo-patch-quality --judge gpt4o-self --format html
      workbench report -g demo -r demo-patch-quality -j careful-sonnet --format eee --organization "Acme evals"
    """
    if fmt == "eee":
        from .services.eee import write_eee

        path = write_eee(ctx.store, golden_set, rubric, judge, out=out, options=_options(**opts),
                         workspace=ctx.workspace, organization=organization)
        click.echo(f"Wrote {_shown(path)} (Every Eval Ever schema, validated)")
        return
    from .services.report_card import write_card

    path = write_card(ctx.store, golden_set, rubric, judge, fmt=fmt, out=out, options=_options(**opts),
                      workspace=ctx.workspace)
    click.echo(f"Wrote {_shown(path)}")


if __name__ == "__main__":  # pragma: no cover - `python -m workbench.cli`: run the importable module's group,
    from workbench.cli import main as _main  # the one the commands of workbench/commands/ register on

    _main()
else:  # the newer features' commands (plan, probe, refine, board, check, ...) live in workbench/commands/
    from .commands import register_all

    register_all(main)
