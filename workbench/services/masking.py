"""Blind review: the phrases by which a model names itself or its maker, masked before a reviewer sees an item.

Masking is a golden-set setting that a lead controls (on for every set unless a lead turns it off), never a
reviewer's choice: the labeling service masks every item it hands out. The built-in patterns cover the common
self-identifications of every model family (names such as GPT-4o, Claude, Gemini, Llama, Mistral; makers such
as OpenAI, Anthropic, Google, Meta; "As an AI developed by ..."); a lead adds patterns for what a golden set
needs beyond them (a product codename, an in-house model name).

Only self-descriptions are masked, not every mention of a name: "from openai import OpenAI" in a patch stays,
"I'm GPT-4o, made by OpenAI." does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import InputError
from ..store import Store

MASK = "[self-identification masked]"
MAX_PATTERNS, MAX_PATTERN_CHARS = 50, 300

# Makers and model names, case-insensitive inside the self-descriptions below.
MAKERS = (r"OpenAI|Anthropic|Google(?:\s+DeepMind|\s+AI|\s+Cloud)?|DeepMind|Meta(?:\s+AI|\s+Platforms)?|Facebook"
          r"|Mistral(?:\s+AI)?|Alibaba(?:\s+Cloud)?|xAI|Microsoft|Cohere|Amazon|DeepSeek|Moonshot|Zhipu|01\.AI")
MODELS = (r"Claude(?:[\s-](?:\d[\w.]*|Opus|Sonnet|Haiku|Instant))*|(?:Chat)?GPT(?:-?\d[\w.\-]*)?"
          r"|Gemini(?:[\s-](?:\d[\w.]*|Pro|Flash|Ultra|Nano))*|Gemma[\w.\-]*|PaLM[\w.\-]*"
          r"|(?:Meta[\s-])?Ll?ama(?:[\s-]?\d[\w.\-]*)?|Mistral(?:[\s-](?:Large|Medium|Small|\d[\w.]*))*"
          r"|Mixtral[\w.\-]*|Codestral|Qwen[\w.\-]*|DeepSeek[\w.\-]*|Grok[\w.\-]*|Phi-?\d[\w.\-]*|Kimi"
          r"|GLM-?\d[\w.\-]*|Yi-\d[\w.\-]*")
# Names that are also everyday words count only as written ("a copilot", "a command" are not models).
MODELS_AS_WRITTEN = r"Copilot|Bard|Command[\s-]R\+?|o[134](?:-mini|-pro)?"
_MAKER = rf"(?i:{MAKERS})\b"
_MODEL = rf"(?:(?i:{MODELS})|{MODELS_AS_WRITTEN})(?![\w-])"
_MODEL_AS_WRITTEN = rf"(?:{MODELS}|{MODELS_AS_WRITTEN})(?![\w-])"
_WHO = rf"(?:{_MAKER}|[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*)?)"  # a maker, or one or two capitalised words
_AI = (r"(?i:(?:an?\s+|the\s+)?(?:AI|artificial\s+intelligence|(?:large\s+)?language\s+model|LLM|chatbot|"
       r"virtual\s+assistant)(?:\s+(?:language\s+model|model|assistant|system|chatbot))?)")
_BY = (rf"(?i:developed|created|made|built|trained|designed|released|owned|programmed)\s+by\s+"
       rf"(?i:(?:a|the)\s+team\s+(?:at|from)\s+|(?:engineers|researchers|people)\s+at\s+)?{_WHO}")
_FROM = rf"(?i:from|by|of)\s+{_MAKER}"
_I_AM = r"\b(?i:I(?:'m|’m|\s+am))\s+"
BUILTIN_PATTERNS: tuple[str, ...] = (
    # "As an AI developed by OpenAI", "As a large language model", "As Claude, an AI assistant made by Anthropic"
    rf"\b(?i:as)\s+(?:{_AI}|(?i:an?\s+)?{_MODEL}(?:\s+(?i:model|assistant))?)(?:,?\s+{_AI})?(?:,?\s+{_BY}|\s+{_FROM})?",
    # "I am GPT-4o, made by OpenAI", "I'm Claude, an AI assistant made by Anthropic", "I'm an AI model from Google"
    rf"{_I_AM}(?:(?i:called\s+)?{_MODEL}(?:,?\s+{_AI})?|{_AI})(?:,?\s+{_BY}|\s+{_FROM})?",
    # "I was trained by Google", "I was created by a team at Anthropic"
    rf"\b(?i:I\s+was)\s+{_BY}",
    rf"\b(?i:my\s+name\s+is|this\s+is|you(?:'re|\s+are)\s+(?:talking|chatting)\s+(?:to|with))\s+{_MODEL}",
    rf"\b{_MODEL_AS_WRITTEN}\s+here\b",  # "Claude here." (not "run this command here")
    # "developed by OpenAI", "trained by Meta AI", "powered by GPT-4o", "written by Claude"
    rf"\b(?i:developed|created|made|built|trained|designed|released|owned|programmed|powered|generated|written|"
    rf"produced|authored)\s+(?i:by)\s+(?:{_MAKER}|{_MODEL})",
    # "OpenAI's GPT-4o", "Google's AI assistant", "an assistant from Anthropic", "my creators at OpenAI"
    rf"\b{_MAKER}['’]s\s+(?:{_MODEL}|(?i:AI|(?:large\s+)?language\s+model|model|assistant|chatbot|LLM))",
    rf"\b(?i:an?\s+|the\s+)?(?i:AI|model|assistant|language\s+model|LLM|chatbot)\s+{_FROM}",
    rf"\b(?i:my|our)\s+(?i:creators?|developers?|makers?|trainers?|team)\s+(?i:at|from)\s+{_MAKER}",
)
_BUILTIN = re.compile("|".join(f"(?:{p})" for p in BUILTIN_PATTERNS))


@dataclass(frozen=True)
class Masking:
    """A golden set's blind-review setting: whether to mask, and the lead's own patterns beyond the built-in ones."""

    enabled: bool = True
    patterns: tuple[str, ...] = field(default_factory=tuple)

    def mask(self, text: str | None) -> str | None:
        if not text or not self.enabled:
            return text
        text = _BUILTIN.sub(MASK, text)
        for p in self.patterns:
            text = re.sub(p, MASK, text, flags=re.IGNORECASE)
        return text

    def mask_value(self, value: Any) -> Any:
        """Strings anywhere inside a JSON-like value (tool-call arguments) masked."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            return {k: self.mask_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.mask_value(v) for v in value]
        return value

    def mask_step(self, step: dict) -> dict:
        out = dict(step)
        if isinstance(out.get("content"), (str, list, dict)):
            out["content"] = self.mask_value(out["content"])
        if out.get("tool_calls"):
            out["tool_calls"] = [{**c, "arguments": self.mask_value(c.get("arguments"))} for c in out["tool_calls"]]
        return out


