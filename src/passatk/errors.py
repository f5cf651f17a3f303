"""Errors whose message names the option that fixes them, as structured fields.

A library message such as ``...; pass missing='report' to report this k as missing`` tells a
Python user which keyword to pass. The command line offers the same thing as a flag
(``--missing report``). Rather than rewrite the text, the error keeps the option as data: its
message is a sequence of text and :class:`Option` parts, ``str(error)`` spells the options as
Python keywords, and :meth:`HintedError.render` spells them any other way (the CLI passes its
flag speller).

>>> err = HintedError("cannot report pass@k at k=5; pass ", Option("missing", "report"),
...                   " to report this k as missing")
>>> str(err)
"cannot report pass@k at k=5; pass missing='report' to report this k as missing"
>>> err.option, err.options[0].value
('missing', 'report')
>>> err.render(lambda o: f"--{o.name} {o.value}")
'cannot report pass@k at k=5; pass --missing report to report this k as missing'
>>> isinstance(err, ValueError)
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["HintedError", "Message", "Option"]


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


#: the value of an :class:`Option` named without a value ("pass format=")
UNSET = _Unset()


@dataclass(frozen=True)
class Option:
    """An option named in an error message.

    Attributes
    ----------
    name : str
        The keyword of the Python API (``"missing"``, ``"format"``, ``"merge"``), or of the
        mapping that holds it (``"filters"``, with ``key``).
    value : object
        The value to pass, or ``UNSET`` when the message names the option alone.
    key : str or None
        The key inside a mapping option: ``Option("filters", key="since")`` is
        ``filters['since']``.

    Examples
    --------
    >>> Option("merge", True).api(), Option("format").api(), Option("filters", key="since").api()
    ('merge=True', 'format=', "filters['since']")
    """

    name: str
    value: object = UNSET
    key: str | None = None

    def api(self) -> str:
        """The Python spelling: ``missing='report'``, ``format=``, ``filters['since']``."""
        if self.key is not None:
            return f"{self.name}[{self.key!r}]"
        return f"{self.name}=" if self.value is UNSET else f"{self.name}={self.value!r}"


class Message(str):
    """Text with :class:`Option` parts; as a ``str`` it reads in the Python spelling.

    >>> m = Message("pass ", Option("merge", True), " to pool them")
    >>> m, m.render(lambda o: "--" + o.name)
    ('pass merge=True to pool them', 'pass --merge to pool them')
    """

    parts: tuple[str | Option, ...]

    def __new__(cls, *parts: str | Option) -> Message:
        text = "".join(p if isinstance(p, str) else p.api() for p in parts)
        self = super().__new__(cls, text)
        self.parts = tuple(parts)
        return self

    def __add__(self, other: str) -> Message:  # keep the parts through ``what + where``
        return Message(*self.parts, *(other.parts if isinstance(other, Message) else (other,)))

    def __radd__(self, other: str) -> Message:
        return Message(other, *self.parts)

    @property
    def options(self) -> tuple[Option, ...]:
        """The options named, in order."""
        return tuple(p for p in self.parts if isinstance(p, Option))

    def render(self, spell: Callable[[Option], str]) -> str:
        """The text with each option spelled by ``spell``."""
        return "".join(p if isinstance(p, str) else spell(p) for p in self.parts)


def render(text: str, spell: Callable[[Option], str]) -> str:
    """``text`` with its options spelled by ``spell`` when it is a :class:`Message`."""
    return text.render(spell) if isinstance(text, Message) else str(text)


class HintedError(ValueError):
    """A ValueError whose message names options, kept as :class:`Option` fields.

    Attributes
    ----------
    message : Message
        The message, with its options as parts.
    options : tuple of Option
        The options the message names.
    option : str or None
        The name of the first option (the one that fixes the error), or None.
    """

    def __init__(self, *parts: str | Option) -> None:
        self.message = parts[0] if len(parts) == 1 and isinstance(parts[0], Message) \
            else Message(*parts)
        super().__init__(str(self.message))

    @property
    def options(self) -> tuple[Option, ...]:
        return self.message.options

    @property
    def option(self) -> str | None:
        return self.options[0].name if self.options else None

    def render(self, spell: Callable[[Option], str]) -> str:
        """The message with each option spelled by ``spell`` (the CLI spells flags)."""
        return self.message.render(spell)
