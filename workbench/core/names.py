"""Names that become folders, file names or URLs, and the one way to build a path from them.

Rubric names, judge ids, golden sets, raters and runs end up in paths
(``rubrics/approved/<rubric>@v1--<judge>.yaml``, ``<out>/<rubric>/judgments/<judge>.jsonl``)
and in the UI's URLs. Each is checked where it enters (a file, a command-line
option, a form) by one rule, :func:`check_name`; writers build paths only
through :func:`safe_path`, which refuses any name that would leave its base
folder, so a bad name already in a database cannot escape either.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from workbench.core.errors import InputError

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")  # how a person's address is written: what identifies a rater


def is_email(text: object) -> bool:
    """True when the text is written like an email address.

    >>> [is_email(t) for t in ("maria@example.com", "maria", "maria@example", " a@b.co ")]
    [True, False, False, True]
    """
    return isinstance(text, str) and bool(EMAIL.fullmatch(text.strip()))


NAME_MAX = 100
# Letters, digits and . _ - : @ + (so emails and model ids such as
# 'anthropic.claude-3-5-sonnet-20241022-v2:0' are names); no separator, space or control character.
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@+\-]*")
NAME_RULE = (f"use at most {NAME_MAX} letters, digits and . _ - : @ +, starting with a letter, digit or _ "
             "and without '..' (e.g. 'patch-quality' or 'alice@example.com')")
_COMPONENT_MAX = 255  # bytes of a file name on common file systems


def name_problem(value: object, *, max_len: int = NAME_MAX) -> str | None:
    """What is wrong with a name, or None when it is a valid one.

    >>> [name_problem(n) for n in ("alice.smith", "alice@example.com", "meta.llama3-1-70b-instruct-v1:0")]
    [None, None, None]
    >>> name_problem("../../escaped")
    "contains '..'"
    >>> name_problem("x/y")
    "contains '/'"
    >>> name_problem(".hidden")
    "starts with '.'"
    >>> name_problem("   ")
    'is empty'
    """
    if not isinstance(value, str):
        return f"must be text, got {type(value).__name__}"
    if not value.strip():
        return "is empty"
    if len(value) > max_len:
        return f"is {len(value)} characters long, more than {max_len}"
    if ".." in value:
        return "contains '..'"
    if not _NAME.fullmatch(value):
        if not _NAME.match(value):
            return f"starts with {_show_char(value[0])}"
        bad = next(c for c in value if not _NAME.fullmatch("a" + c))
        return f"contains {_show_char(bad)}"
    return None


def _show_char(c: str) -> str:
    if c == " ":
        return "a space"
    if not c.isprintable():
        return f"the control character {ascii(c)}"
    return f"'{c}'"


def _show(value: object) -> str:
    text = ascii(value) if isinstance(value, str) and not value.isprintable() else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_name(value: object, what: str, *, file: str | None = None, line: int | None = None,
               field: str | None = None) -> str:
    """The name without surrounding spaces, or an InputError naming what is wrong and the rule.

    ``what`` says what the name is ("golden set name", "rater name", "judge id", ...).
    """
    stripped = value.strip() if isinstance(value, str) else value
    problem = name_problem(stripped)
    if problem is not None:
        shown = "" if problem == "is empty" else f" {_show(stripped)}"
        raise InputError(f"the {what}{shown} {problem}", file=file, line=line, field=field, fix=NAME_RULE)
    return stripped  # type: ignore[return-value]


def safe_path(base: str | Path, *parts: str) -> Path:
    """``base / part / ...``, refusing any part that is not a plain file or folder name or leaves ``base``.

    Every part must itself be a valid name (the rule of :func:`check_name`,
    up to 255 characters for composed file names), and the resolved path must
    lie inside the resolved ``base`` (which also refuses a symlink out of it).
    """
    base = Path(base)
    for part in parts:
        problem = name_problem(part, max_len=_COMPONENT_MAX)
        if problem is not None:
            raise InputError(f"cannot write under '{base}': the name {_show(part)} {problem}",
                             fix=f"rename it ({NAME_RULE})")
    path = base.joinpath(*parts)
    root = base.resolve()
    if not path.resolve().is_relative_to(root):
        raise InputError(f"cannot write {_show('/'.join(parts))}: it would leave the folder '{base}'",
                         fix=f"rename it ({NAME_RULE})")
    return path


@contextmanager
def staged_folder(out: str | Path) -> Iterator[Path]:
    """A hidden folder beside ``out`` to write into; its files move into ``out`` only when all were written.

    A failure on the way (a full or read-only disk, a refused name) leaves
    ``out`` as it was and no half-written folder behind.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = out.parent / f".{out.name}.{secrets.token_hex(4)}.partial"
    stage.mkdir()  # not mkdtemp: the folder gets the usual permissions when it becomes ``out``
    try:
        yield stage
        if not out.exists():
            os.replace(stage, out)
            return
        for src in sorted(p for p in stage.rglob("*") if p.is_file()):
            dest = out / src.relative_to(stage)
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(src, dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
