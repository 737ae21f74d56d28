"""Robustness probes: perturbed copies of golden items (order, length, authority...) and what they move."""
