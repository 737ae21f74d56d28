"""The synthetic demo golden set and its generator with planted, known effects."""
