"""The import adapters: one per tool, found by name, each importing its tool's library lazily.

    adapter = get_adapter("inspect")
    for rec in adapter.read("logs/run.eval"):
        ...  # SourceItem, SourceLabel, SourceJudgment or Skipped, in the source's order

An adapter only reads: it turns the tool's own records into the workbench's
import rows (an item in the file form of DESIGN 2, a label or a judgment with
the tool's raw value), each carrying the number of the source record it came
from. Mapping raw values onto the rubric's scale (``mapping.py``) and landing
the rows, all or nothing, (``workbench.features.interop.service``) are the same for
every tool. An adapter is registered with ``@source_adapter`` like a judge
provider with ``@model_provider``: the decorated function imports the module
(and through it the tool's library) only when the source is used, and the
decorator records the one-line ``pip install`` that provides the library.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Protocol

from workbench.core.errors import ConfigError, InputError, SourceError, WorkbenchError  # noqa: F401 - adapters raise it


@dataclass(frozen=True)
class SourceItem:
    """An item in the file form of DESIGN 2 (``id``, ``input``, ``output``, ``trajectory``, ...)."""

    record: int
    data: dict[str, Any]
    origin: str | None = None  # the file of a multi-file export the record is in, for error messages
    # metadata of the source run, not of the item (an Inspect eval's task_id), kept out of ``data`` so that a
    # second run's records are the same items; an item landed with it inside its metadata (as imports did before)
    # is the same item too
    run_metadata: dict[str, Any] | None = None


@dataclass(frozen=True)
class SourceLabel:
    """A human's rating in the tool's own terms; ``name`` selects the import map (score or metric name)."""

    record: int
    item_id: str
    rater: str
    name: str
    value: Any
    field: str = "value"  # where the value sits in the source record, for error messages
    rationale: str | None = None
    created_at: str | None = None
    origin: str | None = None
    carried_map: dict[str, Any] | None = None  # see SourceJudgment


@dataclass(frozen=True)
class SourceJudgment:
    """An LLM judge's verdict in the tool's own terms; ``value`` None means unscored (``unscored_reason`` says why).

    The judge is named by the tool (``judge``: scorer, metric or assessment name) and the grader
    model when the tool records it (``model``, as the tool writes it, e.g. ``openai/gpt-4o``).
    """

    record: int
    item_id: str
    judge: str
    name: str
    value: Any
    model: str | None = None
    field: str = "value"
    repeat: int = 0
    unscored_reason: str | None = None
    rationale: str | None = None
    model_version: str | None = None
    created_at: str | None = None
    extra: dict[str, Any] = dc_field(default_factory=dict)  # tokens_in, tokens_out, cost_usd, latency_ms
    origin: str | None = None
    # the import map the source file declares itself (an exported judge's scale, in import-map form): used when
    # neither --map nor the rubric's import_maps map this name, so the tool's results come back without a map
    carried_map: dict[str, Any] | None = None
    # the run the source says the verdict belongs to (an experiment, an eval log): one judge's verdicts of two
    # source runs land as two runs (each still named by what it holds); None: all of the judge's verdicts, one run
    source_run: str | None = None
    # the source run gains verdicts over time (a tracking store's feedback logged outside an evaluation): its run keeps
    # one name, and importing the grown store again adds only the (item, repeat) verdicts it did not hold yet
    run_grows: bool = False
    # the tool's own id of the verdict (a Langfuse score id): an id the judge already holds from this tool is not
    # landed again, whichever export or pull brings it back
    source_id: str | None = None


@dataclass(frozen=True)
class Skipped:
    """A source record deliberately not imported, with the reason the summary counts it under."""

    record: int
    reason: str


SourceRecord = SourceItem | SourceLabel | SourceJudgment | Skipped


class Adapter(Protocol):
    """Reads one tool's results: ``read(uri)`` yields the records in source order.

    An adapter that takes import options (Inspect's ``scorer``) names them in a ``read_options`` tuple; the
    service passes only those, and refuses an option the source does not take.
    """

    source: str

    def read(self, uri: str, **options: Any) -> Iterator[SourceRecord]: ...


class LibraryMissing(WorkbenchError):
    """Raised by an adapter module when its tool's library will not import; becomes the ``pip install`` line."""


def require(module: str) -> Any:
    """Import a tool's library inside an adapter; LibraryMissing when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise LibraryMissing(module) from None


def split_model(model: str | None) -> tuple[str | None, str | None]:
    """A tool's model name as (provider, bare model): 'openai/gpt-4o', 'openai:gpt-4o' and MLflow's
    'openai:/gpt-4o' all give ('openai', 'gpt-4o'); a name without a provider gives (None, name).

    >>> split_model("openai:/gpt-4o-mini"), split_model("mockllm/model"), split_model("gpt-4o")
    (('openai', 'gpt-4o-mini'), ('mockllm', 'model'), (None, 'gpt-4o'))
    """
    if not model:
        return None, None
    for sep in (":/", "/", ":"):
        provider, found, bare = model.partition(sep)
        if found and provider and bare:
            return provider, bare
    return None, model


_FAMILIES = {"openai": "openai", "azureai": "openai", "azure": "openai", "anthropic": "anthropic",
             "google": "google", "gemini": "google", "vertex": "google", "vertexai": "google", "mistral": "mistral",
             "meta": "meta", "meta-llama": "meta", "llama": "meta"}


def producer_of(model: str | None) -> dict[str, str] | None:
    """An item's producer from a tool's model name: the bare model, and the family its provider names.

    >>> producer_of("openai/gpt-4o-mini"), producer_of("mockllm/model")
    ({'model': 'gpt-4o-mini', 'family': 'openai'}, {'model': 'model', 'family': 'mockllm'})
    """
    provider, bare = split_model(model)
    if not bare:
        return None
    return {"model": bare, "family": model_family(provider) or "unknown"}


def model_family(provider: str | None) -> str | None:
    """The family of a tool's provider prefix: the first-party families by name, any other prefix as itself."""
    return _FAMILIES.get(provider.lower(), provider) if provider else None


def text_of(content: Any) -> str:
    """Message content as text: a string as it is; a list of parts (OpenAI, Inspect, ...) joined by their text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "content", "reasoning", "refusal"):
            if isinstance(content.get(key), str):
                return content[key]
        return json.dumps(content, ensure_ascii=False, default=str)
    for attr in ("text", "content", "reasoning"):
        if isinstance(getattr(content, attr, None), str):
            return getattr(content, attr)
    return str(content)


def read_json(source: str, uri: str) -> Any:
    """A tool's JSON export; SourceError naming the file when it is missing or not JSON.

    A UTF-8 byte-order mark (what Windows tools write first) is read past, as the workbench's own files are."""
    path = Path(uri)
    if not path.is_file():
        raise SourceError(source, None, f"there is no file {uri}", fix="check the path")
    try:
        with path.open(encoding="utf-8-sig") as fh:
            return json.load(fh)
    except UnicodeDecodeError as e:  # said in its own words: the codec's ("unexpected end of data") read as a crash
        raise SourceError(source, None, f"{path.name} is not UTF-8 text (byte {e.object[e.start]:#04x} at offset "
                          f"{e.start})", fix=f"give the JSON file {source} wrote, in UTF-8") from None
    except json.JSONDecodeError as e:
        raise SourceError(source, None, f"{path.name} is not JSON ({e})",
                          fix=f"give the JSON file {source} wrote") from None


def export_files(source: str, uri: str, pattern: str, fix: str) -> tuple[Path | None, list[Path]]:
    """An export given as one file, or as a folder of saved API responses: (the folder or None, the rating files)."""
    path = Path(uri)
    if not path.is_dir():
        return None, [path]
    files = sorted(path.glob(pattern))
    if not files:
        raise SourceError(source, None, f"the folder {uri} holds no {pattern}", fix=fix)
    return path, files


def response_rows(source: str, f: Path, *, records_ok: bool = False) -> list:
    """The rows of a saved API response (its ``data`` list), or of a list of records when ``records_ok``."""
    body = read_json(source, str(f))
    rows = body.get("data") if isinstance(body, dict) else (body if records_ok else None)
    if not isinstance(rows, list):
        raise SourceError(f"{source} {f.name}", None, f"is not a {source} API response (no 'data' list)"
                          + (" nor a list of records" if records_ok else ""), fix="save the response body as it came")
    return rows


# --------------------------------------------------------------------------- the built-in adapters
