"""Traces from an OTLP JSON file: an ``ExportTraceServiceRequest`` as the OpenTelemetry SDK's OTLP exporter encodes
it, or a collector's file exporter writes it (one request per line), with hex trace and span ids.

A trace of the stream is a GenAI chat span (``gen_ai.operation.name`` = ``chat``, or a span carrying messages)
under the GenAI semantic conventions:

- input and output from the ``gen_ai.input.messages`` / ``gen_ai.output.messages`` attributes (JSON text or
  OTLP arrays of messages with ``parts``), else from the older ``gen_ai.user.message`` / ``gen_ai.choice`` events
  (``content``, ``message``) or ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` events;
- the verdict from a ``gen_ai.evaluation.result`` event (``gen_ai.evaluation.score.value``) on the span or on a
  child span of it; none: the bundle's judge grades it;
- its id is ``<traceId>-<spanId>`` (hex), its time the span's start, its category the ``workbench.category``
  attribute of the span or its resource (else ``default``).
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from workbench.core.errors import InputError
from workbench.features.monitoring.records import Trace, utc_text

EVALUATION_EVENT = "gen_ai.evaluation.result"
SCORE = "gen_ai.evaluation.score.value"


def any_value(v: Any) -> Any:
    """An OTLP JSON AnyValue as a Python value."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v.get(key)
    if "intValue" in v:
        return int(v.get("intValue"))
    if "arrayValue" in v:
        return [any_value(x) for x in (v.get("arrayValue") or {}).get("values") or []]
    if "kvlistValue" in v:
        return attributes((v.get("kvlistValue") or {}).get("values"))
    if "bytesValue" in v:
        return v.get("bytesValue")
    return None


def attributes(kvs: Any) -> dict[str, Any]:
    return {kv.get("key"): any_value(kv.get("value")) for kv in kvs or [] if isinstance(kv, dict)}


def hex_id(value: Any) -> str:
    """OTLP JSON's ids are hex; a protobuf JSON mapping (base64) is read too."""
    text = str(value or "")
    try:
        int(text, 16)
        return text.lower()
    except ValueError:
        pass
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _requests(path: Path, needle: str | None = None) -> Iterator[tuple[int, dict]]:
    """(line, request): the whole file as one JSON document, else one per line (the collector's file exporter).

    A file whose first line is a request by itself is read a line at a time (memory flat in the file's size);
    anything else is read whole. ``needle``: lines read a line at a time are parsed only if they hold it."""
    if _first_line_is_a_request(path):
        with path.open(encoding="utf-8", newline="\n") as fh:
            # split on "\n" only: U+0085 and U+2028, which JSON strings may hold raw, are not line ends here
            for n, line in enumerate(fh, 1):
                if needle is None or needle in line:
                    yield from _line_request(path, n, line)
        return
    text = path.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
        yield 1, doc
        return
    except json.JSONDecodeError:
        pass
    for n, line in enumerate(text.split("\n"), 1):
        yield from _line_request(path, n, line)


def _first_line_is_a_request(path: Path) -> bool:
    with path.open(encoding="utf-8", newline="\n") as fh:
        first = fh.readline()
    try:
        doc = json.loads(first)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and "resourceSpans" in doc


def _line_request(path: Path, n: int, line: str) -> Iterator[tuple[int, dict]]:
    if not line.strip():
        return
    try:
        yield n, json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(f"not OTLP JSON ({e.msg} at column {e.colno})", file=path.name, line=n,
                         fix="give the ExportTraceServiceRequest JSON the OTLP exporter or a collector's file "
                             "exporter writes") from None


def _messages_text(value: Any, roles: tuple[str, ...] | None) -> str | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return None
    texts = []
    for msg in value:
        if not isinstance(msg, dict) or (roles and msg.get("role") not in roles):
            continue
        if isinstance(msg.get("content"), str):
            texts.append(msg.get("content"))
        for part in msg.get("parts") or []:
            if isinstance(part, dict) and part.get("type", "text") == "text" and isinstance(part.get("content"), str):
                texts.append(part.get("content"))
        inner = msg.get("message")
        if isinstance(inner, dict) and isinstance(inner.get("content"), str):
            texts.append(inner.get("content"))
    return "\n\n".join(texts) if texts else None


def _from_events(events: list[dict], names: tuple[str, ...], keys: tuple[str, ...]) -> str | None:
    texts = []
    for ev in events:
        if ev.get("name") not in names:
            continue
        attrs = attributes(ev.get("attributes"))
        for key in keys:
            if key in attrs:
                got = attrs.get(key)
                text = got if isinstance(got, str) and key != "message" else _messages_text(got, None)
                if isinstance(text, str):
                    texts.append(text)
                break
    return "\n\n".join(texts) if texts else None


