"""One validation layer for every importer: a tool's record is checked against the shape the tool documents
before any value is read.

Each adapter declares the JSON Schema of its records (the fields the workbench reads, with their types, ranges
and enums, as the tool's own documentation and types give them) and calls :func:`check` on each record. A record
that does not fit is refused in one sentence naming the file, the record, the field (its JSON path), what was
found and what is allowed, before anything is imported; a new importer gets the same care by declaring its schema.

    check("promptfoo", "results.json", 3, row, ROW)   # SourceError: promptfoo results.json record 3: field ...
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema

from workbench.core.errors import SourceError

#: JSON Schema's type names in the words an error message uses.
_TYPE_WORDS = {"object": "an object", "array": "a list", "string": "a string", "number": "a number",
               "integer": "a whole number", "boolean": "true or false", "null": "null"}


@lru_cache(maxsize=None)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def check(source: str, file: str | None, record: int | None, instance: Any, schema: dict[str, Any], *,
          fix: str) -> None:
    """Refuse ``instance`` (record ``record`` of ``file``) unless it fits ``schema``, naming the first misfit."""
    validator = _validator(json.dumps(schema, sort_keys=True))
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is None:
        return
    path = _path(error.absolute_path)
    raise SourceError(f"{source} {file}" if file else source, record,
                      f"found {_found(error.instance)}, {_allowed(error)}", field=path or None, fix=fix)


def _path(parts) -> str:
    """``gradingResult.componentResults[2].score``: the JSON path of a field inside the record."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _found(value: Any) -> str:
    """The value found, short: its JSON text and, for a container, what it is."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text if len(text) <= 40 else text[:37] + "..."
    kind = {dict: "an object ", list: "a list ", str: "the string "}.get(type(value), "")
    return f"{kind}{text}"


def _allowed(error: jsonschema.ValidationError) -> str:
    """What the schema allows where the record misfits, in words."""
    keyword, schema = error.validator, error.schema
    if keyword == "type":
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        return "expected " + " or ".join(_TYPE_WORDS.get(t, t) for t in types)
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"expected a number from {low} to {high}"
        return f"expected a number {'at least' if keyword == 'minimum' else 'at most'} {error.validator_value}"
    if keyword == "enum":
        return "expected one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if keyword == "required":
        return f"expected the field {error.message.split(' ', 1)[0]}"
    if keyword in ("anyOf", "oneOf"):
        words = [_TYPE_WORDS.get(s.get("type"), s.get("description", "")) for s in schema[keyword]]
        return "expected " + " or ".join(w for w in words if w)
    return f"not allowed here ({error.message})"
