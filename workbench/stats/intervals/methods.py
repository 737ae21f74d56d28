"""Which interval each kind of measurement gets: the choices a stored report depends on.

Kept apart, with nothing but names, so a cached report can be checked against them without importing numpy or
pandas (the report cache is read before any data is loaded). The modules that compute the intervals read their
defaults from here.
"""

#: Metrics that are not proportions: "bca" or "percentile". BCa keeps its coverage on real subsamples of 50 to
#: 200 items where the percentile interval falls to 0.89 (validation/interval_coverage.py).
BOOTSTRAP_INTERVAL = "bca"
#: Self-preference effects: the Dirichlet-process posterior over task clusters (workbench.stats.intervals.posterior). The
#: expanded percentile interval, the choice before it, covered 0.75 to 0.91 on real golden sets of 50 items; the
#: posterior 0.92 or more at 50 to 400 items (benchmarks/coverage_categories.py, benchmarks/README.md).
SELF_PREFERENCE_INTERVAL = "posterior"
#: Proportions (exact agreement, TPR, TNR): the smallest interval holding Wilson's and the boundary-modified
#: Jeffreys interval (workbench.stats.intervals.proportion). Wilson alone covered TNR over a handful of fails 0.87-0.91
#: of the time on real pools, and 0.90-0.92 of the time for golden sets of a few tasks with many items each
#: (validation/promises/intervals.py).
PROPORTION_METHOD = "wilson_jeffreys"
#: Per-category Krippendorff's alpha and mean signed error: the Dirichlet-process posterior over the category's
#: task clusters with a prior of one item (workbench.stats.intervals.posterior): 0.93 or more on real categories of 12 to
#: 200 items, where the BCa intervals covered 0.42 to 0.98 (benchmarks/coverage_categories.py, benchmarks/README.md).
CATEGORY_INTERVAL = "posterior"
