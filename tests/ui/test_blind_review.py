"""Blind labeling stays blind: masking is a golden-set setting a lead controls, the labeling service applies it to
everything it hands out, its built-in patterns cover every family, and a lead's own patterns are checked."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write
from tests.ui.conftest import RUBRIC, open_app, rendered_text
from workbench.errors import InputError
from workbench.services import labeling as svc
from workbench.services import masking
from workbench.services.importing import import_items
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


@pytest.mark.parametrize("text", [
    "from openai import OpenAI", "import anthropic\nclient = anthropic.Anthropic()", "run this command here",
    "acts as a copilot for developers", "Call the Google Maps API", "I am going to fix the bug.",
    "the llama_index package", "written by the user", "Meta data is stored as a string"])
def test_code_and_plain_mentions_are_left_alone(text):
    assert masking.mask_self_identification(text) == text


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
