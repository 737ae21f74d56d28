"""Interval machinery shared by the measurements: the cluster bootstrap, the Dirichlet-process posterior,
proportion intervals, design weights and the names of the methods."""
