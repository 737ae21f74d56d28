"""The versioned price table and the cost of a judgment."""

from __future__ import annotations

import logging

import pytest

from workbench.judges.base import Usage
from workbench.judges.pricing import PRICE_TABLE_VERSION, PRICES, cost_usd, price_for


def test_table_is_versioned_and_covers_both_providers():
    assert PRICE_TABLE_VERSION
    assert any(m.startswith("claude-") for m in PRICES) and any(m.startswith("gpt-") for m in PRICES)
    for price in PRICES.values():
        assert 0 < price.cached_input <= price.input < price.output


@pytest.mark.parametrize("model, base", [("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
                                         ("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini", "gpt-4o-mini"),
                                         ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
                                         ("claude-sonnet-4-0", "claude-sonnet-4")])
def test_snapshots_and_aliases_find_their_model(model, base):
    assert price_for(model) == PRICES[base]


def test_cost_counts_cache_reads_and_writes_and_batch_halves_it():
    usage = Usage(input_tokens=10_000, output_tokens=1_000, cached_tokens=6_000, cache_write_tokens=2_000)
    expected = (2_000 * 3.0 + 6_000 * 0.30 + 2_000 * 3.0 * 1.25 + 1_000 * 15.0) / 1e6
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(expected)
    assert cost_usd("claude-sonnet-4-5", usage, batch=True) == pytest.approx(expected / 2)
    assert cost_usd("gpt-4o", Usage(1_000_000, 0, 1_000_000)) == pytest.approx(1.25)


def test_unknown_model_costs_none_with_one_warning(caplog):
    with caplog.at_level(logging.WARNING):
        assert cost_usd("llama-3.1-70b-unpriced-x", Usage(100, 10)) is None
        assert cost_usd("llama-3.1-70b-unpriced-x", Usage(100, 10)) is None
    assert caplog.text.count("no price for model 'llama-3.1-70b-unpriced-x'") == 1
    assert PRICE_TABLE_VERSION in caplog.text
