"""Find a provider by the `provider/` prefix of a judge's model, importing its module (and SDK) lazily.

    get_provider("anthropic/claude-sonnet-4-5")
    get_provider(spec, http_client=httpx2.AsyncClient(transport=...), max_retries=0)

Third parties can add a prefix with `register_provider`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..errors import ConfigError
from ..models import JudgeSpec
from .base import JudgeProvider

_BUILTIN: dict[str, str] = {
    "anthropic": "workbench.judges.anthropic_provider:AnthropicProvider",
    "openai": "workbench.judges.openai_provider:OpenAIProvider",
    "openai-api": "workbench.judges.openai_provider:OpenAICompatibleProvider",
    "python": "workbench.judges.python_provider:PythonProvider",
}
_REGISTERED: dict[str, Callable[..., JudgeProvider] | str] = {}


def register_provider(prefix: str, factory: Callable[..., JudgeProvider] | str) -> None:
    """Make `<prefix>/<model>` resolve to `factory(model, **options)` ('module:attr' strings load lazily)."""
    if "/" in prefix or not prefix:
        raise ValueError(f"provider prefix must be a non-empty name without '/', got {prefix!r}")
    _REGISTERED[prefix] = factory


def provider_names() -> list[str]:
    return sorted({*_BUILTIN, *_REGISTERED})


def split_model(model: str) -> tuple[str, str]:
    """'openai-api/vllm/llama' -> ('openai-api', 'vllm/llama')."""
    prefix, sep, rest = model.partition("/")
    if not sep:
        raise ConfigError(f"judge model '{model}' needs a provider prefix, one of: "
                          + ", ".join(f"{p}/" for p in provider_names()) + " (e.g. anthropic/claude-sonnet-4-5)")
    return prefix, rest


def _load(target: Callable[..., JudgeProvider] | str) -> Callable[..., JudgeProvider]:
    if not isinstance(target, str):
        return target
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


class _KeysChecked(Mapping):
    """The environment as providers read it: a key an HTTP header cannot carry is refused by its name, unshown."""

    def __init__(self, env: Mapping[str, str]):
        self._env = env

    def __getitem__(self, name: str) -> str:
        value = self._env[name]
        if name.endswith(("_KEY", "_TOKEN")) and isinstance(value, str) and not value.isascii():
            raise ConfigError(f"the environment variable {name} contains a non-ASCII character (the value is not "
                              "shown); set it again, copying the key from the provider's console")
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)


def get_provider(model: str | JudgeSpec, *, env: Mapping[str, str] | None = None, http_client: Any = None,
                 max_retries: int | None = None, timeout: float | None = None) -> JudgeProvider:
    """The provider for `<provider>/<model>`.

    Keys come only from `env` (default `os.environ`; the UI may pass Streamlit
    secrets through it) and are never stored outside the SDK client. Raises
    ConfigError naming the `pip install` or environment variable that is missing.
    """
    name = model.model if isinstance(model, JudgeSpec) else model
    prefix, rest = split_model(name)
    target = _REGISTERED.get(prefix) or _BUILTIN.get(prefix)
    if target is None:
        raise ConfigError(f"unknown judge provider '{prefix}/' in '{name}'; use one of: "
                          + ", ".join(f"{p}/" for p in provider_names()))
    options: dict[str, Any] = {"env": _KeysChecked(os.environ if env is None else env)}
    if http_client is not None:
        options["http_client"] = http_client
    if max_retries is not None:
        options["max_retries"] = max_retries
    if timeout is not None:
        options["timeout"] = timeout
    return _load(target)(rest, **options)
