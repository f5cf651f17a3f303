"""How units of work run, never what they read: plans in bytes (:mod:`.plan`), then this
process (:mod:`.local`), worker processes (:mod:`.processes`) or Dask (:mod:`.dask_engine`),
each mapping the caller's function over the units. Imports nothing of archives/."""
