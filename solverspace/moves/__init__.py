"""Moves in a space's parameter indices: `value_lists` (each parameter's value list and the index
of a value), `neighbors` (the five neighbour methods), `designs` (conditional quantiles,
space-filling designs, samples with some values given) and `repair` (the valid configuration
nearest a point)."""
