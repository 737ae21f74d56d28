"""Blind labeling stays blind: masking is a golden-set setting a lead controls, the labeling service applies it to
everything it hands out, its built-in patterns cover every family, and a lead's own patterns are checked."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import write
from tests.ui.conftest import RUBRIC, open_app, rendered_text
from workbench.core.errors import InputError
from workbench.features.labeling import service as svc
from workbench.features.labeling import masking
from workbench.features.importing.service import import_items
from workbench.store import Store

# One self-identification per family and form: what no reviewer may read.
PHRASES = {
    "openai": ["I am GPT-4o, made by OpenAI.", "As an AI developed by OpenAI, I cannot run the code.",
               "This is ChatGPT.", "OpenAI's GPT-4o reviewed it."],
    "anthropic": ["I'm Claude, an AI assistant made by Anthropic.", "As Claude, I think this works.",
                  "I was created by a team at Anthropic."],
    "google": ["I am Gemini, a large language model trained by Google.", "As a language model developed by Google DeepMind,",
               "I'm Gemma, an open model from Google."],
    "meta": ["I'm Llama 3.1, developed by Meta.", "As an AI assistant built by Meta AI, I fixed it."],
    "mistral": ["I am Mistral Large, created by Mistral AI.", "I'm Mixtral, a model from Mistral AI."],
    "others": ["I'm Qwen, created by Alibaba Cloud.", "I am Grok, built by xAI.", "My name is DeepSeek.",
               "I am Phi-3, made by Microsoft.", "Claude here."],
}
NAMES = ["GPT-4o", "ChatGPT", "OpenAI", "Claude", "Anthropic", "Gemini", "Gemma", "Google", "Llama", "Meta",
         "Mistral", "Mixtral", "Qwen", "Alibaba", "Grok", "xAI", "DeepSeek", "Phi-3", "Microsoft"]
CODENAME = "Project Nightingale"


def leaks(text: str) -> list[str]:
    return [n for n in NAMES + [CODENAME] if n.lower() in text.lower()]


@pytest.mark.parametrize("family", sorted(PHRASES))
def test_built_in_patterns_cover_every_family(family):
    for phrase in PHRASES[family]:
        masked = masking.mask_self_identification(phrase)
        assert masking.MASK in masked and not leaks(masked), (phrase, masked)


# Until issue 27 these stayed (only self-descriptions were masked); a vendor's SDK, a maps API or a package named
# after a model tells a reviewer the producer as well, so every mention is masked now.
@pytest.mark.parametrize("text, masked", [
    ("from openai import OpenAI", "from [name masked] import [name masked]"),
    ("import anthropic\nclient = anthropic.Anthropic()",
     "import [name masked]\nclient = [name masked].[name masked]()"),
    ("Call the Google Maps API", "Call the [name masked] Maps API"),
    ("the llama_index package", "the [name masked]_index package"),  # '_' is a word edge (openai_client)
])
def test_code_mentions_are_masked_too(text, masked):
    assert masking.mask_self_identification(text) == masked


# Everyday words that are also names, and names inside other words, stay.
@pytest.mark.parametrize("text", [
    "run this command here", "Command the team", "acts as a copilot for developers", "I am going to fix the bug.",
    "written by the user", "Meta data is stored as a string", "the metadata field", "a meta-analysis",
    "Meta-learning works", "MetaData class", "the meta key", "foo1 = step_o1 + 1", "gcc -O1 main.c", "O(1) lookup",
    "a phi of 3", "Shakespeare's sonnet form", "Googlebot crawls", "I grok it", "the arguments cohere",
    "palm of the hand", "GPTQ quantization", "the commander", "llamas and alpacas", "an alpaca", "the zephyr wind",
    "# Meta-rule: stored as a string", "class Finder(MetaPathFinder)", "class E(metaclass=EnumMeta)",
    "Animal  Falcon 0  380.0"])
def test_everyday_words_and_names_inside_words_are_left_alone(text):
    assert masking.mask_self_identification(text) == text


# Every spelling a reviewer could meet: with or without hyphens, dots, spaces and version, size, date and tier parts;
# model, family and maker names; camelCase and snake_case identifiers.
SPELLINGS = [
    "GPT-4o", "gpt4o", "GPT 4o", "gpt-4o-mini", "gpt-4.1", "gpt-3.5-turbo", "ChatGPT", "o1-mini", "o1", "o3-mini",
    "text-davinci-003", "Claude 3.5 Sonnet", "claude-3-5-sonnet-20241022", "claude-sonnet-4-5", "Claude Opus 4.1",
    "Sonnet 4.5", "claude-3-haiku-20240307", "Llama-3.1-70B-Instruct", "meta-llama", "Meta-Llama-3-8B", "llama3",
    "CodeLlama-34b", "mistral-large", "Mistral Large 2", "mistral-large-latest", "Mixtral-8x7B-Instruct-v0.1",
    "codestral-latest", "gemini-1.5-pro", "Gemini 2.5 Flash", "gemini-2.0-flash-exp", "gemma-2-9b", "PaLM 2",
    "Bard", "qwen2.5", "Qwen2.5-72B-Instruct", "QwQ-32B", "deepseek-v3", "DeepSeek-R1", "deepseek-chat", "grok-2",
    "grok-beta", "Grok", "phi-3", "Phi-3.5-mini-instruct", "command-r-plus", "Command R+", "yi-34b", "glm-4",
    "kimi-k2", "OpenAI", "openai", "Open AI", "Anthropic", "anthropic", "Google DeepMind", "google", "Meta AI",
    "Meta", "Mistral AI", "mistral", "Microsoft", "xAI", "Alibaba Cloud", "Cohere", "Amazon", "Copilot",
    "ChatOpenAI", "AsyncAnthropic", "openai_client", "GeminiClient", "meta.llama3-1-70b-instruct-v1:0",
    "anthropic.claude-3-5-sonnet-20241022-v2:0", "alpaca-13b", "vicuna-13b-v1.5", "zephyr-7b-beta", "MetaAI",
    "falcon-40b", "Falcon 7B", "Meta's", "Meta models"]
# The set's own producer (unknown to the built-in list), in spellings other than the one in its producer field.
PRODUCER = {"model": "acme-coder-7b-20250101", "family": "acmelabs"}
PRODUCER_SPELLINGS = ["acme-coder-7b", "AcmeCoder 7B", "acme_coder_7b", "ACME CODER-7B", "acmelabs", "AcmeLabs"]
PLANTED = SPELLINGS + PRODUCER_SPELLINGS


def leaked(text: str) -> list[str]:
    """The planted names still in ``text`` (case-insensitive; only as a word, so 'o1' in 'o1-mini' counts only once
    both are gone)."""
    return [n for n in PLANTED if re.search(rf"(?<![^\W_]){re.escape(n)}(?![^\W_])", text, re.IGNORECASE)]


def planted_item(item_id: str) -> dict:
    """An item with every planted name in every field, each field with its own word that must stay (so a page that
    shows nothing cannot pass): task, output, reference, a thought, a tool call's name, argument keys and values
    (nested), a tool's name and output (one long, folded), and metadata (never shown to a reviewer)."""
    names = " | ".join(PLANTED)
    long_output = "\n".join(f"line {k}: ok" for k in range(40)) + f"\nkeepfoldedtail {names}"
    return {
        "id": item_id, "input": f"keeptask: {names}", "output": f"keepoutput: {names}",
        "reference": f"keepreference: {names}",
        "producer": PRODUCER, "category": "keepcategory",
        "metadata": {"keepmetadata": names, **{n: n for n in PLANTED}},
        "trajectory": [
            {"role": "system", "content": f"keepsystem: {names}"},
            {"role": "user", "content": f"keepuser: {names}"},
            {"role": "assistant", "content": f"keepthought: {names}",
             "tool_calls": [{"name": "ask_gpt4o", "arguments": {
                 "keepargkey": f"keepargvalue {names}", "openai_api_key": "keepkeyvalue",
                 "nested": {"provider": "anthropic", "models": [{"id": n} for n in PLANTED]},
                 "patch": f"keeppatch\n{names}\nfrom openai import OpenAI\n"}}]},
            {"role": "tool", "name": "google_search", "content": f"keeptooloutput: {names}"},
            {"role": "tool", "name": "bash", "content": long_output},
        ]}


