"""The provider registry: the one list of judge model prefixes, each found lazily by its `provider/` prefix.

    get_provider("anthropic/claude-sonnet-4-5")
    get_provider(spec, http_client=httpx2.AsyncClient(transport=...), max_retries=0)

A provider is registered with the `model_provider` decorator (Inspect's
`@modelapi`): the decorated function imports the provider module inside its
body and returns the provider class, so neither the module nor its SDK is
imported until a judge of that prefix is created; the decorator also records
the SDK the provider needs and the `pip install` that provides it. The rubric
loader asks this registry which prefixes exist (`provider_entry`), and the
runner asks it whether a provider is prompted and billed.

Third parties add a prefix with the decorator, or with `register_provider` and
a ready factory. Importing this module imports no provider module, no SDK and
nothing of the judge engine but its neutral types.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.core.errors import ConfigError, ModelNameError
from workbench.core.inputs import closest
from workbench.core.models import JudgeSpec, ModelName, parse_model
from workbench.judges.types import SDKMissing

if TYPE_CHECKING:
    from workbench.judges.base import JudgeProvider

ProviderFactory = Callable[..., "JudgeProvider"]
"""`factory(target, **options)`: the provider for the name after the prefix, e.g. `AnthropicProvider`."""


@dataclass(frozen=True)
class ProviderEntry:
    """One registered prefix: how to make its provider and what it needs."""

    prefix: str
    load: Callable[[], ProviderFactory]  # imports the provider module; returns the factory (its class)
    pip: str | None = None  # what to install for the SDK the provider imports, e.g. "anthropic"
    sdk_title: str | None = None  # how the message names that SDK, e.g. "the Anthropic SDK"
    family: str | None = None  # the family of every model of this prefix (first-party APIs), else declared
    prompted: bool = True  # a chat model shown the rubric's prompt: its tokens are estimated
    billed: bool = True  # its tokens cost money by the price table (False: every judgment costs 0)

    def sdk_missing(self) -> ConfigError:
        """What to `pip install` when the provider's SDK will not import."""
        return ConfigError(f"the {self.prefix}/ provider needs {self.sdk_title or 'its SDK'}; "
                           f"run: pip install {self.pip or self.prefix}")


_PROVIDERS: dict[str, ProviderEntry] = {}


def _check_prefix(prefix: str) -> None:
    if not isinstance(prefix, str) or not prefix or "/" in prefix:
        raise ValueError(f"provider prefix must be a non-empty name without '/', got {prefix!r}")


def model_provider(prefix: str, *, pip: str | None = None, sdk_title: str | None = None,
                   family: str | None = None, prompted: bool = True,
                   billed: bool = True) -> Callable[[Callable[[], ProviderFactory]], Callable[[], ProviderFactory]]:
    """Register `<prefix>/<model>`: decorate a function that imports the provider and returns its class.

        @model_provider("anthropic", pip="anthropic", sdk_title="the Anthropic SDK", family="anthropic")
        def _anthropic():
            from workbench.judges.providers.anthropic import AnthropicProvider
            return AnthropicProvider

    The class is called as `cls(target, env=..., **options)`, `target` being the
    name after the prefix (`<service>/<model>` for openai-api). A provider
    module imports its SDK when a provider is created and, if that fails,
    raises `types.SDKMissing`, which `get_provider` turns into the `pip install`
    recorded here.
    """
    _check_prefix(prefix)

    def register(load: Callable[[], ProviderFactory]) -> Callable[[], ProviderFactory]:
        _PROVIDERS[prefix] = ProviderEntry(prefix, load, pip=pip, sdk_title=sdk_title, family=family,
                                           prompted=prompted, billed=billed)
        return load

    return register


def register_provider(prefix: str, factory: ProviderFactory | str) -> None:
    """Make `<prefix>/<model>` resolve to `factory(model, **options)` ('module:attr' strings load lazily)."""
    _check_prefix(prefix)

    def load() -> ProviderFactory:
        if not isinstance(factory, str):
            return factory
        module_name, _, attr = factory.partition(":")
        return getattr(importlib.import_module(module_name), attr)

    _PROVIDERS[prefix] = ProviderEntry(prefix, load)


def provider_names() -> list[str]:
    return sorted(_PROVIDERS)


def provider_entry(prefix: str) -> ProviderEntry | None:
    """The registered provider of a prefix, or None."""
    return _PROVIDERS.get(prefix)


def _known() -> str:
    return ", ".join(f"{p}/" for p in provider_names())


def resolve(model: str | JudgeSpec) -> tuple[ModelName, ProviderEntry]:
    """The parsed name and the registered provider of a judge's model; ConfigError naming the known prefixes."""
    name = model.model if isinstance(model, JudgeSpec) else model
    try:
        parsed = parse_model(name)
    except ModelNameError as exc:
        if exc.missing == "provider":
            raise ConfigError(f"judge model '{name}' needs a provider prefix, one of: {_known()} "
                              "(e.g. anthropic/claude-sonnet-4-5)") from None
        raise
    entry = provider_entry(parsed.provider)
    if entry is None:
        best = closest(parsed.provider, provider_names())
        raise ConfigError(f"unknown judge provider '{parsed.provider}/' in '{name}'; "
                          + (f"did you mean {best}/{name.partition('/')[2]}? (" if best else "")
                          + f"use one of: {_known()}" + (")" if best else ""))
    return parsed, entry


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
                 max_retries: int | None = None, timeout: float | None = None,
                 **provider_args: Any) -> JudgeProvider:
    """The provider for `<provider>/<model>`.

    Keys come only from `env` (default `os.environ`; the UI may pass Streamlit
    secrets through it) and are never stored outside the SDK client. Raises
    ConfigError naming the `pip install` or environment variable that is missing.
    `provider_args` go to the provider as they are (e.g. the mock provider's
    `verdicts`).
    """
    parsed, entry = resolve(model)
    options: dict[str, Any] = {"env": _KeysChecked(os.environ if env is None else env), **provider_args}
    if http_client is not None:
        options["http_client"] = http_client
    if max_retries is not None:
        options["max_retries"] = max_retries
    if timeout is not None:
        options["timeout"] = timeout
    try:
        return entry.load()(parsed.target, **options)
    except SDKMissing:
        raise entry.sdk_missing() from None


# --------------------------------------------------------------------------- the built-in providers

@model_provider("anthropic", pip="anthropic", sdk_title="the Anthropic SDK", family="anthropic")
def _anthropic() -> ProviderFactory:
    from workbench.judges.providers.anthropic import AnthropicProvider
    return AnthropicProvider


@model_provider("openai", pip="openai", sdk_title="the OpenAI SDK", family="openai")
def _openai() -> ProviderFactory:
    from workbench.judges.providers.openai import OpenAIProvider
    return OpenAIProvider


@model_provider("openai-api", pip="openai", sdk_title="the OpenAI SDK")  # family: declared in the rubric
def _openai_api() -> ProviderFactory:
    from workbench.judges.providers.openai import OpenAICompatibleProvider
    return OpenAICompatibleProvider


@model_provider("python", prompted=False, billed=False)
def _python() -> ProviderFactory:
    from workbench.judges.providers.python import PythonProvider
    return PythonProvider


@model_provider("mock", billed=False)
def _mock() -> ProviderFactory:
    from workbench.judges.providers.mock import MockProvider
    return MockProvider


@model_provider("imported", prompted=False, billed=False)  # family: set by the import from the grader model
def _imported() -> ProviderFactory:
    from workbench.judges.providers.imported import ImportedProvider
    return ImportedProvider
