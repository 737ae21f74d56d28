"""Blind review (leads): a golden set's self-identification masking, the lead's own patterns, and a preview.

The setting belongs to the golden set, not to a reviewer's session: the labeling service masks every item it
hands out by it, so no control a reviewer can reach turns it off.
"""

from __future__ import annotations

import streamlit as st

from workbench.features.labeling import masking
from workbench.features.labeling.service import golden_set_names
from workbench.ui import auth
from workbench.ui.components import code_span, fenced, flash, run_action, show_flash
from workbench.ui.state import store

ROLES = auth.LEADS
COVERED = ("every mention of a model name in any spelling (GPT-4o, gpt4o, Claude 3.5 Sonnet, claude-3-5-sonnet, "
           "Llama-3.1-70B, Gemini, Qwen, DeepSeek, Mistral, Grok, Phi-3, Copilot, …), of a maker (OpenAI, Anthropic, "
           "Google, Meta, Mistral AI, Alibaba, xAI, Microsoft, Cohere, …) and of this golden set's own producers, "
           "in the task, the output, the reference and every trajectory step with its tool calls and tool outputs; "
           "and whole phrases such as “As an AI developed by …” or “I'm Claude, made by Anthropic”")


def render() -> None:
    auth.require(ROLES)
    st.title("Blind review")
    st.caption("Reviewers label blind: they never see which model produced an item. Phrases by which a model "
               "names itself or its maker are masked before a reviewer receives the item; this is a setting of "
               "the golden set, and only leads change it.")
    show_flash()
    sets = golden_set_names(store())
    if not sets:
        st.info("No golden set yet: import one on the Import page.")
        return
    golden_set = st.selectbox("Golden set", sets, key="blind-gs")
    setting = masking.masking_of(store(), golden_set)
    st.toggle("Mask model and maker names for reviewers of this golden set", value=setting.enabled,
              key=f"blind-on:{golden_set}", on_change=_switch, args=(golden_set,))
    if not setting.enabled:
        st.warning(f"Masking is off for {code_span(golden_set)}: reviewers can read phrases such as “I am GPT-4o, "
                   "made by OpenAI.” and may guess which model produced an item.", icon="⚠️")
    st.markdown(f"**Built in** (always on while masking is on): {COVERED}. A name in code is masked too: "
                "“from openai import OpenAI” in a patch tells a reviewer as much as “I am GPT-4o”.")

    st.subheader("Your patterns")
    st.caption("Regular expressions, case-insensitive, masked in addition to the built-in ones: for names the "
               "built-in list does not know (an in-house model, a product codename). Plain words work as they are.")
    if not setting.patterns:
        st.caption("None yet.")
    for k, pattern in enumerate(setting.patterns):
        text, button = st.columns([6, 1], vertical_alignment="center")
        text.markdown(code_span(pattern))
        button.button("Remove", key=f"blind-remove:{golden_set}:{k}", on_click=_remove, args=(golden_set, pattern),
                      width="stretch")
    with st.form(f"blind-add:{golden_set}", clear_on_submit=True, border=False):
        st.text_input("New pattern", key=f"blind-new:{golden_set}", placeholder=r"e.g. Project Nightingale|nightingale-\d+")
        st.form_submit_button("Add pattern", on_click=_add, args=(golden_set,))

    st.subheader("Try it")
    sample = st.text_area("Text", key="blind-try", height=90,
                          value="I am GPT-4o, made by OpenAI. I fixed the bug with `from openai import OpenAI`.")
    st.markdown("What a reviewer of this golden set sees:\n\n" + fenced(setting.mask(sample) or ""))


def _switch(golden_set: str) -> None:
    on = bool(st.session_state.get(f"blind-on:{golden_set}"))
    run_action(masking.set_masking, store(), golden_set, enabled=on,
               ok=f"Masking is {'on' if on else 'off'} for {code_span(golden_set)}.")


def _add(golden_set: str) -> None:
    pattern = (st.session_state.get(f"blind-new:{golden_set}") or "").strip()
    if not pattern:
        flash("error", "Write the phrase or pattern to mask first.")
        return
    run_action(masking.set_masking, store(), golden_set, add=[pattern],
               ok=f"Added {code_span(pattern)}: reviewers of {code_span(golden_set)} no longer see it.")


def _remove(golden_set: str, pattern: str) -> None:
    run_action(masking.set_masking, store(), golden_set, remove=[pattern], ok=f"Removed {code_span(pattern)}.")


if __name__ == "__main__":
    render()
