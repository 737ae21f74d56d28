"""The API key field of the pages that start paid work (Judges, Refine, the probes): for a lead without a shell.

A key typed here is held in this browser session only (``st.session_state``), or, when the lead ticks
"Remember", also written to the owner-only key file (``features.judging.keys``). It reaches the provider through
the environment mapping the job is started with, never the database, a log or an export.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import streamlit as st

from workbench.core.errors import WorkbenchError
from workbench.features.judging import keys as key_store
from workbench.ui.components import code_span, plain

SESSION_KEYS = "_api_keys"  # {VARIABLE: value} typed in this session
SECRET_SUFFIXES = ("_API_KEY", "_BASE_URL")


def _secrets() -> dict[str, str]:
    """Streamlit secrets named like <PROVIDER>_API_KEY / _BASE_URL."""
    out = {}
    try:
        for k, v in st.secrets.items():
            if isinstance(v, str) and k.upper().endswith(SECRET_SUFFIXES):
                out[k.upper()] = v
    except Exception:  # noqa: BLE001 - no secrets file is the local default
        pass
    return out


def _saved() -> dict[str, str]:
    try:
        return key_store.saved_keys()
    except WorkbenchError as e:
        st.warning(plain(str(e)))
        return {}


def provider_env() -> dict[str, str]:
    """The environment a job's providers read: the process's, then Streamlit secrets, the saved key file and the
    keys typed in this session (later ones win). Call it in the page's thread, before starting a job."""
    env = dict(os.environ)
    env.update(_secrets())
    env.update(_saved())
    env.update(st.session_state.get(SESSION_KEYS, {}))
    return env


def _source(name: str) -> str:
    if name in st.session_state.get(SESSION_KEYS, {}):
        return "typed in this session"
    if name in _saved():
        return f"saved in {key_store.keys_file()}"
    if name in _secrets():
        return "Streamlit secrets"
    return "the environment"


def needs(models: Iterable[str]) -> list[key_store.KeyNeed]:
    """The distinct key needs of ``models`` (a judge and an optimizer of the same provider need one key)."""
    out: dict[tuple[str | None, str | None], key_store.KeyNeed] = {}
    for model in models:
        need = key_store.key_need(model)
        if need.key:
            out.setdefault((need.key, need.url), need)
    return list(out.values())


def missing(models: Iterable[str]) -> list[str]:
    """The variables ``models`` read that nothing sets (environment, secrets, key file, this session)."""
    env = provider_env()
    return list(dict.fromkeys(v for need in needs(models) for v in need.missing(env)))


def key_fields(models: Iterable[str], where: str) -> list[str]:
    """Say which key each of ``models`` needs and whether it is set; offer one field per key that is not (one per
    provider on the page, however many of its models the job uses). Returns the variables still missing."""
    models = list(dict.fromkeys(models))
    try:
        wanted = needs(models)
    except WorkbenchError as e:
        st.error(plain(str(e)))
        return ["a known provider"]
    if flash := st.session_state.pop("_key_flash", None):
        st.info(flash)
    env = provider_env()
    left: list[str] = []
    for need in wanted:
        users = [m for m in models if key_store.key_need(m) == key_store.KeyNeed(m, need.key, need.url)]
        named = " and ".join(code_span(m) for m in users)
        gap = need.missing(env)
        if not gap:
            st.caption(f"{named} {'reads its' if len(users) == 1 else 'read their'} API key from "
                       f"{code_span(need.key)} ({_source(need.key)}).")
            continue
        left += gap
        st.warning(f"{named} {'needs' if len(users) == 1 else 'need'} {' and '.join(code_span(m) for m in gap)}, "
                   f"which {'is' if len(gap) == 1 else 'are'} not set. Enter {'them' if len(gap) > 1 else 'it'} "
                   "below and press “Use this key”: it is held for this browser session only, unless you tick "
                   "Remember. The job uses what you enter here.")
        slot = f"{where}-{need.key}"
        with st.form(f"apikey-form-{slot}", clear_on_submit=True):
            url = st.text_input(f"Server URL ({need.url})", key=f"apiurl-{slot}",
                                placeholder="http://127.0.0.1:8000/v1") if need.url in gap else None
            key = st.text_input(f"API key ({need.key})", type="password", key=f"apikey-{slot}",
                                help=f"The value of {need.key}. Never written to the database, a log or an export.")
            remember = st.checkbox(f"Remember on this computer (owner-only file {key_store.keys_file()})",
                                   key=f"apikey-remember-{slot}")
            if st.form_submit_button("Use this key"):
                _use(need, key, url, remember)
                st.rerun()
    return list(dict.fromkeys(left))


def _use(need: key_store.KeyNeed, key: str, url: str | None, remember: bool) -> None:
    held = dict(st.session_state.get(SESSION_KEYS, {}))
    if need.url and url:
        held[need.url] = url.strip()
    if key.strip():
        held[need.key] = key.strip()
        if remember:
            try:
                path = key_store.save_key(need.key, key.strip())
            except WorkbenchError as e:
                st.session_state["_key_flash"] = plain(str(e))
            else:
                st.session_state["_key_flash"] = f"Saved {need.key} to {path} (readable by you only)."
            if need.url and url:
                key_store.save_key(need.url, url.strip())
    st.session_state[SESSION_KEYS] = held
