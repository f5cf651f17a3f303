"""How parts run (locally, in processes, on Dask), never what they read."""
