"""Values in error messages: one line, bounded, whatever the value (stdlib only, so that the
archive readers can use it without numpy)."""

from __future__ import annotations

import numbers
import reprlib
from typing import Any

#: Containers are shown by reprlib: a few items and levels, never a repr of 10**5 items or a
#: recursion 5,000 deep.
_REPR = reprlib.Repr()  # keyword arguments only from Python 3.12
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 3, 8, 8, 4, 8
_REPR.maxstring, _REPR.maxother, _REPR.maxlong = 60, 60, 40


def show(value: Any, limit: int = 80) -> str:
    """A one-line, bounded ``repr`` of a value for an error message: never a multi-line array
    or Series repr, never a RecursionError (a list 5,000 deep) or a 10**5000 in full.

    >>> show(list(range(100))), show([[[[[1]]]]])
    ('[0, 1, 2, 3, 4, 5, 6, 7, ...]', '[[[[...]]]]')
    >>> show("two\\nlines"), show(2.5)
    ("'two\\\\nlines'", '2.5')
    >>> show(10**400)
    'an int of 401 digits'
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        digits = len(str(abs(value))) if abs(value) < 10**4000 else "over 4000"
        return f"an int of {digits} digits"
    try:
        plain = isinstance(value, numbers.Real) and not isinstance(value, bool)  # 5, not
        # np.int64(5)
        text = str(value) if plain else _REPR.repr(value) if isinstance(
            value, list | tuple | dict | set | frozenset) else repr(value)
        text = " ".join(text.split())
    except Exception:  # RecursionError (5,000 deep), a __repr__ that raises
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def grouped(value: int) -> str:
    """``f"{value:,}"`` for an int of at most 30 digits, else :func:`show`'s digit count.

    >>> grouped(10**6), grouped(2**1000)
    ('1,000,000', 'an int of 302 digits')
    """
    return f"{value:,}" if abs(value) < 10**30 else show(int(value))


def brief(exc: BaseException, limit: int = 100) -> str:
    """The text of another library's exception on one bounded line, for ``(...)`` in ours."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def length(x: Any) -> int | None:
    """``len(x)``; ``2**63`` for a range too long for ``len`` (it holds at least that many);
    None when ``x`` has no length (a 0-d array, a generator).

    >>> length([1, 2]), length(range(2**64)), length(5)
    (2, 9223372036854775808, None)
    """
    try:
        return len(x)
    except OverflowError:
        return 2**63
    except TypeError:
        return None