KEPT = ["keeptask", "keepoutput", "keepreference", "keepsystem", "keepuser", "keepthought", "keepargkey",
        "keepargvalue", "keepkeyvalue", "keeppatch", "keeptooloutput", "keepfoldedtail"]


@pytest.mark.parametrize("name", PLANTED)
@pytest.mark.parametrize("where", ["input", "output", "reference", "thought", "tool name", "argument value",
                                   "argument key", "nested argument", "tool output"])
def test_every_spelling_is_masked_in_every_field(where, name):
    """The service masks each planted spelling wherever it sits, and keeps the text around it."""
    text = f"before {name} after"
    step = {"role": "assistant", "content": "", "tool_calls": [{"name": "run", "arguments": {"k": "v"}}]}
    item = {"input": "x", "output": None, "reference": None, "trajectory": [step]}
    if where in ("input", "output", "reference"):
        item[where] = text
    elif where == "thought":
        step["content"] = text
    elif where == "tool name":
        step["tool_calls"][0]["name"] = text
    elif where == "argument value":
        step["tool_calls"][0]["arguments"] = {"k": text}
    elif where == "argument key":
        step["tool_calls"][0]["arguments"] = {text: "v"}
    elif where == "nested argument":
        step["tool_calls"][0]["arguments"] = {"k": [{"deep": [text]}]}
    else:
        item["trajectory"] = [{"role": "tool", "name": text, "content": text}]
    setting = masking.Masking(True, (), masking.producer_patterns([PRODUCER["model"], PRODUCER["family"]]))
    blind = svc.BlindItem("i", item["input"], item["output"], item["trajectory"], item["reference"]).masked(setting)
    shown = json.dumps(blind.__dict__, ensure_ascii=False)
    assert not leaked(shown), shown
    assert "before" in shown and "after" in shown and masking.NAME_MASK in shown