DEFAULT = Masking()


def mask_self_identification(text: str | None) -> str | None:
    """Mask phrases by which a model names itself or its maker (the built-in patterns).

    >>> mask_self_identification("As an AI developed by OpenAI, I cannot run code. The fix works.")
    '[self-identification masked], I cannot run code. The fix works.'
    >>> mask_self_identification("I'm Claude, an AI assistant made by Anthropic. Done.")
    '[self-identification masked]. Done.'
    >>> mask_self_identification("I am GPT-4o, made by OpenAI.")
    '[self-identification masked].'
    >>> mask_self_identification("from openai import OpenAI  # unchanged: not a self-description")
    'from openai import OpenAI  # unchanged: not a self-description'
    """
    return DEFAULT.mask(text)


def check_pattern(pattern: str) -> str:
    """A lead's pattern, checked: a regular expression that compiles and never matches the empty string."""
    pattern = (pattern or "").strip()
    if not pattern:
        raise InputError("a masking pattern is empty", fix="write the phrase (or a regular expression) to mask")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InputError(f"masking pattern '{pattern[:40]}…' is longer than {MAX_PATTERN_CHARS} characters",
                         fix="mask a shorter phrase")
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as e:
        raise InputError(f"masking pattern '{pattern}' is not a valid regular expression ({e})",
                         fix="escape special characters such as ( ) [ ] . * + ? with a backslash, "
                             "or write the phrase as plain words") from None
    if compiled.search(""):
        raise InputError(f"masking pattern '{pattern}' matches empty text, so it would mask everywhere",
                         fix="make the pattern match at least one character")
    return pattern


def masking_of(store: Store, golden_set: str | dict) -> Masking:
    """The golden set's blind-review setting (``golden_set`` is its name, or its row from the store)."""
    gs = golden_set if isinstance(golden_set, dict) else store.golden_set(golden_set)
    row = store.golden_set_masking(gs["id"])
    return Masking(row["enabled"], tuple(row["patterns"]))


def set_masking(store: Store, golden_set: str, *, enabled: bool | None = None, add: Iterable[str] = (),
                remove: Iterable[str] = ()) -> Masking:
    """A lead turns masking on or off for a golden set, or adds or removes their own patterns; returns the setting."""
    add = [check_pattern(p) for p in add]
    with store.transaction():
        gs = store.golden_set(golden_set)
        current = store.golden_set_masking(gs["id"])
        gone = {p.strip() for p in remove}
        patterns = [p for p in current["patterns"] if p not in gone]
        for p in add:
            if p not in patterns:
                patterns.append(p)
        if len(patterns) > MAX_PATTERNS:
            raise InputError(f"golden set '{golden_set}' would have {len(patterns)} masking patterns "
                             f"(at most {MAX_PATTERNS})", fix="combine phrases into one pattern with |")
        on = current["enabled"] if enabled is None else bool(enabled)
        store.set_golden_set_masking(gs["id"], enabled=on, patterns=patterns)
    return Masking(on, tuple(patterns))
