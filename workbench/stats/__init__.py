"""Statistics of judge calibration: pure functions over arrays and data frames, no I/O.

Every measurement of DESIGN section 5 lives here; services gather the data,
call these functions and store or show the results. Only numpy, scipy,
pandas, krippendorff and statsmodels are imported, never storage, SDKs or
the UI.

Conventions: scores are integers on the rubric's scale (lowest first); inputs
are aligned arrays (one entry per item) or long data frames; options are
keyword-only; a number that cannot be computed is NaN (or None in reports
where a whole measurement is not possible) together with a one-sentence
reason, never a silent zero. :func:`jsonable` turns any report into plain
JSON-ready values.
"""

from ._common import jsonable
from .agreement import (
    METRIC_NAMES,
    AgreementMetrics,
    agreement_metrics,
    confusion_matrix,
    metrics_from_confusion,
)
from .alt_test import EPSILON_BY_RATER, alternative_annotator_test
from .bias import self_preference
from .bootstrap import agreement_with_intervals, paired_bootstrap_delta
from .categories import per_category_agreement
from .correction import corrected_pass_rate, golden_pass_arrays, ppi_mean, rogan_gladen
from .humans import human_ceiling
from .noise import drift, pass_at_k, pass_hat_k, repeat_noise, stuart_maxwell
from .power import items_for_interval_width, min_detectable_difference, noise_floor

__all__ = [
    "METRIC_NAMES",
    "EPSILON_BY_RATER",
    "AgreementMetrics",
    "agreement_metrics",
    "confusion_matrix",
    "metrics_from_confusion",
    "agreement_with_intervals",
    "paired_bootstrap_delta",
    "per_category_agreement",
    "human_ceiling",
    "alternative_annotator_test",
    "self_preference",
    "repeat_noise",
    "pass_hat_k",
    "pass_at_k",
    "stuart_maxwell",
    "drift",
    "min_detectable_difference",
    "items_for_interval_width",
    "noise_floor",
    "rogan_gladen",
    "corrected_pass_rate",
    "golden_pass_arrays",
    "ppi_mean",
    "jsonable",
]