def test_the_sets_producer_names_are_masked_in_any_spelling(fresh_db, tmp_path):
    with Store(fresh_db) as s:
        import_items(s, write(tmp_path / "p.jsonl", json.dumps(planted_item("p1")) + "\n"), "planted")
        setting = masking.masking_of(s, "planted")
        assert setting.producers  # acme-coder-7b and acmelabs: names the built-in list does not know
        item = svc.open_item(s, "planted", "p1")
    shown = json.dumps(item.__dict__, ensure_ascii=False)
    assert not leaked(shown)
    assert all(k in shown for k in KEPT)
    assert "keepmetadata" not in shown and "keepcategory" not in shown  # never handed to a reviewer


def test_producer_names_that_say_nothing_are_not_masked():
    assert masking.producer_patterns(["human", "unknown", "python:provider.py:default", "mockllm/model"]) == ()
    assert masking.producer_patterns(["gpt-4o", "meta-llama/Llama-3.1-8B", "openai", "meta"]) == ()  # built in


def hidden_item(item_id: str = "m1") -> dict:
    every = [p for ps in PHRASES.values() for p in ps]
    return {"id": item_id, "input": f"Fix it. {every[0]} For {CODENAME}.", "output": " ".join(every[1:6]),
            "reference": every[6],
            "producer": {"model": "gpt-4o", "family": "openai"},
            "trajectory": [{"role": "user", "content": every[7]},
                           {"role": "assistant", "content": " ".join(every[8:12]),
                            "tool_calls": [{"name": "bash", "arguments": {"cmd": f"echo '{every[12]}'",
                                                                          "nested": [every[13]]}}]},
                           {"role": "tool", "name": "bash", "content": " ".join(every[14:])}]}


@pytest.fixture
def masked_db(fresh_db, tmp_path):
    with Store(fresh_db) as s:
        import_items(s, write(tmp_path / "m.jsonl", json.dumps(hidden_item()) + "\n"), "masked")
    return fresh_db


def test_what_the_service_hands_out_is_masked_by_the_golden_set(masked_db):
    with Store(masked_db) as s:
        assert masking.masking_of(s, "masked") == masking.Masking(True, ())  # on for every set until a lead says no
        masking.set_masking(s, "masked", add=[CODENAME])
        item = svc.next_item(s, "masked", RUBRIC, "ana")
        assert leaks(json.dumps(item.__dict__)) == []
        assert leaks(json.dumps(svc.open_item(s, "masked", "m1").__dict__)) == []
        masking.set_masking(s, "masked", enabled=False)  # a lead's decision, for this set only
        assert "GPT-4o" in svc.open_item(s, "masked", "m1").input
        assert masking.masking_of(s, "g").enabled


def test_lead_patterns_are_checked(masked_db):
    with Store(masked_db) as s:
        for bad, why in [("(", "not a valid regular expression"), ("a*", "matches empty text"), ("  ", "empty")]:
            with pytest.raises(InputError, match=why):
                masking.set_masking(s, "masked", add=[bad])
        assert masking.set_masking(s, "masked", add=["nightingale", "nightingale"]).patterns == ("nightingale",)
        assert masking.set_masking(s, "masked", remove=["nightingale"]).patterns == ()
        with pytest.raises(InputError, match="at most"):
            masking.set_masking(s, "masked", add=[f"name{k}" for k in range(masking.MAX_PATTERNS + 1)])


def test_reviewer_never_reads_a_self_identification_on_the_label_page(masked_db):
    with Store(masked_db) as s:
        masking.set_masking(s, "masked", add=[CODENAME])
    at = open_app("ana", "label", golden_set="masked")
    text = rendered_text(at)
    assert "Item `m1`" in text and masking.MASK in text and leaks(text) == []
    at.text_input(key="search:m1").input("OpenAI").run()  # searching for a name finds nothing to show
    assert "0 of 3 steps match" in at.caption[0].value
    assert leaks("\n".join(m.value for m in at.markdown)) == []


def test_lead_turns_masking_off_and_adds_patterns_on_the_blind_review_page(masked_db):
    at = open_app("lead", "blind-review")
    at.selectbox(key="blind-gs").set_value("masked").run()
    at.text_input(key="blind-new:masked").input(CODENAME)
    at.button[-1].click().run()  # the form's "Add pattern"
    assert not at.exception and "Added" in at.success[0].value
    with Store(masked_db) as s:
        assert masking.masking_of(s, "masked").patterns == (CODENAME,)
    at.text_area(key="blind-try").input(f"I am GPT-4o, made by OpenAI, for {CODENAME}.").run()
    assert f"{masking.MASK}, for {masking.MASK}." in "\n".join(m.value for m in at.markdown)
    at.toggle(key="blind-on:masked").set_value(False).run()
    assert "Masking is off" in at.warning[0].value
    with Store(masked_db) as s:
        assert not masking.masking_of(s, "masked").enabled


def test_reviewers_cannot_open_the_blind_review_page(masked_db):
    at = open_app("ana")
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page("views/blind_review.py")
