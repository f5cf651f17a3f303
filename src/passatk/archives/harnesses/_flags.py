"""Pass flags: one rule for every reader.

A pass flag is ``true``/``false``, or a number that is exactly 0 or 1 (``0``, ``1``, ``0.0``,
``1.0``): lm-eval, verl and many training logs write correctness as the floats 1.0 and 0.0,
and those are unambiguous. Any other value is an error; a number such as 0.5 is a reward or a
mean, which only a reader with a threshold (the per-sample tables) may read.

In a msgspec view a flag field has the type :data:`Flag` (msgspec refuses any other JSON
value), and :func:`all_flags` checks a block's values at once; a block it refuses is read line
by line, where :func:`pass_flag` names the value and its line.
"""

from __future__ import annotations

from passatk.archives.context import BadRecord
from passatk.archives.errors import show
from passatk.errors import Message, Option

#: the rule, as error messages state it
RULE = "a pass flag (true/false, 1/0, 1.0/0.0)"
#: the type of a pass flag field in a msgspec view
Flag = bool | int | float


def all_flags(values: list) -> bool:
    """Whether every value of a view's :data:`Flag` field is a pass flag (1 == 1.0 == True).

    >>> all_flags([True, 0, 1.0, -0.0]), all_flags([True, 0.5]), all_flags([float("nan")])
    (True, False, False)
    """
    return values.count(True) + values.count(False) == len(values)


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
