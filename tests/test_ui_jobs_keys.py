"""The API key a lead types on a page: which variable each demo judge needs, and the owner-only key file."""

from __future__ import annotations

import stat

import pytest

from workbench.core.errors import ConfigError, InputError
from workbench.features.judging import keys


def test_each_provider_names_the_variables_it_reads():
    assert keys.key_need("anthropic/claude-sonnet-4-5") == keys.KeyNeed("anthropic/claude-sonnet-4-5",
                                                                         key="ANTHROPIC_API_KEY")
    assert keys.key_need("openai/gpt-4o").key == "OPENAI_API_KEY"
    need = keys.key_need("openai-api/local-vllm/llama-3.1-70b")
    assert (need.key, need.url) == ("LOCAL_VLLM_API_KEY", "LOCAL_VLLM_BASE_URL")
    assert need.missing({"LOCAL_VLLM_BASE_URL": "http://127.0.0.1:1/v1"}) == ["LOCAL_VLLM_API_KEY"]
    assert need.missing({"LOCAL_VLLM_BASE_URL": "u", "LOCAL_VLLM_API_KEY": ""}) == ["LOCAL_VLLM_API_KEY"]
    # the demo's Python grader needs nothing: it runs offline
    assert keys.key_need("python/workbench.features.demo.graders:test_results").key is None
    with pytest.raises(ConfigError, match="provider prefix"):
        keys.key_need("gpt-4o")


def test_saved_keys_are_owner_only_and_kept_beside_each_other(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = keys.keys_file()
    assert path == tmp_path / "cfg" / "workbench" / "keys.toml" and keys.saved_keys() == {}
    keys.save_key("OPENAI_API_KEY", "sk-one-0123456789")
    keys.save_key("LOCAL_BASE_URL", "http://127.0.0.1:8000/v1")
    keys.save_key("OPENAI_API_KEY", "sk-two-0123456789")  # replaced, the other kept
    assert keys.saved_keys() == {"OPENAI_API_KEY": "sk-two-0123456789", "LOCAL_BASE_URL": "http://127.0.0.1:8000/v1"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not list(path.parent.glob("*.tmp"))


@pytest.mark.parametrize("name, value, says", [
    ("openai_api_key", "sk-x", "not an environment variable name"),
    ("OPENAI API KEY", "sk-x", "not an environment variable name"),
    ("OPENAI_API_KEY", "", "the key is empty"),
    ("OPENAI_API_KEY", 'sk-"quoted', "the key is empty or has a character"),
    ("OPENAI_API_KEY", "sk-ключ", "the key is empty or has a character"),
])
def test_a_bad_name_or_key_is_refused_and_nothing_is_written(tmp_path, name, value, says):
    path = tmp_path / "keys.toml"
    with pytest.raises(InputError, match=says) as e:
        keys.save_key(name, value, path)
    assert not path.exists()
    if value:
        assert value not in str(e.value)  # the refused key is never echoed


def test_an_unreadable_key_file_is_named_without_quoting_it(tmp_path):
    path = tmp_path / "keys.toml"
    path.write_text('OPENAI_API_KEY = "sk-secret-0123456789\n')
    with pytest.raises(ConfigError, match="is not a TOML file") as e:
        keys.saved_keys(path)
    assert "sk-secret" not in str(e.value)
