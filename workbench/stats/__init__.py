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

import importlib
from typing import Any

# Each name is imported from its module on first use (PEP 562), so reading one module (say the interval choices
# in ``stats.intervals.methods``, checked before a cached report is served) does not import numpy, pandas and every other
# module of the package.
_SOURCES = {
    "jsonable": "_common",
    "METRIC_NAMES": "agreement", "AgreementMetrics": "agreement", "agreement_metrics": "agreement",
    "confusion_matrix": "agreement", "metrics_from_confusion": "agreement",
    "EPSILON_BY_RATER": "alt_test", "alternative_annotator_test": "alt_test",
    "self_preference": "bias",
    "agreement_with_intervals": "intervals.bootstrap", "paired_bootstrap_delta": "intervals.bootstrap",
    "per_category_agreement": "categories",
    "corrected_pass_rate": "correction", "golden_pass_arrays": "correction", "ppi_mean": "correction",
    "rogan_gladen": "correction",
    "human_ceiling": "humans",
    "drift": "noise", "pass_at_k": "noise", "pass_hat_k": "noise", "repeat_noise": "noise",
    "stuart_maxwell": "noise",
    "items_for_interval_width": "power", "min_detectable_difference": "power", "noise_floor": "power",
}


def __getattr__(name: str) -> Any:
    if name in _SOURCES:
        value = getattr(importlib.import_module(f".{_SOURCES[name]}", __name__), name)
    else:
        try:  # a module of the package: stats.intervals, stats.bias, ...
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))


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
