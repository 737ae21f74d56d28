"""Label plans as predictive ranges: plausible futures of a golden set's labels, and when the gate decides on each.

:mod:`~workbench.stats.plans.futures` draws the human labels of items nobody has labeled yet from the posterior
predictive of the labels so far; :mod:`~workbench.stats.plans.paths` sums them along an order of labeling, look by
look, and reads the first look at which a decision rule decides, and the quantiles of those looks over the paths.
"""
