"""People: raters with one identity each (email and name resolve to one rater), their roles, and the audit log of
who changed what, when. The lowest of the features: labeling, importing and the edges ask it who someone is."""
