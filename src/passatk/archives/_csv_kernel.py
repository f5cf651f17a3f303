"""The numba kernel of the CSV fast path: ``_arrow._Checked``'s quoting check in one pass.

It sees a uint8 array of bytes and two lookup tables of 256 flags only. The numpy version in
``_arrow._Checked._check_quotes`` is the reference (tests compare the two); this one costs
about half as much on a CSV that quotes every string, and also finds the newlines inside
quoted fields, which let Arrow use its faster chunker when there are none.
"""

import numpy as np

from .._jit import jit


def byte_table(chars: bytes) -> np.ndarray:
    """A lookup table: entry b is True when byte b is one of ``chars``.

    >>> byte_table(b',"').nonzero()[0].tolist()
    [34, 44]
    """
    table = np.zeros(256, np.bool_)
    table[list(chars)] = True
    return table


@jit
def check_quotes(buf, before, after, quotes, prev, check_next):
    """Check the quotes of the next bytes of a CSV file (``_Checked``'s rules, by parity).

    A quote opens a field when an even number of quotes precede it (``quotes`` before
    ``buf``); the byte before an opening quote must be in ``before`` (``prev`` before
    ``buf[0]``), the byte after a closing quote in ``after`` (the first byte of the next
    bytes when ``buf`` ends with it: ``check_next``). Returns (bad, quotes after ``buf``,
    whether ``buf`` ends with a closing quote, the index of the last newline inside a quoted
    field or -1).
    """
    n = len(buf)
    inside = quotes % 2 == 1
    last_newline = -1
    if check_next and n > 0 and not after[buf[0]]:
        return True, quotes, False, last_newline
    p = prev
    for i in range(n):
        b = buf[i]
        if b == 34:
            quotes += 1
            if inside:
                if i + 1 < n and not after[buf[i + 1]]:
                    return True, quotes, False, last_newline
            elif not before[p]:
                return True, quotes, False, last_newline
            inside = not inside
        elif b == 10 and inside:
            last_newline = i
        p = b
    ends_closing = n > 0 and buf[n - 1] == 34 and not inside
    return False, quotes, ends_closing, last_newline
