"""The import adapters by source name (``workbench import --from NAME``), each module imported only when used.

A third party adds a source with the ``source_adapter`` decorator, as the six below are registered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.core.errors import ConfigError
from workbench.core.inputs import did_you_mean
from workbench.features.interop.base import Adapter, LibraryMissing


@dataclass(frozen=True)
class AdapterEntry:
    name: str
    load: Callable[[], type]  # imports the adapter module; returns its class
    title: str  # how messages name the tool, e.g. "Inspect AI"
    pip: str | None = None  # the extra that provides its library, e.g. "judge-workbench[inspect]"
    what: str = ""  # one line for --help: what the adapter reads

    def library_missing(self) -> ConfigError:
        return ConfigError(f"importing from {self.title} needs its Python package; run: pip install '{self.pip}'")


_ADAPTERS: dict[str, AdapterEntry] = {}


def source_adapter(name: str, *, title: str, pip: str | None = None,
                   what: str = "") -> Callable[[Callable[[], type]], Callable[[], type]]:
    """Register ``workbench import --from NAME``: decorate a function that imports the adapter and returns it."""

    def register(load: Callable[[], type]) -> Callable[[], type]:
        _ADAPTERS[name] = AdapterEntry(name, load, title, pip, what)
        return load

    return register


def adapter_names() -> list[str]:
    return list(_ADAPTERS)


def adapter_entries() -> list[AdapterEntry]:
    return list(_ADAPTERS.values())


def adapter_entry(name: str) -> AdapterEntry:
    entry = _ADAPTERS.get(name)
    if entry is None:
        raise ConfigError(f"--from {name}: there is no import adapter '{name}'; "
                          + did_you_mean(name, _ADAPTERS, f"use one of: {', '.join(_ADAPTERS)}"))
    return entry


def get_adapter(name: str, **options: Any) -> Adapter:
    """The adapter of a source; ConfigError with the ``pip install`` when its library is missing.

    ``options`` go to the adapter as they are (e.g. Langfuse's ``http_client``, as tests pass one).
    """
    entry = adapter_entry(name)
    try:
        return entry.load()(**options)
    except LibraryMissing:
        raise entry.library_missing() from None


@source_adapter("inspect", title="Inspect AI", pip="judge-workbench[inspect]",
                what="an eval log (.eval or .json): samples, scorer scores, human score edits")
def _inspect() -> type:
    from workbench.features.interop.inspect_ai import InspectAdapter
    return InspectAdapter


@source_adapter("promptfoo", title="promptfoo",
                what="promptfoo eval -o results.json: rows, model-graded assertions, human ratings")
def _promptfoo() -> type:
    from workbench.features.interop.promptfoo import PromptfooAdapter
    return PromptfooAdapter


@source_adapter("deepeval", title="DeepEval",
                what="a test-run JSON (testCases[].metricsData[], conversational turns)")
def _deepeval() -> type:
    from workbench.features.interop.deepeval import DeepEvalAdapter
    return DeepEvalAdapter


@source_adapter("mlflow", title="MLflow", pip="judge-workbench[mlflow]",
                what="traces and assessments: a tracking URI#experiment=NAME, or a file of exported traces")
def _mlflow() -> type:
    from workbench.features.interop.mlflow import MlflowAdapter
    return MlflowAdapter


@source_adapter("langfuse", title="Langfuse", pip="judge-workbench[langfuse]",
                what="scores (v3 scores API JSON) with their traces or observations, or pulled from the host")
def _langfuse() -> type:
    from workbench.features.interop.langfuse import LangfuseAdapter
    return LangfuseAdapter


@source_adapter("phoenix", title="Phoenix",
                what="span annotations with their spans, or experiment downloads (JSON as the Phoenix REST API "
                     "returns them; a folder of them)")
def _phoenix() -> type:
    from workbench.features.interop.phoenix import PhoenixAdapter
    return PhoenixAdapter
