"""The edge where users' files come in: the size limit of each kind of file, and the one unknown-key rule.

Every file a user hands in is checked here before it is parsed, and every
unknown key or field in it is refused the same way:

* YAML (rubrics, ``rubrics/policy.yaml``, import maps, bundles) is read by
  :func:`workbench.strict_yaml.read_utf8`, which refuses a file over its
  kind's limit before reading it, then parsed by the strict loader there
  (no anchors, duplicate keys, ``.nan``, tags or deep nesting);
* records (items, labels, adjudications, judgments; ``.jsonl`` or ``.csv``)
  are read by :func:`workbench.formats.read_records`: the file's limit first,
  then each line's, then the typed parser of each record kind;
* a key the reader does not know (a rubric key, a judge key, a gate key in
  ``policy.yaml`` or a rubric's ``gate:``, a field of a record, an import
  map's key) is refused by :func:`unknown_key`, which names the closest known
  key ("did you mean min_tpr_lower") or, without one, lists them.

Errors are :class:`workbench.errors.InputError`: file, line, field and fix.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Iterable

from .errors import InputError

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


def unknown_key(key: object, known: Iterable[str], *, what: str = "key", file: str | None = None,
                line: int | None = None, field: str | None = None) -> InputError:
    """The error for a key the reader does not know: the closest known key if there is one, else all of them."""
    known = list(known)
    best = closest(key, known)
    fix = (f"did you mean {best}? (or remove the key)" if best is not None
           else f"use one of {', '.join(known)}")
    return InputError(f"unknown {what} '{key}'", file=file, line=line, field=field, fix=fix)
