"""Many answers at once: `sweep` (one question over a grid of settings), `sampling` (uniform samples
through the registry's samplers) and `dask_engine` with `dask_tasks` (`--engine dask`: counting,
listing and sampling on a Dask cluster)."""
