"""Reading and validating the file formats of DESIGN section 2 (items, labels, judgments).

Files are streamed record by record so memory does not grow with the file;
every problem becomes one ``InputError`` naming file, line, field and fix.
The limits (a file at most 1 GiB, a line or cell at most 16 MiB) and the
unknown-field rule are the input edge's, ``workbench.core.inputs``; a score is
checked against the scale the file is read for by the parser itself
(``parse_label(rec, scale)``), so ``import`` and ``grade`` refuse the same
values with the same sentence.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from workbench.core.errors import InputError
from workbench.core.inputs import MAX_LINE_BYTES, check_size, shown_size, unknown_key
from workbench.core.models import Item, Judgment, Label, Producer, derived_item_id
from workbench.core.names import check_name
from workbench.core.scale import Scale

STEP_ROLES = ("system", "user", "assistant", "tool")
# Fields that hold JSON inside a CSV cell.
NESTED = {"trajectory", "producer", "metadata", "evidence_steps", "trace"}
MAX_DEPTH = 64  # nesting of a record's JSON; deeper is refused before it can overflow the stack
_SURROGATE = re.compile("[\ud800-\udfff]")
INT_LIMIT = 2**63  # SQLite's integers: a whole number outside [-2**63, 2**63) cannot be stored
#: Fields that name things (ids, task ids, categories): printable text on one line.
LABEL_LIKE = ("id", "item_id", "task_id", "category")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_SURROGATE_FIX = "write the character itself, or a valid pair of surrogate escapes"


@dataclass(frozen=True)
class Record:
    file: str
    line: int
    data: dict[str, Any]
    from_csv: bool = False

    def error(self, message: str, *, field: str | None = None, fix: str | None = None) -> InputError:
        return InputError(message, file=self.file, line=self.line, field=field, fix=fix)


def read_records(path: str | Path) -> Iterator[Record]:
    """Yield each record of a .jsonl or .csv file with its line number."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=str(path), fix="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", file=str(path), fix="give the path of the file")
    check_size(path, "records")  # before a byte is read; each line has its own limit below
    if path.stat().st_size == 0:
        raise InputError("the file is empty", file=path.name, fix="export at least one record into it")
    if path.suffix.lower() == ".csv":
        yield from _read_csv(path)
    elif path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
        yield from _read_jsonl(path)
    else:
        raise InputError(f"unknown file type '{path.suffix}'", file=path.name,
                         fix="use .jsonl (one JSON object per line) or .csv")


def _nul(file: str, line: int) -> InputError:
    """A raw NUL byte is never in UTF-8 text a tool wrote: the file is binary, or UTF-16."""
    return InputError("the line holds a NUL byte: the file is binary or UTF-16, not UTF-8 text", file=file, line=line,
                      fix="save the file as UTF-8 (JSON text may write the character as \\u0000)")


def _too_long(file: str, line: int) -> InputError:
    return InputError(f"the line is longer than the {shown_size(MAX_LINE_BYTES)} limit", file=file, line=line,
                      fix="split the item or move large attachments out of it")


def _read_jsonl(path: Path) -> Iterator[Record]:
    seen = False
    with path.open("rb") as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise _too_long(path.name, lineno)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if b"\x00" in raw:
                raise _nul(path.name, lineno)
            if not raw.strip():
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"not valid UTF-8 at byte {e.start}", file=path.name, line=lineno,
                                 fix="save the file as UTF-8") from None
            data = _json(text, path.name, lineno, None, "write one complete JSON object per line")
            if not isinstance(data, dict):
                raise InputError(f"expected a JSON object, got {_kind(data)}", file=path.name, line=lineno,
                                 fix="write one JSON object per line")
            seen = True
            yield Record(path.name, lineno, data)
    if not seen:
        raise InputError("the file has no records", file=path.name, fix="add one JSON object per line")


