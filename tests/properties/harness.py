"""What every property here checks of one import, and the mutations it is checked under.

:func:`outcome` runs one import of a file and holds it to the rule of issue 49 item 3: the import lands whole,
or it is refused by a ``WorkbenchError`` whose message names the file (and, for a fault inside a record, the
record or line), with every table as before and no file left in the temporary folder or beside the input.
Any other exception fails the property.

:func:`mutated` draws one change of a well-formed document: a value of another type, a field dropped, a key
written twice, a number out of range, an unknown field; :func:`damaged` one change of its bytes: cut short,
another encoding, an invalid UTF-8 byte, a NUL.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.db_digest import db_content
from workbench.core.errors import WorkbenchError

#: Values of every JSON type (and a few edge numbers) that a field's own value is swapped for.
OTHER_VALUES = (None, True, False, 0, -1, 7, 1.5, -0.5, 42, 10**20, 1e308, "", "x", "\u00e9\u2603", [], [1], {},
                {"a": 1})
OUT_OF_RANGE = (-1, -5, 1.2, 2, 3, 42, -1e9, 1e9, 10**20, -(10**20), math.nan, math.inf, -math.inf)
LOCATED = re.compile(r"\b(line|record) \d+")


class Dup(dict):
    """An object written with one key twice (the second value is what a JSON reader keeps)."""

    def __init__(self, base: dict, key: str, second: Any):
        super().__init__(base)
        self.key, self.second = key, second


def dump(doc: Any) -> str:
    """JSON text of ``doc``, a :class:`Dup` written with its key twice; NaN and infinities as Python writes them."""
    if isinstance(doc, Dup):
        pairs = [f"{json.dumps(k)}: {dump(v)}" for k, v in doc.items()]
        pairs.append(f"{json.dumps(doc.key)}: {dump(doc.second)}")
        return "{" + ", ".join(pairs) + "}"
    if isinstance(doc, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}" for k, v in doc.items()) + "}"
    if isinstance(doc, list):
        return "[" + ", ".join(dump(v) for v in doc) + "]"
    return json.dumps(doc, ensure_ascii=False)  # NaN and Infinity as Python's json writes (and reads) them


def paths(doc: Any, at: tuple = ()) -> list[tuple]:
    """Every place in ``doc`` (the root too), containers before what they hold."""
    out = [at]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths(v, (*at, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += paths(v, (*at, i))
    return out


def _get(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


@dataclass(frozen=True)
class Mutation:
    kind: str
    path: tuple

    def __str__(self) -> str:
        return f"{self.kind} at {'/'.join(map(str, self.path)) or '(root)'}"


@st.composite
def mutated(draw, doc: Any, *, kinds: tuple[str, ...] = ("swap", "drop", "duplicate", "range", "extra", "none")):
    """(a copy of ``doc`` changed in one place, the change)."""
    doc = json.loads(json.dumps(doc))
    kind = draw(st.sampled_from(kinds))
    places = paths(doc)
    if kind == "none":
        return doc, Mutation(kind, ())
    if kind == "range":
        numbers = [p for p in places if isinstance(_get(doc, p), (int, float)) and not isinstance(_get(doc, p), bool)]
        if not numbers:
            kind = "swap"
        else:
            path = draw(st.sampled_from(numbers))
            return _set(doc, path, draw(st.sampled_from(OUT_OF_RANGE))), Mutation(kind, path)
    if kind in ("drop", "duplicate", "extra"):
        objects = [p for p in places if isinstance(_get(doc, p), dict) and _get(doc, p)]
        if not objects:
            kind = "swap"
        else:
            path = draw(st.sampled_from(objects))
            obj = _get(doc, path)
            key = draw(st.sampled_from(sorted(obj)))
            if kind == "drop":
                del obj[key]
                return doc, Mutation(kind, (*path, key))
            if kind == "extra":
                obj[draw(st.sampled_from(("surplus", "x-extra", key + "_")))] = draw(st.sampled_from(OTHER_VALUES))
                return doc, Mutation(kind, path)
            return _set(doc, path, Dup(obj, key, draw(st.sampled_from(OTHER_VALUES)))), Mutation(kind, (*path, key))
    path = draw(st.sampled_from(places[1:] or places))
    return _set(doc, path, draw(st.sampled_from(OTHER_VALUES))), Mutation("swap", path)


@st.composite
def damaged(draw, text: str):
    """(the bytes of ``text``, perhaps damaged in one way, what was done)."""
    data = text.encode("utf-8")
    kind = draw(st.sampled_from(("truncate", "latin-1", "utf-16", "bad-byte", "nul", "bom", "whole", "whole")))
    if kind == "truncate":
        return data[: draw(st.integers(0, max(len(data) - 1, 0)))], kind
    if kind == "latin-1":
        return (text.replace('"', '"\u00e9', 1)).encode("latin-1", "replace"), kind
    if kind == "utf-16":
        return text.encode("utf-16"), kind
    at = draw(st.integers(0, len(data)))
    if kind == "bad-byte":
        return data[:at] + b"\xff\xfe" + data[at:], kind
    if kind == "nul":
        return data[:at] + b"\x00" + data[at:], kind
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, kind
    return data, kind


def _listing(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


class Workspace:
    """A fresh copy of a template database and an empty input folder for each example, under ``root``."""

    def __init__(self, template: Path, root: Path):
        self.template, self.root, self.n = template, root, 0

    def fresh(self) -> tuple[Path, Path]:
        self.n += 1
        here = self.root / f"ex{self.n}"
        shutil.rmtree(here, ignore_errors=True)
        (here / "in").mkdir(parents=True)
        db = here / "workbench.db"
        shutil.copy(self.template, db)
        return db, here / "in"


def outcome(db: Path, inputs: Path, file_name: str | tuple[str, ...], run: Callable[[], Any], *, what: str,
            record_level: bool = True) -> Any:
    """Run one import (``run``), hold it to the rule, and return its result (None when it was refused).

    ``file_name`` is the name the refusal must say (or the names of which it must say one: a changed file of a
    folder may be refused at a record of another, an annotation of a span it no longer holds);
    ``record_level`` asks it to say the record or line too.
    """
    names = (file_name,) if isinstance(file_name, str) else file_name
    systmp = inputs.parent / "systmp"
    systmp.mkdir(exist_ok=True)
    before_db, before_in = db_content(db), _listing(inputs)
    saved, tempfile.tempdir = tempfile.tempdir, str(systmp)
    try:
        result = run()
    except WorkbenchError as e:
        message = str(e)
        assert any(n in message for n in names), f"{what}: the refusal does not name {file_name}: {message}"
        if record_level:
            assert LOCATED.search(message), f"{what}: the refusal names no record or line: {message}"
        assert "unexpected" not in message.lower(), f"{what}: {message}"
        assert db_content(db) == before_db, f"{what}: refused ({message}) but the database changed"
        result = None
    except Exception as e:  # anything else breaks the rule: shown with what was imported
        raise AssertionError(f"{what}: {type(e).__name__}: {e}") from e
    finally:
        tempfile.tempdir = saved
    assert _listing(systmp) == set(), f"{what}: left in the temporary folder: {sorted(_listing(systmp))}"
    assert _listing(inputs) == before_in, f"{what}: left beside the input: {sorted(_listing(inputs) - before_in)}"
    return result


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
