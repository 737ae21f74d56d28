"""Blind review: every model, family and maker name, and every phrase by which a model names itself, masked before
a reviewer sees an item.

Masking is a golden-set setting that a lead controls (on for every set unless a lead turns it off), never a
reviewer's choice: the labeling service masks every field of every item it hands out (task, output, reference,
each trajectory step with its tool calls' names, argument keys and values, and tool outputs), so what the Label
page receives, and so every websocket frame, is already masked.

What is masked, in this order:

1. self-descriptions ("As an AI developed by OpenAI", "I'm Claude, made by Anthropic") as a whole phrase, since the
   way a model speaks of itself gives it away even without the name (``MASK``);
2. the lead's own patterns for what a golden set needs beyond the built-in ones: a product codename, an in-house
   model (``MASK``);
3. the names the set's items were produced by (their producer model and family, in any spelling: case, and
   ``-``, ``.``, ``_``, space or nothing between their parts), for names the built-in list does not know; names
   that say nothing (``human``, ``unknown``, ``python``, ...) are left out (``NAME_MASK``);
4. every mention of a known model, family or maker name (``NAME_MASK``): GPT-4o, gpt4o, o1-mini, ChatGPT,
   Claude 3.5 Sonnet, claude-3-5-sonnet-20241022, claude-sonnet-4-5, Sonnet 4.5, Gemini 1.5 Pro, Gemma, Llama-3.1-70B,
   meta-llama, Mistral Large, Mixtral 8x7B, Qwen2.5, QwQ, DeepSeek-V3, Grok-2, Phi-3, Command R+, OpenAI,
   Anthropic, Google (DeepMind), Meta, Microsoft, Alibaba, xAI, Cohere, ...; with its version, size, date, tier
   and variant parts, so nothing of "claude-3-5-sonnet-20241022" is left.

Every mention, not only self-descriptions (as until issue 27): "from openai import OpenAI" in a patch, an
``anthropic_client`` argument or a ``gemini-1.5-pro`` config value tells a reviewer the producer as surely as
"I am GPT-4o" does, so they are masked too; what a reviewer loses (a vendor's name in code) matters less to a
label than the blinding.

A name counts only as a word of its own: not preceded or followed by a letter or digit ("metadata", "Googlebot",
"foo1" are not names), with ``_``, ``-``, ``.``, ``/``, ``:`` and camelCase humps as word edges (``openai_client``,
``ChatOpenAI`` and ``AnthropicProvider`` are masked). Names that are also everyday words count only where they
cannot be the everyday word: "Meta" capitalised and not in "Meta data" or "Meta-analysis" ("meta" only as
"by meta", "meta-llama"); "Grok", "Bard", "Copilot", "Cohere", "PaLM", "xAI", "OLMo", "ERNIE" as written;
"Command R", "Command A" with their letter; Phi, Yi, Falcon, GLM and a lowercase "grok" only with a version
("phi-3", "yi-34b", "grok-2"); "Sonnet", "Opus", "Haiku" after "Claude" or before a version ("Sonnet 4.5");
OpenAI's o-series (o1, o3-mini, o4-mini) only in lowercase and not inside an identifier (``step_o1``, ``-O1``).
Names whose everyday sense is rare in an item (Llama, Gemini, Mistral, Claude, Amazon, Google) are masked in any
case: a reviewer reading "[name masked]" for an animal loses less than one reading "llama3" learns.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from workbench.core.errors import InputError
from workbench.core.models import GoldenSetRecord
from workbench.store import Store
from workbench.features.labeling.records import MaskingSetting

MASK = "[self-identification masked]"
NAME_MASK = "[name masked]"
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

# -- every mention of a name -----------------------------------------------------------------------------------
# The edges of a name: no letter or digit next to it, or a camelCase hump (ChatOpenAI, AnthropicProvider).
# (Case-sensitive on purpose: the [A-Z] and [a-z] here must not be read case-insensitively.)
_START = r"(?:(?<![^\W_])|(?<=[a-z])(?=[A-Z]))"
_END = r"(?:(?![^\W_])|(?=[A-Z][a-z]))"
_SEP = r"[\s._\-]?"
# The parts that follow a model's name: versions, sizes, dates (4o, 3.5, 70B, 8x7B, 20241022, v0.2, r1, a3b),
# tiers and variants.
_VERSION = r"(?:[a-z]?\d+(?:\.\d+)*(?:x\d+)?[a-z]{0,2})"
_VARIANT = (r"(?:mini|nano|micro|pro|max|plus|turbo|preview|latest|instruct|chat|vision|flash|lite|ultra|opus|"
            r"sonnet|haiku|instant|large|medium|small|tiny|nemo|coder|reasoner|exp|experimental|thinking|omni|oss|"
            r"audio|realtime|beta|hf|online|distill|versatile)")
_TAIL = rf"(?i:(?:{_SEP}(?:{_VERSION}|{_VARIANT})(?![^\W_]))*)"
_VERSIONED = rf"(?i:{_SEP}{_VERSION}(?![^\W_])){_TAIL}"  # at least one version part
_OR_AI = r"(?i:[\s_\-]?ai)?"
MODEL_HEADS = (r"chat[\s_\-]?gpt|gpt|dall[\s_\-]?e|text[\s_\-]davinci|claude|(?:(?:meta|code)[\s._\-]?)?llama|gemini"
               r"|gemma|mi[sx]tral|(?:code|mini|magi|dev|pix)stral|qwen|qwq|deepseek|kimi|chatglm|jamba|nemotron"
               r"|dbrx|starcoder|open[ _\-]?ai|anthropic|google(?:[\s_\-]?deepmind)?|deepmind|facebook"
               r"|alibaba(?:[\s_\-]?cloud)?|microsoft|amazon|moonshot[\s_\-]?ai|zhipu|01[ .]ai|ai21(?:[\s_\-]?labs)?")
_EVERYDAY_META = (r"(?![\s_\-]?(?i:data|analys[ie]s|learning|tags?|class(?:es)?|programming|keys?|info(?:rmation)?|"
                  r"descriptions?|fields?|objects?|characters?|variables?|frameworks?|levels?|questions?|reviews?|"
                  r"stud(?:y|ies)|search|propert(?:y|ies)|files?|tables?|elements?|refresh|modeling)\b)")
NAME_PATTERNS: tuple[str, ...] = (
    rf"(?i:{MODEL_HEADS}){_OR_AI}{_TAIL}",
    r"(?<![\w.\-])o[1345](?:-(?:mini|pro|preview|high|low|deep-research|\d{4}-\d{2}-\d{2}))*(?![\w])",
    rf"(?i:phi|yi|glm|palm|ernie|alpaca|vicuna|koala|zephyr|wizardlm|openchat|mpt){_VERSIONED}",
    rf"(?i:falcon{_SEP}\d+(?:\.\d+)?b){_TAIL}",  # "falcon-40b" (not "Falcon 0" in a table of animals)
    rf"(?i:grok{_SEP}(?:{_VERSION}|{_VARIANT})(?![^\W_])){_TAIL}",  # "grok-2", "grok-beta" (not "I grok it")
    rf"(?:(?i:\d(?:\.\d)?[\s\-])?(?:Opus|Sonnet|Haiku)(?i:[\s\-][34](?:\.\d)?))",  # "Sonnet 4.5", "3.5 Sonnet 4"
    r"(?:Grok|Bard|Copilot|Cohere|PaLM|OLMo|ERNIE|xAI|x\.ai|Command[\s\-][RA]\+?|command-[ra](?:-plus)?)" + _TAIL,
    # "Meta" the maker, not the prefix or word: "Meta-rule", "MetaClass", "EnumMeta" and "Meta data" stay
    rf"(?<![^\W_])(?:MetaAI|(?:Meta|META)(?![^\W_]|-[a-z]){_OR_AI}(?i:[\s_\-]?platforms)?{_EVERYDAY_META})",
    r"(?<=(?i:by) )meta|(?<=(?i:from) )meta|(?<=(?i:at) )meta",
)
_NAMES = re.compile("|".join(f"(?:{_START}(?:{p}){_END})" for p in NAME_PATTERNS))
# Every name above contains one of these (lowercased): text without any of them skips the names' regular expression,
# which costs about a millisecond per 10,000 characters, ten times the check (most text of an item names nothing).
_TRIGGERS = (
    "gpt", "dall", "davinci", "claude", "llama", "gemini", "gemma", "mistral", "mixtral", "stral", "qwen", "qwq",
    "deepseek", "kimi", "glm", "jamba", "nemotron", "dbrx", "starcoder", "openai", "open ai", "open-ai", "open_ai",
    "anthropic", "google", "deepmind", "facebook", "alibaba", "microsoft", "amazon", "moonshot", "zhipu", "01 ai",
    "01.ai", "ai21", "o1", "o3", "o4", "o5", "phi", "yi", "falcon", "palm", "ernie", "grok", "opus", "sonnet", "haiku",
    "bard", "copilot", "cohere", "olmo", "xai", "x.ai", "command", "meta", "alpaca", "vicuna", "koala", "zephyr",
    "wizardlm", "openchat", "mpt")
# Producer names that say nothing about a model, and parts of a provider's id that are no name.
GENERIC_NAMES = frozenset((
    "human", "humans", "unknown", "none", "null", "other", "default", "mock", "mockllm", "python", "model", "models",
    "provider", "providers", "test", "tests", "local", "custom", "file", "script", "echo", "exec", "http", "https",
    "ft", "chat", "completion", "completions", "messages", "api", "latest", "base", "py", "js", "ts", "json",
    "imported", "agent", "assistant", "user", "system", "tool"))


def _spelling(name: str) -> str | None:
    """A pattern for one part of a producer's name in any spelling, or None for a part that is no name.

    Its letters and digits in order, in any case, with one or no separator between letter and digit runs (so
    "acme-coder-7b" is also "AcmeCoder 7B" and "acme_coder7b"); a trailing date or "latest" is dropped.

    >>> bool(re.fullmatch(_spelling("acme-coder-7b-20250101"), "AcmeCoder 7B", re.I))
    True
    >>> _spelling("provider.py"), _spelling("x1")
    (None, None)
    """
    tokens = re.findall(r"[^\W\d_]+|\d+", name)
    while len(tokens) > 1 and re.fullmatch(r"\d{6,8}|latest", tokens[-1], re.I):
        tokens.pop()
    if (not tokens or all(t.lower() in GENERIC_NAMES for t in tokens) or len("".join(tokens)) < 3
            or not any(t.isalpha() for t in tokens)):
        return None
    return _SEP.join(re.escape(t) for t in tokens)


def producer_patterns(names: Iterable[str | None]) -> tuple[str, ...]:
    """Patterns for the producer names a golden set's items carry that the built-in names do not already cover.

    A name is split at ``/`` and ``:`` (``meta-llama/Llama-3.1-8B``, ``ft:acme-7b:org``); each part is spelled
    by :func:`_spelling`.

    >>> producer_patterns(["openai", "gpt-4o", "human", "acme-coder-7b", "python:provider.py:default"])
    ('acme[\\\\s._\\\\-]?coder[\\\\s._\\\\-]?7[\\\\s._\\\\-]?b',)
    """
    out: list[str] = []
    for name in names:
        for part in re.split(r"[/:]+", name or ""):
            part = part.strip()
            if not part or part.lower() in GENERIC_NAMES or _built_in(part):
                continue
            pattern = _spelling(part)
            if pattern and pattern not in out:
                out.append(pattern)
    return tuple(out)


def _built_in(name: str) -> bool:
    """Whether the built-in names already mask this name: a family such as 'meta' or 'cohere' is written in
    lowercase in a producer field but is masked as written ("Meta", "Cohere"), so that "the meta key" stays."""
    return any(_NAMES.fullmatch(v) for v in (name, name.capitalize())) or name.lower() in ("xai", "x.ai")


@functools.lru_cache(maxsize=64)
def _producer_regex(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(rf"(?:{_START}(?i:{p}){_END})" for p in patterns))


@functools.lru_cache(maxsize=64)
def _producer_triggers(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """The first part of each producer name, lowercased: text without any of them holds none of the names."""
    return tuple(p.split(_SEP, 1)[0].lower() for p in patterns)


@functools.lru_cache(maxsize=64)
def _lead_regex(patterns: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


@dataclass(frozen=True)
class Masking:
    """A golden set's blind-review setting: whether to mask, the lead's own patterns beyond the built-in ones, and
    patterns for the set's own producer names (from :func:`producer_patterns`)."""

    enabled: bool = True
    patterns: tuple[str, ...] = field(default_factory=tuple)
    producers: tuple[str, ...] = field(default_factory=tuple)

    def mask(self, text: str | None) -> str | None:
        if not text or not self.enabled:
            return text
        text = _BUILTIN.sub(MASK, text)
        if self.patterns:
            text = _lead_regex(self.patterns).sub(MASK, text)
        low = text.lower()
        if self.producers and any(t in low for t in _producer_triggers(self.producers)):
            text = _producer_regex(self.producers).sub(NAME_MASK, text)
            low = text.lower()
        return _NAMES.sub(NAME_MASK, text) if any(t in low for t in _TRIGGERS) else text

    def mask_value(self, value: Any) -> Any:
        """Strings anywhere inside a JSON-like value (tool-call arguments, a step), keys of objects included."""
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            out: dict = {}
            for k, v in value.items():
                key = self.mask(k) if isinstance(k, str) else k
                while key in out:  # two keys masked alike ("openai_key", "anthropic_key"): both kept
                    key = f"{key}'"
                out[key] = self.mask_value(v)
            return out
        if isinstance(value, (list, tuple)):
            return [self.mask_value(v) for v in value]
        return value

    def mask_step(self, step: dict) -> dict:
        """A trajectory step with every string in it masked: its text, its name (a tool's), its tool calls' names
        and arguments (keys and values), and any other field an importer kept."""
        return self.mask_value(step) if self.enabled else step


