"""Selective judging's statistics: exact binomial bounds, a confidence threshold chosen by fixed-sequence testing
(Trust or Escalate, Jung, Brahman and Choi, ICLR 2025), a cascade's thresholds chosen jointly (learn then test),
and a judge's confidence from its repeats. Pure functions on arrays, no I/O."""

from workbench.stats.selective.cascade import (
    CascadeChoice,
    CascadeStep,
    choose_cascade,
    route,
)
from workbench.stats.selective.fixed_sequence import (
    SelectiveStep,
    ThresholdChoice,
    choose_threshold,
    clopper_pearson_lower,
    clopper_pearson_upper,
    min_kept_to_reach,
    start_size,
    threshold_grid,
)
from workbench.stats.selective.repeats import confidence_from_repeats

__all__ = ["CascadeChoice", "CascadeStep", "SelectiveStep", "ThresholdChoice", "choose_cascade", "choose_threshold",
           "clopper_pearson_lower", "clopper_pearson_upper", "confidence_from_repeats", "min_kept_to_reach", "route",
           "start_size", "threshold_grid"]