def _json(text: str, file: str, line: int, field: str | None, fix: str) -> Any:
    """Parse JSON text and check every value in it (see check_values)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        what = "cell is not valid JSON" if field else "malformed JSON"
        raise InputError(f"{what} at column {e.colno} ({e.msg})", file=file, line=line, field=field,
                         fix=fix) from None
    except RecursionError:
        raise InputError(f"the JSON nests deeper than {MAX_DEPTH} levels", file=file, line=line, field=field,
                         fix="flatten the structure") from None
    check_values(data, file=file, line=line, field=field)
    return data


def check_values(data: Any, *, file: str, line: int, field: str | None = None) -> None:
    """Refuse what the store and the hashes cannot hold: NaN and infinities, whole numbers beyond 64 bits, lone
    surrogates, deep nesting.

    Iterative, so a deeply nested value is refused rather than overflowing the stack.
    """
    stack = [(data, field or "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise InputError(f"nests deeper than {MAX_DEPTH} levels", file=file, line=line, field=where or None,
                                 fix="flatten the structure")
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            children = []
            for key, child in pairs:
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise InputError("a key holds a lone surrogate escape ('\\ud800' to '\\udfff')", file=file,
                                     line=line, field=where or None, fix=_SURROGATE_FIX)
                path = f"{where}[{key}]" if isinstance(value, list) else (f"{where}.{key}" if where else key)
                children.append((child, path, depth + 1))
            stack.extend(reversed(children))
        elif isinstance(value, int) and not isinstance(value, bool) and not -INT_LIMIT <= value < INT_LIMIT:
            raise InputError(f"{_digits(value)} is too large a whole number (the limit is 2**63)", file=file,
                             line=line, field=where or None, fix="write it as text, or as a number with a decimal point")
        elif isinstance(value, float) and not math.isfinite(value):
            shown = "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
            raise InputError(f"{shown} is not a finite number", file=file, line=line, field=where or None,
                             fix="write a finite number, or leave the field out")
        elif isinstance(value, str) and _SURROGATE.search(value):
            raise InputError("the text holds a lone surrogate escape ('\\ud800' to '\\udfff')", file=file, line=line,
                             field=where or None, fix=_SURROGATE_FIX)


def _digits(n: int) -> str:
    text = str(n)
    return text if len(text) <= 30 else text[:27] + "..."


class _Lines:
    """The physical lines of a CSV file, decoded one at a time so that every error names its own line."""

    def __init__(self, fh: Any, file: str):
        self.fh, self.file, self.n = fh, file, 0
        self.record_start, self.record_text = 1, ""
        self.header: list[str] = []

    def __iter__(self) -> "_Lines":
        return self

    def __next__(self) -> str:
        raw = self.fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            raise StopIteration
        self.n += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise _too_long(self.file, self.n)
        if self.n == 1 and raw.startswith(b"\xef\xbb\xbf"):  # spreadsheets write a byte-order mark
            raw = raw[3:]
        if b"\x00" in raw:
            raise _nul(self.file, self.n)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"not valid UTF-8 at byte {e.start}", file=self.file, line=self.n,
                             fix="save the file as UTF-8") from None
        if self.n == self.record_start:
            self.record_text = text
        return text

    def next_record(self, reader: Any) -> list[str] | None:
        """The next row of ``reader``, or None at the end; a csv.Error becomes an InputError at the row's start."""
        self.record_start = self.n + 1
        try:
            return next(reader)
        except StopIteration:
            return None
        except csv.Error as e:
            raise self._malformed(e) from None

    def _malformed(self, e: csv.Error) -> InputError:
        start, end = self.record_start, max(self.n, self.record_start)
        fix = 'close the quote, and write a quote inside a quoted cell twice ("")'
        if end > start or "unexpected end of data" in str(e):
            # A quote opened on the first line of the row and not closed there: it swallowed what followed.
            cells = next(csv.reader([self.record_text]), [])
            column = self.header[len(cells) - 1] if 0 < len(cells) <= len(self.header) else None
            runs_on = "to the end of the file" if "unexpected end of data" in str(e) else f"on to line {end} ({e})"
            return InputError(f"a quoted cell is not closed on this line: it runs {runs_on}", file=self.file,
                              line=start, field=column, fix=fix)
        return InputError(f"malformed CSV ({e})", file=self.file, line=start, fix=fix)


