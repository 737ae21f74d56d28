"""The edge where users' files come in: the size limit of each kind of file, and the one unknown-key rule.

Every file a user hands in passes the same three steps, in this order, before anything is written:

1. this module's limit for its kind (:func:`check_size`, before a byte is read; a device or pipe is refused);
2. one strict reader: :func:`workbench.core.strict_yaml.read_utf8` and ``load_yaml`` for YAML (no anchors,
   duplicate keys, ``.nan``, tags outside JSON's types, deep nesting, NUL bytes or bytes that are not UTF-8),
   :func:`workbench.core.formats.read_records` for ``.jsonl`` / ``.csv`` (each line at most ``MAX_LINE_BYTES``,
   UTF-8, one JSON object per line or a header row, NaN / Infinity / lone surrogates refused);
3. the typed parser of the kind, which names file, line, field and fix (``InputError``) and refuses an
   unknown key through :func:`unknown_key` ("did you mean min_tpr_lower").

==========================  ============  =========================================================
file                        limit         typed parser
==========================  ============  =========================================================
rubric YAML                 1 MiB         ``rubrics.parse_rubric`` (its ``gate:`` by ``gate.policy_from_dict``)
``rubrics/policy.yaml``     1 MiB         ``gate.load_policy`` -> ``gate.policy_from_dict``
import map (``--map``)      1 MiB         ``interop.mapping.ImportMaps.load``
bundle, judge config YAML   16 MiB        ``services.export.load_bundle``, ``services.judge_check``
items, run files            1 GiB         ``formats.parse_item``
labels, adjudications       1 GiB         ``formats.parse_label`` / ``parse_adjudication``, score on the scale
judgments                   1 GiB         ``formats.parse_judgment``, score on the scale (import and ``grade``)
==========================  ============  =========================================================

Records files are streamed, so their limit is generous; each record (a line of ``.jsonl``, a cell of ``.csv``)
is at most 16 MiB. Another tool's export (``import --from``) is read by its adapter and each item it yields
goes through ``formats.parse_item`` like a file's.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Iterable

from workbench.core.errors import InputError

MiB = 2**20
#: The largest file of each kind that is read at all (bytes); the error states the limit.
LIMITS = {
    "rubric": 1 * MiB,
    "policy": 1 * MiB,
    "import map": 1 * MiB,
    "YAML": 16 * MiB,  # any other YAML the workbench reads back, such as an exported bundle
    "records": 1024 * MiB,  # items, labels, adjudications or judgments: streamed, each line at most MAX_LINE_BYTES
}
#: The longest line (one record) of a .jsonl file, or cell of a .csv file.
MAX_LINE_BYTES = 16 * MiB
#: Bounds of the numbers a command or a rubric takes, the same for every command that takes them.
MAX_RESAMPLES = 100_000  # bootstrap draws: more change no reported digit, and would only fill memory
MAX_SEED = 2**63 - 1  # seeds are stored with the reports (SQLite integers)
MAX_REPEATS = 100  # judgments per item, from a rubric's judge or a command's --repeats


def shown_size(n_bytes: int) -> str:
    """A limit in words: '1 MiB', '16 MiB', '1 GiB'.

    >>> shown_size(2**20), shown_size(16 * 2**20), shown_size(2**30), shown_size(1500)
    ('1 MiB', '16 MiB', '1 GiB', '1500 bytes')
    """
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n_bytes >= size and n_bytes % size == 0:
            return f"{n_bytes // size} {unit}"
    return f"{n_bytes} bytes"


def check_size(path: str | Path, kind: str) -> None:
    """Refuse a file larger than its kind's limit, before a byte of it is read (a missing file is the reader's)."""
    path = Path(path)
    limit = LIMITS[kind]
    try:
        size = path.stat().st_size
    except OSError:
        return
    if not path.is_file() and not path.is_dir():  # /dev/zero, a named pipe: reading it would never end
        raise InputError("is not a regular file (a device, a pipe or a socket)", file=str(path),
                         fix="give the path of a file")
    if path.is_file() and size > limit:
        raise InputError(f"the file is {size:,} bytes, and {kind} files are limited to {shown_size(limit)}",
                         file=path.name, fix="split it or remove what does not belong in it")


def closest(key: object, known: Iterable[str]) -> str | None:
    """The known key a typo most likely meant, or None.

    >>> closest("min_tpr_lowr", ["min_items", "min_tpr_lower", "min_tnr_lower"])
    'min_tpr_lower'
    >>> closest("zzz", ["min_items"]) is None
    True
    """
    if not isinstance(key, str):
        return None
    found = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    if not found:  # a case slip ('Min_Items') is as close as a key can be
        found = [k for k in known if k.lower() == key.lower()]
    return found[0] if found else None


def did_you_mean(name: object, known: Iterable[str], otherwise: str = "") -> str:
    """The fix for an unknown name: 'did you mean X?' for the closest known name, then ``otherwise`` ('or ...').

    >>> did_you_mean("demo-patch-qualty", ["demo-patch-quality", "qa"], "add it")
    'did you mean demo-patch-quality? or add it'
    >>> did_you_mean("zzz", ["qa"], "add it")
    'add it'
    """
    best = closest(name, list(known))
    if best is None or best == name:
        return otherwise
    return f"did you mean {best}?" + (f" or {otherwise}" if otherwise else "")


def unknown_key(key: object, known: Iterable[str], *, what: str = "key", file: str | None = None,
                line: int | None = None, field: str | None = None) -> InputError:
    """The error for a key the reader does not know: the closest known key if there is one, else all of them."""
    known = list(known)
    best = closest(key, known)
    fix = (f"did you mean {best}? (or remove the key)" if best is not None
           else f"use one of {', '.join(known)}")
    return InputError(f"unknown {what} '{key}'", file=file, line=line, field=field, fix=fix)