def read_otlp(path: str | Path) -> list[Trace]:
    """Every chat span of the file as a trace; an evaluation score that is not a number is refused."""
    return list(iter_otlp(path))


def _spans(path: Path, needle: str | None = None) -> Iterator[tuple[int, dict, dict]]:
    """(line, span, resource attributes) of every span of the file, in order (``needle``: see _requests)."""
    for line, req in _requests(path, needle):
        if not isinstance(req, dict) or "resourceSpans" not in req:
            raise InputError("not an ExportTraceServiceRequest (no 'resourceSpans')", file=path.name, line=line,
                             fix="export the traces with the OTLP exporter's JSON encoding or a collector's "
                                 "file exporter")
        for rs in req.get("resourceSpans") or []:
            resource = attributes((rs.get("resource") or {}).get("attributes"))
            for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
                for span in ss.get("spans") or []:
                    yield line, span, resource


def iter_otlp(path: str | Path) -> Iterator[Trace]:
    """:func:`read_otlp` a trace at a time, in two passes over the file: the evaluation scores first (a verdict may
    sit on a child span anywhere in the file; a map of span ids to scores is all that is kept), then the chat
    spans. A file read a line at a time keeps memory flat in its size beyond that map."""
    path = Path(path)
    scores: dict[str, Any] = {}  # span id -> verdict, from evaluation events on it or on a child
    for line, span, _ in _spans(path, EVALUATION_EVENT):
        for ev in span.get("events") or []:
            if ev.get("name") == EVALUATION_EVENT:
                attrs = attributes(ev.get("attributes"))
                if SCORE in attrs:
                    target = hex_id(span.get("spanId"))
                    if not _is_chat(span):
                        target = hex_id(span.get("parentSpanId")) or target
                    scores[target] = (line, attrs.get(SCORE))
    seen = False
    for line, span, resource in _spans(path):
        attrs = attributes(span.get("attributes"))
        if not _is_chat(span, attrs):
            continue
        seen = True
        events = span.get("events") or []
        span_id = hex_id(span.get("spanId"))
        ident = f"{hex_id(span.get('traceId'))}-{span_id}"
        input_ = (_messages_text(attrs.get("gen_ai.input.messages"), ("user",))
                  or _messages_text(attrs.get("gen_ai.input.messages"), None)
                  or _from_events(events, ("gen_ai.user.message",), ("content", "message"))
                  or _from_events(events, ("gen_ai.content.prompt",), ("gen_ai.prompt",)))
        output = (_messages_text(attrs.get("gen_ai.output.messages"), None)
                  or _from_events(events, ("gen_ai.choice",), ("message", "content"))
                  or _from_events(events, ("gen_ai.content.completion",), ("gen_ai.completion",)))
        if input_ is None or output is None:
            raise InputError(f"chat span {ident} carries no {'input' if input_ is None else 'output'} messages",
                             file=path.name, line=line, field="gen_ai.input.messages" if input_ is None
                             else "gen_ai.output.messages",
                             fix="record message content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) "
                                 "or leave the span out")
        score = None
        if span_id in scores:
            at, value = scores.get(span_id)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
                raise InputError(f"the evaluation score of span {ident} is {value!r}, not a whole number on the "
                                 "bundle's scale", file=path.name, line=at, field=SCORE,
                                 fix="record the judge's verdict as the scale value (e.g. -1, 0, 1)")
            score = int(value)
        start = int(span.get("startTimeUnixNano") or 0)
        category = attrs.get("workbench.category") or resource.get("workbench.category") or "default"
        yield Trace(ident, utc_text(datetime.fromtimestamp(start / 1e9, tz=timezone.utc)), input_, output,
                    str(category), score, {"otel_span_name": span.get("name")}, line)
    if not seen:
        raise InputError("the file holds no GenAI chat span", file=path.name,
                         fix="export spans with gen_ai.operation.name = chat and their messages")


def _is_chat(span: dict, attrs: dict[str, Any] | None = None) -> bool:
    attrs = attributes(span.get("attributes")) if attrs is None else attrs
    if attrs.get("gen_ai.operation.name") in ("chat", "text_completion", "generate_content"):
        return True
    return "gen_ai.input.messages" in attrs or any(
        ev.get("name") in ("gen_ai.user.message", "gen_ai.content.prompt") for ev in span.get("events") or [])
