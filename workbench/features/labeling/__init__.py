"""Reviewers labeling a golden set: the queue each sees, blind to judges and producing models, and the raters."""
