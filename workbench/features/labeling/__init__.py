"""Reviewers labeling a golden set: the queue each sees, blind to judges and producing models (who the raters
are: ``features/people``)."""
