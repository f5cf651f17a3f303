"""How units of work run, never what they read: plan, then local, processes or Dask, each
mapping the caller's function over the units. Imports nothing of archives/."""