def _read_csv(path: Path) -> Iterator[Record]:
    csv.field_size_limit(MAX_LINE_BYTES)
    with path.open("rb") as fh:
        lines = _Lines(fh, path.name)
        reader = csv.reader(lines, strict=True)
        header = lines.next_record(reader)
        if not header or not any(h.strip() for h in header):
            raise InputError("the file has no header row", file=path.name, line=1,
                             fix="put the column names on the first line")
        if len(header) == 1:
            for sep, name in ((";", "semicolons"), ("\t", "tabs"), ("|", "pipes")):
                if sep in header[0]:
                    raise InputError(f"the header is separated by {name}, not commas", file=path.name, line=1,
                                     fix="save the file as comma-separated CSV")
        first: dict[str, int] = {}
        for n, name in enumerate(header):
            if name in first:
                raise InputError(f"the column '{name}' appears twice in the header (columns {first[name] + 1} and "
                                 f"{n + 1})", file=path.name, line=1, field=name,
                                 fix="rename or remove one of them")
            first[name] = n
        lines.header = header
        seen = False
        while (row := lines.next_record(reader)) is not None:
            lineno = lines.record_start
            if len(row) > len(header):
                raise InputError("the row has more cells than the header", file=path.name, line=lineno,
                                 fix="quote cells that contain commas")
            data: dict[str, Any] = {}
            for key, value in zip(header, row):
                if value == "":
                    continue
                if key in NESTED:
                    value = _json(value, path.name, lineno, key, "write nested fields as JSON strings")
                data[key] = value
            if data:
                seen = True
                yield Record(path.name, lineno, data, from_csv=True)
    if not seen:
        raise InputError("the file has no records", file=path.name, fix="add rows under the header")


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(v), type(v).__name__)


# -- field access with types -------------------------------------------------

def _check_fields(rec: Record, known: tuple[str, ...]) -> None:
    for key in rec.data:
        if key not in known:
            raise unknown_key(key, known, what="field", file=rec.file, line=rec.line)


def _str(rec: Record, name: str, *, required: bool = False) -> str | None:
    v = rec.data.get(name)
    if v is None:
        if required:
            raise rec.error("is missing", field=name, fix=f"give every record a '{name}'")
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and name in ("id", "item_id", "task_id", "run"):
        v = str(v)
    if not isinstance(v, str):
        raise rec.error(f"must be a string, got {_kind(v)}", field=name, fix="quote the value")
    if name in LABEL_LIKE and (bad := _CONTROL.search(v)):  # shown in terminals, tables and the UI
        raise rec.error(f"holds the control character {ascii(bad.group())}", field=name,
                        fix="remove it: ids, task ids and categories are one line of printable text")
    if required and not v.strip():
        raise rec.error("is empty", field=name, fix=f"give every record a non-empty '{name}'")
    return v


def _int(rec: Record, name: str, *, required: bool = False, nullable: bool = False) -> int | None:
    v = rec.data.get(name)
    if v is None:
        if required and not nullable:
            raise rec.error("is missing", field=name, fix=f"give every record a '{name}'")
        return None
    if rec.from_csv and isinstance(v, str):
        try:
            number = int(v.strip())
        except ValueError:
            raise rec.error(f"must be an integer, got '{v[:40]}'", field=name, fix="write a whole number") from None
    elif isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise rec.error(f"must be an integer, got {json.dumps(v)[:40]}", field=name, fix="write a whole number")
    else:
        number = int(v)
    if not -INT_LIMIT <= number < INT_LIMIT:  # the store's integers are 64-bit
        raise rec.error(f"{_digits(number)} is too large a number", field=name, fix="write the measured value")
    return number


def _float(rec: Record, name: str) -> float | None:
    v = rec.data.get(name)
    if v is None:
        return None
    try:
        if isinstance(v, bool):
            raise ValueError
        number = float(v)
    except (TypeError, ValueError):
        raise rec.error(f"must be a number, got {json.dumps(v)[:40]}", field=name, fix="write a number") from None
    if not math.isfinite(number):  # 'nan' or 'inf' in a CSV cell
        raise rec.error(f"must be a finite number, got {str(v)[:40]}", field=name, fix="write a finite number")
    return number


