"""Named exceptions whose message is one sentence a user can act on.

They are raised deep inside services and turned into a clean message (no
traceback) by the CLI and the UI.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class: the message names the offending thing and the fix."""


class InputError(WorkbenchError):
    """Bad input in a file: names the file, line, field and the fix."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None, fix: str | None = None):
        self.file, self.line, self.field, self.fix = file, line, field, fix
        self.problem = message
        where = ""
        if file:
            where = f"{file}"
            if line is not None:
                where += f" line {line}"
            where += ": "
        if field:
            message = f"field '{field}': {message}"
        text = where + message
        if fix:
            text = text.rstrip(".") + f"; {fix}"
        if not text.endswith("."):
            text += "."
        super().__init__(text)


class NotFound(WorkbenchError):
    """A named golden set, rubric, judge or item does not exist."""


class Conflict(WorkbenchError):
    """The request contradicts stored state (e.g. a judge run already running elsewhere)."""


class ConfigError(WorkbenchError):
    """Missing SDK, key or setting; the message says what to install or set."""


class ModelNameError(ConfigError, ValueError):
    """A judge model name that `models.parse_model` cannot read.

    `problem` and `fix` are kept apart so that the rubric loader can show them
    at the offending line; `missing` is "provider" or "service".
    """

    def __init__(self, problem: str, fix: str, *, missing: str):
        self.problem, self.fix, self.missing = problem, fix, missing
        super().__init__(f"{problem}; {fix}")


class SourceError(InputError):
    """A record of a tool's export that cannot be imported: ``SOURCE record N: field F: what; fix.``"""

    def __init__(self, source: str, record: int | None, message: str, *, field: str | None = None,
                 fix: str | None = None):
        InputError.__init__(self, message, field=field, fix=fix)
        self.source, self.record = source, record
        where = f"{source} record {record}" if record is not None else source
        text = f"{where}: " + (f"field {field}: " if field else "") + message
        if fix:
            text = text.rstrip(".") + f"; {fix}"
        self.args = (text if text.endswith(".") else text + ".",)

    def __str__(self) -> str:
        return self.args[0]
