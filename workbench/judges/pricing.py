"""The versioned price table: USD per million tokens, and the cost of a judgment.

Prices are list prices for standard (non-priority) processing as published by
the providers when PRICE_TABLE_VERSION was set; update the table and bump the
version when they change (stored judgments keep the cost computed at the time).
Batch processing is half price. Anthropic bills cache writes (5-minute TTL) at
1.25x the input price; cache reads are listed in the table. A model the table
does not know gets cost None and one warning per model, never a guess.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from workbench.judges.types import Usage

log = logging.getLogger(__name__)

PRICE_TABLE_VERSION = "2025-11-01"
BATCH_DISCOUNT = 0.5
CACHE_WRITE_MULTIPLIER = 1.25


@dataclass(frozen=True)
class Price:
    input: float  # USD per million input tokens
    output: float  # USD per million output tokens
    cached_input: float  # USD per million input tokens read from the prompt cache


PRICES: dict[str, Price] = {
    # Anthropic
    "claude-opus-4-5": Price(5.00, 25.00, 0.50),
    "claude-opus-4-1": Price(15.00, 75.00, 1.50),
    "claude-opus-4": Price(15.00, 75.00, 1.50),
    "claude-sonnet-4-5": Price(3.00, 15.00, 0.30),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30),
    "claude-3-7-sonnet": Price(3.00, 15.00, 0.30),
    "claude-3-5-sonnet": Price(3.00, 15.00, 0.30),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10),
    "claude-3-5-haiku": Price(0.80, 4.00, 0.08),
    "claude-3-haiku": Price(0.25, 1.25, 0.03),
    "claude-3-opus": Price(15.00, 75.00, 1.50),
    # OpenAI
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o3": Price(2.00, 8.00, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o1": Price(15.00, 60.00, 7.50),
}

_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
_warned: set[str] = set()


def price_for(model: str) -> Price | None:
    """The price of a bare model name ('claude-sonnet-4-5-20250929' finds 'claude-sonnet-4-5'), else None."""
    if model in PRICES:
        return PRICES[model]
    base = _SNAPSHOT.sub("", model)
    if base in PRICES:
        return PRICES[base]
    if base.endswith("-0") and base[:-2] in PRICES:  # 'claude-sonnet-4-0' is an alias of 'claude-sonnet-4'
        return PRICES[base[:-2]]
    return None


def warn_unpriced(model: str) -> None:
    if model not in _warned:
        _warned.add(model)
        log.warning("no price for model '%s' in price table %s: its cost is recorded as unknown",
                    model, PRICE_TABLE_VERSION)


def cost_usd(model: str, usage: Usage | None, *, batch: bool = False) -> float | None:
    """USD for the tokens in `usage`; None (with one warning per model) when the model has no price."""
    if usage is None:
        return None
    price = price_for(model)
    if price is None:
        warn_unpriced(model)
        return None
    cached = min(usage.cached_tokens, usage.input_tokens)
    written = min(usage.cache_write_tokens, usage.input_tokens - cached)
    fresh = usage.input_tokens - cached - written
    total = (fresh * price.input + cached * price.cached_input + written * price.input * CACHE_WRITE_MULTIPLIER
             + usage.output_tokens * price.output) / 1_000_000
    return total * (BATCH_DISCOUNT if batch else 1.0)


def estimate_cost(model: str, input_tokens: int, output_tokens: int, *, batch: bool = False) -> float | None:
    """Cost of an estimate (no cache assumed); None without a price, silently."""
    price = price_for(model)
    if price is None:
        return None
    return (input_tokens * price.input + output_tokens * price.output) / 1_000_000 * (
        BATCH_DISCOUNT if batch else 1.0)