def _at_least_zero(rec: Record, name: str, value: int | float | None) -> int | float | None:
    if value is not None and value < 0:
        raise rec.error(f"must be 0 or more, got {value}", field=name, fix="write the measured amount, or leave it out")
    return value


def _timestamp(rec: Record, name: str) -> str | None:
    """An ISO 8601 date or time, kept as written (so files round-trip unchanged)."""
    v = _str(rec, name)
    if v is None:
        return None
    try:
        datetime.fromisoformat(v.strip())
    except ValueError:
        raise rec.error(f"must be an ISO 8601 time, got {json.dumps(v)[:40]}", field=name,
                        fix="write it like 2026-11-20T09:00:00+00:00, or leave it out") from None
    return v


def _name(rec: Record, name: str, what: str, *, required: bool = False) -> str | None:
    v = _str(rec, name, required=required)
    return None if v is None else check_name(v, what, file=rec.file, line=rec.line, field=name)


def _obj(rec: Record, name: str, kind: type, example: str) -> Any:
    v = rec.data.get(name)
    if v is None:
        return None
    if not isinstance(v, kind):
        raise rec.error(f"must be {_kind(kind())}, got {_kind(v)}", field=name, fix=f"write it like {example}")
    return v


# -- items ---------------------------------------------------------------------

ITEM_FIELDS = ("id", "task_id", "category", "input", "output", "trajectory", "producer", "reference", "metadata")


def parse_item(rec: Record) -> Item:
    _check_fields(rec, ITEM_FIELDS)
    input_ = _str(rec, "input", required=True)
    output = _str(rec, "output")
    trajectory = _obj(rec, "trajectory", list, '[{"role": "assistant", "content": "..."}]')
    if output is None and trajectory is None:
        raise rec.error("an item needs an 'output' or a 'trajectory'", field="output",
                        fix="add the final answer as 'output' or the steps as 'trajectory'")
    if trajectory is not None:
        _check_trajectory(rec, trajectory)
    producer = _obj(rec, "producer", dict, '{"model": "gpt-4o", "family": "openai"}')
    prod = None
    if producer is not None:
        extra = set(producer) - {"model", "family"}
        if extra or not isinstance(producer.get("model"), str) or not isinstance(producer.get("family"), str):
            raise rec.error("must be an object with string 'model' and 'family'", field="producer",
                            fix='write it like {"model": "gpt-4o", "family": "openai"}')
        prod = Producer(producer["model"], producer["family"])
    metadata = _obj(rec, "metadata", dict, '{"source": "..."}') or {}
    content = {"task_id": _str(rec, "task_id"), "category": _str(rec, "category") or "default", "input": input_,
               "output": output, "trajectory": trajectory, "producer": producer, "reference": _str(rec, "reference"),
               "metadata": metadata or None}
    item_id = _str(rec, "id")
    if item_id is None:
        item_id = derived_item_id(content)
    elif not item_id.strip():
        raise rec.error("is empty", field="id", fix="give the item a non-empty id or leave the field out")
    return Item(id=item_id, input=input_, task_id=content["task_id"] or item_id, category=content["category"],
                output=output, trajectory=trajectory, producer=prod, reference=content["reference"],
                metadata=metadata)


def _check_trajectory(rec: Record, steps: list) -> None:
    for n, step in enumerate(steps):
        where = f"trajectory[{n}]"
        if not isinstance(step, dict):
            raise rec.error(f"must be an object, got {_kind(step)}", field=where,
                            fix='write each step like {"role": "assistant", "content": "..."}')
        if step.get("role") not in STEP_ROLES:
            raise rec.error(f"role must be one of {', '.join(STEP_ROLES)}, got {json.dumps(step.get('role'))}",
                            field=where, fix="set the step's role")
        if not isinstance(step.get("content", ""), str):
            raise rec.error(f"content must be a string, got {_kind(step.get('content'))}", field=where,
                            fix="serialise structured content as text")
        calls = step.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list) or not all(isinstance(c, dict) and isinstance(c.get("name"), str)
                                                      for c in calls):
                raise rec.error("tool_calls must be a list of {name, arguments}", field=where,
                                fix='write tool calls like [{"name": "bash", "arguments": {"cmd": "ls"}}]')


