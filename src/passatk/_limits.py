"""The limits of passatk, each defined once (stdlib only: the archive readers import them
without numpy; :mod:`passatk._validation` re-exports them with the rules that use them)."""

#: Counts must be exact in a double: n < 2**53.
MAX_N = 2**53
#: The largest n of the ln(i!) table (``_lnfact``); larger n take the table-free paths.
TABLE_MAX = 2**17
#: The most bootstrap resamples (or random sign patterns) one call may ask for.
MAX_RESAMPLES = 10**7
