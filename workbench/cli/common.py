"""What every command shares: the global options, the workspace and store of one invocation (`Ctx`), and
errors turned into one sentence (`clean_errors`).

Every command takes the global --db (or WORKBENCH_DB) and --project (or WORKBENCH_PROJECT), before or after
the subcommand; the workspace is resolved once here and handed to the features. Errors are one sentence with
the fix and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import errno
import functools
import io
import json
import math
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn

import click

from workbench.core.errors import InputError, NotFound, WorkbenchError
from workbench.core.inputs import MAX_REPEATS, MAX_RESAMPLES, MAX_SEED  # noqa: F401 - the command modules take them from here
from workbench.core.workspace import Workspace
from workbench.core.workspace import shown_path as _shown

if TYPE_CHECKING:  # the store pulls in sqlite-utils and pandas: `workbench --help` should not wait for them
    from workbench.store import Store

EXIT_ERROR = 1
EXIT_GATE_FAILED = 3
EXIT_BROKEN_PIPE = 128 + 13  # as a command killed by SIGPIPE (`yes | head -1`): the reader stopped reading
UI_STOP_GRACE_S = 10.0
AS_HELP = ("Record this command's changes in the audit log under this rater's email (or set WORKBENCH_USER; "
           "default: the account running the command).")  # how long the UI server may take to stop before it is killed


class Ctx:
    """The global options of one invocation, and the workspace and store they resolve to (once, lazily)."""

    def __init__(self, db: str | None = None, project: str | None = None, acting_as: str | None = None):
        self.db = db
        self.project = project
        self.acting_as = acting_as  # --as EMAIL: whom this invocation's changes are recorded under
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
            from workbench.store import open_store
            from workbench.store.engines.urls import parse_target

            target = parse_target(str(self.workspace.db))  # a URL the workbench cannot use is refused here
            if target.is_postgres:
                self._store = open_store(target.location)  # a server: nothing to create on this machine
                self._opened(self._store)
                return self._store
            db = Path(target.location)
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
            self._store = open_store(db)
            if self._created:
                self._fresh = self._store.data_version()  # what a new, empty database holds
            self._opened(self._store)
        return self._store

    def _opened(self, store: "Store") -> None:
        """Say what opening the store merged (once, when the identity migration ran), and act as ``--as``."""
        from workbench.features.people.raters import acting_as, merge_notes

        for note in merge_notes(store):
            click.echo(note, err=True)
        acting_as(store, self.acting_as)

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
        click.Option(["--as", "acting_as"], metavar="EMAIL", default=None, expose_value=False,
                     callback=_set_global_option, help=AS_HELP),
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
    from workbench.calibration.calibrate import Options
    _require(1 <= resamples <= MAX_RESAMPLES, "--resamples", resamples, f"a whole number from 1 to {MAX_RESAMPLES:,}",
             "2000")
    _require(0 <= seed <= MAX_SEED, "--seed", seed, "a whole number from 0 to 2**63 - 1", "0")
    _require(_finite(epsilon) and 0 <= epsilon <= 1, "--epsilon", epsilon, "a number from 0 to 1",
             "0.2 (expert raters), 0.15 (skilled) or 0.1 (crowd)")
    _require(_finite(target_width) and target_width > 0, "--target-width", target_width, "a positive number", "0.1")
    return Options(resamples=resamples, seed=seed, epsilon=epsilon, alt_metric=alt_metric, run=run,
                   target_width=target_width)


class ProgressBars:
    """Progress of a long run on stderr, fed by the run's callback: one bar, or one per part of the run.

    ``update(done, total, cost)`` for a judge run (the bar shows the cost so far); ``update_part(part, done,
    total, cost)`` for a run in parts (a bar per probe). The first call opens the bar where the run stands (a
    resumed run starts part-way).
    """

    def __init__(self, label: str, *, show_cost: bool = False):
        self.label, self.show_cost = label, show_cost
        self.bar: Any = None
        self.part: str | None = None
        self.last = 0
        self.cost = 0.0

    def _open(self, label: str, done: int, total: int) -> None:
        shown = (lambda _: f"${self.cost:.4f}") if self.show_cost else None
        self.bar = click.progressbar(length=total, label=label, file=sys.stderr, item_show_func=shown)
        self.bar.__enter__()
        self.bar.update(done - 1)
        self.last = done - 1

    def update(self, done: int, total: int, cost: float) -> None:
        if self.bar is None:
            self._open(self.label, done, total)
        self.cost = cost
        self.bar.update(done - self.last, current_item=done)
        self.last = done

    def update_part(self, part: str, done: int, total: int, cost: float) -> None:
        if self.part != part:
            self.close()
            self.part = part
            self._open(f"{self.label} {part}", done, total)
        self.update(done, total, cost)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None

    def __enter__(self) -> "ProgressBars":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_run_options(*, concurrency: int, limit: int | None, budget: float | None, repeats: int | None = None,
                      rpm: float | None = None, tpm: float | None = None) -> None:
    """The options every paid run takes (judge run, probe), each refused with its fix."""
    _require(repeats is None or 1 <= repeats <= MAX_REPEATS, "--repeats", repeats,
             f"a whole number from 1 to {MAX_REPEATS}", "2")
    _require(concurrency >= 1, "--concurrency", concurrency, "a whole number of at least 1", "8")
    _require(limit is None or limit >= 1, "--limit", limit, "a whole number of at least 1", "20")
    _require(budget is None or (_finite(budget) and budget > 0), "--budget", budget, "a positive amount in USD", "5")
    for option, value, example in (("--rpm", rpm, "50"), ("--tpm", tpm, "40000")):
        _require(value is None or (_finite(value) and value > 0), option, value, "a positive number", example)
