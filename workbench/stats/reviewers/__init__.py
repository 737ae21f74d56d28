"""Reviewers measured like judges: each reviewer's labels against the consensus of the other reviewers.

The leave-one-out consensus of an item, for a reviewer, is the item's consensus computed without that reviewer's
label (the caller applies the workbench's rule, adjudicated else strict majority, to the other labels); an item
without one (a single label, a tie among the others) is not compared. Against it the reviewer is scored exactly as
a judge is against the consensus (:func:`workbench.stats.intervals.bootstrap.agreement_with_intervals`): exact
agreement with the interval of a share (Wilson and Jeffreys on the count over the cluster design effect),
Krippendorff's ordinal alpha with the BCa interval of the task-cluster bootstrap. Harshness is paired by item: on
the items the reviewer labeled that others labeled too, the reviewer's share of fails minus the others' share of
fails on those same items (the others' share per item, averaged), with a percentile interval of the task-cluster
bootstrap, so a reviewer who happened to get the hard items is not called harsh.
"""

from workbench.stats.reviewers.agreement import (
    FailShareDifference,
    ReviewerAgreement,
    fail_share_difference,
    reviewer_agreement,
)

__all__ = ["FailShareDifference", "ReviewerAgreement", "fail_share_difference", "reviewer_agreement"]
