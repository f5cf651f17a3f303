"""Pass flags: one rule for every reader.

A pass flag is ``true``/``false``, or a number that is exactly 0 or 1 (``0``, ``1``, ``0.0``,
``1.0``): lm-eval, verl and many training logs write correctness as the floats 1.0 and 0.0,
and those are unambiguous. Any other value is an error; a number such as 0.5 is a reward or a
mean, which only a reader with a threshold (the per-sample tables) may read.
"""

from __future__ import annotations

from passatk.archives.context import BadRecord
from passatk.archives.errors import show
from passatk.errors import Message, Option

#: the rule, as error messages state it
RULE = "a pass flag (true/false, 1/0, 1.0/0.0)"


def is_flag(value: object) -> bool:
    """Whether ``value`` is a pass flag.

    >>> [is_flag(v) for v in (True, 0, 1.0, 0.5, 2, "1", None)]
    [True, True, True, False, False, False, False]
    """
    return isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1))


def pass_flag(value: object, name: str = "", threshold: bool = False) -> bool:
    """``value`` as a pass flag, or BadRecord naming ``name`` (``'field "passed"'``).

    ``threshold``: the reader takes a threshold, so a number that is not a flag is told to
    give one.

    >>> pass_flag(1.0, 'field "passed"'), pass_flag(0, 'field "passed"')
    (True, False)
    >>> try:
    ...     pass_flag(0.5, 'field "passed"')
    ... except BadRecord as e:
    ...     print(e.what)
    field "passed" must be a pass flag (true/false, 1/0, 1.0/0.0), got 0.5
    """
    if is_flag(value):
        return value == 1
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    subject = f"{name} must be" if name else "must be"
    what = f"{subject} {RULE}, got {show(value)}"
    if threshold and number:
        raise BadRecord(Message(f"{what}; give ", Option("threshold"), " to read it as a reward"))
    raise BadRecord(what)
