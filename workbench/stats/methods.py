"""Which interval each kind of measurement gets: the choices a stored report depends on.

Kept apart, with nothing but names, so a cached report can be checked against them without importing numpy or
pandas (the report cache is read before any data is loaded). The modules that compute the intervals read their
defaults from here.
"""

#: Metrics that are not proportions: "bca" or "percentile". BCa keeps its coverage on real subsamples of 50 to
#: 200 items where the percentile interval falls to 0.89 (validation/interval_coverage.py).
BOOTSTRAP_INTERVAL = "bca"
#: Self-preference effects: on real subsamples of 50 to 200 items the expanded percentile interval keeps its
#: coverage best (validation/interval_coverage.py, README).
SELF_PREFERENCE_INTERVAL = "expanded"
#: Proportions (exact agreement, TPR, TNR), as named by ``statsmodels.stats.proportion.proportion_confint``.
PROPORTION_METHOD = "wilson"