# -- labels --------------------------------------------------------------------

LABEL_FIELDS = ("item_id", "rater", "score", "rationale", "created_at", "inclusion_probability", "step", "agent")


def on_scale(rec: Record, score: int | None, scale: Scale | None, scale_of: str) -> int | None:
    """A score checked against the scale its file is read for (None: unscored, or no scale to check against)."""
    if scale is not None and score is not None and score not in scale:
        raise rec.error(f"score {score} is not on the scale of {scale_of} {scale.describe()}", field="score",
                        fix="use one of the scale's values")
    return score


def parse_label(rec: Record, scale: Scale | None = None, *, scale_of: str = "the rubric") -> Label:
    """A label; with ``scale``, its score must be on it (``scale_of`` names whose scale it is)."""
    _check_fields(rec, LABEL_FIELDS)
    return Label(item_id=_str(rec, "item_id", required=True), rater=_name(rec, "rater", "rater name", required=True),
                 score=on_scale(rec, _int(rec, "score", required=True), scale, scale_of),
                 rationale=_str(rec, "rationale"), created_at=_timestamp(rec, "created_at"),
                 inclusion_probability=_inclusion(rec), **step_fields(rec))


def step_fields(rec: Record) -> dict[str, Any]:
    """``step`` (a step number from 0) and ``agent`` (a non-empty name) of a label or judgment, None where absent;
    whether the step is one of the item's steps is checked where the item is known (features/steps)."""
    step = None if rec.data.get("step") == "" else _int(rec, "step")  # a CSV's empty cell is no step
    if step is not None and step < 0:
        raise rec.error(f"step {step} is not a step: steps are numbered from 0", field="step",
                        fix="write the number of the step in the item's trajectory, from 0, or leave the field out")
    agent = _str(rec, "agent") or None
    if agent is not None and not agent.strip():
        raise rec.error("is blank", field="agent", fix="name the agent that took the step, or leave the field out")
    return {"step": step, "agent": agent}


def _inclusion(rec: Record) -> float | None:
    """The inclusion probability the active queue recorded when the item was served (absent: random order)."""
    p = _float(rec, "inclusion_probability")
    if p is not None and not 0 < p <= 1:
        raise rec.error(f"is {p}, not a probability in (0, 1]", field="inclusion_probability",
                        fix="keep the value the export wrote, or leave the field out for labels from random order")
    return p


ADJUDICATION_FIELDS = ("item_id", "score", "note", "lead", "created_at")


def parse_adjudication(rec: Record, scale: Scale | None = None, *, scale_of: str = "the rubric") -> dict:
    _check_fields(rec, ADJUDICATION_FIELDS)
    return {"item_id": _str(rec, "item_id", required=True),
            "score": on_scale(rec, _int(rec, "score", required=True), scale, scale_of),
            "note": _str(rec, "note"), "lead": _name(rec, "lead", "lead's name") or "import",
            "created_at": _timestamp(rec, "created_at")}


# -- judgments -----------------------------------------------------------------

JUDGMENT_FIELDS = ("item_id", "score", "unscored_reason", "repeat", "run", "rationale", "model_version", "created_at",
                   "evidence_steps", "trace", "tokens_in", "tokens_out", "tokens_cached", "cost_usd", "latency_ms",
                   "step", "agent")