DEFAULT = Masking()


def mask_self_identification(text: str | None) -> str | None:
    """Mask every model, family and maker name and every self-description (the built-in patterns).

    >>> mask_self_identification("As an AI developed by OpenAI, I cannot run code. The fix works.")
    '[self-identification masked], I cannot run code. The fix works.'
    >>> mask_self_identification("I'm Claude, an AI assistant made by Anthropic. Done.")
    '[self-identification masked]. Done.'
    >>> mask_self_identification("from openai import OpenAI  # a mention tells the producer too")
    'from [name masked] import [name masked]  # a mention tells the producer too'
    >>> mask_self_identification("claude-3-5-sonnet-20241022 beat gpt4o and Llama-3.1-70B-Instruct on metadata")
    '[name masked] beat [name masked] and [name masked] on metadata'
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


def masking_of(store: Store, golden_set: str | GoldenSetRecord) -> Masking:
    """The golden set's blind-review setting (``golden_set`` is its name, or its row from the store), with patterns
    for the producer names its items carry."""
    gs = golden_set if isinstance(golden_set, GoldenSetRecord) else store.golden_set(golden_set)
    setting = MaskingSetting(**store.golden_set_masking(gs.id))
    return Masking(setting.enabled, tuple(setting.patterns), _producers_of(store, gs.id) if setting.enabled else ())


_PRODUCERS: dict[tuple[str, int], tuple[int, tuple[str, ...]]] = {}


def _producers_of(store: Store, golden_set_id: int) -> tuple[str, ...]:
    """The producer patterns of a golden set, read once per process and per change of its items (a new item takes
    the next position), since the Label page asks for them at every item.

    Read to be masked, never returned: what a reviewer receives still carries no producer."""
    where = store.path if store.path != ":memory:" else f":memory:{id(store.conn)}"
    key, mark = (where, golden_set_id), store.next_item_position(golden_set_id)
    cached = _PRODUCERS.get(key)
    if cached is None or cached[0] != mark:
        cached = _PRODUCERS[key] = (mark, producer_patterns(store.producer_names(golden_set_id)))
    return cached[1]


def set_masking(store: Store, golden_set: str, *, enabled: bool | None = None, add: Iterable[str] = (),
                remove: Iterable[str] = ()) -> Masking:
    """A lead turns masking on or off for a golden set, or adds or removes their own patterns; returns the setting."""
    add = [check_pattern(p) for p in add]
    with store.transaction():
        gs = store.golden_set(golden_set)
        current = MaskingSetting(**store.golden_set_masking(gs.id))
        gone = {p.strip() for p in remove}
        patterns = [p for p in current.patterns if p not in gone]
        for p in add:
            if p not in patterns:
                patterns.append(p)
        if len(patterns) > MAX_PATTERNS:
            raise InputError(f"golden set '{golden_set}' would have {len(patterns)} masking patterns "
                             f"(at most {MAX_PATTERNS})", fix="combine phrases into one pattern with |")
        on = current.enabled if enabled is None else bool(enabled)
        store.set_golden_set_masking(gs.id, enabled=on, patterns=patterns)
    return Masking(on, tuple(patterns), _producers_of(store, gs.id) if on else ())
