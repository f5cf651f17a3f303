"""Whole JSON documents: the fast typed pass of :mod:`._docfast`, else the exact streamed
parse of :mod:`._jsondoc` (which also locates any error). Kept apart from :mod:`._common`, which
the fast pass itself uses."""

from __future__ import annotations

from ._docbuffer import Unproved
from ._docfast import fast_load
from ._errors import ArchiveError
from ._jsondoc import load_document

__all__ = ["load_json_document"]


def load_json_document(file: str) -> object:
    """A JSON document, streamed: small members decoded, the per-task containers read one
    member at a time when iterated (see ``_jsondoc``). Errors are ``file:line: ...``."""
    try:
        return fast_load(file)
    # the exact path reads it again and locates any error (msgspec raises RecursionError
    # on deep nesting, which the exact path reports as "JSON nested too deeply")
    except (Unproved, ArchiveError, RecursionError):
        return load_document(file)