def parse_judgment(rec: Record, scale: Scale | None = None, *,
                   scale_of: str = "the rubric") -> tuple[str | None, Judgment]:
    """Returns (run name or None, judgment); with ``scale``, a score must be on it."""
    _check_fields(rec, JUDGMENT_FIELDS)
    if "score" not in rec.data and not rec.from_csv:
        raise rec.error("is missing", field="score", fix="give a score, or null with an 'unscored_reason'")
    score = on_scale(rec, _int(rec, "score", nullable=True), scale, scale_of)
    reason = _str(rec, "unscored_reason")
    if score is None and not reason:
        raise rec.error("is null without an 'unscored_reason'", field="score",
                        fix="give a score or say why there is none in 'unscored_reason'")
    if score is not None and reason:
        raise rec.error("has both a score and an 'unscored_reason'", field="unscored_reason",
                        fix="keep one of them")
    repeat = _int(rec, "repeat") or 0
    if repeat < 0:
        raise rec.error(f"must be 0 or more, got {repeat}", field="repeat", fix="number repeats from 0")
    evidence = _obj(rec, "evidence_steps", list, "[3, 7]") or []
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in evidence):
        raise rec.error("must be a list of step numbers", field="evidence_steps", fix="write it like [3, 7]")
    if any(s < 0 for s in evidence):  # steps are numbered from 0, as the judge prompt shows them
        raise rec.error(f"step {min(evidence)} is not a step: steps are numbered from 0", field="evidence_steps",
                        fix="use the step numbers of the item's trajectory, from 0")
    counts = {k: _at_least_zero(rec, k, _int(rec, k)) for k in ("tokens_in", "tokens_out", "tokens_cached")}
    return _name(rec, "run", "run name"), Judgment(
        item_id=_str(rec, "item_id", required=True), score=score, repeat=repeat, unscored_reason=reason,
        rationale=_str(rec, "rationale"), evidence_steps=tuple(evidence),
        trace=_obj(rec, "trace", list, '[{"role": "assistant", ...}]'), **counts,
        cost_usd=_at_least_zero(rec, "cost_usd", _float(rec, "cost_usd")),
        latency_ms=_at_least_zero(rec, "latency_ms", _float(rec, "latency_ms")),
        model_version=_str(rec, "model_version"), created_at=_timestamp(rec, "created_at"), **step_fields(rec))


def check_evidence_steps(rec: Record, j: Judgment, n_steps: int) -> None:
    """Evidence steps must be steps of the item's trajectory (numbered 0 to n_steps - 1)."""
    beyond = [s for s in j.evidence_steps if s >= n_steps]
    if beyond:
        have = f"steps 0 to {n_steps - 1}" if n_steps else "no trajectory steps"
        raise rec.error(f"step {beyond[0]} is not a step of item '{j.item_id}', which has {have}",
                        field="evidence_steps", fix="cite steps of the item's trajectory, numbered from 0")


def check_step(rec: Record, item_id: str, step: int | None, n_steps: int) -> None:
    """A label's or judgment's ``step`` must be a step of the item's trajectory (0 to n_steps - 1)."""
    if step is not None and step >= n_steps:
        have = f"steps 0 to {n_steps - 1}" if n_steps else "no trajectory steps"
        raise rec.error(f"step {step} is not a step of item '{item_id}', which has {have}", field="step",
                        fix="write the number of the decisive step in the item's trajectory (from 0), "
                            "or leave 'step' out")


def judgment_to_dict(run: str | None, j: Judgment) -> dict:
    d: dict[str, Any] = {"item_id": j.item_id, "score": j.score}
    if j.score is None:
        d["unscored_reason"] = j.unscored_reason
    d["repeat"] = j.repeat
    if run is not None:
        d["run"] = run
    for key in ("rationale", "model_version", "created_at", "tokens_in", "tokens_out", "tokens_cached", "cost_usd",
                "latency_ms", "trace", "confidence", "step", "agent"):  # confidence: read back by importing's reader
        v = getattr(j, key)
        if v is not None:
            d[key] = v
    if j.evidence_steps:
        d["evidence_steps"] = list(j.evidence_steps)
    return d


def write_jsonl(path: Path, records: Iterator[dict] | list[dict]) -> int:
    """Write atomically (temp file + rename) so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    n = 0
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False, allow_nan=False) + "\n")
                n += 1
        tmp.replace(path)
    except BaseException:  # a full or read-only disk leaves no .tmp file behind
        tmp.unlink(missing_ok=True)
        raise
    return n

