"""Whole JSON documents: the fast typed pass of :mod:`._docfast`, else the exact streamed
parse of :mod:`._jsondoc` (which also locates any error). Kept apart from :mod:`._common`, which
the fast pass itself uses."""

from __future__ import annotations

from passatk.archives.errors import ArchiveError

__all__ = ["load_json_document"]


def load_json_document(file: str) -> object:
    """A JSON document, streamed: small members decoded, the per-task containers read one
    member at a time when iterated (see ``_jsondoc``). Errors are ``file:line: ...``.

    Both paths are imported here, on the first document: listing the formats loads neither
    (nor numpy, which ``_jsondoc`` imports)."""
    from passatk.archives.harnesses import _docfast
    from passatk.archives.io import jsondoc as _jsondoc

    try:
        return _docfast.fast_load(file)
    # the exact path reads it again and locates any error (msgspec raises RecursionError
    # on deep nesting, which the exact path reports as "JSON nested too deeply")
    except (_docfast.Unproved, ArchiveError, RecursionError):
        return _jsondoc.load_document(file)
