"""Which API key a judge's provider needs, and the owner-only file a lead may keep keys in.

Providers read keys only from the environment mapping they are given
(``judges.registry.get_provider``). The UI builds that mapping from the process
environment, Streamlit secrets, this file and the keys typed in a session; the
key itself is never written anywhere else (not the database, a log or an export).
The file is ``$XDG_CONFIG_HOME/workbench/keys.toml`` (``~/.config/...`` by
default), mode 0600 in a 0700 folder, one ``NAME = "value"`` line per key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from workbench.core.errors import ConfigError, InputError
from workbench.judges.registry import resolve


@dataclass(frozen=True, slots=True)
class KeyNeed:
    """The environment variables a judge's provider reads: ``key`` (secret) and ``url`` (a server's address)."""

    model: str
    key: str | None = None
    url: str | None = None

    def missing(self, env: Mapping[str, str]) -> list[str]:
        return [v for v in (self.url, self.key) if v and not env.get(v)]


def key_need(model: str) -> KeyNeed:
    """The key (and URL) variables of ``<provider>/<model>``; none for a Python grader or an imported judge."""
    parsed, entry = resolve(model)
    if entry.prefix == "anthropic":
        from workbench.judges.providers.anthropic import KEY_ENV
        return KeyNeed(model, key=KEY_ENV)
    if entry.prefix == "openai":
        return KeyNeed(model, key="OPENAI_API_KEY")
    if entry.prefix == "openai-api":
        from workbench.judges.providers.openai import service_env
        url, key = service_env(parsed.target.split("/", 1)[0])
        return KeyNeed(model, key=key, url=url)
    return KeyNeed(model)  # python/, mock/, imported/ and third-party prefixes: nothing the page can tell


def keys_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "workbench" / "keys.toml"


def saved_keys(path: Path | None = None) -> dict[str, str]:
    """The keys kept in the owner-only file (empty when there is none)."""
    path = path or keys_file()
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:  # the message may quote a line: never show it
        raise ConfigError(f"{path} is not a TOML file of NAME = \"value\" lines ({type(e).__name__}); fix or "
                          "delete it and enter the key again") from None
    return {k: v for k, v in data.items() if isinstance(v, str)}


def save_key(name: str, value: str, path: Path | None = None) -> Path:
    """Add or replace one key in the owner-only file (0600, folder 0700); written whole, then renamed."""
    if not name.replace("_", "").isalnum() or not name.isupper():
        raise InputError(f"'{name}' is not an environment variable name", fix="use a name like OPENAI_API_KEY")
    if not value or not value.isascii() or any(c in value for c in "\"\\\n\r"):
        raise InputError("the key is empty or has a character a key does not have (the value is not shown)",
                         fix="copy the key again from the provider's console")
    path = path or keys_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    keys = {**saved_keys(path), name: value}
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("# API keys of Judge Workbench: owner-only (0600); never copied into the database.\n")
        fh.writelines(f'{k} = "{v}"\n' for k, v in sorted(keys.items()))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path
